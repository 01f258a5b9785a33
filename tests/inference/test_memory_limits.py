"""infer() under the size guard (fst_factors.wfsa.guard, tested in
tests/fst_factors/test_memory_guard.py): an error names the message, variable or factor
being built and the option that helps; an ample budget changes nothing; infer()
validates its size, memory and stopping options."""

from __future__ import annotations

import pytest

import fst_factors.transducers as ff
from fst_factors.alphabet import Alphabet
from fst_factors.wfsa import guard
from strgm.errors import MessageTooLargeError, OptionError
from strgm.graph import FactorGraph
from strgm.inference import infer


def small_graph() -> FactorGraph:
    g = FactorGraph(Alphabet("ab"))
    g.add_variable("M")
    g.add_unary("prior", "M", ff.geometric_unigram_prior(2, 4.0))
    for i, w in enumerate(["abba", "abab", "bbaa"]):
        g.add_variable(f"S{i}", observed=w)
        g.add_binary(f"edit{i}", "M", f"S{i}", ff.edit_transducer(2))
    return g


def test_memory_error_names_what_was_being_built():
    with pytest.raises(MessageTooLargeError) as e:
        infer(small_graph(), "bp", max_memory=guard.resident_memory() + 2_000)
    msg = str(e.value)
    assert "\n" not in msg
    assert "factor 'edit" in msg or "variable 'M'" in msg
    assert "--max-memory" in msg and "--method pruned" in msg


def test_max_states_error_names_the_message_and_the_method_advice():
    with pytest.raises(MessageTooLargeError, match=r"(factor 'edit\d'|variable 'M').*"
                       r"--max-states 3.*--method ep"):
        infer(small_graph(), "pruned", max_states=3)


def test_normal_run_unchanged_with_an_ample_budget():
    a = infer(small_graph(), "bp")
    b = infer(small_graph(), "bp", max_memory="64G")
    assert a.belief("M").kbest(3) == b.belief("M").kbest(3)


@pytest.mark.parametrize("kw,name", [({"max_states": 0}, "max_states"),
                                     ({"max_memory": "lots"}, "max_memory"),
                                     ({"max_memory": 0}, "max_memory"),
                                     ({"max_iters": 0}, "max_iters"),
                                     ({"tol": float("nan")}, "tol"),
                                     ({"kbest": 0}, "kbest")])
def test_infer_validates_its_options(kw, name):
    with pytest.raises(OptionError, match=f"option {name}:"):
        infer(small_graph(), "pruned", **kw)
