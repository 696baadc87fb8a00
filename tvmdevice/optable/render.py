"""The operator table as a terminal table (rich) and as the README's markdown sections.

The README holds two generated sections, each between a pair of markers
``<!-- optable:NAME -->`` and ``<!-- /optable:NAME -->``: ``operators`` (the
table of the installed devices: regenerate it with every project plugin
installed) and ``tflm-unsupported`` (TFLM's builtins tvmdevice does not run,
with the reasons).  :func:`update` rewrites them in a text; tests check the
README is in sync.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from tvmdevice.marked_sections import replace_section
from tvmdevice.optable import OperatorTable
from tvmdevice.optable.tflm import unsupported

if TYPE_CHECKING:  # pragma: no cover
    from rich.table import Table

__all__ = ["MARK", "rich_table", "markdown_operators", "markdown_unsupported", "SECTIONS", "update"]

MARK = "\u2713"


def _device_notes(table: OperatorTable) -> list[str]:
    return [f"{c.name} ({c.distribution}): options {', '.join(c.options) or 'none'}" for c in table.columns]


def rich_table(table: OperatorTable) -> "Table":
    """The table for a terminal: one row per kernel key, one column per device."""
    from rich.table import Table

    t = Table(title="Operators by device and data type", caption="; ".join(_device_notes(table)),
              caption_justify="left")
    t.add_column("operator", style="bold")
    t.add_column("dtypes")
    for c in table.columns:
        t.add_column(c.name, justify="center")
    t.add_column("note")
    for r in table.rows:
        t.add_row(r.op_type, r.dtypes, *(MARK if c.name in r.devices else "" for c in table.columns), r.note)
    return t


def markdown_operators(table: OperatorTable) -> str:
    """The table as markdown, with each device's numeric target options after it."""
    head = ["operator", "dtypes", *(f"`{c.name}`" for c in table.columns), "note"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in table.rows:
        marks = [MARK if c.name in r.devices else "" for c in table.columns]
        lines.append("| " + " | ".join([r.op_type, r.dtypes, *marks, r.note]) + " |")
    lines += ["", f"{MARK}: the device declares the operator variant (its kernel key). The claim holds within the "
                  "device's parameter checks: an operator beyond them is refused when it is prepared, the refusal "
                  "naming the limit, and placement runs it on the next device. Each device's numeric target "
                  "options (defaults), among them those limits:", ""]
    lines += [f"- `{c.name}` ({c.distribution}): {', '.join(f'`{x}`' for x in c.options) or 'none'}"
              for c in table.columns]
    return "\n".join(lines) + "\n"


def markdown_unsupported() -> str:
    """TFLM's builtin operators tvmdevice does not run, each with its reason, as markdown."""
    lines = ["| TFLM operator | why tvmdevice does not run it |", "|---|---|"]
    lines += [f"| {op} | {reason} |" for op, reason in unsupported()]
    return "\n".join(lines) + "\n"


#: README section name -> its generator (the installed devices' table, or TFLM's leftovers).
SECTIONS: dict[str, Callable[[], str]] = {
    "operators": lambda: markdown_operators(_table()),
    "tflm-unsupported": markdown_unsupported,
}


def _table() -> OperatorTable:
    from tvmdevice.optable import build

    return build()


def update(text: str, names: tuple[str, ...] = tuple(SECTIONS)) -> str:
    """``text`` with the generated sections ``names`` rewritten between their markers.

    :raises ValueError: a section's markers are missing.
    """
    for name in names:
        text = replace_section(text, "optable", name, SECTIONS[name]())
    return text
