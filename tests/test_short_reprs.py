"""The objects a library user gets back print as one short line saying what they are and
how big (``HMMPosterior(model='lt', states=12, symbols=32, samples=20)``), not as every
array and entry they hold; the controls are the reprs a dataclass would generate."""

import dataclasses
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from strgm.datasets import example
from strgm.distributed.chains import ChainsResult
from strgm.distributed.hmm_chains import HMMChains
from strgm.grammars.estimator_kernels import FitResult
from strgm.grammars.samplers import RunResult
from strgm.grammars.tsg import BlockedMHTSG
from strgm.grammars.tsg.model_file import TSGModel, prepare_trees
from strgm.hmm.data import UNK
from strgm.hmm.emissions import Categorical
from strgm.hmm.model import HMM, HMMPosterior
from strgm.hmm.settings import HMMSettings
from strgm.inference.result import InferenceResult
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.em import TrainResult
from strgm.models.rule_phonology import RuleRun
from strgm.models.rule_search import RuleGrammar
from strgm.models.scoring import HoldoutScores
from strgm.workflows.paradigm import prepare_paradigm

LIMIT = 300
VOCAB = tuple("abcdefghijklmnopqrstuvwxyzæøåðþ") + (UNK,)


def _generated(obj, depth: int = 0) -> str:
    """The repr the dataclass decorator writes, applied all the way down."""
    if depth < 4 and dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        parts = (f"{f.name}={_generated(getattr(obj, f.name), depth + 1)}"
                 for f in dataclasses.fields(obj) if f.repr)
        return f"{type(obj).__name__}({', '.join(parts)})"
    if isinstance(obj, (tuple, list)) and depth < 4:
        return repr(type(obj)(_generated(x, depth + 1) for x in obj))
    return repr(obj)


def _posterior(L: int = 12, samples: int = 20) -> HMMPosterior:
    rng = np.random.default_rng(0)
    em = Categorical(len(VOCAB), 0.1)
    return HMMPosterior(tuple(
        HMM(rng.dirichlet(np.ones(L)), rng.dirichlet(np.ones(L), size=L),
            rng.uniform(0.2, 0.6, L), {"theta": rng.dirichlet(np.ones(len(VOCAB)), size=L)},
            em) for _ in range(samples)), VOCAB, HMMSettings(L=L))


@pytest.fixture(scope="module")
def paradigm_run():
    return prepare_paradigm(example("english-verbs"), holdout=0.25, seed=0)


def _inference_result(run):
    return InferenceResult("pruned", {"max_iters": 50, "tol": 1e-4}, 2.5, 12, True,
                           list(np.linspace(1, 1e-5, 12)), graph=run.model.graph)


def _objects(run):
    """(object, what its repr must start with) for each kind of user-facing object."""
    post = _posterior()
    edit = PhonologyEditModel.copy_biased(run.model.alphabet)
    trace = [{"objective": -float(i), "q": [0.1] * 200} for i in range(30)]
    return [
        (post.samples[0], "HMM(states=12, symbols=32"),
        (post, "HMMPosterior(model='lt', states=12, symbols=32, samples=20)"),
        (run.paradigm, "Paradigm(words="),
        (run.model, "PhonologyModel(words="),
        (run, "ParadigmRun(words="),
        (replace(run, method="pruned", result=_inference_result(run)), "ParadigmRun("),
        (_inference_result(run), "InferenceResult(method='pruned', variables="),
        (edit, "PhonologyEditModel(segments="),
        (TrainResult(edit, trace, stop="converged"), "TrainResult(iterations=30"),
        (FitResult("vb", np.full(500, 0.002), None, trace, list(range(40))),
         "FitResult(method='vb', rules=500, iterations=30, unparsable=40)"),
        (RunResult(SimpleNamespace(iteration=30), np.full(500, 0.002), trace,
                   [np.zeros(500)] * 3), "RunResult(iterations=30, rules=500, trace=30, "
                                         "samples=3)"),
        (_scores(run), "HoldoutScores(n=12, exact_match=0.25, mean_neg_logp=2.5)"),
        (ChainsResult(np.full(500, 0.002), [np.full(500, 0.002)] * 4, [trace] * 4,
                      [0, 1, 2, 3], summary={"rhat": 1.2, "rank_rhat": 1.23456}),
         "ChainsResult(chains=4, rules=500, sweeps=30, rank_rhat=1.2346)"),
        (HMMChains([trace] * 2, [[{"P": np.eye(12)}] * 10] * 2, [0, 1]),
         "HMMChains(chains=2, sweeps=30, samples=10)"),
        (_rules(run), "RuleGrammar(rules=3, morphemes=15, symbols=25, train_correct=30/36)"),
        (RuleRun(_rules(run), list(run.held_out.values()), {"a": list(range(100))},
                 list(run.paradigm.entries)), "RuleRun(rules=3, morphemes=15, train=48, "
                                              "held_out=12)"),
    ]


def _scores(run):
    per_word = {k: {"gold": e.surface, "predicted": e.surface, "p_gold": 0.5,
                    "neg_logp": 0.69, "exact": True} for k, e in run.held_out.items()}
    return HoldoutScores(12, 0.25, 2.5, per_word)


def _rules(run):
    symbols = list(run.model.alphabet.segment_symbols)
    return RuleGrammar(symbols, {m: [1, 2, 3] for m in run.paradigm.morphemes},
                       [("rule", i) for i in range(3)], 30, 36, 123.4,
                       [{"step": i, "rules": list(range(20))} for i in range(20)])


def test_reprs_are_short_and_say_what_they_are(paradigm_run):
    for obj, start in _objects(paradigm_run):
        text = repr(obj)
        assert text.startswith(start), text
        assert len(text) <= LIMIT and "\n" not in text, (type(obj).__name__, len(text))


def test_control_the_generated_reprs_are_long(paradigm_run):
    for obj, _ in _objects(paradigm_run):
        assert len(_generated(obj)) > LIMIT, type(obj).__name__


def test_non_dataclass_objects_name_their_sizes(paradigm_run):
    graph = paradigm_run.model.graph
    assert repr(graph).startswith(f"FactorGraph(variables={len(graph.variables)}, ")
    trees, prep = prepare_trees([("S", ("NP", ("DT", "the"), ("NN", "dog")),
                                  ("VP", ("VBD", "barked")))] * 3, unk_threshold=0)
    k = BlockedMHTSG(trees)
    text = repr(TSGModel(k, k.init(0), prep))
    assert text.startswith("TSGModel(sampler='tsg-blocked', trees=3, terminals=3")
    assert len(text) <= LIMIT
    # control: the object default names only the class and an address
    assert "trees=" not in object.__repr__(TSGModel(k, k.init(0), prep))
