import itertools

import numpy as np
import pytest

from fst_factors.contextual_edit import ContextSpec, build_structure, compile_fst
from strgm.wfsa import compose, log_partition, project, string_acceptor
from helpers_pem import exact_logz, random_theta, tiny_info

SPECS = [ContextSpec(), ContextSpec(0, 0, 0, False), ContextSpec(1, 0, 1, True),
         ContextSpec(0, 1, 0, False)]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("boundary", [False, True])
def test_locally_normalised(spec, boundary):
    """For every input string, Σ_y p(y|x) = 1 (total weight of x ∘ T)."""
    st = build_structure(tiny_info(2, boundary), spec)
    fst = compile_fst(st, random_theta(st, 1, 1.5))
    alphabet = [1, 2, 3] if boundary else [1, 2]
    for L in range(4):
        for x in itertools.product(alphabet, repeat=L):
            z = exact_logz(compose(string_acceptor(x), fst))
            assert abs(z) < 1e-8, (x, z)


def test_normalised_after_pruning():
    st = build_structure(tiny_info(2), ContextSpec())
    fst = compile_fst(st, random_theta(st, 2, 3.0), prune=0.05)
    for x in [(), (1,), (2, 1, 2)]:
        assert abs(exact_logz(compose(string_acceptor(x), fst))) < 1e-8


def test_ipa_size_is_bounded():
    from strgm.models.ipa_features import symbol_info

    syms = list("ptkbdgszmnlrieaou")
    st = build_structure(symbol_info(syms, max_sub_distance=1), ContextSpec())
    assert st.num_arcs < 120_000
