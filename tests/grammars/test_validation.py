"""The library entry points check their arguments like the command line checks its options;
readers refuse missing, directory, non-UTF-8 and empty files naming them; sampler states
round-trip exactly and damaged ones are refused naming the file."""

import json

import numpy as np
import pytest

from tests.grammars.pcfg_oracles import R
from strgm.grammars.johnson_format import parse_grammar, read_grammar, read_yld, write_grammar
from strgm.grammars.ptb import read_mrg, read_treebank
from strgm.errors import GrammarError, InputError, OptionError
from strgm.grammars.cfg import Grammar
from strgm.grammars.estimators import cvb, em, fit, map_em, vb
from strgm.grammars.sampler_state import SamplerState
from strgm.grammars.samplers import CollapsedMH, GibbsPCFG, run

G = Grammar([R("S", "A", "B"), R("S", "S", "S"), R("A", "a"), R("A", "b"), R("B", "a"),
             R("B", "b")])
CORPUS = [("a", "b"), ("b", "a"), ("a", "b", "b", "a")]


@pytest.mark.parametrize("kw, name", [
    (dict(alpha=0), "alpha"), (dict(alpha=-1), "alpha"), (dict(alpha=float("nan")), "alpha"),
    (dict(alpha=float("inf")), "alpha"), (dict(iters=0), "iters"), (dict(iters=-3), "iters"),
    (dict(iters=2.5), "iters")])
@pytest.mark.parametrize("method", ["map", "vb", "cvb"])
def test_estimators_check_keywords(method, kw, name):
    with pytest.raises(OptionError) as e:
        fit(method, G, CORPUS, **kw)
    assert e.value.option == name


def test_em_and_cvb_specific_checks():
    with pytest.raises(OptionError, match="tol"):
        em(G, CORPUS, tol=-1.0)
    with pytest.raises(OptionError, match="seed"):
        cvb(G, CORPUS, seed=-1)
    with pytest.raises(OptionError, match="method"):
        fit("magic", G, CORPUS)


@pytest.mark.parametrize("fn", [em, map_em, vb, cvb])
def test_empty_and_unparsable_corpora(fn):
    with pytest.raises(InputError, match="empty"):
        fn(G, [], iters=1)
    with pytest.raises(GrammarError, match="none of the 2") as e:
        fn(G, [("x",), ("y", "z")], iters=1)
    assert e.value.corpus_unparsable


@pytest.mark.parametrize("cls", [GibbsPCFG, CollapsedMH])
def test_kernels_check_arguments(cls):
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(OptionError, match="alpha"):
            cls(G, CORPUS, alpha=bad)
    with pytest.raises(OptionError, match="batch_size"):
        cls(G, CORPUS, batch_size=0)
    with pytest.raises(InputError, match="empty"):
        cls(G, [])
    with pytest.raises(GrammarError, match="none of the 1"):
        cls(G, [("q",)]).init(0)
    k = cls(G, CORPUS, alpha=0.5)
    with pytest.raises(OptionError, match="seed"):
        k.init(-1)
    s = k.init(0)
    for kw in (dict(iters=-1), dict(burn_in=-1), dict(thin=0), dict(checkpoint_every=-1)):
        with pytest.raises(OptionError, match=next(iter(kw))):
            run(k, s, **({"iters": 1} | kw))


def test_grammar_checks_pseudocounts():
    with pytest.raises(OptionError, match="alpha"):
        G.pseudocounts(-1)
    with pytest.raises(GrammarError, match="pseudocount"):
        Grammar([R("S", "a")]).with_pseudocounts(float("inf"))
    with pytest.raises(OptionError, match="default_pseudocount"):
        Grammar([R("S", "a")], default_pseudocount=0)


# ------------------------------------------------------------------------ readers
def test_johnson_readers(tmp_path):
    p = tmp_path / "g.lt"
    p.write_bytes(b"\xef\xbb\xbf0.5 S --> a\n")
    assert read_grammar(p).rules[0].lhs == "S"
    p.write_bytes(b"S --> a\nS --> \xff\n")
    with pytest.raises(InputError, match=f"{p}:2:.*UTF-8"):
        read_grammar(p)
    with pytest.raises(InputError, match="directory"):
        read_grammar(tmp_path)
    y = tmp_path / "c.yld"
    y.write_text("\n\n")
    with pytest.raises(InputError, match=f"{y}: no sentences"):
        read_yld(y)
    with pytest.raises(InputError, match=f"{tmp_path / 'nope.yld'}: held-out corpus not found"):
        read_yld(tmp_path / "nope.yld", what="held-out corpus")


def test_write_grammar_is_atomic_and_round_trips(tmp_path, monkeypatch):
    g = parse_grammar("2 S --> a\n1 0.5 S --> b\n")
    out = tmp_path / "out.lt"
    write_grammar(g, out)
    before = out.read_bytes()
    assert read_grammar(out).rules == g.rules
    import strgm.safe_io as safe_io

    def boom(*a):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(safe_io.os, "replace", boom)
    with pytest.raises(InputError, match="No space"):
        write_grammar(g.with_weights([5, 6]), out)
    assert out.read_bytes() == before and sorted(tmp_path.iterdir()) == [out]


def test_ptb_readers(tmp_path):
    f = tmp_path / "a.mrg"
    f.write_bytes(b"\xef\xbb\xbf( (S (NP (DT the) (NN dog)) (VP (VBZ barks))) )\n")
    assert read_mrg(f)[0][0] == "S"
    f.write_bytes(b"( (S (NP caf\xe9)) )\n")
    with pytest.raises(InputError, match=f"{f}:1:.*UTF-8"):
        read_mrg(f)
    f.write_text("\n")
    with pytest.raises(InputError, match=f"{f}: no trees"):
        read_mrg(f)
    with pytest.raises(InputError, match="not found"):
        read_mrg(tmp_path / "b.mrg")
    with pytest.raises(InputError, match="directory"):
        read_mrg(tmp_path)
    with pytest.raises(InputError, match="must be a directory"):
        read_treebank(f)
    with pytest.raises(InputError, match="no files"):
        read_treebank(tmp_path / "..", pattern="*.nothing")


# ------------------------------------------------------------------------ states
@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_state_round_trip_is_exact(tmp_path, suffix):
    k = CollapsedMH(G, CORPUS, alpha=0.5, resample_alpha=True)
    res = run(k, k.init(4), 5, burn_in=1, eval_every=1, checkpoint=tmp_path / ("c" + suffix))
    back = SamplerState.load(tmp_path / ("c" + suffix), kernel=k)
    assert json.dumps(back.to_dict()) == json.dumps(res.state.to_dict())
    assert back.trace == res.trace and len(back.trace) == 5


def test_checkpoint_files_are_replaced_atomically(tmp_path, monkeypatch):
    """A failure while a checkpoint is written leaves the previous one intact."""
    k = GibbsPCFG(G, CORPUS, alpha=0.5)
    ck = tmp_path / "ck.json"
    s = run(k, k.init(0), 2, checkpoint=ck, checkpoint_every=1).state
    before = ck.read_bytes()
    import strgm.safe_io as safe_io

    def interrupted(*a):
        raise KeyboardInterrupt
    monkeypatch.setattr(safe_io.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(k, s, 1, checkpoint=ck, checkpoint_every=1)
    assert ck.read_bytes() == before and sorted(tmp_path.iterdir()) == [ck]


def test_damaged_state_names_the_file(tmp_path):
    k = GibbsPCFG(G, CORPUS, alpha=0.5)
    ck = tmp_path / "ck.json"
    run(k, k.init(0), 2, checkpoint=ck)
    d = json.loads(ck.read_text())
    d["sum_theta"][0] = "Infinity"
    ck.write_text(json.dumps(d))
    with pytest.raises(InputError, match=f"{ck}: damaged.*sum_theta"):
        SamplerState.load(ck)
    d["sum_theta"][0] = 0.5
    d["trees"] = d["trees"][:2]
    ck.write_text(json.dumps(d))
    SamplerState.load(ck)  # well-formed on its own ...
    with pytest.raises(InputError, match=f"{ck}: .*2 trees for a corpus of 3"):
        SamplerState.load(ck, kernel=k)  # ... but not a state of this chain
    assert np.isfinite(SamplerState.load(ck).counts).all()


def test_batches_are_sized_to_the_chart_memory_limit():
    from strgm.grammars.chart import batches_by_length, chart_bytes, corpus_inside_outside
    from strgm.grammars.cfg import compile_grammar
    sents = [("a", "b")] * 10 + [("a", "b", "a", "b")] * 7
    one = chart_bytes(5, 4)
    sizes = [len(b) for b in batches_by_length(sents, 64, n_nts=5, max_chart_bytes=3 * one)]
    assert sizes == [10, 3, 3, 1]  # length 2 fits whole; length 4 three at a time
    assert [len(b) for b in batches_by_length(sents, 64)] == [10, 7]
    cg = compile_grammar(G)
    small = corpus_inside_outside(cg, sents, max_chart_bytes=chart_bytes(cg.n_nts, 4))
    whole = corpus_inside_outside(cg, sents)  # same numbers, batch by batch
    np.testing.assert_allclose(small.logZ, whole.logZ)
    np.testing.assert_allclose(small.counts, whole.counts)


def test_max_memory_reaches_every_chart():
    from strgm.errors import MessageTooLargeError
    from strgm.grammars.cfg import compile_grammar
    from strgm.grammars.chart import chart_bytes
    n_nts = compile_grammar(G).n_nts
    tight = chart_bytes(n_nts, 4)  # one 4-token sentence per chart
    for fn in (em, vb, cvb):
        a, b = fn(G, CORPUS, iters=2), fn(G, CORPUS, iters=2, max_memory=tight)
        np.testing.assert_allclose(a.theta, b.theta, rtol=1e-12)
        with pytest.raises(MessageTooLargeError, match="max_chart_bytes"):
            fn(G, CORPUS, iters=1, max_memory=tight - 1)
        with pytest.raises(OptionError, match="max_memory"):
            fn(G, CORPUS, iters=1, max_memory="lots")
    for cls in (GibbsPCFG, CollapsedMH):
        k = cls(G, CORPUS, alpha=0.5, max_memory=tight)
        run(k, k.init(0), 2, eval_every=1)
        with pytest.raises(MessageTooLargeError):
            cls(G, CORPUS, alpha=0.5, max_memory=tight - 1).init(0)
