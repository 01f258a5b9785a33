"""Mark Johnson's PCFG file format and yield (``.yld``) files.

Grammar lines, in one of two dialects (``dialect``):

* ``pcfg`` (Johnson's ``io`` / ``gibbs-pcfg`` programs)::

      [weight [pseudocount]] Parent --> Child1 ... Childn

* ``py-cfg`` (his adaptor-grammar sampler)::

      [theta [a [b]]] Parent --> Child1 ... Childn

  θ is the rule's weight (0: the default, 1); a and b (0 ≤ a ≤ 1, b > 0) are the
  Pitman–Yor parameters of the parent. a = 1 means the parent is not adapted, which is
  all a PCFG can express, so a rule with a < 1 is refused with an error naming the line
  (an adaptor grammar is not a PCFG: reading it as one would silently change the
  model).
* ``auto`` (the default): ``py-cfg`` when some rule line has three numbers (which the
  ``pcfg`` dialect never has), else ``pcfg``. A py-cfg file whose lines carry at most
  θ and a cannot be told from a ``pcfg`` one, so read it with ``dialect="py-cfg"``.

The first rule's parent is the start symbol; a missing weight is 1; blank lines and lines
starting with ``#`` or ``%`` are ignored.  A symbol is a nonterminal iff it has rules.  Weights and pseudocounts
are finite and at most :data:`MAX_WEIGHT`.
Files are read as UTF-8 (a byte-order mark is accepted); every error names the file and,
where there is one, the line.  Yield files hold one sentence per line, tokens separated by white space; ``chars=True``
splits each line into characters (white space removed), for morphology.
"""

from __future__ import annotations

import math

from strgm.errors import GrammarError, InputError
from strgm.grammars.cfg import Grammar, Rule
from strgm.safe_io import atomic_write_text, read_text

__all__ = ["DIALECTS", "read_grammar", "parse_grammar", "write_grammar", "format_grammar",
           "read_yld", "parse_yld"]


#: The largest weight or pseudocount a grammar file may give: the sum of a parent's
#: weights, and a sampler's sums of counts and pseudocounts, then stay far from overflow.
MAX_WEIGHT = 1e100


def _num(tok: str):
    try:
        x = float(tok)
    except ValueError:
        return None
    return x


#: the grammar dialects :func:`parse_grammar` reads (module docstring)
DIALECTS = ("auto", "pcfg", "py-cfg")


def _rule_lines(text: str, path: str):
    """(line number, numbers' tokens and parent, children) of every rule line."""
    for ln, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#%":
            continue
        toks = line.split()
        if "-->" not in toks:
            raise InputError(f"expected 'Parent --> Children', got {line!r}", path, ln)
        arrow = toks.index("-->")
        if not toks[:arrow]:
            raise InputError("missing parent before '-->'", path, ln)
        yield ln, toks[:arrow], tuple(toks[arrow + 1:])


def _py_cfg_numbers(nums: list, parent: str, path: str, ln: int) -> list:
    """py-cfg's [θ [a [b]]] as [weight]: θ = 0 is the default weight; a rule of an
    adapted parent (a < 1) is refused; a and b are checked."""
    theta, a, b = (nums + [None, None, None])[:3]
    if a is not None and not (0 <= a <= 1):
        raise InputError(f"Pitman-Yor a must be in [0, 1], got {a!r}", path, ln)
    if b is not None and not (math.isfinite(b) and b > 0):
        raise InputError(f"Pitman-Yor b must be finite and > 0, got {b!r}", path, ln)
    if a is not None and a < 1:
        raise InputError(f"{parent} is adapted (py-cfg Pitman-Yor a = {a:g}): adaptor "
                         "grammars are not PCFGs; give it a = 1 (not adapted) or drop "
                         "a and b", path, ln)
    return [] if theta is None else [1.0 if theta == 0 else theta]


def parse_grammar(text: str, path: str = "<string>", default_pseudocount: float = 1.0,
                  dialect: str = "auto") -> Grammar:
    """Parse grammar text in ``dialect`` (module docstring); malformed lines raise
    :class:`InputError` naming path:line."""
    if dialect not in DIALECTS:
        raise InputError(f"unknown grammar dialect {dialect!r}; choose from "
                         f"{', '.join(DIALECTS)}", path)
    found = list(_rule_lines(text, path))
    if dialect == "auto":
        dialect = "py-cfg" if any(len(head) == 4 for _, head, _ in found) else "pcfg"
    most = 4 if dialect == "py-cfg" else 3
    rules = []
    lines = []
    for ln, head, rhs in found:
        if len(head) > most:
            hint = "" if most == 4 or len(head) > 4 else \
                " (three numbers are py-cfg's [theta [a [b]]]: read it as py-cfg)"
            raise InputError(f"too many fields before '-->': {' '.join(head)!r}{hint}",
                             path, ln)
        nums = [_num(t) for t in head[:-1]]
        if any(x is None for x in nums):
            bad = [t for t, x in zip(head[:-1], nums) if x is None][0]
            raise InputError(f"expected a number (weight or pseudocount), got {bad!r}", path, ln)
        if _num(head[-1]) is not None and len(head) == 1:
            raise InputError(f"missing parent symbol (got only the number {head[-1]!r})", path, ln)
        if dialect == "py-cfg":
            nums = _py_cfg_numbers(nums, head[-1], path, ln)
        weight = nums[0] if nums else 1.0
        pc = nums[1] if len(nums) > 1 else None
        if not math.isfinite(weight) or weight < 0:
            raise InputError(f"weight must be finite and >= 0, got {weight!r}", path, ln)
        if pc is not None and not (math.isfinite(pc) and pc > 0):
            raise InputError(f"pseudocount must be finite and > 0, got {pc!r}", path, ln)
        if weight > MAX_WEIGHT:
            raise InputError(f"weight {weight:g} is too large (at most {MAX_WEIGHT:g}; only "
                             "the ratios of one parent's weights matter, so scale them down)",
                             path, ln)
        if pc is not None and pc > MAX_WEIGHT:
            raise InputError(f"pseudocount {pc:g} is too large (at most {MAX_WEIGHT:g})",
                             path, ln)
        if not rhs:
            raise InputError("empty right-hand side (epsilon rules are not supported)", path, ln)
        if "-->" in rhs:
            raise InputError("more than one '-->'", path, ln)
        rules.append(Rule(head[-1], rhs, weight, pc))
        lines.append(ln)
    if not rules:
        raise InputError("no rules", path)
    try:
        return Grammar(rules, default_pseudocount=default_pseudocount)
    except GrammarError as e:
        msg = str(e)
        line = None
        parts = msg.split()
        if len(parts) > 1 and parts[0] == "rule" and parts[1].isdigit() \
                and int(parts[1]) < len(lines):  # locate the rule in the file
            line = lines[int(parts[1])]
        raise InputError(msg, path, line) from None


def read_grammar(path, default_pseudocount: float = 1.0, dialect: str = "auto") -> Grammar:
    """Read a grammar file in Johnson's format (``dialect``: module docstring)."""
    return parse_grammar(read_text(path, "grammar file"), str(path), default_pseudocount,
                         dialect)


def format_grammar(g: Grammar, weights=None, pseudocounts: bool = True,
                   min_weight: float | None = None) -> str:
    """Grammar text in Johnson's format; ``weights`` overrides the grammar's weights.
    Rules with weight below ``min_weight`` are left out (for printing pruned grammars)."""
    w = g.weights if weights is None else weights
    out = []
    for r, x in zip(g.rules, w):
        if min_weight is not None and x < min_weight:
            continue
        head = f"{float(x):.10g}"
        if pseudocounts and r.pseudocount is not None:
            head += f" {r.pseudocount:.10g}"
        out.append(f"{head} {r.lhs} --> {' '.join(r.rhs)}")
    # the first rule must carry the start symbol
    if out and g.rules[0].lhs != g.start:
        raise GrammarError("the first rule's parent must be the start symbol to write this grammar")
    return "\n".join(out) + "\n"


def write_grammar(g: Grammar, path, weights=None, pseudocounts: bool = True) -> None:
    """Write the grammar atomically (a reader never sees a half-written file)."""
    atomic_write_text(path, format_grammar(g, weights, pseudocounts))


def parse_yld(text: str, path: str = "<string>", chars: bool = False,
              allow_empty: bool = False) -> list:
    """Sentences (tuples of tokens) from yield text.  Trailing blank lines are ignored; a
    blank line between sentences is an error naming path:line (never silently dropped),
    and so is a text without sentences unless ``allow_empty``."""
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    out = []
    for ln, raw in enumerate(lines, start=1):
        if not raw.strip():
            raise InputError("blank line (an empty sentence cannot be parsed)", path, ln)
        if chars:
            out.append(tuple(ch for ch in raw if not ch.isspace()))
        else:
            out.append(tuple(raw.split()))
    if not out and not allow_empty:
        raise InputError("no sentences (the corpus is empty); give one sentence per line",
                         path)
    return out


def read_yld(path, chars: bool = False, what: str = "corpus") -> list:
    """Read a ``.yld`` file: list of token tuples, one per line (UTF-8, a byte-order mark
    accepted; errors name the file and line)."""
    return parse_yld(read_text(path, what), str(path), chars)
