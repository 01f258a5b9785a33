"""EM driver for the phonology, prediction of held-out words, checkpoints.

``train_phonology(paradigm, ...)``: E-step = ``infer`` (any method) on the factor graph
of the observed words with T_θ as every word's phonology; expected edit counts
(:mod:`strgm.models.training`); M-step = L2 L-BFGS. Iterates until the relative change of
the objective trace ℓ̂ is below ``tol`` or ``em_iters`` M-steps; θ is checkpointed (JSON)
after every iteration and ``resume`` continues from such a file.

Prediction (issue item 5): for a word w = m_1 … m_k, p(s) = Σ_u T_θ(s | u) Π_i b_{m_i}(u_i)
with u = u_1 … u_k ranging over the product of the morphemes' k-best belief strings
(each belief renormalised over its k-best) — "phonology applied to the concatenation of
its morphemes' beliefs".
"""

from __future__ import annotations

import itertools
import json
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import pynini

from strgm.alphabet import Alphabet, segment
from strgm.datasets.paradigm import Paradigm
from strgm.errors import InputError
from strgm.inference import infer
from strgm.inference.belief import Belief
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.phonology import build_phonology_model
from strgm.models.training import expected_counts, m_step
from strgm.wfsa import compose, weighted_strings


@dataclass
class TrainResult:
    model: PhonologyEditModel
    trace: list = field(default_factory=list)  # per iteration: {"objective", "q", ...}
    result: object = None  # final InferenceResult (θ_final)
    graph_model: object = None  # PhonologyModel of the training words


def split(paradigm: Paradigm, heldout: set) -> Paradigm:
    return Paradigm(tuple(e for e in paradigm.entries if e.key not in heldout
                          and e.surface is not None), paradigm.source)


def e_step(model: PhonologyEditModel, train: Paradigm, method: str, infer_opts: dict,
           progress=None):
    """Inference with T_θ, then (counts, Σ_w log Z_w, result, graph model)."""
    fst = model.fst()
    pm = build_phonology_model(train, alphabet=model.alphabet, phonology=fst,
                               boundary=model.alphabet.boundary)
    res = infer(pm.graph, method, progress=progress, **infer_opts)
    pairs = []
    for e in train.observed:
        f = f"phonology:{e.key}"
        mu = res.side.incoming_to_factor(pm.ur_vars[e.key], f)
        pairs.append((mu, model.alphabet.encode(e.surface)))
    counts, ll = expected_counts(model.structure, model.theta, pairs)
    return counts, ll, res, pm


def train_phonology(paradigm: Paradigm, *, alphabet: Optional[Alphabet] = None,
                    method: str = "pruned", em_iters: int = 5, l2: float = 1.0,
                    tol: float = 1e-4, infer_opts: Optional[dict] = None,
                    model: Optional[PhonologyEditModel] = None, p_copy: float = 0.99,
                    checkpoint: Optional[str] = None, resume: Optional[str] = None,
                    heldout: set = frozenset(),
                    progress: Optional[Callable[[str], None]] = None) -> TrainResult:
    """EM (module docstring). Returns the trained model, the trace and the last E-step."""
    infer_opts = dict(infer_opts or {})
    train = split(paradigm, set(heldout))
    if not train.observed:
        raise InputError("no observed training words", path=paradigm.source)
    alphabet = alphabet or paradigm.alphabet()
    trace: list = []
    start = 0
    if resume:
        with open(resume, encoding="utf-8") as fh:
            ck = json.load(fh)
        model = PhonologyEditModel.from_dict(ck["model"], resume)
        trace, start = ck["trace"], ck["iteration"]
    elif model is None:
        model = PhonologyEditModel(alphabet).initial(p_copy)
    res = pm = None
    prev = None
    for it in range(start, em_iters + 1):
        t0 = time.perf_counter()
        if progress:
            progress(f"EM iteration {it}/{em_iters}: E-step ({method})")
        counts, ll, res, pm = e_step(model, train, method, infer_opts)
        obj = ll - 0.5 * l2 * float(model.theta @ model.theta)
        entry = {"iteration": it, "objective": obj, "log_evidence": ll,
                 "e_seconds": time.perf_counter() - t0}
        if it == em_iters or (prev is not None and abs(obj - prev) <= tol * abs(prev)):
            trace.append(entry)
            break
        prev = obj
        if progress:
            progress(f"EM iteration {it}/{em_iters}: M-step, objective {obj:.3f}")
        theta, q = m_step(model.structure, counts, model.theta, l2)
        model = model.with_theta(theta)
        entry.update(q=q, seconds=time.perf_counter() - t0)
        trace.append(entry)
        if checkpoint:
            _write_checkpoint(checkpoint, model, trace, it + 1)
    return TrainResult(model, trace, res, pm)


def _write_checkpoint(path: str, model: PhonologyEditModel, trace: list, iteration: int):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"model": model.to_dict(), "trace": trace, "iteration": iteration}, fh,
                  ensure_ascii=False)
    os.replace(tmp, path)


# ---------------------------------------------------------------- prediction
def morpheme_kbest(result, pm, morpheme: str, k: int, prior_fst=None) -> list:
    """[(labels, log prob)] of a morpheme's k-best belief strings, renormalised."""
    if morpheme in pm.morpheme_vars:
        items = result.belief(pm.morpheme_vars[morpheme]).kbest_labels(k)
    else:
        raise InputError(f"morpheme {morpheme!r} occurs in no training word; cannot predict")
    lp = np.log([p for _, p in items])
    lp -= np.logaddexp.reduce(lp)
    return [(s, float(v)) for (s, _), v in zip(items, lp)]


def predict_word(phonology: pynini.Fst, alphabet: Alphabet, morph_lists: list,
                 name: str = "word", boundary_label: Optional[int] = None) -> Belief:
    """Belief over surfaces: Σ_u T(s|u) Π b_i(u_i) over the product of k-best lists."""
    urs: dict = {}
    for combo in itertools.product(*morph_lists):
        labels: tuple = ()
        for i, (s, _) in enumerate(combo):
            labels += ((boundary_label,) if i and boundary_label else ()) + tuple(s)
        lw = sum(v for _, v in combo)
        urs[labels] = np.logaddexp(urs.get(labels, -np.inf), lw)
    acc = weighted_strings([(u, -v) for u, v in urs.items()])
    out = pynini.project(compose(acc, phonology), "output")
    out = pynini.rmepsilon(out).connect()
    return Belief(name, out, alphabet)


def predict(phonology: pynini.Fst, alphabet: Alphabet, result, pm, words: list,
            k: int = 8) -> dict:
    """{word key: Belief} for the given ParadigmEntry objects."""
    out = {}
    for e in words:
        lists = [morpheme_kbest(result, pm, m, k) for m in e.morphemes]
        out[e.key] = predict_word(phonology, alphabet, lists, e.key, alphabet.boundary_label)
    return out


def score(beliefs: dict, gold: dict, alphabet: Alphabet) -> dict:
    """Exact match of the 1-best and mean −log p(gold) (inf if a symbol is unknown)."""
    hits, nll, per = 0, [], {}
    for key, truth in gold.items():
        b = beliefs[key]
        top = b.kbest(1)
        pred = top[0][0] if top else None
        known = all(s in alphabet for s in segment(truth))
        target = alphabet.join(alphabet.encode(truth)) if known else truth
        lp = b.logprob(truth) if known else -np.inf
        hits += pred == target
        nll.append(-lp)
        per[key] = {"gold": target, "predicted": pred, "p_gold": float(np.exp(lp))}
    n = len(gold)
    return {"n": n, "exact_match": hits / n if n else float("nan"),
            "mean_neg_logp": float(np.mean(nll)) if n else float("nan"), "per_word": per}
