"""A PCFG as the prior on underlying forms (``--prior pcfg[:GRAMMAR]``), learned jointly.

Every morpheme's prior factor is the same grammar, attached with
:meth:`strgm.graph.FactorGraph.add_grammar` and sharing one
:class:`~strgm.grammars.factor_message.GrammarParameters`, so the rule probabilities are
re-estimated inside the graph from the expected rule counts at all the morphemes (VB by
default; docs/phonology.md). Because a grammar has no finite-state message, the
prior needs ``--method ep`` or ``pep``; under EP/PEP it is a moment oracle and no string
is enumerated. The parameters persist across the graphs EM builds, so EM learns the
phonology and the phonotactics together.

The default grammar is a syllable grammar over the paradigm's own segments, split into
consonants and vowels by their IPA features (:func:`strgm.models.ipa_features.vowels`):

    Word  → Piece | Piece Word            Piece → Syl | C       (a lone consonant: -s, -t)
    Syl   → Nuc | Ons Nuc | Nuc Cod | Ons Nuc Cod
    Ons   → C | C C        Cod → C | C C        Nuc → V | V V
    C     → c   (every consonant c)     V → v   (every vowel v)

with the lexical rules weighted by the segments' frequencies in the observed surfaces
(add-one) and the structural rules uniform; ε (an empty affix) has mass ``empty``
(:class:`~strgm.grammars.factor_message.GrammarMessage`). A paradigm without vowels, or
without consonants, gets the classes it has. A user grammar (Johnson's format) must
derive only segments of the paradigm; its start symbol is its first rule's left side.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Optional

from strgm.errors import InputError, OptionError
from strgm.grammars.cfg import Grammar, Rule
from strgm.grammars.factor_message import GrammarParameters
from strgm.models.ipa_features import vowels
from strgm.validate import check_choice, check_float

__all__ = ["PCFGPrior", "syllable_grammar", "load_pcfg_prior", "pcfg_prior_from_bytes",
           "DEFAULT_EMPTY"]

#: p(ε) of the grammar prior (as for the HMM prior).
DEFAULT_EMPTY = 0.05

_STRUCTURE = [("Word", ("Piece",)), ("Word", ("Piece", "Word")),
              ("Piece", ("Syl",)), ("Piece", ("C",)),
              ("Syl", ("Nuc",)), ("Syl", ("Ons", "Nuc")), ("Syl", ("Nuc", "Cod")),
              ("Syl", ("Ons", "Nuc", "Cod")),
              ("Ons", ("C",)), ("Ons", ("C", "C")), ("Cod", ("C",)), ("Cod", ("C", "C")),
              ("Nuc", ("V",)), ("Nuc", ("V", "V"))]


def syllable_grammar(segments, counts: Optional[Counter] = None) -> Grammar:
    """The default syllable grammar (module docstring) over ``segments``."""
    segments = list(segments)
    counts = counts or Counter()
    vs = set(vowels(segments))
    cons = [s for s in segments if s not in vs]
    have = {"C": bool(cons), "V": bool(vs)}
    rules = []
    for lhs, rhs in _STRUCTURE:
        if all(have.get(x, True) for x in rhs):
            rules.append(Rule(lhs, rhs, 1.0))
    rules += [Rule("C", (c,), 1.0 + counts[c]) for c in cons]
    rules += [Rule("V", (v,), 1.0 + counts[v]) for v in segments if v in vs]
    usable = _productive(rules, set(segments))
    return Grammar([r for r in rules if r.lhs in usable
                    and all(x in usable or x in segments for x in r.rhs)], start="Word")


def _productive(rules, segments: set) -> set:
    """Nonterminals that derive some string of ``segments`` (the classes a paradigm
    lacks drop out)."""
    good: set = set()
    while True:
        new = {r.lhs for r in rules if all(x in good or x in segments for x in r.rhs)}
        if new <= good:
            return good
        good |= new


class PCFGPrior:
    """The grammar prior (module docstring). ``grammar`` None: the default syllable
    grammar, built per alphabet; ``estimator``: how its rule probabilities are learned
    in the graph ("vb", "em" or "fixed"); ``alpha``: Dirichlet pseudocount."""

    def __init__(self, grammar: Optional[Grammar] = None, path: Optional[str] = None,
                 estimator: str = "vb", alpha: float = 1.0, empty: float = DEFAULT_EMPTY,
                 sha256: Optional[str] = None):
        self.grammar, self.path, self.sha256 = grammar, path, sha256
        self.estimator = check_choice("estimator", estimator, ("vb", "cvb", "em", "fixed"))
        self.alpha = check_float("alpha", alpha, min=0, min_open=True)
        self.empty = check_float("empty", empty, min=0, max=1, max_open=True)
        self._params: dict = {}  # segments -> GrammarParameters (kept across EM graphs)

    def params(self, alphabet, paradigm=None) -> GrammarParameters:
        """The shared rule weights for this alphabet's segments (built once)."""
        key = tuple(alphabet.segment_symbols)
        if key not in self._params:
            g = self.grammar
            if g is None:
                counts = Counter(s for e in (paradigm.observed if paradigm else ())
                                 for s in alphabet.decode(alphabet.encode(e.surface)))
                g = syllable_grammar(key, counts)
            self._params[key] = GrammarParameters(g, self.estimator, self.alpha)
        return self._params[key]

    @property
    def learned(self) -> dict:
        """Segments (a tuple) → the :class:`GrammarParameters` shared by the morphemes over
        that alphabet (their θ is what the graph learned); a new dict."""
        return dict(self._params)

    def restore(self, learned: dict) -> None:
        """Set the rule weights :meth:`record` saved (segments joined by spaces -> θ)."""
        from fst_factors.alphabet import Alphabet

        for key, theta in learned.items():
            params = self.params(Alphabet(key.split()))
            self._params[tuple(key.split())] = GrammarParameters(
                params.grammar, self.estimator, self.alpha, theta)

    def add_to(self, graph, name: str, var: str, paradigm=None) -> None:
        """The prior factor ``name`` on the morpheme variable ``var``."""
        graph.add_grammar(name, var, self.params(graph.alphabet, paradigm).grammar,
                          params=self.params(graph.alphabet, paradigm), empty=self.empty)

    def unseen(self, alphabet) -> list:
        return []

    def describe(self) -> str:
        return f"pcfg:{self.path}" if self.path else "pcfg (syllables)"

    def record(self) -> dict:
        """What a saved phonology keeps of this prior (the learned θ included)."""
        learned = {" ".join(k): p.theta.tolist() for k, p in self._params.items()}
        return {"kind": "pcfg", "path": self.path,
                "file": Path(self.path).name if self.path else None, "sha256": self.sha256,
                "estimator": self.estimator, "alpha": self.alpha, "empty": self.empty,
                "theta": learned}


def load_pcfg_prior(path: Optional[str], **options) -> PCFGPrior:
    """The grammar prior of ``--prior pcfg[:GRAMMAR]``: the default syllable grammar, or a
    grammar file in Johnson's format read and checked now (errors name the file/line)."""
    if path is None:
        return PCFGPrior(**options)
    from strgm.safe_io import read_bytes

    return pcfg_prior_from_bytes(read_bytes(path, "grammar (--prior pcfg:GRAMMAR)"),
                                 str(path), **options)


def pcfg_prior_from_bytes(data: bytes, path: str, **options) -> PCFGPrior:
    """The grammar prior of the grammar file ``path`` whose bytes are ``data`` (read once,
    so that the recorded SHA-256 is that of what was parsed). Text that is not UTF-8 is
    an :class:`InputError` naming the line and byte offset; a malformed grammar names the
    file and line."""
    from strgm.grammars.johnson_format import parse_grammar

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"grammar (--prior pcfg:GRAMMAR) is not UTF-8 text (byte "
                         f"0x{data[e.start]:02x} at offset {e.start}); save it as UTF-8",
                         path=path, line=data.count(b"\n", 0, e.start) + 1) from None
    grammar = parse_grammar(text, path)
    if not grammar.terminals:
        raise OptionError("--prior", f"pcfg:{path}", "the grammar derives no segment")
    return PCFGPrior(grammar, path, sha256=hashlib.sha256(data).hexdigest(), **options)
