"""Generated sections of a Markdown file: text kept between ``<!-- KIND:NAME -->`` and ``<!-- /KIND:NAME -->``.

The README's operator table (:mod:`tvmdevice.optable`) and its figure tables (``bench/figures.py``) are
written this way, so that no table is typed by hand and a check can tell when one is stale.
"""

from __future__ import annotations

import re

__all__ = ["replace_section"]


def replace_section(text: str, kind: str, name: str, body: str) -> str:
    """``text`` with what stands between the ``kind:name`` markers replaced by ``body``.

    :raises ValueError: the markers are missing.
    """
    tag = f"{re.escape(kind)}:{re.escape(name)}"
    pattern = re.compile(rf"(<!-- {tag} -->\n).*?(<!-- /{tag} -->)", re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"no <!-- {kind}:{name} --> ... <!-- /{kind}:{name} --> markers")
    return pattern.sub(lambda m: m.group(1) + body + m.group(2), text)
