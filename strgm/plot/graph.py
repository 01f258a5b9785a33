"""A factor graph as SVG, for notebooks and reports: the dot text of
:meth:`strgm.graph.FactorGraph.to_dot` (what ``strgm graph FILE --dot OUT`` writes)
laid out by Graphviz.

Two things are needed and either may be missing: the ``graphviz`` Python package
(``pip install graphviz``) and Graphviz's ``dot`` program on PATH (a system package,
e.g. ``apt-get install graphviz``). The error says which. In a notebook,
``IPython.display.SVG(graph_svg(model.graph))`` shows the graph.
"""

from __future__ import annotations

import shutil

from strgm.errors import InputError, MissingDependencyError

__all__ = ["graph_svg"]

NO_PACKAGE = "graph_svg needs the graphviz Python package: pip install graphviz"
NO_BINARY = ("graph_svg needs Graphviz's 'dot' program on PATH: install Graphviz "
             "(e.g. apt-get install graphviz, brew install graphviz)")


def graph_svg(graph, engine: str = "dot") -> str:
    """The SVG text of ``graph`` (a :class:`~strgm.graph.FactorGraph`, or dot text)
    laid out by Graphviz's ``engine``. Raises MissingDependencyError naming the missing
    package or program, InputError when Graphviz rejects the dot text."""
    dot = graph.to_dot() if hasattr(graph, "to_dot") else graph
    if not isinstance(dot, str):
        raise InputError("graph_svg: expected a FactorGraph or dot text, got "
                         f"{type(graph).__name__}")
    try:
        import graphviz
    except ImportError:
        raise MissingDependencyError(NO_PACKAGE) from None
    if shutil.which(engine) is None:
        raise MissingDependencyError(NO_BINARY if engine == "dot" else
                                     NO_BINARY.replace("'dot'", repr(engine)))
    try:
        out = graphviz.Source(dot, engine=engine).pipe(format="svg")
    except getattr(graphviz, "ExecutableNotFound", ()):
        raise MissingDependencyError(NO_BINARY) from None
    except getattr(graphviz, "CalledProcessError", ()) as e:
        detail = (getattr(e, "stderr", b"") or b"").decode("utf-8", "replace").strip()
        raise InputError(f"graph_svg: Graphviz rejected the dot text: "
                         f"{detail.splitlines()[0] if detail else e}") from None
    return out.decode("utf-8") if isinstance(out, bytes) else out
