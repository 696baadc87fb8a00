"""Differential fuzzer: tvmdevice against tflite-micro on mutated model files.

The entry point of the :mod:`fuzz` package next to this file (see its
docstring, and ``--help`` for the mutators, legs and finding classes).

Usage::

    python bench/fuzz_differential.py --cases 3000 --workers 2 --seed 1 --out fuzz-out --json
    python bench/fuzz_differential.py --replay fuzz-out/mismatch/*.tflite
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz.campaign import main  # noqa: E402
from fuzz.cases import CaseSource, ReplaySource  # noqa: E402,F401
from fuzz.legs import input_arrays  # noqa: E402,F401
from fuzz.minimize import minimize  # noqa: E402,F401
from fuzz.verdicts import hints, judge, tflm_undefined  # noqa: E402,F401

if __name__ == "__main__":
    sys.exit(main())
