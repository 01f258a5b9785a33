"""The rule family on a paradigm: candidate underlying forms, the learned cascade
(:mod:`strgm.models.rule_search`) and held-out predictions.

Candidates for each morpheme, best first, at most ``k`` (:func:`rule_candidates`): the
URs given in ``extra`` (none by default; e.g. a trained edit phonology's k-best), then
the morpheme's surface allomorphs in the training words, most frequent first, then — for
a morpheme in one training word — its *residues* (:func:`residues`: what is left of the
word once the other morphemes' forms are cut off its edges), then the untrained copy
model's 2-best URs (:func:`strgm.models.baselines.surface_allomorphs`). The empty UR of
a morpheme with a non-empty allomorph or residue comes last (at place k): the search
starts from the first candidates, and no rule can tell an empty prefix's words from the
bare root's (Zoque 3rd person /N-/ + [disko] against [disko]).

Choosing among allomorphs is the classical "the UR is one of the surface alternants"
restriction; an allomorph cut from a suffixed form (/rob/ from [robi]) is what lets the
search move a UR off the surface of the bare form ([rop]). A residue is what lets a root
seen only after a prefix shed a segment the cut gave it: Zoque [ndisko] cut as ∅ +
ndisko, with the prefix's other form /n/, leaves /disko/. (Residues of morphemes in
many words were mostly mis-cut junk, Polish plural /-pi/, that doubled the rows the
search scores.)

Prediction (:meth:`RuleRun.predictions`) is deterministic: the held-out word's URs
concatenated and rewritten by the cascade; :meth:`RuleRun.heldout_forms` lists the other
forms the training words would allow as well (:mod:`strgm.models.rule_ambiguity`). Its
probability is 1 for that string; a −log p of the true form is defined by the mixture
with the edit phonology (:mod:`strgm.workflows.family_choice`). :func:`phonology_fst`
makes the cascade the factor graph's phonology.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import product
from typing import Optional, Sequence

import pynini

from strgm.errors import InputError
from strgm.models.baselines import surface_allomorphs
from strgm.models.em import split
from strgm.models.rule_ambiguity import heldout_forms
from strgm.models.rule_analogy import analogy_choice
from strgm.models.rule_apply import EDGE, SegmentRule, rules_fst
from strgm.models.rule_search import RuleGrammar, learn_rules
from strgm.progress import tagged
from strgm.validate import check_float, check_int


@dataclass
class RuleRun:
    """A learned :class:`RuleGrammar` with the words it was trained on and held out."""

    grammar: RuleGrammar
    held_out: list  # ParadigmEntry
    candidates: dict
    train: list  # ParadigmEntry

    def __repr__(self) -> str:
        return (f"RuleRun(rules={len(self.grammar.rules)}, "
                f"morphemes={len(self.grammar.urs)}, train={len(self.train)}, "
                f"held_out={len(self.held_out)})")

    def evidence(self) -> dict:
        """Held-out key → (c, e): the c training words that share a morpheme with it and
        the e of them that the cascade does not reproduce — the evidence for trusting
        the rules on that word (:mod:`strgm.workflows.family_choice`)."""
        g = self.grammar
        right = {e.key: g.predict(e.morphemes) == "".join(e.segments) for e in self.train}
        out = {}
        for e in self.held_out:
            related = [t.key for t in self.train if set(t.morphemes) & set(e.morphemes)]
            out[e.key] = (len(related), sum(not right[k] for k in related))
        return out

    def predictions(self) -> dict:
        """Held-out word key → predicted surface (None when a morpheme has no UR): the
        cascade's form, or where the training words leave several forms open the one
        their proportions favour (:meth:`ranked_forms`)."""
        ranked = self.ranked_forms()
        return {k: ranked[k][0][0] if k in ranked else p
                for k, p in self.cascade_predictions().items()}

    def cascade_predictions(self) -> dict:
        """Held-out word key → the learned URs rewritten by the cascade (None when a
        morpheme has no UR)."""
        g = self.grammar
        return {e.key: (g.predict(e.morphemes) if all(m in g.urs for m in e.morphemes)
                        else None) for e in self.held_out}

    def heldout_forms(self) -> dict:
        """Held-out key → the surface forms its training words cannot tell apart under the
        learned rules, the prediction first (:func:`strgm.models.rule_ambiguity.
        heldout_forms`; one form: the word is decided); words with a morpheme without
        UR are left out, and so are training words the grammar cannot spell (a saved
        grammar used on other words)."""
        return {k: ["".join(f) for f in v] for k, v in self._form_segments().items()}

    def ranked_forms(self) -> dict:
        """Held-out key → [(form, q)], the forms of :meth:`heldout_forms` weighted by the
        proportions of the training words, best first (:func:`strgm.models.
        rule_analogy.analogy_choice`); a decided word's one form has q = 1."""
        held = {e.key: e.morphemes for e in self.held_out}
        train = [(e.morphemes, tuple(e.segments)) for e in self.train]
        ranked = analogy_choice(train, held, self._form_segments())
        return {k: [("".join(f), q) for f, q in v] for k, v in ranked.items()}

    def _form_segments(self) -> dict:
        g = self.grammar
        lab = {s: i + 1 for i, s in enumerate(g.symbols)}
        words = [(e.morphemes, tuple(lab[x] for x in e.segments)) for e in self.train
                 if all(m in g.urs for m in e.morphemes) and all(x in lab for x in e.segments)]
        held = {e.key: e.morphemes for e in self.held_out
                if all(m in g.urs for m in e.morphemes)}
        forms = heldout_forms(words, g.urs, g.rules, held, len(g.symbols))
        return {k: [tuple(g.symbols[a - 1] for a in f) for f in v]
                for k, v in forms.items()}

    def exact_match(self) -> float:
        pred = self.predictions()
        words = [e for e in self.held_out if pred[e.key] is not None]
        if not words:
            return float("nan")
        return sum(pred[e.key] == "".join(e.segments) for e in words) / len(words)


def rule_candidates(paradigm, heldout: Sequence[str], extra: Optional[dict] = None,
                    k: int = 3, progress=None, ur_prior=None) -> tuple:
    """(alphabet, morpheme → candidate URs as label tuples, best first; module
    docstring). ``extra``: morpheme → URs as strings (e.g. trained k-best), tried first;
    ``ur_prior``: the morphemes' prior in the untrained inference."""
    tell = None if progress is None else \
        (lambda msg: progress(tagged(msg, "rule search, UR candidates")))
    alphabet, _, allo, kbest = surface_allomorphs(paradigm, heldout, progress=tell,
                                                  ur_prior=ur_prior)
    words = [(e.morphemes, tuple(alphabet.encode(e.segments)))
             for e in split(paradigm, set(heldout)).observed]
    rest = residues(words, {m: Counter({**{tuple(u): 0 for u in kbest.get(m, [])},
                                           **{tuple(a): c for a, c in allo[m].items()}})
                            for m in allo})
    out = {}
    for m in allo:
        cands: list = []
        for u in (extra or {}).get(m, []):
            cands.append(tuple(alphabet.encode(u)))
        cands += [tuple(a) for a, _ in allo[m].most_common()]
        if sum(allo[m].values()) == 1:  # one word: its one cut may be wrong
            cands += [u for u, _ in rest.get(m, Counter()).most_common()]
        cands += [tuple(u) for u in kbest.get(m, [])]
        seen: list = []
        for c in cands:
            if c not in seen:
                seen.append(c)
        if (any(allo[m]) or m in rest) and () in seen[:-1]:
            seen.remove(())  # an affix that surfaces: its empty piece is tried last
            seen.insert(k - 1, ())
        out[m] = seen[:k]
    return alphabet, out


def residues(words: Sequence, allo: dict, top: int = 2) -> dict:
    """morpheme → Counter of the non-empty pieces left of a training word (``words``:
    [(morphemes, surface labels)]) when, for some choice among the other morphemes'
    ``top`` most frequent forms (``allo``: morpheme → Counter of forms; the candidate
    lists give their allomorphs and the copy model's URs), those before it are a
    prefix of the word and those after it a suffix. Cost: O(words × top^(k−1)) for
    words of k morphemes."""
    out: dict = {}
    for ms, surface in words:
        opts = [[tuple(a) for a, _ in allo[m].most_common(top)] or [()] for m in ms]
        for i, m in enumerate(ms):
            for combo in product(*(opts[:i] + opts[i + 1:])):
                pre = tuple(a for u in combo[:i] for a in u)
                suf = tuple(a for u in combo[i:] for a in u)
                if len(pre) + len(suf) < len(surface) and surface[:len(pre)] == pre \
                        and surface[len(surface) - len(suf):] == suf:
                    out.setdefault(m, Counter())[
                        surface[len(pre):len(surface) - len(suf)]] += 1
    return out


def train_rule_phonology(paradigm, heldout: Sequence[str] = (), *,
                         extra: Optional[dict] = None, word_cost: float = 4.0,
                         ur_cost: float = 1.0, max_rules: int = 12,
                         beam: Optional[int] = None, window: int = 2,
                         progress=None, ur_prior=None) -> RuleRun:
    """Learn URs and rules on the words left after ``heldout`` (word keys) with
    :func:`strgm.models.rule_search.learn_rules` (``beam`` None: its default for the
    number of training words). A non-positive or non-finite ``word_cost``, a negative
    or non-finite ``ur_cost``, a negative ``max_rules``, a ``beam`` below 1 or a
    ``window`` other than 1 or 2 is an :class:`OptionError`. ``ur_prior``: the
    morphemes' prior when the UR candidates are inferred (:func:`rule_candidates`)."""
    word_cost = check_float("word_cost", word_cost, min=0, min_open=True)
    ur_cost = check_float("ur_cost", ur_cost, min=0)
    max_rules = check_int("max_rules", max_rules, min=0)
    beam = None if beam is None else check_int("beam", beam, min=1)
    window = check_int("window", window, min=1, max=2)
    held = set(heldout)
    alphabet, cands = rule_candidates(paradigm, sorted(held), extra, progress=progress,
                                      ur_prior=ur_prior)
    train = split(paradigm, held)
    words = [(e.morphemes, tuple(alphabet.encode(e.segments))) for e in train.observed]
    g = learn_rules(alphabet.segment_symbols, words, cands, word_cost=word_cost,
                    ur_cost=ur_cost, max_rules=max_rules, beam=beam, window=window,
                    progress=progress)
    return RuleRun(g, [e for e in paradigm.entries if e.key in held and e.surface],
                   cands, list(train.observed))


def phonology_fst(g: RuleGrammar, alphabet) -> pynini.Fst:
    """The cascade as the phonology factor of :func:`strgm.models.phonology.
    build_phonology_model` over ``alphabet`` (whose segments must be the grammar's, in
    order): a log64 transducer that deletes the morpheme boundary (if the alphabet has
    one), then rewrites — a deterministic p(surface | UR), so the factor graph, inference
    and prediction stay those of the edit phonology."""
    if list(alphabet.segment_symbols) != list(g.symbols):
        raise InputError("the rule grammar's segments are not the alphabet's "
                         f"({' '.join(g.symbols)} vs {' '.join(alphabet.segment_symbols)})")
    n = len(g.symbols)
    cascade = rules_fst(g.rules, n)
    b = alphabet.boundary_label
    if b is not None:
        strip = pynini.Fst(arc_type="standard")
        q = strip.add_state()
        strip.set_start(q)
        strip.set_final(q)
        one = pynini.Weight.one("tropical")
        for a in range(1, n + 1):
            strip.add_arc(q, pynini.Arc(a, a, one, q))
        strip.add_arc(q, pynini.Arc(b, 0, one, q))
        cascade = pynini.compose(strip, cascade).optimize()
    return pynini.arcmap(cascade, map_type="to_log64").arcsort(sort_type="ilabel")


FORMAT = "strgm-rules-v1"


def grammar_to_dict(g: RuleGrammar) -> dict:
    """The grammar as plain JSON: segments by symbol, ``#`` for the word edge."""
    sym = lambda a: "#" if a == EDGE else g.symbols[a - 1]  # noqa: E731
    ctx = lambda c: None if c is None else sorted(sym(a) for a in c)  # noqa: E731
    return {"format": FORMAT, "symbols": g.symbols,
            "underlying_forms": {m: [sym(a) for a in u] for m, u in g.urs.items()},
            "rules": [{"text": r.text, "mapping": [[sym(x), sym(y) if y else ""]
                                                   for x, y in r.mapping],
                       "insert": sym(r.insert) if r.insert else "",
                       "left": ctx(r.left), "right": ctx(r.right), "tier": ctx(r.tier),
                       "tier_side": r.tier_side, "left2": ctx(r.left2),
                       "right2": ctx(r.right2),
                       "spread": [[sym(x), sym(c), sym(y)] for x, c, y in r.spread],
                       "spread_side": r.spread_side}
                      for r in g.rules],
            "train_correct": g.train_correct, "train_words": g.train_words,
            "description_length": g.description_length, "history": g.history}


def _side(v) -> str:
    if v not in ("left", "right"):
        raise ValueError(f"tier_side {v!r} is not 'left' or 'right'")
    return v


def grammar_from_dict(d: dict, path: str = "<dict>") -> RuleGrammar:
    """Inverse of :func:`grammar_to_dict`; a malformed object or an unknown symbol is an
    :class:`InputError` naming ``path``."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise InputError(f"not a strgm rule grammar (format {FORMAT})", path=path)
    try:
        symbols = list(d["symbols"])
        lab = {s: i + 1 for i, s in enumerate(symbols)}
        lab["#"] = EDGE
        ctx = lambda c: None if c is None else frozenset(lab[a] for a in c)  # noqa: E731
        rules = [SegmentRule(tuple((lab[x], lab[y] if y else 0) for x, y in r["mapping"]),
                             lab[r["insert"]] if r["insert"] else 0, ctx(r["left"]),
                             ctx(r["right"]), str(r["text"]), ctx(r["tier"]),
                             _side(r.get("tier_side", "left")), ctx(r.get("left2")),
                             ctx(r.get("right2")),
                             tuple(tuple(lab[a] for a in t) for t in r.get("spread", [])),
                             _side(r.get("spread_side", "right")))
                 for r in d["rules"]]
        urs = {str(m): tuple(lab[a] for a in u) for m, u in d["underlying_forms"].items()}
        return RuleGrammar(symbols, urs, rules, int(d["train_correct"]),
                           int(d["train_words"]), float(d["description_length"]),
                           list(d.get("history", [])))
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as e:
        raise InputError(f"rule grammar is damaged ({type(e).__name__}: {e})",
                         path=path) from None
