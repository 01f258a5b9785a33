"""The engine's explicit interfaces (docs/messages.md–§3): the variable-side base
class, the method registry, the projection interface, the shared degree-≤2 relay, the
side-driven retry of divergent factor messages, and results' ``message``/``detach``."""

import pytest

from strgm.datasets.synthetic import synthetic_paradigm
from strgm.errors import DivergenceError, GraphError, OptionError, StrgmError
from strgm.inference import (METHODS, EPSide, ExactSide, Method, VariableSide, infer,
                             register)
from strgm.inference.belief import Belief
from strgm.inference.ep_repair import damped_retry
from strgm.inference.ep_settings import ep_settings, projections_for
from strgm.models.phonology import build_phonology_model
from strgm.projection.interface import PROJECTIONS, Projection, Schedule, Target
from tests.inference.test_ep import max_belief_error, tree_graph

pytestmark = pytest.mark.filterwarnings("ignore::strgm.errors.ConvergenceWarning")


@pytest.fixture(scope="module")
def phonology_graph():
    d = synthetic_paradigm(12, seed=3)
    return build_phonology_model(d.paradigm, alphabet=d.alphabet).graph


@pytest.fixture
def registered():
    """Methods registered by a test, removed afterwards."""
    names = []

    def add(method):
        register(method)
        names.append(method.name)
    yield add
    for n in names:
        METHODS.pop(n, None)


def test_a_side_must_implement_every_required_hook():
    class Incomplete(VariableSide):
        def receive(self, var, factor, message):
            pass

    with pytest.raises(TypeError):
        Incomplete(tree_graph())
    assert all(isinstance(m.make_side(tree_graph(), kbest=5, max_states=10 ** 5,
                                      options={}), VariableSide)
               for m in METHODS.values())


def test_registry_runs_a_new_method_by_name_and_refuses_duplicates(registered):
    g = tree_graph()
    registered(Method("bp-again", "exact BP under another name",
                      lambda graph, *, kbest, max_states, options: ExactSide(graph)))
    r = infer(g, "bp-again")
    assert r.method == "bp-again"
    assert max_belief_error(infer(g, "bp"), r) == 0.0
    with pytest.raises(StrgmError, match="already registered"):
        register(Method("bp", "again", METHODS["bp"].make_side))
    with pytest.raises(OptionError, match="bp-again"):  # the message lists every method
        infer(g, "nonsense")


def test_a_side_that_skips_unchanged_messages_breaks_ep(registered, phonology_graph):
    """EP does not let the scheduler skip messages whose inputs are unchanged: each
    μ_{F→V} must be refitted against its moving cavity (PEP §4.4). The broken variant
    (versions tracked) makes fewer updates and different beliefs: the guard can fail."""
    class Skipping(EPSide):
        tracks_versions = True

        def version(self, var):
            return 0  # nothing ever "changes": every message after the first is skipped

    registered(Method("ep-skipping", "broken", lambda graph, *, kbest, max_states, options:
                      Skipping(graph, "ep", **options)))
    good = infer(phonology_graph, "ep", max_iters=3, tol=0)
    bad = infer(phonology_graph, "ep-skipping", max_iters=3, tol=0)
    assert bad.extra["updates"] < good.extra["updates"]
    assert max_belief_error(good, bad, names=phonology_graph.latent, k=3) > 1e-3


def test_projection_names_and_methods():
    assert set(PROJECTIONS) == {"closed", "gradient", "prox", "grow"}
    assert projections_for("ep") == ("closed", "gradient")
    assert projections_for("pep") == ("prox", "grow")
    assert all(issubclass(c, Projection) for c in PROJECTIONS.values())
    with pytest.raises(StrgmError, match="not available"):
        ep_settings("ep", {"projection": "prox"})


def test_every_projection_keeps_the_ep_invariant(phonology_graph):
    """A Fit's θ_{F→V} is θ_V − θ_{V→F} (PEP eq. 6) for every projection, checked on a
    real update of a morpheme from its prior."""
    side = EPSide(phonology_graph, "pep")
    var = next(v for v in phonology_graph.latent if v.startswith("M"))
    prior = next(f for f in phonology_graph.factors_of(var)
                 if phonology_graph.factors[f].kind == "unary")
    mu = phonology_graph.factors[prior].fst
    for name, cls in PROJECTIONS.items():
        s = ep_settings("pep" if cls.penalised else "ep", {"projection": name})
        proj = cls(phonology_graph.alphabet.size, s)
        cavity = side.theta(var)
        fit = proj.fit(Target(mu, cavity, cavity, None, None, name),
                       Schedule(lam=0.01, unigram_only=True))
        diff = (fit.theta - cavity - fit.message).restrict(tol=1e-9)
        assert diff.nnz == 0, name
        assert fit.theta.nnz > 0, name


def test_degree_two_relay_is_the_same_for_pruned_bp_and_ep(phonology_graph):
    """The underlying form of a word (degree 2) is relayed exactly by both methods: its
    outgoing message is the other factor's message, rescaled (ExactSide's rule)."""
    pruned = infer(phonology_graph, "pruned", max_iters=2)
    ep = infer(phonology_graph, "pep", max_iters=2)
    ur = next(v for v in phonology_graph.latent if phonology_graph.degree(v) == 2)
    concat, phon = phonology_graph.factors_of(ur)
    for r in (pruned, ep):
        sent = r.message(ur, phon)
        received = r.side.msgs[ur][concat] if r is pruned else \
            r.side._relayed.msgs[ur][concat]
        assert sent.num_states() == received.num_states()  # forwarded, not pruned
        p = Belief(ur, sent, phonology_graph.alphabet)
        q = Belief(ur, received, phonology_graph.alphabet)
        top = p.kbest_labels(5)
        assert [s for s, _ in top] == [s for s, _ in q.kbest_labels(5)]
        assert all(abs(q.prob(s) - pr) < 1e-9 for s, pr in top)


def test_damped_retry_picks_the_smallest_working_damping():
    tried = []

    def compute(inc):
        tried.append(inc["M"])
        if inc["M"] < 1.0:
            raise DivergenceError("diverges")
        return inc["M"]

    assert damped_retry(compute, {"M": 0.0, "W": 5}, lambda u, d: d, ["M"], "x") == 1.0
    assert tried == [0.25, 0.5, 1.0]
    with pytest.raises(DivergenceError, match="even with damped"):
        damped_retry(lambda inc: (_ for _ in ()).throw(DivergenceError("no")), {},
                     lambda u, d: d, ["M"], "message x")


def test_ep_side_retries_a_divergent_concatenation_message(monkeypatch):
    """The side, not the factor, damps the part messages of a concatenation whose message
    to a part diverges; the factor never sees the side. Broken variant: a side that does
    not retry lets the DivergenceError through."""
    from strgm.factors import ConcatFactor

    g = tree_graph()
    calls = {"n": 0}
    real = ConcatFactor.message_to

    def flaky(self, var, incoming, num_labels):
        calls["n"] += 1
        if var != self.whole and calls["n"] % 2 == 1:  # the first try of each diverges
            raise DivergenceError("ε-closure diverges")
        return real(self, var, incoming, num_labels)

    monkeypatch.setattr(ConcatFactor, "message_to", flaky)
    r = infer(g, "ep", relay=False, order=3, projection="closed", max_iters=2)
    assert r.extra["message_repairs_by_kind"].get("damped_concat_parts", 0) > 0
    calls["n"] = 0
    with pytest.raises(DivergenceError):
        infer(g, "bp")  # exact BP has no repair: the error reaches the caller


def test_result_message_and_detach(phonology_graph):
    r = infer(phonology_graph, "pruned", max_iters=2)
    ur = next(v for v in phonology_graph.latent if phonology_graph.degree(v) == 2)
    f = phonology_graph.factors_of(ur)[1]
    assert r.message(ur, f) is r.side.incoming_to_factor(ur, f)
    with pytest.raises(GraphError, match="no edge"):
        r.message(ur, "no such factor")
    names = phonology_graph.latent[:3]
    d = r.detach(names)
    assert d.side is None and d.graph is None and r.side is not None  # r unchanged
    assert d.variables == names
    assert max_belief_error(r, d, names=names, k=5) == 0.0
    with pytest.raises(GraphError, match="no engine state"):
        d.message(ur, f)
    with pytest.raises(GraphError, match="no belief"):
        d.belief(phonology_graph.latent[-1])


def test_the_command_line_offers_exactly_the_registered_methods():
    from strgm.cli.common import INFERENCE_METHODS

    assert set(INFERENCE_METHODS) == set(METHODS)


def test_ep_settings_are_one_typed_frozen_object():
    """EP/PEP settings are an EPSettings dataclass: typed fields, each default stated
    once, frozen (a run cannot change them under way), and the same keys in a result's
    settings as before."""
    import dataclasses

    from strgm.inference.ep_settings import PROX_LAM, EPSettings

    pep, ep = ep_settings("pep", {}), ep_settings("ep", {"order": 3})
    assert isinstance(pep, EPSettings) and pep.lam == PROX_LAM and pep.order is None
    assert (ep.order, ep.projection, ep.block) == (3, "gradient", False)
    assert ep_settings("pep", {"projection": "grow"}).lam == EPSettings().lam  # not prox
    with pytest.raises(dataclasses.FrozenInstanceError):
        pep.eta = 1.0
    assert set(pep.as_dict()) == {f.name for f in dataclasses.fields(EPSettings)} - {"method"}
    with pytest.raises(StrgmError, match="unknown option"):
        ep_settings("pep", {"activation_levels": 2})  # a removed option
