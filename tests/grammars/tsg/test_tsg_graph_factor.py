"""A trained DP-TSG as a factor (``FactorGraph.add_grammar(name, var, TSGModel)``).

Oracles: (1) the factor's string probabilities equal P_TSG(v) summed by brute force over
every way of cutting the tree of v into elementary trees, each cut scored by the MAP TSG
directly (``map_log_prob``, independent of the Table 1 transform); (2) under a random
cavity the EP moment oracle (Bar-Hillel intersection) equals the moments of the
enumerated, chart-scored message. Negative controls: another concentration α is told
apart in both. Bad options (learning a tied TSG in the graph) are one-line errors.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from fst_factors.alphabet import Alphabet
from strgm.errors import GrammarError, OptionError
from strgm.features import FeatureSet, Theta, ngram_features
from strgm.features.moments import p_moments
from strgm.graph import FactorGraph
from strgm.grammars.tsg import BlockedMHTSG
from strgm.grammars.tsg.blocked import map_log_prob, tree_ets
from strgm.grammars.tsg.model_file import TSGModel
from strgm.inference import infer
from fst_factors.wfsa.measure import string_logweight
from tests.grammars.tsg.tsg_oracles import TOY2

AB = Alphabet(["a", "b"])


def model(alpha_s=0.6):
    """TOY2 (S → A S | A B, A → a, B → b: the strings aⁿb) with a mixed derivation."""
    k = BlockedMHTSG(TOY2, alpha={"S": alpha_s, "A": 1.5, "B": 1.0}, s=0.3)
    st = k.init(0, "maximal")
    st.site[k.table.inner[::2]] = 1
    return TSGModel(k, st, {})


def brute_force_p(m: TSGModel, i: int) -> float:
    """P_TSG of training tree i's yield (its only tree): Σ over the 2^(n−1) cuts."""
    c = m.kernel.counts(m.state)
    la = np.log(m.state.alpha)
    t = m.kernel.table
    n = int(t.starts[i + 1] - t.starts[i])
    total = 0.0
    for bits in itertools.product((0, 1), repeat=n - 1):
        ets, _ = tree_ets(c, i, [1, *bits])
        total += math.exp(map_log_prob(c, ets, m.state.alpha, la))
    return total


def p_of(fst, text: str) -> float:
    return math.exp(string_logweight(fst, [AB.label(c) for c in text]))


def tsg_graph(m, **options) -> FactorGraph:
    g = FactorGraph(AB)
    g.add_variable("V")
    g.add_grammar("T", "V", m, **options)
    return g


def test_string_probabilities_equal_the_brute_force_tsg_sum():
    m = model()
    f = tsg_graph(m, max_len=8).factors["T"]
    msg = f.message_to("V", None, AB.size)  # exact WFSA of P(v), |v| ≤ 8, chart-scored
    other = tsg_graph(model(5.0), max_len=8).factors["T"].message_to("V", None, AB.size)
    for i, text in ((0, "aab"), (1, "ab")):
        want = brute_force_p(m, i)
        assert p_of(msg, text) == pytest.approx(want, rel=1e-9)
        # negative control: another α for S changes P_TSG of the training strings
        assert abs(p_of(other, text) - want) > 1e-3


def test_moment_oracle_equals_the_enumerated_message_under_a_cavity():
    m = model()
    fs = FeatureSet(ngram_features(2, 2), 2)
    cav = Theta(fs, np.random.default_rng(4).normal(size=len(fs)) * 0.5)
    f = tsg_graph(m, max_len=12).factors["T"]
    got = p_moments(f.moment_message("V"), fs, cav)
    want = p_moments(f.message_to("V", None, AB.size), fs, cav)
    np.testing.assert_allclose(got.expectations, want.expectations, rtol=1e-8, atol=1e-10)
    assert got.log_z == pytest.approx(want.log_z, abs=1e-8)
    other = tsg_graph(model(5.0), max_len=12).factors["T"]  # negative control: the
    # cavity dominates here, so another α moves the moments by ~1e-3, still 10⁵ times
    # the agreement above
    assert np.abs(p_moments(other.moment_message("V"), fs, cav).expectations
                  - want.expectations).max() > 1e-4


def test_pep_runs_with_a_tsg_factor_and_no_length_bound():
    g = tsg_graph(model())
    res = infer(g, "pep", max_iters=3)
    assert res.belief("V").kbest(1)[0][0] == "ab"  # P_TSG(ab) is the largest


def test_learning_a_tsg_in_the_graph_and_foreign_words_are_refused():
    with pytest.raises(OptionError, match="estimator.*tied"):
        tsg_graph(model(), estimator="vb")
    with pytest.raises(OptionError, match="theta"):
        tsg_graph(model(), theta=np.ones(3))
    g = FactorGraph(Alphabet(["a"]))
    g.add_variable("V")
    with pytest.raises(GrammarError, match="terminal 'b'"):
        g.add_grammar("T", "V", model())
