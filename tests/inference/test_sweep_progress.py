"""The message-passing scheduler reports its progress as :class:`Status` messages: the
factor visits of all iterations, counted monotonically, and a last message that completes
the stage (so that a progress bar closes)."""

from strgm.inference import infer
from strgm.models.phonology import build_phonology_model
from strgm.datasets.paradigm import Paradigm
from strgm.progress import Status

PAIRS = [(("R1",), "pat"), (("R1", "S"), "padi"), (("R2",), "kot"), (("R2", "S"), "kodi")]


def test_sweeps_count_factor_visits_and_complete_the_stage():
    pm = build_phonology_model(Paradigm.from_pairs(PAIRS))
    said = []
    res = infer(pm.graph, "pruned", progress=said.append, max_iters=4)
    counted = [m for m in said if isinstance(m, Status)]
    n_factors = len(pm.graph.factors)
    assert {m.total for m in counted} == {2 * n_factors * 4}
    done = [m.done for m in counted]
    assert done == sorted(done) and done[0] == 0
    last = counted[-1]
    assert last.done == last.total and "after" in last
    # every visit of every iteration that ran was reported once
    assert len(counted) - 1 == 2 * n_factors * res.iterations
