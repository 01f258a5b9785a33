"""Infer underlying forms of morphemes through the Python API.

    python examples/underlying_forms.py [PARADIGM.tsv]

Without an argument it uses the textbook English problem (Odden 1.12) from the data
directory beside the checkout if present, otherwise (and it says so) the small sample
shipped with strgm, ``example("english-verbs")``. Mirrors the README's API tour: the
paradigm workflow in one call, then the beliefs it returns.
"""

import os
import sys

from strgm.datasets import Paradigm, example, read_paradigm
from strgm.workflows import infer_paradigm

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "shared", "data", "phonology",
                       "Odden_1.12_English.tsv")


def load() -> Paradigm:
    if len(sys.argv) > 1:
        return read_paradigm(sys.argv[1])
    if os.path.exists(DEFAULT):
        return read_paradigm(DEFAULT)
    print("NOTE: the textbook data (../shared/data) is not beside this checkout; using the "
          "small sample shipped with strgm, example('english-verbs') (12 CMUdict verbs)")
    return example("english-verbs")


def main() -> None:
    paradigm = load()
    # 1. The workflow builds the graph (morpheme URs with priors, word URs =
    #    concatenations, surfaces = copy-biased edit transducer applied to the word URs),
    #    runs inference -- pruned BP (the Cotterell et al. 2015 baseline); try "bp", "ep",
    #    "pep" -- and, with holdout=, hides and scores some observed words.
    run = infer_paradigm(paradigm, "pruned", p_copy=0.99, kbest=20)
    model, result = run.model, run.result
    print(f"{len(model.graph.variables)} variables, {len(model.graph.factors)} factors")
    print(f"{result.iterations} iterations, converged: {result.converged}")
    # 2. Beliefs answer k-best, probability, sampling and entropy queries.
    for label, var in model.morpheme_vars.items():
        belief = result.belief(var)
        top = ", ".join(f"{s or 'ε'} {p:.3f}" for s, p in belief.kbest(3))
        print(f"{label:>8}: {top}   (H = {belief.entropy():.3f} nats)")
    for key in model.unobserved_words:
        belief = result.belief(model.word_vars[key])
        print(f"predicted {key}: {belief.kbest(1)}")
    # 3. Held-out evaluation: hide 10% of the observed words, predict and score them.
    if len(paradigm.observed) >= 10:
        scores = infer_paradigm(paradigm, "pruned", holdout=0.1, seed=0).scores
        print(f"held-out words: {scores.n}, exact match {scores.exact_match:.1%}, "
              f"mean -log p {scores.mean_neg_logp:.3f} nats")


if __name__ == "__main__":
    main()
