"""Word-shape signatures for rare and unknown words (Berkeley parser "simple lexicon" style).

A word's signature is ``<UNK`` followed by shape features and ``>``, built in this fixed
order (after Petrov et al.'s English ``getSignature``, unknown level 5):

1. capitalisation: ``-INITC`` (first letter upper case, the sentence's first word, one
   capital in all), ``-CAPS`` (any other word with a capital at the start, or a
   non-letter start and some capital), ``-LC`` (else, when it has a lower-case letter);
2. ``-KNOWNLC``: an ``-INITC`` word whose lower-cased form is a known word;
3. ``-NUM``: it contains a digit;
4. ``-DASH``: it contains a hyphen;
5. a suffix: ``-s`` for a word of length ≥ 3 ending in s but not in ss/is/us; else, for a
   word of length ≥ 5 without hyphen (and not both digits and capitals), the first of
   ``-ed -ing -ion -er -est -ly -ity -y -al`` that ends the lower-cased word.

The back-off chain (:func:`signature_chain`) lists the signature, then the signatures
with the last feature dropped one at a time, down to the bare ``<UNK>``; e.g.
``<UNK-INITC-KNOWNLC-s>``, ``<UNK-INITC-KNOWNLC>``, ``<UNK-INITC>``, ``<UNK>``.
Everything is a deterministic function of the word, its position and the known words.

Signatures cannot collide with real words: a token of the form ``<UNK...>`` is never
treated as known (:func:`is_signature`); in training it counts as rare whatever its
count, at parse time it is mapped like any unknown word.  (No Penn Treebank word starts
with ``<UNK``.)

Training scheme (:func:`replace_rare`): a word seen at most ``threshold`` times (default
1) is replaced in its tree by its finest signature, and :func:`backoff_counts` records,
for each such token, weight ``backoff_weight`` (default 0.01) for ``TAG -> s`` of every
coarser signature ``s`` of its chain.  So every tag seen over a rare word also emits the
bare ``<UNK>`` and any unknown word gets some tag; the coarse rules take a small fixed
share of each tag's mass, and since all tags' coarse rules are scaled alike they rank the
tags of a word by the same rare-word statistics.  At parse time (:func:`map_sentence`) a
known word stays itself and an unknown one becomes the finest signature of its chain that
the grammar has.
"""

from __future__ import annotations

from collections import Counter

from strgm.grammars.binarize import binarize, debinarize
from strgm.grammars.cfg import Grammar, Rule
from strgm.grammars.ptb import relabel_collisions, treebank_grammar
from strgm.errors import InputError, OptionError
from strgm.validate import check_float, check_int

__all__ = ["PREFIX", "is_signature", "signature_features", "signature", "signature_chain",
           "map_word", "map_sentence", "replace_rare", "backoff_counts", "word_counts",
           "known_words", "grammar_known_words", "treebank_pcfg", "restore_tree",
           "prepare_trees", "lexical_counts", "grammar_info"]

PREFIX = "<UNK"
SUFFIXES = ("ed", "ing", "ion", "er", "est", "ly", "ity", "y", "al")


def is_signature(token: str) -> bool:
    """Whether ``token`` has the form of a signature (``<UNK...>``)."""
    return token.startswith(PREFIX) and token.endswith(">")


def _caps(word: str, position: int, known) -> list:
    n_caps = sum(c.isupper() for c in word)
    has_lower = any(c.islower() for c in word)
    first = word[0]
    if first.isupper() or first.istitle():
        if position == 0 and n_caps == 1:
            return ["INITC", "KNOWNLC"] if word.lower() in known else ["INITC"]
        return ["CAPS"]
    if not first.isalpha() and n_caps > 0:
        return ["CAPS"]
    return ["LC"] if has_lower else []


def _suffix(word: str, has_digit: bool, has_dash: bool, n_caps: int) -> list:
    low = word.lower()
    if low.endswith("s") and len(low) >= 3:
        return [] if low[-2] in "siu" else ["s"]
    if len(low) >= 5 and not has_dash and not (has_digit and n_caps > 0):
        for s in SUFFIXES:
            if low.endswith(s):
                return [s]
    return []


def signature_features(word: str, position: int = 1, known=frozenset()) -> list:
    """The shape features of ``word`` at 0-based ``position`` in its sentence, in the
    order of the module docstring; ``known`` is the set of known words."""
    if not word:
        return []
    has_digit = any(c.isdigit() for c in word)
    has_dash = "-" in word
    feats = _caps(word, position, known)
    if has_digit:
        feats.append("NUM")
    if has_dash:
        feats.append("DASH")
    feats += _suffix(word, has_digit, has_dash, sum(c.isupper() for c in word))
    return feats


def _sig(feats) -> str:
    return PREFIX + "".join("-" + f for f in feats) + ">"


def signature(word: str, position: int = 1, known=frozenset()) -> str:
    """The finest signature of ``word`` (e.g. ``<UNK-LC-ing>``)."""
    return _sig(signature_features(word, position, known))


def signature_chain(word: str, position: int = 1, known=frozenset()) -> list:
    """Signatures from the finest to the bare ``<UNK>`` (last feature dropped each step)."""
    feats = signature_features(word, position, known)
    return [_sig(feats[:k]) for k in range(len(feats), -1, -1)]


def map_word(word: str, position: int, known, terminals) -> str:
    """``word`` itself when known, else the finest signature of its chain in
    ``terminals`` (the grammar's), else ``word`` unchanged (it will not parse)."""
    if word in known and not is_signature(word):
        return word
    for s in signature_chain(word, position, known):
        if s in terminals:
            return s
    return word


def map_sentence(words, known, terminals) -> tuple:
    """:func:`map_word` for every word of a sentence (tuple of str)."""
    return tuple(map_word(w, i, known, terminals) for i, w in enumerate(words))


def _leaves(t, out: list) -> list:
    if isinstance(t, str):
        out.append(t)
    else:
        for c in t[1:]:
            _leaves(c, out)
    return out


def word_counts(trees) -> Counter:
    """Token counts of the words (leaves) of ``trees``."""
    c: Counter = Counter()
    for t in trees:
        c.update(_leaves(t, []))
    return c


def known_words(counts: Counter, threshold: int = 1) -> frozenset:
    """Words seen more than ``threshold`` times that do not look like signatures."""
    check_int("threshold", threshold, min=0)
    return frozenset(w for w, n in counts.items() if n > threshold and not is_signature(w))


def replace_rare(trees, threshold: int = 1):
    """(trees with every rare word replaced by its finest signature, known words).

    A word is rare when seen at most ``threshold`` times in ``trees`` (or when it looks
    like a signature); ``threshold=0`` replaces nothing but such look-alikes."""
    known = known_words(word_counts(trees), threshold)

    def go(t, pos):
        if isinstance(t, str):
            i = pos[0]
            pos[0] += 1
            return t if t in known else signature(t, i, known)
        return (t[0],) + tuple(go(c, pos) for c in t[1:])
    return [go(t, [0]) for t in trees], known


def backoff_counts(original, known, backoff_weight: float = 0.01) -> Counter:
    """Counts of preterminal rules ``(tag, signature)`` for the coarser signatures of the
    rare tokens of the ``original`` (un-replaced) trees: ``backoff_weight`` per token and
    coarser level (the finest level is counted by the trees themselves)."""
    check_float("backoff_weight", backoff_weight, min=0, min_open=True)
    out: Counter = Counter()

    def go(t, pos):
        if isinstance(t, str):
            return
        if len(t) == 2 and isinstance(t[1], str):
            i = pos[0]
            pos[0] += 1
            if t[1] not in known:
                for s in signature_chain(t[1], i, known)[1:]:
                    out[(t[0], s)] += backoff_weight
            return
        for c in t[1:]:
            go(c, pos)
    for t in original:
        go(t, [0])
    return out


def grammar_known_words(g: Grammar) -> frozenset:
    """The known words of a grammar: its terminals that are not signatures."""
    return frozenset(t for t in g.terminals if not is_signature(t))


def prepare_trees(trees, threshold: int = 1, start: str = "TOP") -> tuple:
    """(renamed trees, the same with their original words, known words): rare words
    replaced by signatures (:func:`replace_rare`), then labels that are also words
    renamed (:func:`~strgm.grammars.ptb.relabel_collisions`).  Refuses a ``start``
    that is a label of the trees."""
    trees = list(trees)
    if not trees:
        raise InputError("no trees to build a grammar from")
    if any(start in _labels(t) for t in trees):
        raise OptionError("start", start, "is a label of the trees; choose a start symbol "
                          "the trees do not use")
    replaced, known = replace_rare(trees, threshold)
    renamed = relabel_collisions(replaced)
    return renamed, _with_words(renamed, trees), known


def lexical_counts(binary, original, known, backoff_weight: float = 0.01,
                   start: str = "TOP") -> dict:
    """Counts ``(lhs, rhs) -> weight`` of the rules of the binarised trees (with
    ``start`` rules as :func:`~strgm.grammars.ptb.treebank_grammar` adds them) plus the
    signature back-off counts of :func:`backoff_counts`."""
    g = treebank_grammar(binary, start=start)
    counts = {(r.lhs, r.rhs): r.weight for r in g.rules}
    for (tag, sig), w in sorted(backoff_counts(original, known, backoff_weight).items()):
        counts[(tag, (sig,))] = counts.get((tag, (sig,)), 0.0) + w
    return counts


def treebank_pcfg(trees, threshold: int = 1, horizontal: int | None = 2,
                  start: str = "TOP", backoff_weight: float = 0.01,
                  factor: str = "right", parent: bool = False) -> tuple:
    """(relative-frequency PCFG, summary dict) of cleaned treebank trees.

    Steps: rare words become signatures (:func:`replace_rare`); labels that are also
    words are renamed (:func:`~strgm.grammars.ptb.relabel_collisions`); trees are
    binarised (:func:`~strgm.grammars.binarize.binarize`, ``horizontal``, ``factor``
    and ``parent`` annotation as there, None: no Markovisation); rules are counted with
    ``start --> root`` rules (:func:`~strgm.grammars.ptb.treebank_grammar`) and the
    back-off counts of :func:`backoff_counts` are added.  Weights are counts."""
    renamed, original, known = prepare_trees(trees, threshold, start)
    binary = [binarize(t, horizontal, factor, parent) for t in renamed]
    counts = lexical_counts(binary, original, known, backoff_weight, start)
    g = Grammar([Rule(lhs, rhs, w) for (lhs, rhs), w in counts.items()], start=start)
    return g, grammar_info(g, len(renamed))


def grammar_info(g: Grammar, n_trees: int) -> dict:
    """The summary dict of :func:`treebank_pcfg`."""
    sigs = sum(is_signature(t) for t in g.terminals)
    return {"trees": n_trees, "rules": len(g.rules), "nonterminals": len(g.nonterminals),
            "words": len(g.terminals) - sigs, "signatures": sigs}


def _labels(t) -> set:
    """The labels of a tree."""
    if isinstance(t, str):
        return set()
    return {t[0]}.union(*(_labels(c) for c in t[1:]))


def _with_words(shape, words_from):
    """``shape`` (labels) with the leaves of ``words_from`` (same tree shapes)."""
    if isinstance(shape, str):
        return words_from
    return (shape[0],) + tuple(_with_words(a, b) for a, b in zip(shape[1:], words_from[1:]))


def restore_tree(tree, words, grammar: Grammar):
    """A parse as a Penn Treebank tree: leaves replaced by ``words`` (the sentence as
    given, in order), binarisation nodes spliced out (:func:`~strgm.grammars.binarize.
    debinarize`), and labels renamed by :func:`~strgm.grammars.ptb.relabel_collisions`
    restored (``X^`` -> ``X`` when ``X`` is a terminal of ``grammar`` and no
    nonterminal).  Parent annotation (``X^P``, :func:`~strgm.grammars.binarize.
    split_parent`) is stripped first, so a grammar of ``treebank_pcfg(...,
    parent=True)`` gives plain Penn Treebank labels; grammars of trees whose labels
    contain ``^`` followed by text are therefore not supported here."""
    it = iter(words)
    terminals = frozenset(grammar.terminals)

    def go(t):
        if isinstance(t, str):
            return next(it)
        label = t[0]
        base = label.rstrip("^")
        if base != label and base and base not in grammar.nt_index \
                and base in terminals:
            label = base
        return (label,) + tuple(go(c) for c in t[1:])
    return go(debinarize(tree, parent=True))

