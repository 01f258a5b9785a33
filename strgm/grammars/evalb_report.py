"""evalb's report for any parameter file, its rows and summary as evalb.c computes them.

A sentence is a gold line and a test line, read as evalb reads them (:func:`read_sentence`):
``(TAG word)`` is a word; a word tagged ``DELETE_LABEL`` is dropped, leaving no gap, and
counts towards the length unless tagged ``DELETE_LABEL_FOR_LENGTH`` (the gold line's
length decides ``CUTOFF_LEN``); every other bracket is a constituent over the words kept.
A line may hold several trees, or none.  Then, as evalb does:

* a test line without words (empty, or ``(no parse)``, which strgm writes where other
  parsers write an empty line) is a *skip* sentence (status 2);
* different numbers of words (after ``QUOTE_LABEL``'s repair: a deleted quote tag facing
  a kept tag at the same place in the other tree is put back) or different words
  (``EQ_WORD`` pairs equal) make an *error* sentence (status 1); so does a line evalb
  cannot read (unbalanced brackets, a word outside a ``(TAG word)`` pair, three elements
  in a bracket: an error to evalb too, whose row then shows what it read, or a crash);
* otherwise (status 0) the constituents spanning no word are dropped, labels lose what
  follows their first ``-`` or ``=`` (``NP-SBJ-1`` -> ``NP``), and constituents labelled
  ``DELETE_LABEL`` (or an ``EQ_LABEL`` of one) are dropped, their children kept.  Each
  remaining gold constituent in turn takes the first free test constituent with its span
  (and with ``LABELED 1`` an equal or ``EQ_LABEL`` label): a match.  A test constituent
  *crosses* when a gold one overlaps it, neither inside the other.  Tags are compared
  word by word (``EQ_LABEL`` pairs equal).

Error and skip sentences count only as such.  Recall = matched / gold constituents,
precision = matched / test ones, F-measure = 2PR/(P + R) (``-nan``, as evalb prints it on
x86-64, when both are 0), complete match = valid sentences whose test and gold
constituents all match, crossing per valid sentence; for all sentences and for those of
at most ``CUTOFF_LEN`` words.  evalb stops without a summary at its (``MAX_ERROR`` + 2)-th
error: :func:`score_evalb` raises :class:`~strgm.errors.InputError` there.  Unlike evalb
(which warns and scores the shorter file), different numbers of gold and test lines are an
InputError, and evalb's limits on line length, words and brackets do not apply.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field

from strgm.errors import InputError
from strgm.grammars.evalb_params import SPACE, EvalbParams
from strgm.safe_io import read_text

__all__ = ["EvalbSentence", "EvalbRow", "EvalbTotals", "EvalbReport", "read_sentence",
           "score_sentence", "score_evalb", "evalb_lines", "tree_text", "NO_PARSE"]

#: What ``strgm pcfg parse`` writes for a sentence without a parse (a skip sentence).
NO_PARSE = "(no parse)"
#: The words that ``QUOTE_LABEL`` tags may be repaired for.
QUOTE_WORDS = ("'", '"', "/")
_HEAD = ("  Sent.                        Matched  Bracket   Cross        Correct Tag\n"
         " ID  Len.  Stat. Recal  Prec.  Bracket gold test Bracket Words  Tags Accracy\n")
_RULE = "=" * 76 + "\n"
_COUNTS = ("sentence", "Error sentence", "Skip  sentence", "Valid sentence")
_RATES = ("Bracketing Recall", "Bracketing Precision", "Bracketing FMeasure",
          "Complete match", "Average crossing", "No crossing", "2 or less crossing",
          "Tagging accuracy")
_ATOM = re.compile(r"[^ \t\n\v\f\r()]*")
#: ``(`` and a label, then (after white space) a word and the ``)`` that makes it one
_OPEN = re.compile(r"\(([^ \t\n\v\f\r()]*)(?:[ \t\n\v\f\r]+([^ \t\n\v\f\r()]*)(\)?))?")


@dataclass
class _Bracket:
    start: int
    end: int
    label: str
    state: int = 0  # 0: free, 1: matched, 5: dropped


@dataclass
class _Quote:
    index: int  # where the word is (or would be, when dropped) among the kept words
    bracket: int  # brackets opened before it
    ends: tuple  # the brackets open around it
    word: str
    tag: str


@dataclass
class EvalbSentence:
    """One line as evalb reads it: the kept ``(word, tag)`` pairs, the brackets, the
    length (words not tagged ``DELETE_LABEL_FOR_LENGTH``), and what made it unreadable."""

    words: list = field(default_factory=list)
    brackets: list = field(default_factory=list)
    length: int = 0
    quotes: list = field(default_factory=list)
    problem: str | None = None


def read_sentence(text: str, params: EvalbParams) -> EvalbSentence:
    """The words, brackets and length of one line (module docstring)."""
    s, stack, i = EvalbSentence(), [], 0
    while i < len(text) and s.problem is None:
        if text[i] in SPACE:
            i += 1
        elif text[i] == ")":
            if not stack:
                s.problem = "unbalanced ')'"
            else:
                s.brackets[stack.pop()].end = len(s.words)
            i += 1
        elif text[i] == "(":
            i = _open(_OPEN.match(text, i), s, stack, params)
        else:
            s.problem = f"{_ATOM.match(text, i).group()!r} outside a (TAG word) pair"
    if s.problem is None and stack:
        s.problem = "unbalanced '(' (a bracket is never closed)"
    return s


def _open(m, s: EvalbSentence, stack: list, params) -> int:
    """Read a ``(`` matched by ``_OPEN``: a word with its tag, or a bracket's label;
    the position to go on from."""
    label, word, close = m.groups()
    if close:
        _word(s, label, word, stack, params)
    elif word or (word is not None and m.end() == len(m.string)):
        s.problem = f"more than two elements in the bracket ({label} ..."
    else:
        s.brackets.append(_Bracket(len(s.words), -1, label))
        stack.append(len(s.brackets) - 1)
    return m.end()


def _word(s: EvalbSentence, tag: str, word: str, stack: list, params) -> None:
    if tag not in params.delete_label_for_length:
        s.length += 1
    if tag in params.quote_label and word in QUOTE_WORDS:
        s.quotes.append(_Quote(len(s.words), len(s.brackets), tuple(stack), word, tag))
    if tag not in params.delete_label:
        s.words.append((word, tag))


def _fix_quotes(g: EvalbSentence, t: EvalbSentence, params) -> None:
    """evalb's repair of a length mismatch: where a quote word is dropped in one tree and
    kept (with another tag) in the other, put it back where it was dropped."""
    dropped = params.delete_label
    for i, qt in enumerate(t.quotes):
        at = qt.index
        for j, qg in enumerate(g.quotes):
            if qg.index != at or qg.tag == qt.tag:
                continue
            if qg.tag in dropped and qt.tag not in dropped:
                _reinsert(g, qg)
                for q in g.quotes[j:]:
                    q.index += 1
            elif qt.tag in dropped and qg.tag not in dropped:
                _reinsert(t, qt)
                for q in t.quotes[i:]:
                    q.index += 1


def _reinsert(s: EvalbSentence, q: _Quote) -> None:
    s.words.insert(q.index, (q.word, q.tag))
    for b in s.brackets[q.bracket:]:
        b.start += 1
        b.end += 1
    for k in q.ends:
        s.brackets[k].end += 1


@dataclass
class EvalbRow:
    """One sentence's line of evalb's table; ``status`` 0 valid, 1 error, 2 skip;
    ``message`` says what made an error; ``errors`` counts evalb's errors on it."""

    id: int
    length: int
    status: int = 0
    matched: int = 0
    gold: int = 0
    test: int = 0
    crossing: int = 0
    words: int = 0
    correct_tags: int = 0
    message: str | None = None
    errors: int = 0

    recall = property(lambda self: _pct(self.matched, self.gold))
    precision = property(lambda self: _pct(self.matched, self.test))
    tag_accuracy = property(lambda self: _pct(self.correct_tags, self.words))

    def format(self) -> str:
        """The row as evalb prints it."""
        return (f"{self.id:4d}  {self.length:3d}    {self.status:d}  {self.recall:6.2f} "
                f"{self.precision:6.2f}   {self.matched:3d}    {self.gold:3d}  "
                f"{self.test:3d}    {self.crossing:3d}   {self.words:4d}  "
                f"{self.correct_tags:4d}   {self.tag_accuracy:6.2f}")

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k != "errors"}
        d.update(recall=_r2(self.recall), precision=_r2(self.precision),
                 tag_accuracy=_r2(self.tag_accuracy))
        return d


def score_sentence(gold: str, test: str, params: EvalbParams, id: int = 1) -> EvalbRow:
    """evalb's row for one gold line and one test line (module docstring)."""
    g = read_sentence(gold, params)
    t = read_sentence("" if test.strip(SPACE) == NO_PARSE else test, params)
    problems = [f"{side} line: {p}" for side, p in (("gold", g.problem),
                                                     ("test", t.problem)) if p]
    row = EvalbRow(id, g.length, errors=len(problems))
    if not t.words:
        row.status, row.message = 2, "; ".join(problems) or None
        return row
    if not problems and len(g.words) != len(t.words):
        _fix_quotes(g, t, params)
        if len(g.words) != len(t.words):
            problems = [f"Length unmatch ({len(g.words)}|{len(t.words)})"]
    if not problems:
        problems = [f"Words unmatch ({a}|{b})" for (a, _), (b, _) in zip(g.words, t.words)
                    if not params.same_word(a, b)][:1]
    if problems:
        row.status, row.message, row.errors = 1, "; ".join(problems), max(row.errors, 1)
        return row
    _count(row, g, t, params)
    return row


def _count(row: EvalbRow, g: EvalbSentence, t: EvalbSentence, params) -> None:
    """Fill a valid sentence's counts: brackets dropped, matched, crossing; tags."""
    for b in g.brackets + t.brackets:
        b.state = 5 if b.start == b.end else 0
        if not b.state:
            b.label = re.split("[-=]", b.label, maxsplit=1)[0]  # NP-SBJ-1 -> NP
            if any(params.same_label(b.label, d) for d in params.delete_label):
                b.state = 5
    gold = [b for b in g.brackets if b.state != 5]
    test = [b for b in t.brackets if b.state != 5]
    for a in gold:
        for b in test:
            if b.state == 0 and (a.start, a.end) == (b.start, b.end) and (
                    not params.labeled or params.same_label(a.label, b.label)):
                b.state = 1
                row.matched += 1
                break
    row.crossing = _crossing(gold, test)
    row.gold, row.test, row.words = len(gold), len(test), len(g.words)
    row.correct_tags = sum(params.same_label(a[1], b[1]) for a, b in zip(g.words, t.words))


def _crossing(gold: list, test: list) -> int:
    """The test brackets that cross a gold bracket (overlap, neither inside the other)."""
    return sum(any(a.start < b.start < a.end < b.end or b.start < a.start < b.end < a.end
                   for a in gold) for b in test)


@dataclass
class EvalbTotals:
    """One summary block: counts over its sentences and evalb's percentages."""

    sentences: int = 0
    error_sentences: int = 0
    skip_sentences: int = 0
    matched: int = 0
    gold: int = 0
    test: int = 0
    complete: int = 0
    words: int = 0
    correct_tags: int = 0
    crossing: int = 0
    no_crossing: int = 0
    two_or_less_crossing: int = 0

    def add(self, row: EvalbRow) -> None:
        """Count one sentence."""
        self.sentences += 1
        if row.status:
            self.error_sentences += row.status == 1
            self.skip_sentences += row.status == 2
            return
        for k in ("matched", "gold", "test", "words", "correct_tags", "crossing"):
            setattr(self, k, getattr(self, k) + getattr(row, k))
        self.complete += row.gold == row.test == row.matched
        self.no_crossing += row.crossing == 0
        self.two_or_less_crossing += row.crossing <= 2

    @property
    def valid_sentences(self) -> int:
        return self.sentences - self.error_sentences - self.skip_sentences

    def rates(self) -> dict:
        """evalb's percentages (unrounded; F-measure NaN when P + R = 0)."""
        n = self.valid_sentences
        r, p = _pct(self.matched, self.gold), _pct(self.matched, self.test)
        return {"recall": r, "precision": p,
                "fmeasure": 2 * p * r / (p + r) if p + r else math.nan,
                "complete_match": _pct(self.complete, n),
                "average_crossing": 1.0 * self.crossing / n if n > 0 else 0.0,
                "no_crossing_rate": _pct(self.no_crossing, n),
                "two_or_less_crossing_rate": _pct(self.two_or_less_crossing, n),
                "tagging_accuracy": _pct(self.correct_tags, self.words)}

    def format(self, title: str) -> str:
        """The block as evalb prints it under ``title``."""
        counts = (self.sentences, self.error_sentences, self.skip_sentences,
                  self.valid_sentences)
        lines = [title, *(f"Number of {n:<16}= {v:6d}" for n, v in zip(_COUNTS, counts)),
                 *(f"{n:<26}= {_f(v)}" for n, v in zip(_RATES, self.rates().values()))]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict:
        """Counts and percentages rounded as evalb prints them (NaN as None)."""
        d = asdict(self)
        d["valid_sentences"] = self.valid_sentences
        d.update({k: _r2(v) for k, v in self.rates().items()})
        return d


def _pct(a: int, b: int) -> float:
    """``100 a / b`` computed as evalb computes it (0 when ``b`` is 0)."""
    return 100.0 * a / b if b > 0 else 0.0


def _f(x: float) -> str:
    return f"{'-nan':>6}" if math.isnan(x) else f"{x:6.2f}"


def _r2(x: float):
    return None if math.isnan(x) else float(f"{x:.2f}")


@dataclass
class EvalbReport:
    """evalb's result: the rows, the totals of all sentences (``all``) and of those of at
    most ``params.cutoff_len`` words (``cut``)."""

    params: EvalbParams
    rows: list = field(default_factory=list)
    all: EvalbTotals = field(default_factory=EvalbTotals)
    cut: EvalbTotals = field(default_factory=EvalbTotals)

    def add(self, row: EvalbRow) -> None:
        self.rows.append(row)
        self.all.add(row)
        if row.length <= self.params.cutoff_len:
            self.cut.add(row)

    def format(self, per_sentence: bool = True) -> str:
        """evalb's standard output (``per_sentence``), or its summary alone."""
        out = [_HEAD, _RULE, *(r.format() + "\n" for r in self.rows), _RULE,
               self._totals_line()] if per_sentence else []
        out += ["=== Summary ===\n", "\n", self.all.format("-- All --"), "\n",
                self.cut.format(f"-- len<={self.params.cutoff_len} --")]
        return "".join(out)

    def _totals_line(self) -> str:
        a, text = self.all, ""
        if a.gold > 0 and a.test > 0:
            text = (f"{'':16}{_pct(a.matched, a.gold):6.2f} {_pct(a.matched, a.test):6.2f} "
                    f"{a.matched:6d} {a.gold:5d} {a.test:5d}  {a.crossing:5d}")
        return text + (f"  {a.words:5d} {a.correct_tags:5d}   "
                       f"{_pct(a.correct_tags, a.words):6.2f}\n")

    def to_dict(self, per_sentence: bool = False) -> dict:
        """The parameters, both blocks and (``per_sentence``) the rows, JSON-ready."""
        d = {"params": self.params.to_dict(), "all": self.all.to_dict(),
             "cutoff": self.cut.to_dict()}
        if per_sentence:
            d["rows"] = [r.to_dict() for r in self.rows]
        return d


def score_evalb(gold_lines, test_lines, params: EvalbParams, where: str | None = None
                ) -> EvalbReport:
    """evalb's report on aligned gold and test lines (module docstring); ``where`` names
    the test file in errors."""
    gold_lines, test_lines = list(gold_lines), list(test_lines)
    if len(gold_lines) != len(test_lines):
        raise InputError(f"{len(test_lines)} test lines for {len(gold_lines)} gold "
                         "sentences", where)
    report, errors = EvalbReport(params), 0
    for i, (g, t) in enumerate(zip(gold_lines, test_lines), start=1):
        row = score_sentence(g, t, params, i)
        errors += row.errors
        if errors > params.max_error + 1:
            raise InputError(f"{row.message}: evalb stops here without a summary, at "
                             f"its error {errors} (MAX_ERROR {params.max_error} allows "
                             f"{params.max_error + 1})", where, i)
        report.add(row)
    return report


def evalb_lines(path, what: str = "evalb file") -> list:
    """The lines of a file as evalb reads them: every line, a blank one too (the empty
    text after a final newline is not a line)."""
    lines = read_text(path, what).split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def tree_text(tree) -> str:
    """A tree of nested tuples ``(label, child, ...)`` (words as strings) on one line."""
    if isinstance(tree, str):
        return tree
    return "(" + " ".join([tree[0], *(tree_text(c) for c in tree[1:])]) + ")"
