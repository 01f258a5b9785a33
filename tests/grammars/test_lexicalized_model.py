"""The head-driven lexicalised grammar's heads, events and estimates, against hand
derivations and brute force."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from strgm.grammars.lexicalized.events import tree_events
from strgm.grammars.lexicalized.heads import head_index, lexicalize
from strgm.grammars.lexicalized.model import fit_lexicalized
from strgm.grammars.lexicalized.scorer import LEFT, RIGHT, STOP
from strgm.grammars.ptb import parse_trees

SEED_TREE = parse_trees("(S (NP (JJ natural) (NN language) (NN processing)) "
                        "(VP (VBZ is) (ADJP (JJ cool))))")[0]
TREES = parse_trees("""
(S (NP (DT the) (NN dog)) (VP (VBD barked)))
(S (NP (DT a) (NN cat)) (VP (VBD saw) (NP (DT the) (NN dog))))
(S (NP (NNP Kim)) (VP (VBD saw) (NP (DT a) (NN cat)) (PP (IN with) (NP (NN glee)))))
(S (NP (DT the) (NN cat)) (VP (VBD slept)))
(S (NP (NNP Kim)) (VP (VBD barked)))
""")


def test_head_rules_follow_collins():
    assert head_index("S", ["NP", "VP"]) == 1
    assert head_index("VP", ["VBD", "NP", "PP"]) == 0
    assert head_index("NP", ["DT", "NN", "POS"]) == 2       # POS last
    assert head_index("NP", ["NP", "PP"]) == 0              # first NP from the left
    assert head_index("NP", ["DT", "JJ", "NN", "NN"]) == 3  # last noun
    assert head_index("PP", ["IN", "NP"]) == 0
    assert head_index("FOO", ["A", "B"]) == 0               # unknown label: first child


def test_events_of_the_seeds_example():
    """Dawson 2015's head-driven derivation of "natural language processing is cool"
    (without the base-NP level): root S(VBZ, is); S -head-> VP, S -left-> NP(NN,
    processing); VP -head-> VBZ, VP -right-> ADJP(JJ, cool); NP -head-> NN(processing),
    NP -left-> NN(language), then JJ(natural)."""
    ev = tree_events(lexicalize(SEED_TREE))
    assert ev[0] == ("top", (("top",),), ("S", "VBZ"))
    assert ev[1][2] == "is"
    heads = [(c[0][1], o) for f, c, o in ev if f == "head"]
    assert heads == [("S", "VP"), ("NP", "NN"), ("VP", "VBZ"), ("ADJP", "JJ")]
    mods = [(c[0][1], c[0][2], c[0][3], o) for f, c, o in ev if f == "mod"]
    assert ("L", True, "S", ("NP", "NN")) in mods
    assert ("R", True, "VP", ("ADJP", "JJ")) in mods
    assert [m for m in mods if m[2] == "NP"] == [
        ("R", True, "NP", (STOP,)), ("L", True, "NP", ("NN", "NN")),
        ("L", False, "NP", ("JJ", "JJ")), ("L", False, "NP", (STOP,))]
    words = [o for f, c, o in ev if f == "word"]
    assert sorted(words) == sorted(["is", "processing", "language", "natural", "cool"])
    # every phrasal node: one head event and two STOPs
    assert sum(1 for f, _, o in ev if f == "mod" and o == (STOP,)) == 2 * 4


def _brute_collins(events, chain, out, family, b):
    """The backoff recursion straight from the event list: pooled counts at each key."""
    pooled = defaultdict(Counter)
    sizes = {f: len({o for g, _, o in events if g == f}) for f in ("head", "mod", "word",
                                                                   "top")}
    for g, ch, o in events:
        for key in ch:
            pooled[key][o] += 1
    p = 1.0 / sizes[family]
    for key in reversed(chain):
        if key not in pooled:
            continue
        c = pooled[key]
        n, u = sum(c.values()), len(c)
        a = b * u
        p = (c[o] + a * p) / (n + a) if (o := out) is not None else p
    return p


@pytest.mark.parametrize("b", [0.5, 5.0])
def test_collins_estimate_equals_the_recursion_from_raw_counts(b):
    g = fit_lexicalized(TREES, "collins", threshold=0, collins_b=b)
    events = [e for t in TREES for e in tree_events(lexicalize(t))]
    for family, chain, out in events[:40]:
        got = np.exp(g._logp([chain], [out], family))[0]
        assert got == pytest.approx(_brute_collins(events, chain, out, family, b), rel=1e-12)
    # negative control: unpooled counts (data only at the finest keys, so the coarser
    # keys see nothing) disagree with the recursion
    broken = fit_lexicalized(TREES, "collins", threshold=0, collins_b=b)
    t = broken.tables
    leaf_total = np.bincount(t.cell_node, weights=t.leaf_count, minlength=len(t.node_keys))
    broken.cell_count, broken.node_total = t.leaf_count[None], leaf_total[None]
    assert any(np.exp(broken._logp([c], [o], f))[0]
               != pytest.approx(_brute_collins(events, c, o, f, b), rel=1e-6)
               for f, c, o in events[:40])


@pytest.mark.parametrize("smoothing", ["collins", "hdp"])
def test_every_context_distribution_sums_to_one(smoothing):
    g = fit_lexicalized(TREES, smoothing, threshold=0, iters=20, keep=3)
    events = [e for t in TREES for e in tree_events(lexicalize(t))]
    outcomes = defaultdict(set)
    for f, _, o in events:
        outcomes[f].add(o)
    contexts = {(f, ch) for f, ch, _ in events}
    contexts.add(("mod", (("m", LEFT, True, "S", "VP", "VBD", "unseen"),
                          ("m", LEFT, True, "S", "VP", "VBD"), ("m", LEFT, True, "S", "VP"))))
    for f, ch in contexts:
        outs = sorted(outcomes[f], key=repr)
        p = np.exp(g._logp([ch] * len(outs), outs, f))
        assert p.sum() == pytest.approx(1.0, abs=1e-9), (f, ch)


def test_unsmoothed_is_the_relative_frequency_of_the_finest_context_that_saw_it():
    g = fit_lexicalized(TREES, "none", threshold=0)
    # "slept" heads a VP over VBD: P(VBD | VP, VBD, slept) = 1.  An outcome the finest
    # context never saw takes the first coarser context's frequency: NNP never heads an
    # NP headed by an NN, only at the (NP) level; ADJP heads no VP at all: ε
    p = np.exp(g.log_head([("VP", "VBD", "VBD", "slept"), ("NP", "NNP", "NN", "dog"),
                           ("VP", "ADJP", "VBD", "slept")]))
    assert p[0] == 1.0
    heads = {o for t in TREES for f, _, o in tree_events(lexicalize(t)) if f == "head"}
    np_heads = Counter(o for t in TREES for f, c, o in tree_events(lexicalize(t))
                       if f == "head" and c[-1] == ("h", "NP"))
    assert p[1] == pytest.approx(np_heads["NNP"] / sum(np_heads.values()))
    assert 0 < p[1] < 1
    assert p[2] == pytest.approx(1 / len(heads))
    # "saw" heads a VP twice: NP (tree 2), and NP then PP (tree 3)
    p = np.exp(g.log_mod([(RIGHT, True, "VP", "VBD", "VBD", "saw", "NP", "NN", "dog"),
                          (RIGHT, False, "VP", "VBD", "VBD", "saw", "PP", "IN", "with"),
                          (RIGHT, False, "VP", "VBD", "VBD", "saw", STOP, None, None)]))
    # adjacent: NP twice, so P(NP, NN) = 1, times P(dog | ..., saw) = 1/2 (dog, cat);
    # not adjacent: STOP (tree 2), PP then STOP (tree 3): P(PP, IN) = 1/3, P(with) = 1
    assert p[0] == pytest.approx(0.5)
    assert p[1] == pytest.approx(1 / 3)
    assert p[2] == pytest.approx(2 / 3)


def test_scorer_rows_reproduce_the_event_sum():
    """The scorer's contract (top + heads + modifiers + STOPs) gives each training tree
    the same log-probability as the sum of its events."""
    g = fit_lexicalized(TREES, "collins", threshold=0)
    for t in TREES:
        lt = lexicalize(t)
        by_events = sum(float(v.sum()) for v in g.event_logprobs([t]).values())
        assert _contract_logp(g, lt) == pytest.approx(by_events, rel=1e-12)


def _contract_logp(g, lt) -> float:
    total = float(g.log_top([(lt.label, lt.tag, lt.word)])[0])
    stack = [lt]
    while stack:
        n = stack.pop()
        if n.children is None:
            continue
        k, h = n.head, n.children[n.head]
        total += float(g.log_head([(n.label, h.label, n.tag, n.word)])[0])
        for side, mods in ((RIGHT, n.children[k + 1:]), (LEFT, n.children[:k][::-1])):
            rows = [(side, i == 0, n.label, h.label, n.tag, n.word, m.label, m.tag, m.word)
                    for i, m in enumerate(mods)]
            rows.append((side, not mods, n.label, h.label, n.tag, n.word, STOP, None, None))
            total += float(g.log_mod(rows).sum())
        stack.extend(n.children)
    return total


def test_unknown_words_map_to_signatures_and_open_class_tags():
    g = fit_lexicalized(TREES, "collins", threshold=1)
    assert g.token("the") == "the"
    assert g.token("Zorblax", 3).startswith("<UNK")
    tags = g.tags(["the", "glorps"])
    assert tags[0] == ["DT"] and "NN" in tags[1]


@pytest.mark.parametrize("smoothing", ["none", "collins", "hdp"])
def test_saved_model_scores_every_event_as_before(tmp_path, smoothing):
    from strgm.grammars.lexicalized.files import load_lexicalized, save_lexicalized
    from strgm.grammars.unknown_words import treebank_pcfg
    g = fit_lexicalized(TREES, smoothing, iters=10, keep=2)
    pcfg, _ = treebank_pcfg(TREES)
    path = tmp_path / "g.npz"
    save_lexicalized(g, pcfg, path)
    h, pcfg2 = load_lexicalized(path)
    for f, lp in g.event_logprobs(TREES).items():
        np.testing.assert_array_equal(h.event_logprobs(TREES)[f], lp)
    assert h.tags(["the", "Zorblax"]) == g.tags(["the", "Zorblax"])
    assert sorted(map(repr, pcfg2.rules)) == sorted(map(repr, pcfg.rules))
    # control: another smoothing's model scores differently
    other = fit_lexicalized(TREES, "collins" if smoothing != "collins" else "none")
    assert any(not np.array_equal(other.event_logprobs(TREES)[f], lp)
               for f, lp in g.event_logprobs(TREES).items())


def test_a_file_that_is_not_a_model_is_refused_by_name(tmp_path):
    from strgm.errors import InputError
    from strgm.grammars.lexicalized.files import load_lexicalized
    bad = tmp_path / "g.npz"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(InputError, match="g.npz"):
        load_lexicalized(bad)
    np.savez(tmp_path / "h.npz", x=np.zeros(2))
    with pytest.raises(InputError, match="no 'meta' array"):
        load_lexicalized(tmp_path / "h.npz")
