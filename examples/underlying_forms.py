"""Infer underlying forms of morphemes through the Python API.

    python examples/underlying_forms.py [PARADIGM.tsv]

Without an argument it uses the textbook English problem from ../shared/data if present,
otherwise a small built-in paradigm. Mirrors the README's API tour.
"""

import os
import sys

from strgm.datasets.paradigm import Paradigm, read_paradigm
from strgm.inference import infer
from strgm.models.phonology import build_phonology_model

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "shared", "data", "phonology",
                       "Odden_1.12_English.tsv")


def load() -> Paradigm:
    if len(sys.argv) > 1:
        return read_paradigm(sys.argv[1])
    if os.path.exists(DEFAULT):
        return read_paradigm(DEFAULT)
    return Paradigm.from_pairs([
        (("R1",), "ro"), (("R1", "PAST"), "rod"), (("R1", "3SG"), "roz"),
        (("R2",), "sim"), (("R2", "PAST"), "simd"), (("R2", "3SG"), "simz"),
        (("R3",), "liv"), (("R3", "PAST"), None),  # None: a word to predict
    ])


def main() -> None:
    paradigm = load()
    # 1. The graph: morpheme URs with priors, word URs = concatenations, surfaces =
    #    copy-biased edit transducer applied to the word URs.
    model = build_phonology_model(paradigm, p_copy=0.99)
    print(f"{len(model.graph.variables)} variables, {len(model.graph.factors)} factors")
    # 2. Inference: pruned BP (the Cotterell et al. 2015 baseline); try "bp", "ep", "pep".
    result = infer(model.graph, "pruned", kbest=20)
    print(f"{result.iterations} iterations, converged: {result.converged}")
    # 3. Beliefs answer k-best, probability, sampling and entropy queries.
    for label, var in model.morpheme_vars.items():
        belief = result.belief(var)
        top = ", ".join(f"{s or 'ε'} {p:.3f}" for s, p in belief.kbest(3))
        print(f"{label:>8}: {top}   (H = {belief.entropy():.3f} nats)")
    for key in model.unobserved_words:
        belief = result.belief(model.word_vars[key])
        print(f"predicted {key}: {belief.kbest(1)}")


if __name__ == "__main__":
    main()
