"""Models built on the engine (a layer of docs/architecture.md §1): the phonology of
Cotterell, Peng & Eisner (2015) as a string factor graph, its trainable contextual edit
transducer, EM training, prediction and held-out scoring, and baselines.

    build_phonology_model(paradigm, ...) -> PhonologyModel   the factor graph
    train_phonology(paradigm, ...) -> TrainResult            EM (E-step: any method)
    score_words(beliefs, gold, alphabet) -> HoldoutScores    the one held-out scorer

The paradigm workflow that ties them to inference is :mod:`strgm.workflows`.
"""

from strgm.models.scoring import HoldoutScores, score_words
from strgm.models.phonology import (PhonologyModel, build_phonology_model,
                                    default_mean_length, holdout_split, in_alphabet,
                                    morpheme_var, score_holdout, surface_var,
                                    unigram_from_paradigm, ur_var)
from strgm.models.ipa_features import SCHEMES, features_of, symbol_info
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.training import expected_counts, m_step, q_and_grad
from strgm.models.em import TrainResult, e_step, split, train_phonology
from strgm.models.em_checkpoint import Checkpoint, load_checkpoint
from strgm.models.prediction import predict, predict_word, score
from strgm.models.baselines import no_training, surface_baseline

__all__ = [
    "HoldoutScores", "score_words",
    "PhonologyModel", "build_phonology_model", "default_mean_length", "holdout_split",
    "in_alphabet", "morpheme_var", "score_holdout", "surface_var", "unigram_from_paradigm",
    "ur_var",
    "SCHEMES", "features_of", "symbol_info",
    "PhonologyEditModel",
    "expected_counts", "m_step", "q_and_grad",
    "Checkpoint", "TrainResult", "e_step", "load_checkpoint", "predict", "predict_word",
    "score", "split", "train_phonology",
    "no_training", "surface_baseline",
]
