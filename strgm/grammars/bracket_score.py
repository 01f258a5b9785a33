"""Labelled bracket scoring (PARSEVAL) with the conventions of evalb's ``COLLINS.prm``.

For each pair of a gold and a test tree:

* both trees are cleaned as :func:`~strgm.grammars.ptb.clean_tree` does, X → X kept:
  ``-NONE-`` elements and the constituents left empty are removed, function tags and
  indices are stripped (``NP-SBJ-1`` -> ``NP``);
* brackets labelled ``TOP``, ``ROOT`` or nothing (the outer ``( ... )`` of ``.mrg``
  files) are deleted, their children kept;
* punctuation is removed: the words whose **gold** part of speech is one of
  ``, : `` '' .`` are deleted from both trees (the corrected evalb decides by the gold tag
  in both, so a mistagged comma cannot cause a length mismatch), and so is every
  constituent that then dominates no word;
* the brackets are the multiset of (label, start, end) of every remaining constituent
  that is not a preterminal, with spans over the remaining words; ``PRT`` counts as
  ``ADVP``; unary chains give one bracket per node (``(NP (NP a b))`` is two);
* the length of a sentence, for the cut-off ``max_length``, is its number of words
  after ``-NONE-`` removal, punctuation included (evalb: ``DELETE_LABEL_FOR_LENGTH
  -NONE-`` only); longer sentences are left out of every count.

Matched brackets are the multiset intersection.  Corpus precision = matched / test
brackets, recall = matched / gold brackets, F1 their harmonic mean; exact match = the
share of sentences whose bracket multisets are equal; tagging accuracy = correct tags /
words (punctuation excluded).  A failed parse (``None``, a ``(no parse)`` line) has no
test brackets: its gold brackets count in recall, its words count as wrongly tagged, it
is no exact match, and it is reported in ``failed``.  Words that differ between gold and
test are an :class:`~strgm.errors.InputError`.

The deleted tags and equal labels are those of :data:`~strgm.grammars.evalb_params.
COLLINS`.  evalb itself, with ``COLLINS.prm`` (:mod:`strgm.grammars.evalb_report`), differs
where this scorer chose otherwise: it counts a failed parse as a skip sentence (outside
every total) and different words as an error sentence, it deletes a punctuation word by
each tree's own tag (a mistagged comma makes an error sentence), and it counts ``ROOT``
brackets and unlabelled ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from strgm.errors import InputError
from strgm.grammars.evalb_params import COLLINS
from strgm.grammars.ptb import clean_tree, parse_trees
from strgm.safe_io import read_text
from strgm.validate import check_int

__all__ = ["PUNCTUATION", "DELETED", "EQUIVALENT", "SentenceScore", "CorpusScore",
           "evalb_tree", "brackets", "score_sentence", "score_corpus", "read_parsed"]

#: Gold parts of speech whose words are removed before spans are computed (COLLINS.prm's
#: deleted tags but ``-NONE-``, which :func:`~strgm.grammars.ptb.clean_tree` removes).
PUNCTUATION = COLLINS.delete_label - {"TOP", "-NONE-"}
#: Labels whose brackets are deleted (children kept).
DELETED = frozenset({"TOP", "ROOT", ""})
#: Labels counted as another (COLLINS.prm's ``EQ_LABEL ADVP PRT``).
EQUIVALENT = COLLINS.eq_label_map


def _is_pre(t) -> bool:
    return len(t) == 2 and isinstance(t[1], str)


def evalb_tree(tree):
    """The tree cleaned and with deleted-label brackets spliced out (module docstring);
    None when nothing is left."""
    t = clean_tree(tree, collapse=False)
    if t is None:
        return None
    kids = _splice(t)
    if len(kids) == 1 and not isinstance(kids[0], str):
        return kids[0]
    return ("",) + tuple(kids) if kids else None


def _splice(t) -> list:
    """Children of ``t`` with deleted-label nodes replaced by their children."""
    if isinstance(t, str) or _is_pre(t):
        return [t]
    kids = [k for c in t[1:] for k in _splice(c)]
    return kids if t[0] in DELETED else [(t[0],) + tuple(kids)]


def tagged_words(tree) -> list:
    """(word, tag) pairs of a tree in order (a word without preterminal has tag None)."""
    out: list = []

    def go(t, tag):
        if isinstance(t, str):
            out.append((t, tag))
        elif _is_pre(t):
            out.append((t[1], t[0]))
        else:
            for c in t[1:]:
                go(c, None)
    go(tree, None)
    return out


def brackets(tree, keep) -> Counter:
    """Multiset of (label, start, end) of the non-preterminal constituents of a prepared
    tree (:func:`evalb_tree`); ``keep[i]`` says whether word i counts (not punctuation);
    spans count kept words only and empty constituents are dropped."""
    out: Counter = Counter()
    prefix = [0]
    for k in keep:
        prefix.append(prefix[-1] + bool(k))

    def go(t, i):  # returns the index after the last word of t
        if isinstance(t, str) or _is_pre(t):
            return i + 1
        j = i
        for c in t[1:]:
            j = go(c, j)
        a, b = prefix[i], prefix[j]
        if b > a and t[0] not in DELETED:
            out[(EQUIVALENT.get(t[0], t[0]), a, b)] += 1
        return j
    if tree is not None:
        go(tree, 0)
    return out


@dataclass
class SentenceScore:
    """Counts of one sentence: brackets of gold and test and matched, words (punctuation
    excluded), correct tags; ``length`` is the cut-off length, ``failed`` a missing
    parse."""

    length: int
    gold: int
    test: int
    matched: int
    words: int
    tags_correct: int
    failed: bool = False

    @property
    def exact(self) -> bool:
        """Equal bracket multisets (and a parse)."""
        return not self.failed and self.matched == self.gold == self.test


def score_sentence(gold, test, where: str = "", line: int | None = None) -> SentenceScore:
    """Score one test tree (None: no parse) against its gold tree (module docstring);
    different words raise :class:`InputError` at ``where``:``line``."""
    g = evalb_tree(gold)
    gw = tagged_words(g) if g is not None else []
    keep = [tag not in PUNCTUATION for _, tag in gw]
    n_kept = sum(keep)
    gb = brackets(g, keep)
    if test is None:
        return SentenceScore(len(gw), sum(gb.values()), 0, 0, n_kept, 0, failed=True)
    t = evalb_tree(test)
    tw = tagged_words(t) if t is not None else []
    if [w for w, _ in tw] != [w for w, _ in gw]:
        raise InputError(f"the words differ from the gold tree's ({_diff(gw, tw)})",
                         where or None, line)
    tb = brackets(t, keep)
    tags = sum(k and a[1] == b[1] for k, a, b in zip(keep, gw, tw))
    return SentenceScore(len(gw), sum(gb.values()), sum(tb.values()),
                         sum((gb & tb).values()), n_kept, tags)


def _diff(gw, tw) -> str:
    for i, (a, b) in enumerate(zip(gw, tw)):
        if a[0] != b[0]:
            return f"word {i + 1}: gold {a[0]!r}, test {b[0]!r}"
    return f"gold has {len(gw)} words, test {len(tw)}"


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


@dataclass
class CorpusScore:
    """Totals over the scored sentences (those within the length cut-off)."""

    sentences: int = 0
    skipped_long: int = 0
    failed: int = 0
    gold: int = 0
    test: int = 0
    matched: int = 0
    exact: int = 0
    words: int = 0
    tags_correct: int = 0
    per_sentence: list = field(default_factory=list, repr=False)

    def add(self, s: SentenceScore) -> None:
        """Add one sentence's counts."""
        self.sentences += 1
        self.failed += s.failed
        self.gold += s.gold
        self.test += s.test
        self.matched += s.matched
        self.exact += s.exact
        self.words += s.words
        self.tags_correct += s.tags_correct
        self.per_sentence.append(s)

    @property
    def precision(self) -> float:
        return _ratio(self.matched, self.test)

    @property
    def recall(self) -> float:
        return _ratio(self.matched, self.gold)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return _ratio(2 * p * r, p + r)

    def summary(self) -> dict:
        """Counts and rates as a JSON-ready dict (rates in [0, 1])."""
        d = {k: v for k, v in asdict(self).items() if k != "per_sentence"}
        d.update(precision=self.precision, recall=self.recall, f1=self.f1,
                 exact_match=_ratio(self.exact, self.sentences),
                 tagging_accuracy=_ratio(self.tags_correct, self.words))
        return d


def score_corpus(gold_trees, test_trees, max_length: int | None = None,
                 where: str = "", lines=None) -> CorpusScore:
    """Score aligned lists of gold and test trees (None: no parse); sentences longer than
    ``max_length`` words are skipped; ``lines`` gives the test line of each tree for
    error messages."""
    if max_length is not None:
        check_int("max_length", max_length, min=1)
    gold_trees, test_trees = list(gold_trees), list(test_trees)
    if len(gold_trees) != len(test_trees):
        raise InputError(f"{len(test_trees)} test trees for {len(gold_trees)} gold trees",
                         where or None)
    out = CorpusScore()
    for i, (g, t) in enumerate(zip(gold_trees, test_trees)):
        g2 = clean_tree(g, collapse=False)
        n = 0 if g2 is None else len(tagged_words(g2))
        if max_length is not None and n > max_length:
            out.skipped_long += 1
            continue
        out.add(score_sentence(g, t, where, lines[i] if lines else i + 1))
    return out


def read_parsed(path) -> tuple:
    """(trees, line numbers) of a file of one bracketed tree per line; ``(no parse)``
    gives None.  Blank lines at the end are ignored; a blank line elsewhere, a line
    without exactly one tree or with unbalanced brackets is an InputError naming the
    line."""
    lines = read_text(path, "parsed file").splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise InputError("no trees in parsed file", str(path))
    trees, nums = [], []
    for ln, raw in enumerate(lines, start=1):
        s = raw.strip()
        if s == "(no parse)":
            trees.append(None)
        elif not s:
            raise InputError("blank line (write '(no parse)' for a failed sentence)",
                             str(path), ln)
        else:
            try:
                ts = parse_trees(s, str(path))
            except InputError as e:
                raise InputError(e.detail, str(path), ln) from None
            if len(ts) != 1:
                raise InputError(f"expected one tree on the line, found {len(ts)}",
                                 str(path), ln)
            trees.append(ts[0])
        nums.append(ln)
    return trees, nums
