"""Latency statistics for ``tvmdevice bench``."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

__all__ = ["LatencyStats"]


@dataclass(frozen=True)
class LatencyStats:
    """Per-run latency over ``runs`` timed runs, in microseconds.

    Percentiles interpolate linearly between the two nearest runs (numpy's
    default); ``std`` is the sample standard deviation (``ddof=1``; 0 for one run).
    """

    runs: int
    mean_us: float
    median_us: float
    p90_us: float
    p99_us: float
    std_us: float
    min_us: float
    max_us: float

    @classmethod
    def of(cls, ns: Sequence[int]) -> "LatencyStats":
        """The statistics of per-run durations ``ns`` (nanoseconds)."""
        if not len(ns):
            raise ValueError("no runs to summarise")
        us = np.asarray(ns, dtype=np.float64) / 1000.0
        return cls(runs=len(us), mean_us=float(us.mean()), median_us=float(np.median(us)),
                   p90_us=float(np.percentile(us, 90)), p99_us=float(np.percentile(us, 99)),
                   std_us=float(us.std(ddof=1)) if len(us) > 1 else 0.0, min_us=float(us.min()),
                   max_us=float(us.max()))

    def to_json(self) -> dict[str, float]:
        return asdict(self)

    def line(self) -> str:
        """The statistics on one line, the median first: the headline, which one cold run does not sway."""
        return (f"median {self.median_us:,.1f} us (mean {self.mean_us:,.1f}, p90 {self.p90_us:,.1f}, "
                f"p99 {self.p99_us:,.1f}, std {self.std_us:,.1f}, min {self.min_us:,.1f}, max {self.max_us:,.1f}; "
                f"{self.runs} runs)")
