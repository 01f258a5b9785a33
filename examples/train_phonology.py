"""Train a phonology by EM, save it, load it back and predict unseen words (< 1 min).

    python examples/train_phonology.py

A tiny paradigm with final devoicing (/tad/ → [tat]) and voicing assimilation of the
suffix /-de/ (→ [-te] after a voiceless obstruent). Two forms are held out; the learned
phonology, applied to the concatenation of the morphemes' inferred URs, predicts them.
"""
import os
import tempfile
import warnings

from strgm.datasets.paradigm import Paradigm
from strgm.inference import infer
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.em import predict, split, train_phonology
from strgm.models.phonology import build_phonology_model

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
    alphabet = para.alphabet()
    # 1. train (pruned-BP E-step, L-BFGS M-step)
    r = train_phonology(para, alphabet=alphabet, method="pruned", em_iters=3, l2=0.3,
                        heldout=HELD_OUT, infer_opts={"max_iters": 3})
    for e in r.trace:
        print(f"EM iteration {e['iteration']}: objective {e['objective']:.3f}")
    # 2. save and 3. load
    path = os.path.join(tempfile.mkdtemp(), "phonology.json")
    r.model.save(path, {"method": "pruned"})
    model = PhonologyEditModel.load(path)
    print(f"saved and reloaded {path} ({len(model.theta)} features)")
    # 4. predict with the loaded model: infer the URs of the training words under it,
    #    then apply it to the concatenated morpheme beliefs of the unseen words
    train = split(para, HELD_OUT)
    fst = model.fst()
    pm = build_phonology_model(train, alphabet=alphabet, phonology=fst)
    res = infer(pm.graph, "pruned", max_iters=3)
    for m in ("TAD", "PAST"):
        print(f"UR of {m}: /{res.belief(pm.morpheme_vars[m]).kbest(1)[0][0]}/")
    words = [e for e in para.entries if e.key in HELD_OUT]
    for key, b in predict(fst, alphabet, res, pm, words).items():
        truth = next(e.surface for e in words if e.key == key)
        best = b.kbest(3)
        print(f"{key:10s} true [{truth}]  predicted "
              + ", ".join(f"[{s}] {p:.2f}" for s, p in best))


if __name__ == "__main__":
    main()
