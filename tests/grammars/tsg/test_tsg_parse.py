"""Parsing with a trained TSG: the MH chain over draws from the transformed grammar
targets the exact DP-TSG predictive of a new sentence's derivations (enumerated: every
tree of the training CFG with that yield × every substitution configuration, each
scored by the sequential Pólya urn of eq. (1) on top of the training counts); without the
MH correction the chain stays at the MAP proposal and fails the same test (negative
control).  Also: MPD is the most probable derivation under footnote 3's grammar, the
model file round-trips, and unknown words map to signatures."""

import itertools
import math

import numpy as np
import pytest

from strgm.errors import InputError
from strgm.grammars.tsg import BlockedMHTSG, elementary_trees
from strgm.grammars.tsg.model_file import TSGModel, load_model, prepare_trees, save_model
from strgm.grammars.tsg.parse import TSGParser
from strgm.grammars.tsg.transform import et_strings
from tests.grammars.tsg.tsg_oracles import TOY2, log_p0, pcfg_of, tv_distance

ALPHA = 0.3
SENTENCE = ("a", "a", "a", "b")


def _model():
    k = BlockedMHTSG(TOY2, alpha=ALPHA, s=0.4)
    st = k.init(0, "maximal")  # whole trees cached: the urn's reuse matters
    return k, st


def _nonroot_count(tree):
    return -1 + sum(1 for _ in _nodes(tree))


def _nodes(t):
    if isinstance(t, str):
        return
    yield t
    for c in t[1:]:
        yield from _nodes(c)


def _trees(pcfg, label, words):
    """Every tree of the (binary, unary-cycle-free) CFG ``pcfg`` over ``words``."""
    out = []
    for (lhs, rhs), _ in pcfg.items():
        if lhs != label:
            continue
        if len(rhs) == 1 and rhs[0] not in {l for l, _ in pcfg}:
            if words == rhs:
                out.append((lhs, rhs[0]))
        elif len(rhs) == 1:
            out.extend((lhs, t) for t in _trees(pcfg, rhs[0], words))
        else:
            for cut in range(1, len(words)):
                for a in _trees(pcfg, rhs[0], words[:cut]):
                    out.extend((lhs, a, b) for b in _trees(pcfg, rhs[1], words[cut:]))
    return out


def _exact(k, st, sequential=True):
    """{(tree, sites): P(d | w)} with P(d) the sequential urn given the training ETs
    (``sequential=False``: Π_e p_MAP(e), the counts not incremented within d)."""
    pcfg = pcfg_of(TOY2)
    counts = {et: n for n, et in elementary_trees(st, k)}
    s = {x: float(st.s[k.table.label_index[x]]) for x in k.table.labels}
    ncat = {}
    for et, n in counts.items():
        c = et[1:].split()[0]
        ncat[c] = ncat.get(c, 0) + n
    out = {}
    for tree in _trees(pcfg, "S", SENTENCE):
        for bits in itertools.product((0, 1), repeat=_nonroot_count(tree)):
            sites = (1,) + bits
            used, usedc, lp = {}, {}, 0.0
            for et in et_strings(tree, list(sites)):
                c = et[1:].split()[0]
                p0 = math.exp(log_p0(et, pcfg, s))
                lp += math.log((counts.get(et, 0) + used.get(et, 0) + ALPHA * p0)
                               / (ncat.get(c, 0) + usedc.get(c, 0) + ALPHA))
                if sequential:
                    used[et] = used.get(et, 0) + 1
                    usedc[c] = usedc.get(c, 0) + 1
            out[(tree, sites)] = lp
    z = max(out.values())
    tot = sum(math.exp(v - z) for v in out.values())
    return {key: math.exp(v - z) / tot for key, v in out.items()}


def _chain_samples(parser, n, seed):
    rng = np.random.default_rng(seed)
    return parser.chain(parser.draws(SENTENCE, rng, n), rng)


def test_parse_chain_matches_exact_predictive():
    k, st = _model()
    parser = TSGParser(k, st)
    exact = _exact(k, st)
    got = _chain_samples(parser, 20000, 5)
    assert tv_distance(exact, got) < 0.03
    assert 0.5 < parser.acceptance < 1.0


def test_parse_chain_without_correction_fails(monkeypatch):
    import strgm.grammars.tsg.parse as parse_mod
    k, st = _model()
    parser = TSGParser(k, st)
    exact = _exact(k, st)
    monkeypatch.setattr(parse_mod, "crp_log_prob", parse_mod.map_log_prob)
    # 10000 draws (20000 before): TV 0.158 here, the corrected chain's 0.042 at this size
    got = _chain_samples(parser, 10000, 5)
    assert tv_distance(exact, got) > 0.06


def test_mpd_is_the_most_probable_derivation_of_the_map_tsg():
    k, st = _model()
    parser = TSGParser(k, st)
    q = _exact(k, st, sequential=False)
    top = sorted(q.values())[-2:]
    assert top[1] > top[0] * (1 + 1e-6)  # a unique maximum
    assert parser.parse(SENTENCE, "mpd") == max(q, key=q.get)[0]
    assert parser.parse(("a", "c"), "mpd") is None
    assert parser.parse(("a", "c"), "mer") is None


def test_model_file_round_trip(tmp_path):
    trees, prep = prepare_trees([("S", ("NP", ("DT", "the"), ("JJ", "big"), ("NN", "dog")),
                                  ("VP", ("VBD", "barked"))),
                                 ("S", ("NP", ("DT", "the"), ("NN", "dog")),
                                  ("VP", ("VBD", "slept"))),
                                 ("S", ("NP", ("DT", "the"), ("NN", "cow")),
                                  ("VP", ("VBD", "barked")))], unk_threshold=1, horizontal=1)
    k = BlockedMHTSG(trees, resample_hyper=True)
    st = k.sample(k.init(0))
    path = tmp_path / "m.json"
    save_model(path, TSGModel(k, st, prep))
    m = load_model(path)
    assert m.prepare == prep and m.state.trace == st.trace
    assert elementary_trees(m.state, m.kernel) == elementary_trees(st, k)
    mapped = m.map_words(["the", "cat", "barked"])
    assert mapped[0] == "the" and mapped[1].startswith("<UNK")
    tree = TSGParser(m.kernel, m.state, samples=20).parse(mapped)
    assert tree is not None
    restored = m.restore(tree, ["the", "cat", "barked"])
    assert restored[0] == "S" and "|<" not in str(restored)


def test_model_file_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "strgm-tsg-state"}')
    with pytest.raises(InputError, match="not a TSG model") as e:
        load_model(bad)
    assert "bad.json" in str(e.value)
    with pytest.raises(InputError, match="missing.json"):
        load_model(tmp_path / "missing.json")
