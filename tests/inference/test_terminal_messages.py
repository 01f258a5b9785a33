"""Terminal messages (strgm.inference.terminal): the messages that can change no tracked
belief are sent once, after the sweeps, and the beliefs that matter are unchanged."""

import warnings

import networkx as nx
import numpy as np
import pytest

import fst_factors.transducers as ff
import fst_factors.wfsa as W
from fst_factors.alphabet import Alphabet
from strgm.datasets.paradigm import Paradigm
from strgm.datasets.synthetic import synthetic_paradigm
from strgm.errors import ConvergenceWarning
from strgm.graph import FactorGraph
from strgm.inference import infer, schedule
from strgm.inference.terminal import _inputs, terminal_messages
from strgm.models.em import train_phonology
from strgm.models.phonology import build_phonology_model

ALPH = Alphabet(["a", "b"], boundary="+")
EDIT = ff.edit_transducer(2, ff.EditParams(0.8), boundary_label=3)
PRIOR = W.weighted_strings({(1,): 0.5, (2,): 1.0, (1, 2): 2.0})


def word_graph(surface_observed: bool) -> FactorGraph:
    """Two words sharing the stem M (degree 3): W_i = M + S_i, surface_i = T(W_i); the
    second surface observed or not."""
    g = FactorGraph(ALPH)
    for v in ("M", "S1", "S2"):
        g.add_variable(v)
        g.add_unary(f"prior:{v}", v, PRIOR)
    for i in (1, 2):
        g.add_variable(f"W{i}")
        g.add_concat(f"concat{i}", ["M", f"S{i}"], f"W{i}", boundary=True)
        obs = "ab" if i == 1 or surface_observed else None
        g.add_variable(f"O{i}", observed=obs)
        g.add_binary(f"edit{i}", f"W{i}", f"O{i}", EDIT)
    return g


def test_terminal_messages_of_a_paradigm_graph():
    """M (degree 3) is tracked. The messages to a word's form from its concatenation, to
    a suffix (whose other factor is its prior) and to a latent surface reach no tracked
    belief; the surface's comes after its form's. Everything M's messages depend on is
    needed."""
    g = word_graph(surface_observed=False)
    term = terminal_messages(g, ["M"])
    assert set(term) == {("concat1", "W1"), ("concat2", "W2"), ("concat1", "S1"),
                         ("concat2", "S2"), ("edit2", "O2")}
    assert term.index(("concat2", "W2")) < term.index(("edit2", "O2"))
    assert ("edit1", "W1") not in term and ("concat1", "M") not in term
    # with every latent variable tracked nothing is terminal
    assert terminal_messages(g, g.latent) == []


def test_messages_on_a_loop_of_untracked_variables_stay_in_the_sweeps():
    """A and B (degree 2) joined by two factors form a loop away from the tracked X: each
    of the loop's messages depends on the other, so no order sends them once; they are
    iterated by the sweeps. Control: their dependency graph has the cycle (a topological
    order of it does not exist)."""
    g = FactorGraph(ALPH)
    g.add_variable("X")
    for i in range(3):
        g.add_unary(f"p{i}", "X", PRIOR)
    g.add_variable("A")
    g.add_variable("B")
    g.add_binary("f1", "A", "B", EDIT)
    g.add_binary("f2", "B", "A", EDIT)
    loop = {("f1", "A"), ("f1", "B"), ("f2", "A"), ("f2", "B")}
    assert not loop & set(terminal_messages(g, ["X"]))
    deps = nx.DiGraph([(m, t) for t in loop for m in _inputs(g, *t) if m in loop])
    with pytest.raises(nx.NetworkXUnfeasible):
        list(nx.topological_sort(deps))


def _old_schedule(graph, tracked):
    """The schedule before terminal messages: only latent leaves wait for the end."""
    return [m for m in terminal_messages(graph, tracked) if graph.degree(m[1]) == 1]


def _ur_messages(monkeypatch, old: bool, iters: int, method: str = "pruned"):
    data = synthetic_paradigm(40, seed=1)
    para = Paradigm(tuple(e for e in data.paradigm.entries if len(e.morphemes) > 1),
                    data.paradigm.source)
    pm = build_phonology_model(para)
    if old:
        monkeypatch.setattr(schedule, "terminal_messages", _old_schedule)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = infer(pm.graph, method, max_iters=iters)
    monkeypatch.undo()
    strings = [tuple(pm.alphabet.encode(e.segments)) for e in para.observed]
    out = []
    for e in para.observed:
        mu = res.message(pm.ur_vars[e.key], f"phonology:{e.key}")
        out.append(W.score_strings(mu, strings))
    return np.array(out)


# iters=2 (21.7 s in a loaded full run) repeats the check one iteration further;
# iters=1 (with the control) stays in the default suite
@pytest.mark.parametrize("iters", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_k_iterations_give_the_forms_what_k_plus_one_did_before(monkeypatch, iters):
    """Before, a word's form got its message in each forward sweep, from the stems'
    state after the previous backward sweep: the E-step of EM read the one of the last
    iteration. Now it is sent once, after the last sweep, from the same state: k
    iterations give the messages that k + 1 gave (1e-9), one backward sweep fewer.
    Control: the old schedule's k and k + 1 iterations differ."""
    new = _ur_messages(monkeypatch, old=False, iters=iters)
    before = _ur_messages(monkeypatch, old=True, iters=iters + 1)
    finite = np.isfinite(before)
    assert (np.isfinite(new) == finite).all()
    np.testing.assert_allclose(new[finite], before[finite], rtol=1e-9, atol=1e-9)
    if iters == 1:
        same_k = _ur_messages(monkeypatch, old=True, iters=1)
        assert not np.allclose(same_k[finite], before[finite], rtol=1e-6, atol=1e-6)


def test_em_warns_once_about_e_steps_that_stop_at_max_iters():
    """One ConvergenceWarning for the run (how many E-steps stopped short, the largest
    last change), not one per E-step."""
    data = synthetic_paradigm(15, seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = train_phonology(data.paradigm, em_iters=2, infer_opts={"max_iters": 1})
    conv = [w for w in caught if w.category is ConvergenceWarning]
    assert len(r.timing) == 3 and len(conv) == 1
    assert "3 of 3 E-steps (max_iters = 1;" in str(conv[0].message)
