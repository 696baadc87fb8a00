"""A classifier's output 0 as classes: ``--top-k`` and labels checked against the number of classes.

One rule for every command: ``--top-k`` is at least 1 (an argparse error otherwise) and at most the
number of classes (output 0's values); a larger K is refused, never silently capped. ``eval``'s
default top-k is 5, or the number of classes when fewer, and a top-k accuracy is reported only when
K is below the number of classes (top-K of K classes is always right). Labels must name classes
``0 .. classes - 1``.
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence

from ..errors import InvalidArgumentError

__all__ = ["positive_int", "class_count", "check_top_k", "check_labels", "DEFAULT_EVAL_TOP_K"]

#: ``eval``'s top-k when ``--top-k`` is not given (capped to the number of classes).
DEFAULT_EVAL_TOP_K = 5


def positive_int(text: str) -> int:
    """An argparse ``type``: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def class_count(output_shape: Sequence[int]) -> int:
    """The number of classes of a classifier output: its number of values."""
    import numpy as np

    return int(np.prod(output_shape, dtype=np.int64))


def check_top_k(k: int | None, classes: int) -> int | None:
    """``--top-k`` as given, checked against the model's ``classes`` (None stays None).

    :raises InvalidArgumentError: K is more than the number of classes.
    """
    if k is not None and k > classes:
        raise InvalidArgumentError(f"--top-k {k} is more than the model's {classes} classes (output 0 has "
                                   f"{classes} values); give --top-k {classes} or less")
    return k


def check_labels(labels: Any, classes: int, where: str) -> None:
    """Refuse labels outside ``0 .. classes - 1``, naming the first one.

    :raises InvalidArgumentError: a label is not one of the model's classes.
    """
    import numpy as np

    labels = np.asarray(labels).reshape(-1)
    bad = np.flatnonzero((labels < 0) | (labels >= classes))
    if bad.size:
        i = int(bad[0])
        raise InvalidArgumentError(f"labels {where}: {bad.size} label(s) outside the model's classes 0..{classes - 1} "
                                   f"(output 0 has {classes} values), the first: sample {i}, label {int(labels[i])}")
