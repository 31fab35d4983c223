"""The report page's HTML pieces shared by its sections: escaping and a table of plain cells."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

__all__ = ["esc", "html_table"]


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def html_table(headers: Sequence[str], rows: Iterable[Sequence[tuple[str, str, str]]]) -> str:
    """Rows of (text, css class, title) cells, in a box that scrolls sideways when wider than the page."""
    out = ['<div class="scroll"><table>', "<thead><tr>"]
    out += [f'<th scope="col">{esc(h)}</th>' for h in headers]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for text, css, title in row:
            attrs = (f' class="{css}"' if css else "") + (f' title="{esc(title)}"' if title else "")
            out.append(f"<td{attrs}>{esc(text)}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)
