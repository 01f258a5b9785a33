"""Train a phonology by EM, save it, load it back and predict unseen words (< 1 min).

    python examples/train_phonology.py

A tiny paradigm with final devoicing (/tad/ → [tat]) and voicing assimilation of the
suffix /-de/ (→ [-te] after a voiceless obstruent). Two forms are held out; the learned
phonology, applied to the concatenation of the morphemes' inferred URs, predicts them
(:func:`strgm.workflows.train_paradigm`); the saved model is then used as the phonology
of the paradigm's factor graph (:func:`strgm.workflows.infer_paradigm`).
"""
import os
import tempfile
import warnings

from strgm.datasets import Paradigm
from strgm.models import PhonologyEditModel
from strgm.workflows import infer_paradigm, train_paradigm

warnings.simplefilter("ignore")
PAIRS = [
    (("KAT",), "kat"), (("KAT", "PAST"), "katte"), (("KAT", "GEN"), "katin"),
    (("TAD",), "tat"), (("TAD", "PAST"), "tadde"), (("TAD", "GEN"), "tadin"),
    (("NIK",), "nik"), (("NIK", "PAST"), "nikte"), (("NIK", "GEN"), "nikin"),
    (("DEG",), "dek"), (("DEG", "PAST"), "degde"), (("DEG", "GEN"), "degin"),
    (("TIN",), "tin"), (("TIN", "PAST"), "tinde"), (("TIN", "GEN"), "tinin"),
    (("GID",), "git"), (("GID", "PAST"), "gidde"), (("GID", "GEN"), "gidin"),
    (("KEK",), "kek"), (("KEK", "PAST"), "kekte"), (("KEK", "GEN"), "kekin"),
    (("NAG",), "nak"), (("NAG", "PAST"), "nagde"), (("NAG", "GEN"), "nagin"),
    (("DIT",), "dit"), (("DIT", "PAST"), "ditte"), (("DIT", "GEN"), "ditin"),
    (("GAN",), "gan"), (("GAN", "PAST"), "gande"), (("GAN", "GEN"), "ganin"),
]
HELD_OUT = {"TAD", "NIK PAST"}  # words to predict (keys are the morpheme labels joined)


def main():
    para = Paradigm.from_pairs(PAIRS)
    # 1. train (pruned-BP E-step, L-BFGS M-step) on all but the held-out words, then
    #    predict those from the morphemes' beliefs and score them
    run = train_paradigm(para, "pruned", holdout=HELD_OUT, em_iters=3, l2=0.3,
                         infer_opts={"max_iters": 3})
    for e in run.train.trace:
        print(f"EM iteration {e['iteration']}: objective {e['objective']:.3f}")
    for key, w in run.scores.per_word.items():
        print(f"{key:10s} true [{w['gold']}]  predicted [{w['predicted']}]  "
              f"p(true) = {w['p_gold']:.2f}")
    # 2. save and 3. load
    path = os.path.join(tempfile.mkdtemp(), "phonology.json")
    run.train.model.save(path, {"method": "pruned"})
    model = PhonologyEditModel.load(path)
    print(f"saved and reloaded {path} ({len(model.theta)} features)")
    # 4. the loaded model as the phonology of the paradigm's graph, the held-out words
    #    hidden: their surface beliefs are its predictions
    run2 = infer_paradigm(para, "pruned", holdout=HELD_OUT, model=model, max_iters=3)
    for m in ("TAD", "PAST"):
        print(f"UR of {m}: /{run2.result.belief(run2.model.morpheme_vars[m]).kbest(1)[0][0]}/")
    for key, truth in run2.gold.items():
        best = run2.result.belief(run2.model.word_vars[key]).kbest(3)
        print(f"{key:10s} true [{truth}]  predicted "
              + ", ".join(f"[{s}] {p:.2f}" for s, p in best))
    print(f"graph prediction: exact match {run2.scores.exact_match:.0%}")


if __name__ == "__main__":
    main()
