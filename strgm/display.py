"""Rich display in notebooks: small HTML tables with inline probability bars, and
Graphviz SVG (docs/architecture.md §1, layer 1: imports no other strgm module).

Jupyter shows an object through its ``_repr_html_`` / ``_repr_svg_`` methods; the
classes that have them (``FactorGraph``, ``Belief``, ``Grammar``, ``HMM``,
``HMMPosterior``) gather their numbers and build the markup here. Every helper takes
raw text and escapes it itself with :func:`escape` (IPA, ``<unk>``, ``&`` in symbols are
text, never markup); only :class:`Html` values, which these helpers make, pass through
unescaped. The output is well-formed XML (every tag closed, attributes quoted, no
named entities), so ``xml.etree`` can check it. Pure HTML and CSS: no matplotlib, no
JavaScript. Sizes are capped by the callers ("… N more" rows): a repr never grows
with the grammar or the support of a distribution.

:func:`dot_to_svg` runs Graphviz's ``dot -Tsvg`` as a subprocess with a timeout and
returns None when the program is not on PATH, fails or times out, so that a notebook
falls back to another representation instead of showing a traceback.
"""

from __future__ import annotations

import html
import math
import shutil
import subprocess
from typing import Iterable, Optional, Sequence

__all__ = ["Html", "escape", "bar", "table", "facts", "card", "ranked_rows",
           "dot_to_svg", "has_program", "shown", "DOT_TIMEOUT", "MAX_ROWS"]

#: Seconds Graphviz may take to lay out a graph before the display gives up.
DOT_TIMEOUT = 10.0
#: Rows a display table shows before its "… N more" row.
MAX_ROWS = 20
BAR_WIDTH_PX = 120
BAR_COLOUR = "#4a7ebb"
BAR_TRACK = "#e6e6e6"
EPSILON = "ε"


class Html(str):
    """Markup made by the helpers of this module: :func:`escape` leaves it as it is."""


def escape(text) -> str:
    """``text`` as HTML text (``&``, ``<``, ``>``, quotes escaped); :class:`Html` as is."""
    if isinstance(text, Html):
        return text
    return html.escape(str(text), quote=True)


def number(x: float) -> str:
    """A probability or count for a table cell: 3 significant digits."""
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def bar(p: float, width_px: int = BAR_WIDTH_PX) -> Html:
    """A horizontal bar as long as ``p`` ∈ [0, 1] (clipped; NaN shows empty)."""
    frac = 0.0 if not math.isfinite(p) else min(max(float(p), 0.0), 1.0)
    return Html(f'<div style="width:{width_px}px;height:0.75em;background:{BAR_TRACK}">'
                f'<div style="width:{100 * frac:.1f}%;height:100%;'
                f'background:{BAR_COLOUR}"></div></div>')


def _cell(value, tag: str = "td") -> str:
    text = number(value) if isinstance(value, (int, float)) and not isinstance(
        value, bool) else value
    align = ' style="text-align:right"' if isinstance(value, (int, float)) else ""
    return f"<{tag}{align}>{escape(text)}</{tag}>"


def table(headers: Sequence[str], rows: Iterable[Sequence], more: int = 0,
          more_what: str = "rows", caption: Optional[str] = None) -> Html:
    """An HTML table; cells are text (escaped), numbers (3 significant digits) or
    :class:`Html`. ``more`` > 0 adds a last row "… more more more_what"."""
    out = ['<table style="border-collapse:collapse">']
    if caption:
        out.append(f'<caption style="text-align:left">{escape(caption)}</caption>')
    out.append("<thead><tr>" + "".join(_cell(h, "th") for h in headers) + "</tr></thead>")
    out.append("<tbody>")
    for row in rows:
        out.append("<tr>" + "".join(_cell(c) for c in row) + "</tr>")
    if more > 0:
        out.append(f'<tr><td colspan="{len(headers)}" style="font-style:italic">'
                   f'{escape(f"… {more} more {more_what}")}</td></tr>')
    out.append("</tbody></table>")
    return Html("".join(out))


def facts(pairs: Iterable[tuple[str, object]]) -> Html:
    """One line "name: value · name: value" (values escaped; numbers formatted)."""
    items = [f"{escape(k)}: <b>{escape(number(v) if isinstance(v, float) else v)}</b>"
             for k, v in pairs]
    return Html("<p>" + " · ".join(items) + "</p>")


def card(title: str, *parts: str) -> Html:
    """A titled block holding ``parts`` (each already :class:`Html`)."""
    body = "".join(escape(p) for p in parts)
    return Html(f'<div class="strgm-repr"><p><b>{escape(title)}</b></p>{body}</div>')


def shown(text: str) -> str:
    """The empty string as ε (the display form of an empty word or right-hand side)."""
    return text if text != "" else EPSILON


def ranked_rows(pairs: Iterable[tuple[str, float]], first: Sequence = ()) -> list:
    """Rows ``(*first, string, p, bar(p))`` of (string, probability) pairs; the empty
    string is shown as ε."""
    return [(*first, shown(s), float(p), bar(float(p))) for s, p in pairs]


def has_program(program: str = "dot") -> bool:
    """Whether ``program`` (Graphviz's ``dot`` by default) is on PATH."""
    return shutil.which(program) is not None


def dot_to_svg(dot: str, timeout: Optional[float] = None, program: str = "dot"
               ) -> Optional[str]:
    """The SVG of Graphviz ``dot`` text, from ``program -Tsvg`` (the ``<svg>`` element
    only: the XML prolog and doctype are dropped), or None when ``program`` is not on
    PATH, exits with an error, prints no SVG or takes more than ``timeout`` seconds
    (default :data:`DOT_TIMEOUT`).
    Graphviz escapes the labels it writes into the SVG."""
    exe = shutil.which(program)
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, "-Tsvg"], input=dot.encode("utf-8"),
                              capture_output=True, check=False,
                              timeout=DOT_TIMEOUT if timeout is None else timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    svg = done.stdout.decode("utf-8", "replace")
    start = svg.find("<svg")
    return svg[start:] if start >= 0 and "</svg>" in svg else None
