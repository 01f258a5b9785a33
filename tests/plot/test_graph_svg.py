"""graph_svg: the factor graph's dot text through Graphviz, or an error naming what is
missing (the Python package or the dot program). The machine running the tests may have
neither, so both are also faked."""

import shutil
import sys
import types
import xml.etree.ElementTree as ET

import pytest

import fst_factors.transducers as ff
from fst_factors.alphabet import Alphabet
from strgm.errors import InputError, MissingDependencyError
from strgm.graph import FactorGraph
from strgm.plot import graph as graph_module
from strgm.plot import graph_svg


def small_graph():
    a = Alphabet(["a", "b"])
    g = FactorGraph(a)
    g.add_variable("UR")
    g.add_variable("SR", observed="ab")
    g.add_unary("prior", "UR", ff.geometric_unigram_prior(a.size, 1.0))
    g.add_binary("phonology", "UR", "SR", ff.edit_transducer(a.size))
    return g


def fake_graphviz(calls):
    mod = types.ModuleType("graphviz")

    class Source:
        def __init__(self, dot, engine="dot"):
            calls.append((dot, engine))

        def pipe(self, format):
            return b'<svg xmlns="http://www.w3.org/2000/svg"><text>UR</text></svg>'

    mod.Source = Source
    return mod


def test_without_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(MissingDependencyError, match="pip install graphviz") as e:
        graph_svg(small_graph())
    assert isinstance(e.value, ImportError) and "dot" not in str(e.value).split(":")[0]


def test_without_the_dot_program(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", fake_graphviz([]))
    monkeypatch.setattr(graph_module.shutil, "which", lambda name: None)
    with pytest.raises(MissingDependencyError, match="'dot' program on PATH") as e:
        graph_svg(small_graph())
    assert "pip install" not in str(e.value)


def test_with_both_the_dot_text_goes_to_graphviz(monkeypatch):
    calls = []
    monkeypatch.setitem(sys.modules, "graphviz", fake_graphviz(calls))
    monkeypatch.setattr(graph_module.shutil, "which", lambda name: "/usr/bin/" + name)
    g = small_graph()
    svg = graph_svg(g)
    assert calls == [(g.to_dot(), "dot")]
    assert ET.fromstring(svg).tag.endswith("svg")
    assert graph_svg("graph x { a -- b }") == svg  # dot text is accepted too
    with pytest.raises(InputError, match="FactorGraph or dot text"):
        graph_svg(42)


def test_real_graphviz_when_installed():
    pytest.importorskip("graphviz")
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed")
    doc = ET.fromstring(graph_svg(small_graph()))
    assert doc.tag.endswith("svg")
