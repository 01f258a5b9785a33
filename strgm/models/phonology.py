"""The phonology model of Cotterell, Peng & Eisner (2015) as a string factor graph.

For each morpheme m: a latent underlying form M_m with a prior factor (by default geometric
length × unigram, ``fst_factors.transducers.priors``; or any acceptor over the segments, e.g. a
learned HMM: :mod:`strgm.models.ur_prior`, docs/phonology.md). For each word
w = m_1 … m_k: its underlying form U_w = M_{m_1} · (b ·) … · M_{m_k} (a concatenation
factor; for k = 1 the morpheme itself), and its surface S_w = phonology(U_w), a binary
factor holding the phonology transducer. S_w is observed when the paradigm gives the
surface, latent otherwise (to predict).

The phonology defaults to the untrained copy-biased edit transducer (``p_copy`` = 0.99);
any log64 transducer over the model's alphabet can be passed instead (e.g. a trained
contextual edit transducer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

import numpy as np
import pynini

import fst_factors.transducers as ff
from fst_factors.alphabet import Alphabet, segment
from strgm.datasets.paradigm import Paradigm
from strgm.errors import InputError, OptionError, UnknownSymbolError, did_you_mean
from strgm.factors import BinaryFactor, UnaryFactor
from strgm.graph import FactorGraph
from strgm.models.scoring import HoldoutScores, score_words
from fst_factors.transducers.relabel import to_alphabet
from strgm.validate import check_float, check_int, check_probability
from fst_factors.transducers.edit import P_COPY


def morpheme_var(label: str) -> str:
    return f"M:{label}"


def ur_var(key: str) -> str:
    return f"U:{key}"


def surface_var(key: str) -> str:
    return f"S:{key}"


@dataclass
class PhonologyModel:
    """The built graph plus the maps from morphemes/words to its variables."""

    paradigm: Paradigm
    alphabet: Alphabet
    graph: FactorGraph
    phonology: pynini.Fst
    morpheme_vars: dict = field(default_factory=dict)  # morpheme label -> var name
    word_vars: dict = field(default_factory=dict)  # word key -> surface var name
    ur_vars: dict = field(default_factory=dict)  # word key -> underlying var name
    settings: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return (f"PhonologyModel(words={len(self.paradigm)}, "
                f"morphemes={len(self.morpheme_vars)}, "
                f"segments={self.alphabet.num_segments}, "
                f"variables={len(self.graph.variables)}, factors={len(self.graph.factors)})")

    @property
    def unobserved_words(self) -> list[str]:
        return [e.key for e in self.paradigm.entries if e.surface is None]


def unigram_from_paradigm(paradigm: Paradigm, alphabet: Alphabet, smoothing: float = 1.0
                          ) -> np.ndarray:
    """Add-``smoothing`` segment frequencies of the observed surfaces (segment labels only)."""
    smoothing = check_float("smoothing", smoothing, min=0)
    counts = np.full(alphabet.num_segments, smoothing)
    for e in paradigm.observed:
        for a in alphabet.encode(e.segments):
            counts[a - 1] += 1
    return counts / counts.sum()


def default_mean_length(paradigm: Paradigm) -> float:
    """Mean surface length per morpheme, a sensible prior mean for morpheme URs."""
    obs = paradigm.observed
    if not obs:
        return 4.0
    segs = sum(len(e.segments) for e in obs)
    morphs = sum(len(e.morphemes) for e in obs)
    return max(1.0, segs / morphs)


def _check_covers(alphabet: Alphabet, paradigm: Paradigm) -> None:
    """Refuse an observed surface with a segment outside a given alphabet (e.g. a trained
    model's), naming the file, line and word rather than failing deep in the graph."""
    for e in paradigm.observed:
        missing = [s for s in e.segments if s not in alphabet]
        if missing:
            raise UnknownSymbolError(
                missing[0], f"the surface form {e.surface!r} of word {e.key!r}; the "
                f"phonology's alphabet is {' '.join(alphabet.segment_symbols)}",
                path=paradigm.source, line=e.line)


def build_phonology_model(paradigm: Paradigm, *, alphabet: Optional[Alphabet] = None,
                          p_copy: float = P_COPY, mean_length: Optional[float] = None,
                          boundary: Optional[str] = None,
                          phonology: Optional[pynini.Fst] = None,
                          hidden: Iterable[str] = (), ur_prior=None) -> PhonologyModel:
    """Build the factor graph for ``paradigm`` (see module docstring).

    ``alphabet`` defaults to the segments of the observed surfaces; with a ``boundary``
    symbol, word URs carry it between morphemes (the default phonology deletes it).
    ``hidden`` names words (keys like ``"R01 PAST"``) to treat as unobserved.
    ``p_copy`` must lie in (0, 1) and ``mean_length`` be finite and > 0 (an infinite mean
    would make the prior improper and every observation look impossible).
    ``ur_prior``: every morpheme's prior — a log64 acceptor over the segment labels
    1..|segments|, or an object with ``acceptor(alphabet)`` (an
    :class:`~strgm.models.ur_prior.HMMPrior`); default the geometric-length unigram with
    mean ``mean_length`` (which is refused with any other prior).
    """
    p_copy = check_probability("p_copy", p_copy)
    if mean_length is not None:
        mean_length = check_float("mean_length", mean_length, min=0, min_open=True)
    if boundary is not None and (not isinstance(boundary, str) or not boundary
                                 or any(c.isspace() for c in boundary)):
        raise OptionError("boundary", boundary, "must be one non-empty symbol without spaces")
    hidden = set(hidden)
    if hidden:
        paradigm = paradigm.with_hidden(hidden)
    alphabet = _model_alphabet(paradigm, alphabet, boundary)
    if phonology is None:
        phonology = ff.edit_transducer(alphabet.num_segments, ff.EditParams(p_copy),
                                       boundary_label=alphabet.boundary_label)
    prior, settings = _ur_prior(paradigm, alphabet, ur_prior, mean_length)
    model = PhonologyModel(paradigm, alphabet, FactorGraph(alphabet), phonology,
                           settings={"p_copy": p_copy, **settings, "boundary": boundary})
    grammar_prior = hasattr(prior, "add_to")  # a grammar prior (strgm.models.grammar_prior)
    if not grammar_prior:
        prior = pynini.arcsort(to_alphabet(prior, alphabet, where="the UR prior"), "ilabel")
    shared = factor_machine(phonology, alphabet)
    for m in paradigm.morphemes:
        v = morpheme_var(m)
        model.graph.add_variable(v)
        if grammar_prior:
            prior.add_to(model.graph, f"prior:{m}", v, paradigm)
        else:
            model.graph.add_factor(UnaryFactor(f"prior:{m}", var=v, fst=prior))
        model.morpheme_vars[m] = v
    for e in paradigm.entries:
        _add_word(model, e, shared)
    return model


def _ur_prior(paradigm: Paradigm, alphabet: Alphabet, ur_prior,
              mean_length: Optional[float]) -> tuple:
    """(the morphemes' prior acceptor, its settings) for :func:`build_phonology_model`."""
    if ur_prior is None:
        mean = default_mean_length(paradigm) if mean_length is None else mean_length
        return ff.geometric_unigram_prior(alphabet.num_segments, mean, unigram_from_paradigm(
            paradigm, alphabet)), {"mean_length": mean, "ur_prior": "unigram"}
    if mean_length is not None:
        raise OptionError("mean_length", mean_length, "sets the length of the default "
                          "unigram prior; the UR prior given has its own length model")
    if isinstance(ur_prior, pynini.Fst):
        return ur_prior, {"mean_length": None, "ur_prior": "acceptor"}
    if hasattr(ur_prior, "add_to"):  # a grammar: its factors are added per morpheme
        return ur_prior, {"mean_length": None, "ur_prior": ur_prior.describe()}
    return ur_prior.acceptor(alphabet), {"mean_length": None,
                                         "ur_prior": ur_prior.describe()}


def _model_alphabet(paradigm: Paradigm, alphabet: Optional[Alphabet],
                    boundary: Optional[str]) -> Alphabet:
    """The given alphabet (checked to cover the observed surfaces) or that of the
    paradigm, with the ``boundary`` symbol added."""
    if alphabet is None:
        alphabet = paradigm.alphabet()
    else:
        _check_covers(alphabet, paradigm)
    if boundary is not None and alphabet.boundary != boundary:
        if boundary in alphabet.segment_symbols:
            raise OptionError("boundary", boundary, "is a segment of the surface forms; "
                              "choose a symbol that no word uses")
        alphabet = alphabet.with_boundary(boundary)
    if alphabet.num_segments == 0:
        raise InputError("the paradigm has no observed surface forms", path=paradigm.source)
    return alphabet


def factor_machine(phonology: pynini.Fst, alphabet: Alphabet) -> pynini.Fst:
    """The phonology as every word's factor holds it: converted to ``alphabet``'s labels
    (:func:`~fst_factors.transducers.relabel.to_alphabet`) and sorted on its output tape, since
    a message to a word's UR is T ∘ μ_{S→F} (composition then uses the machine as it
    is). A new machine."""
    return pynini.arcsort(to_alphabet(phonology, alphabet, where="the phonology"), "olabel")


def _add_word(model: PhonologyModel, e, phonology: pynini.Fst) -> None:
    """S_w (observed when the entry has a surface), U_w = concatenation of the morphemes
    (the morpheme itself for one morpheme), and the phonology factor between them.

    ``phonology`` is the model's transducer converted once to the alphabet's labels; every
    word's factor holds that one machine (factors never modify their machines; a copy
    per word cost time and memory linear in the words, docs/phonology.md)."""
    g, alphabet = model.graph, model.alphabet
    s = surface_var(e.key)
    try:
        obs = None if e.surface is None else alphabet.encode(
            e.segments, where=f"observation of variable {s!r}")
        g.add_variable(s, observed=obs)
    except InputError as err:
        raise InputError(f"word {e.key!r}: {err.detail}", path=model.paradigm.source,
                         line=e.line) from None
    if len(e.morphemes) == 1:
        u = morpheme_var(e.morphemes[0])
    else:
        u = ur_var(e.key)
        g.add_variable(u)
        g.add_concat(f"concat:{e.key}", [morpheme_var(m) for m in e.morphemes], u,
                     boundary=alphabet.boundary is not None)
    model.ur_vars[e.key] = u
    g.add_factor(BinaryFactor(f"phonology:{e.key}", input_var=u, output_var=s,
                              fst=phonology))
    model.word_vars[e.key] = s


def holdout_split(paradigm: Paradigm, fraction: float, seed: int = 0) -> list[str]:
    """Keys of a seeded random ``fraction`` of the observed words: at least one, and at
    least one observed word is kept for training."""
    fraction = check_probability("fraction", fraction)
    seed = check_int("seed", seed, min=0)
    keys = [e.key for e in paradigm.observed]
    if len(keys) < 2:
        raise InputError(f"a holdout needs at least 2 observed words, found {len(keys)}",
                         path=paradigm.source)
    n = min(len(keys) - 1, max(1, int(round(fraction * len(keys)))))
    rng = np.random.default_rng(seed)
    return sorted(rng.choice(keys, size=n, replace=False).tolist())


def in_alphabet(word: str, alphabet: Alphabet) -> bool:
    """True when every segment of ``word`` is a symbol of ``alphabet`` (a held-out word may
    contain a segment seen nowhere else; it then has probability 0, not an error)."""
    return all(s in alphabet for s in segment(word))


def score_holdout(beliefs: dict, model: PhonologyModel, gold: dict) -> HoldoutScores:
    """Exact-match accuracy and mean -log p of the true forms under the word beliefs
    (:func:`strgm.models.scoring.score_words`, the one held-out scorer).

    ``beliefs``: surface variable name -> Belief; ``gold``: word key -> true surface.
    A true form with a segment seen in no training word has p = 0 (-log p = inf, never an
    exact match); its ``per_word`` entry lists the ``unseen`` segments."""
    for key in gold:
        if key not in model.word_vars or model.word_vars[key] not in beliefs:
            raise InputError(f"held-out word {key!r} is not a word of the model (or has "
                             f"no belief){did_you_mean(key, model.word_vars)}",
                             path=model.paradigm.source)
    return score_words({k: beliefs[model.word_vars[k]] for k in gold}, gold, model.alphabet)
