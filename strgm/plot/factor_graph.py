"""A paradigm's factor graph on one page, grouped by morpheme and word.

The graph of :func:`strgm.models.phonology.build_phonology_model` has, per morpheme, a
UR variable with its prior factor, and per word a surface variable (observed), a
phonology factor and, for a word of several morphemes, a concatenation factor and the
word's UR variable. Graphviz lays such a graph out as a few very long ranks; here each
stem (a word's first morpheme) gets a block: the stem on top, then one column per word
of it (concatenation ■, the word's UR, phonology ■, the surface form in [ ]). The other
morphemes (affixes) sit in a band above the blocks, joined to the concatenations that
use them. The blocks are arranged in a grid whose shape suits a landscape page, and the
figure is scaled to fit that page.

Only the graph is read (variables, factors with their kinds and variables), so any
factor graph can be drawn; factors of other kinds are left out of the picture.
"""

from __future__ import annotations

import math

from strgm.errors import InputError
from strgm.plot._mpl import plain, require_matplotlib

__all__ = ["plot_factor_graph", "paradigm_layout", "PAGE"]

#: the page the figure fits, in inches (landscape letter, less margins)
PAGE = (10.0, 7.5)
#: rows of a block, top down: stem, concatenation, word UR, phonology, surface
STEM, CONCAT, UR, PHONOLOGY, SURFACE = 0.0, 0.6, 1.2, 1.8, 2.4
BLOCK_HEIGHT, GAP = 3.0, 0.6
AFFIX_BAND = 1.4


def _words(graph) -> list:
    """(surface var, phonology factor, UR var or None, concat factor or None, parts) of
    every observed or surface-like variable reached by a two-variable factor."""
    makes = {f.variables[-1]: f for f in graph.factors.values() if f.kind == "concat"}
    out = []
    for f in graph.factors.values():
        if f.kind != "binary":
            continue
        u, s = f.variables[0], f.variables[-1]
        concat = makes.get(u)
        parts = list(concat.variables[:-1]) if concat is not None else [u]
        out.append((s, f, u if concat is not None else None, concat, parts))
    return out


def _grid(groups: int, width: float) -> int:
    """Columns of blocks whose grid is closest in shape to the page."""
    target = math.log(PAGE[0] / PAGE[1])

    def misfit(cols):
        rows = math.ceil(groups / cols)
        return abs(math.log(cols * width / (AFFIX_BAND + rows * (BLOCK_HEIGHT + GAP))) - target)

    return min(range(1, groups + 1), key=misfit)


def paradigm_layout(graph) -> tuple[dict, dict, tuple]:
    """(node positions, stem blocks, (width, height)) of ``graph``: positions keyed by
    ``("var", name)`` and ``("factor", name)`` in units where a word column is 1 wide
    and y grows downwards; blocks map a stem variable to its (x, y, width) box."""
    words = _words(graph)
    if not words:
        raise InputError("plot_factor_graph: no word (a factor between a UR and a "
                         "surface variable) in this graph")
    groups: dict = {}
    for w in words:
        groups.setdefault(w[4][0], []).append(w)
    width = max(len(ws) for ws in groups.values()) + GAP
    cols = _grid(len(groups), width)
    pos, blocks = {}, {}
    for i, (stem, ws) in enumerate(groups.items()):
        x0 = (i % cols) * width
        y0 = AFFIX_BAND + (i // cols) * (BLOCK_HEIGHT + GAP)
        blocks[stem] = (x0, y0, len(ws))
        pos[("var", stem)] = (x0 + (len(ws) - 1) / 2, y0 + STEM)
        for j, (s, phon, u, concat, _) in enumerate(ws):
            x = x0 + j
            pos[("factor", phon.name)] = (x, y0 + PHONOLOGY)
            pos[("var", s)] = (x, y0 + SURFACE)
            if concat is not None:
                pos[("factor", concat.name)] = (x, y0 + CONCAT)
                pos[("var", u)] = (x, y0 + UR)
    total = cols * width - GAP
    rest = [v for v in graph.variables if ("var", v) not in pos]
    for k, v in enumerate(rest):  # affixes (and any other variable) across the band
        pos[("var", v)] = ((k + 0.5) * total / len(rest) - 0.5, AFFIX_BAND / 2)
    for f in graph.factors.values():
        if f.kind == "unary" and ("var", f.variables[0]) in pos:
            x, y = pos[("var", f.variables[0])]
            pos[("factor", f.name)] = (x, y - 0.4)  # a prior just above its variable
    rows = math.ceil(len(groups) / cols)
    return pos, blocks, (total, AFFIX_BAND + rows * (BLOCK_HEIGHT + GAP) - GAP)


def _label(graph, name: str) -> str:
    """A variable's label: the surface form in [ ] when observed (``[?]`` for a hidden
    one), else its name without the ``M:`` prefix (a word's UR: ``UR``)."""
    x = graph.variables[name]
    if x.is_observed:
        return f"[{plain(graph.alphabet.join(x.observed))}]"
    kind, _, rest = name.partition(":")
    return {"U": "UR", "S": "[?]"}.get(kind, plain(rest or name))


def _draw_edges(ax, graph, pos: dict, lw: float) -> None:
    for f in graph.factors.values():
        a = pos.get(("factor", f.name))
        for v in f.variables if a is not None else ():
            b = pos.get(("var", v))
            if b is not None:
                far = b[1] < AFFIX_BAND <= a[1]  # to an affix, across the page: faint
                ax.plot([a[0], b[0]], [a[1], b[1]], color="grey", zorder=1,
                        linewidth=lw * (0.5 if far else 1), alpha=0.35 if far else 0.9)


def _draw_nodes(ax, graph, pos: dict, fs: float) -> None:
    fx = [xy for (k, _), xy in pos.items() if k == "factor"]
    ax.scatter([x for x, _ in fx], [y for _, y in fx], marker="s", s=(fs * 0.9) ** 2,
               color="black", zorder=3)
    for (k, name), (x, y) in pos.items():
        if k != "var":
            continue
        observed = graph.variables[name].is_observed
        ax.text(x, y, _label(graph, name), ha="center", va="center", fontsize=fs,
                zorder=4, bbox={"boxstyle": "round,pad=0.25", "linewidth": 0.6,
                                "facecolor": "lightgrey" if observed else "white"})


def plot_factor_graph(graph, title=None):
    """The factor graph ``graph`` (e.g. ``model.graph`` of a paradigm) as one page: a
    block per stem, affixes above (module docstring); returns the matplotlib Figure,
    at most :data:`PAGE` inches, the font scaled to the graph."""
    require_matplotlib()
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyBboxPatch

    pos, blocks, (w, h) = paradigm_layout(graph)
    scale = min(PAGE[0] / (w + 1), PAGE[1] / (h + 1.5))  # inches per unit
    fig = Figure(figsize=((w + 1) * scale, (h + 1.5) * scale), layout="constrained")
    ax = fig.add_subplot()
    longest = max(len(_label(graph, v)) for k, v in pos if k == "var")
    fs = max(3.0, min(10.0, scale * 72 * 0.25, scale * 72 * 0.95 / (0.6 * longest)))
    for x0, y0, n in blocks.values():
        ax.add_patch(FancyBboxPatch((x0 - 0.45, y0 - 0.6), n - 0.1, BLOCK_HEIGHT + 0.2,
                                    boxstyle="round,pad=0.05", facecolor="#f3f3f8",
                                    edgecolor="#ccccdd", zorder=0))
    _draw_edges(ax, graph, pos, lw=max(0.3, fs / 10))
    _draw_nodes(ax, graph, pos, fs)
    ax.set_xlim(-0.6, w - 0.4)
    ax.set_ylim(h + 0.2, -0.2)
    ax.axis("off")
    words = sum(n for _, _, n in blocks.values())
    ax.set_title(plain(title) if title is not None else
                 f"factor graph: {len(blocks)} stems, {words} words; affixes on top; "
                 "■ factors (prior, concatenation, phonology), [surface forms]",
                 fontsize=max(fs, 7))
    return fig
