"""Did-you-mean for names users type: devices, aliases, options, CPUs.

Names compare *folded*: case, ``-`` and ``_`` do not matter (``WOOFLES``,
``cmsis_nn`` and ``Cmsis-NN`` fold alike).  A folded match is an exact
answer the caller may accept; otherwise the closest names are suggested,
never acted on.
"""

from __future__ import annotations

import difflib
from typing import Iterable

__all__ = ["fold", "folded_match", "close_matches", "did_you_mean"]


def fold(name: str) -> str:
    """``name`` with case, ``-`` and ``_`` ignored: ``"Cmsis_NN"`` -> ``"cmsisnn"``."""
    return name.replace("-", "").replace("_", "").lower()


def folded_match(name: str, candidates: Iterable[str]) -> str | None:
    """The one candidate that equals ``name`` once both are folded (None when none or several do)."""
    hits = sorted({c for c in candidates if fold(c) == fold(name)})
    return hits[0] if len(hits) == 1 else None


def close_matches(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` candidates close to ``name`` (folded comparison), closest first."""
    by_fold: dict[str, list[str]] = {}
    for c in candidates:
        by_fold.setdefault(fold(c), []).append(c)
    hits = difflib.get_close_matches(fold(name), list(by_fold), n=n, cutoff=0.6)
    return [c for h in hits for c in sorted(by_fold[h])][:n]


def did_you_mean(name: str, candidates: Iterable[str], *, prefix: str = "") -> str:
    """``"; did you mean 'woofles'?"`` (or ``''`` when nothing is close); ``prefix`` goes before each name."""
    hits = close_matches(name, candidates)
    if not hits:
        return ""
    return "; did you mean " + " or ".join(f"'{prefix}{h}'" for h in hits) + "?"
