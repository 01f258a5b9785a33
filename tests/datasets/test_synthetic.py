"""The synthetic paradigm generator: gold URs map to the surfaces through the rules."""

from strgm.datasets.synthetic import apply_rules, synthetic_paradigm
import fst_factors.transducers as ff


def test_synthetic_paradigm_is_consistent_and_deterministic():
    d = synthetic_paradigm(40, seed=3)
    assert len(d.paradigm) == 40
    casc = ff.rule_cascade(d.rules, d.alphabet.size)
    for e in d.paradigm.entries:
        ur = "".join(d.gold_urs[m] for m in e.morphemes)
        assert d.alphabet.join(apply_rules(casc, d.alphabet.encode(ur))) == e.surface
    assert synthetic_paradigm(40, seed=3).gold_surfaces == d.gold_surfaces
    # the rules really alternate: the plural suffix surfaces as both z and s
    endings = {e.surface[-1] for e in d.paradigm.entries if e.morphemes[-1] == "PL"}
    assert {"s"} <= endings
    assert any(d.gold_surfaces[k] != "".join(d.gold_urs[m] for m in k.split())
               for k in d.gold_surfaces)
