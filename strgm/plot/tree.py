"""Parse trees as pictures: :func:`plot_tree` draws one with matplotlib, and
:class:`TreeView` shows one in a notebook as SVG written directly as text (no
matplotlib needed). Both use the layout of :mod:`strgm.plot.tree_layout`."""

from __future__ import annotations

from xml.sax.saxutils import escape

from strgm.plot._mpl import axes_for, plain, require_matplotlib
from strgm.plot.tree_layout import as_tree, layout_tree

__all__ = ["plot_tree", "TreeView", "tree_svg"]

LEAF_COLOUR, NODE_COLOUR = "#1f4e99", "#000000"


def plot_tree(tree, ax=None):
    """Draw ``tree`` (nested tuples, or bracketed text) with the root at the top: one
    text per node (leaves in blue), a line from every node to its parent. Returns the
    Axes, whose x and y ticks are hidden."""
    require_matplotlib()
    nodes = layout_tree(tree)
    width = max(n.x for n in nodes) + 1
    depth = max(n.depth for n in nodes) + 1
    ax = axes_for(ax, figsize=(min(1.0 + 0.7 * width, 40), 0.6 + 0.7 * depth))
    for n in nodes:
        if n.parent is not None:
            p = nodes[n.parent]
            ax.plot([p.x, n.x], [-p.depth, -n.depth], color="0.6", linewidth=1, zorder=1)
    box = dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor="none")
    for n in nodes:
        ax.text(n.x, -n.depth, plain(n.label), ha="center", va="center", zorder=2, bbox=box,
                color=LEAF_COLOUR if n.leaf else NODE_COLOUR,
                fontstyle="italic" if n.leaf else "normal")
    ax.set_xlim(-0.6, width - 0.4)
    ax.set_ylim(-depth + 0.4, 0.6)
    ax.set_axis_off()
    return ax


def tree_svg(tree, x_unit: int = 56, y_unit: int = 44, font_size: int = 13) -> str:
    """``tree`` as an SVG document (text): one ``<text>`` per node, one ``<line>`` per
    edge; ``x_unit`` and ``y_unit`` are the pixels between leaves and between levels."""
    nodes = layout_tree(tree)
    width = (max(n.x for n in nodes) + 1) * x_unit
    height = (max(n.depth for n in nodes) + 1) * y_unit

    def at(n):
        return (n.x + 0.5) * x_unit, (n.depth + 0.5) * y_unit

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" '
           f'height="{height:g}" viewBox="0 0 {width:g} {height:g}" '
           f'font-family="sans-serif" font-size="{font_size}">']
    for n in nodes:
        if n.parent is not None:
            (x1, y1), (x2, y2) = at(nodes[n.parent]), at(n)
            out.append(f'<line x1="{x1:g}" y1="{y1 + font_size * 0.6:g}" x2="{x2:g}" '
                       f'y2="{y2 - font_size * 0.8:g}" stroke="#999" />')
    for n in nodes:
        x, y = at(n)
        style = f' fill="{LEAF_COLOUR}" font-style="italic"' if n.leaf else ""
        label = "ε" if n.label == "" else n.label
        out.append(f'<text x="{x:g}" y="{y:g}" text-anchor="middle" '
                   f'dominant-baseline="middle"{style}>{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


class TreeView:
    """A parse tree that a notebook displays as SVG (``_repr_svg_``), e.g.
    ``TreeView(read_mrg("wsj_0001.mrg")[0])`` as the last line of a cell. The tree is
    checked when the view is made; ``svg()`` gives the text."""

    def __init__(self, tree, x_unit: int = 56, y_unit: int = 44):
        self.tree = as_tree(tree)
        self.nodes = layout_tree(self.tree)
        self.x_unit, self.y_unit = x_unit, y_unit

    def svg(self) -> str:
        return tree_svg(self.tree, self.x_unit, self.y_unit)

    def _repr_svg_(self) -> str:
        return self.svg()

    def __repr__(self) -> str:
        n = len(self.nodes)
        return f"TreeView({self.nodes[0].label!r}, {n} node{'s' * (n != 1)})"
