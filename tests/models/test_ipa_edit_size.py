"""The contextual edit transducer over an IPA inventory (strgm.models.ipa_features'
symbol classes) stays small enough to build: the structure of 17 segments with
substitutions between neighbours in the feature table has fewer than 120,000 arcs. The
transducer itself: tests/fst_factors/test_contextual_edit.py."""

from fst_factors.transducers.contextual_edit import ContextSpec, build_structure
from strgm.models.ipa_features import symbol_info


def test_ipa_size_is_bounded():
    syms = list("ptkbdgszmnlrieaou")
    st = build_structure(symbol_info(syms, max_sub_distance=1), ContextSpec())
    assert st.num_arcs < 120_000
