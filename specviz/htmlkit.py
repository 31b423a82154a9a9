"""Small HTML helpers shared by the widget apps and the live view (plain strings, no widgets).

>>> html_table([["1", "2"]], header=["a", "b"]).count("<td")
2
"""

from __future__ import annotations

from collections.abc import Sequence

from .foundation.palette import INK


def html_table(rows: Sequence[Sequence[str]], header: Sequence[str] | None = None) -> str:
    """A compact HTML table of already formatted cells (the look of every specviz table)."""
    cell = f"padding:2px 10px;text-align:right;border-bottom:1px solid {INK['rule']}"
    out = ["<table style='border-collapse:collapse;font-size:13px'>"]
    if header:
        out.append("<tr>" + "".join(f"<th style='{cell}'>{h}</th>" for h in header) + "</tr>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td style='{cell}'>{c}</td>" for c in r) + "</tr>")
    out.append("</table>")
    return "".join(out)
