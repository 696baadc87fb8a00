"""Output paths (``--report``, ``--trace``, ``-o``) checked before any work starts.

A missing parent directory, an unwritable one, a file where a directory is wanted (or the reverse)
is one line and exit status 2 (:class:`OutputPathError`) before a model is compiled or run, not a
failure after minutes of work.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InvalidArgumentError

__all__ = ["OutputPathError", "check_output_file", "check_output_dir", "EXIT_STATUS"]

#: The exit status of a bad output path (argparse's, for a bad command line).
EXIT_STATUS = 2


class OutputPathError(InvalidArgumentError):
    """An output path that cannot be written; the CLI exits with :data:`EXIT_STATUS`."""


def _writable_dir(directory: Path, flag: str, path: str) -> None:
    if not directory.exists():
        raise OutputPathError(f"{flag} {path!r}: the directory {str(directory)!r} does not exist")
    if not directory.is_dir():
        raise OutputPathError(f"{flag} {path!r}: {str(directory)!r} is not a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputPathError(f"{flag} {path!r}: the directory {str(directory)!r} is not writable")


def check_output_file(path: str | None, flag: str) -> None:
    """``path`` can be written as a file: not a directory, its directory exists and is writable, and an
    existing file is writable."""
    if not path:
        return
    p = Path(path)
    if p.is_dir():
        raise OutputPathError(f"{flag} {path!r} is a directory; name a file")
    if p.exists() and not os.access(p, os.W_OK):
        raise OutputPathError(f"{flag} {path!r} exists and is not writable")
    _writable_dir(p.parent if str(p.parent) else Path("."), flag, path)


def check_output_dir(path: str | None, flag: str) -> None:
    """``path`` can be a directory written into: an existing writable directory, or a new one whose
    nearest existing ancestor is a writable directory (the missing ones are created)."""
    if not path:
        return
    p = Path(path)
    if p.exists():
        if not p.is_dir():
            raise OutputPathError(f"{flag} {path!r} is a file, not a directory")
        if not os.access(p, os.W_OK | os.X_OK):
            raise OutputPathError(f"{flag} {path!r}: the directory is not writable")
        return
    ancestor = p.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputPathError(f"{flag} {path!r}: {str(ancestor)!r} is a file, not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise OutputPathError(f"{flag} {path!r}: the directory {str(ancestor)!r} is not writable")
