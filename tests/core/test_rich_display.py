"""Notebook display (strgm.display): every ``_repr_html_`` is well-formed and escapes
hostile labels, sizes are capped, the numbers are those of the objects' own queries
(checked against brute force), and ``FactorGraph._repr_svg_`` runs Graphviz's ``dot``
when it is on PATH and gives None when it is not. The escaping check is shown to catch
a display that forgets to escape (negative control)."""

import itertools
import os
import shutil
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np
import pynini
import pytest

import fst_factors.transducers as ff
from strgm import display
from fst_factors.alphabet import Alphabet
from strgm.grammars.cfg import Grammar, Rule
from strgm.graph import FactorGraph
from strgm.hmm import Categorical
from strgm.hmm.model import HMM, HMMPosterior
from strgm.inference.belief import DISPLAY_ENTROPY_STATES, Belief
from fst_factors.wfsa.construct import string_acceptor

TAGS = {"div", "p", "b", "table", "caption", "thead", "tbody", "tr", "th", "td"}
HOSTILE = ["<unk>", "a&b", "<script>", "ʃʰ", '"q"']
SVG = "{http://www.w3.org/2000/svg}svg"


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def problems(html: str, texts=()) -> list:
    """What is wrong with a display: not well-formed XML, a tag that is not ours (an
    unescaped label read as markup), or a label that does not appear as text."""
    try:
        root = ET.fromstring(html)
    except ET.ParseError as e:
        return [f"not well-formed: {e}"]
    p = _Tags()
    p.feed(html)
    p.close()
    out = [f"foreign tag <{t}>" for t in sorted(set(p.tags) - TAGS)]
    etext, htext = "".join(root.itertext()), "".join(p.text)
    out += [f"label {t!r} not shown as text" for t in texts
            if t not in etext or t not in htext]
    return out


def rows(html: str) -> list:
    """The body rows of every table, as lists of cell texts."""
    return [["".join(td.itertext()) for td in tr.findall("td")]
            for tr in ET.fromstring(html).iter("tr") if tr.find("td") is not None]


def hostile_graph():
    a = Alphabet(["<unk>", "a&b", "<script>", "ʃʰ", '"q"'])
    g = FactorGraph(a)
    g.add_variable("<script>")
    g.add_variable("a&b", observed=[1, 2, 5])
    g.add_unary("<unk>", "<script>", ff.geometric_unigram_prior(a.size, 1.0))
    g.add_binary("ʃʰ&", "<script>", "a&b", ff.edit_transducer(a.size))
    return g, a


@pytest.fixture
def no_dot(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert shutil.which("dot") is None


def fake_dot(tmp_path, monkeypatch, body: str):
    """A program ``dot`` on a PATH of its own that runs ``body`` (sh)."""
    if os.name != "posix":
        pytest.skip("the fake dot program is a shell script")
    exe = tmp_path / "dot"
    exe.write_text("#!/bin/sh\ncat >/dev/null\n" + body + "\n", encoding="utf-8")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))


# --- escaping, and its negative control ---------------------------------------------

def test_graph_summary_escapes_hostile_labels(no_dot):
    g, _ = hostile_graph()
    assert g._repr_svg_() is None
    html = g._repr_html_()
    assert problems(html, HOSTILE) == []
    assert ["a&b", '<unk> a&b "q"', "1"] in rows(html)
    assert ["ʃʰ&", "binary", "<script>, a&b"] in rows(html)


def test_an_unescaped_display_is_caught(no_dot, monkeypatch):
    g, a = hostile_graph()
    grammar = Grammar([Rule("S", ("<unk>", "a&b"))])
    belief = Belief("<script>", ff.geometric_unigram_prior(a.size, 1.0), a)
    monkeypatch.setattr(display, "escape", lambda t: t if isinstance(t, display.Html)
                        else str(t))
    for obj in (g, grammar, belief):
        assert problems(obj._repr_html_(), HOSTILE) != [], type(obj).__name__


def test_helpers_escape_every_kind_of_cell():
    html = display.card("<t>", display.facts([("<k>", "&v")]), display.table(
        ["<h>"], [["<c>"], [0.5], [display.bar(2.0)]], more=3, more_what="<m>",
        caption="<cap>"))
    assert problems(html, ["<t>", "<k>", "&v", "<h>", "<c>", "<m>", "<cap>"]) == []
    assert 'width:100.0%' in html and "… 3 more <m>" in "".join(ET.fromstring(html).itertext())


# --- beliefs ---------------------------------------------------------------------------

def test_belief_table_is_its_kbest_checked_by_enumeration():
    a = Alphabet(["<unk>", "&", "ʃʰ"])
    acc = pynini.union(*(string_acceptor(s, w) for s, w in
                         [((1,), 0.3), ((2, 3), 1.2), ((), 0.9), ((3, 3, 1), 2.0)])).optimize()
    b = Belief("M&", acc, a)
    html = b._repr_html_(k=3)
    assert problems(html, ["<unk>", "M&", "ε"]) == []
    words = [w for n in range(4) for w in itertools.product((1, 2, 3), repeat=n)]
    probs = np.exp(b.logprobs(words))
    best = [(a.join(words[i]) or "ε", probs[i]) for i in np.argsort(-probs, kind="stable")[:3]]
    got = [(s, float(p)) for s, p, _ in rows(html)]
    assert [s for s, _ in got] == [s for s, _ in best]
    assert [p for _, p in got] == pytest.approx([p for _, p in best], rel=2e-3)
    assert "entropy" in html


def test_cyclic_belief_with_infinite_support_returns_k_rows():
    a = Alphabet([chr(ord("a") + i) for i in range(20)])
    b = Belief("M", ff.geometric_unigram_prior(a.size, 0.5), a)
    html = b._repr_html_(k=4)
    assert problems(html) == [] and len(rows(html)) == 4


def test_ambiguous_cyclic_belief_entropy_is_an_estimate():
    a = Alphabet(["x", "y"])
    p1, p2 = ff.geometric_unigram_prior(2, 1.0), ff.geometric_unigram_prior(2, 3.0)
    b = Belief("M", pynini.union(p1, p2), a)
    html = b._repr_html_(k=3)
    assert problems(html) == [] and "Monte-Carlo" in html


def test_big_belief_skips_the_entropy():
    a = Alphabet(["x", "y"])
    long = string_acceptor(tuple([1, 2] * DISPLAY_ENTROPY_STATES))
    html = Belief("M", long, a)._repr_html_()
    assert problems(html) == [] and "entropy" not in html and len(rows(html)) == 1


# --- grammars --------------------------------------------------------------------------

def test_grammar_rows_are_the_top_rules_per_lhs():
    rules = [Rule("S", ("A&", "<b>"), 1.0), Rule("S", ("x",), 3.0), Rule("S", ("y",), 2.0),
             Rule("A&", ("a",), 1.0), Rule("<b>", ("ʃʰ",), 1.0)]
    html = Grammar(rules)._repr_html_(max_lhs=5, max_rules=2)
    assert problems(html, ["A&", "<b>", "ʃʰ"]) == []
    got = [r[:4] for r in rows(html)]
    assert got[:3] == [["S", "→", "x", "0.5"], ["S", "→", "y", "0.333"],
                       ["S", "→", "… 1 more rules", ""]]
    assert ["A&", "→", "a", "1"] in got and ["<b>", "→", "ʃʰ", "1"] in got


def test_big_grammar_display_is_capped():
    rules = [Rule(f"N{i}", (f"N{i + 1}" if i < 199 else "t", f"w{j}"), 1.0 + j)
             for i in range(200) for j in range(40)]
    html = Grammar(rules)._repr_html_()
    assert problems(html) == []
    body = rows(html)
    assert len(body) == 5 * 6 + 1
    assert body[-1] == ["… 195 more left-hand sides"]
    assert body[0][:3] == ["N0", "→", "N1 w39"]
    assert "rules: <b>8000</b>" in html


# --- HMMs ------------------------------------------------------------------------------

def _hmm(L, V, seed=0, stop=True):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(L), size=L)
    theta = rng.dirichlet(np.ones(V), size=L)
    return HMM(rng.dirichlet(np.ones(L)), P, rng.uniform(0.2, 0.5, L) if stop else None,
               {"theta": theta}, Categorical(V, 1.0))


def test_hmm_displays_cap_the_states_and_escape_the_vocabulary():
    vocab = ("<s>", "a&b", "ʃʰ")
    post = HMMPosterior((_hmm(30, 3, 0), _hmm(30, 3, 1)), vocab, None)
    html = post._repr_html_()
    assert problems(html, ["<s>", "a&b"]) == []
    body = rows(html)
    assert len(body) == 11 and body[-1] == ["… 20 more states"]
    occ = post.mean().occupancy()
    assert float(body[0][1]) == pytest.approx(occ.max(), rel=1e-2)
    html = _hmm(4, 3, stop=False)._repr_html_()
    assert problems(html) == [] and "<th>p0</th>" in html


# --- the SVG picture ---------------------------------------------------------------------

def test_svg_without_dot_is_none(no_dot):
    g, _ = hostile_graph()
    assert g._repr_svg_() is None
    html = g._repr_html_()
    assert html is not None and "install Graphviz" in html  # says how to get the picture


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not on PATH")
def test_svg_with_the_real_dot_program():
    g, _ = hostile_graph()
    svg = g._repr_svg_()
    root = ET.fromstring(svg)
    assert root.tag == SVG
    assert "<script>" in "".join(root.itertext())
    assert g._repr_html_() is None  # the front end shows the picture


def test_svg_from_a_fake_dot_then_fallback_when_it_fails(tmp_path, monkeypatch):
    g, _ = hostile_graph()
    fake_dot(tmp_path, monkeypatch, "printf '<?xml version=\"1.0\"?>\\n"
             "<svg xmlns=\"http://www.w3.org/2000/svg\"><text>ok</text></svg>\\n'")
    svg = g._repr_svg_()
    assert ET.fromstring(svg).tag == SVG and svg.startswith("<svg")
    assert g._repr_html_() is None
    fake_dot(tmp_path, monkeypatch, "echo 'syntax error' >&2; exit 1")
    g2 = g.observe({"a&b": [1]})
    assert g2._repr_svg_() is None
    assert problems(g2._repr_html_(), ["<script>", "a&b", "<unk>", "ʃʰ&"]) == []


def test_a_hanging_dot_times_out(tmp_path, monkeypatch):
    fake_dot(tmp_path, monkeypatch, "exec sleep 5")
    monkeypatch.setattr(display, "DOT_TIMEOUT", 0.3)
    g, _ = hostile_graph()
    assert g._repr_svg_() is None
