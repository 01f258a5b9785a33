"""Spelling of the symbols of the Table 1 transform (Cohn & Blunsom 2010 §3).

* a treebank label c is spelled c (grammar A's left-hand sides and substitution sites),
  except that a label that is also a word is renamed c^ (c^^, ... until it is neither a
  label nor a word), the convention of :func:`strgm.grammars.ptb.relabel_collisions`, so
  that Johnson's terminal / nonterminal split stays unambiguous;
* the primed label c' of grammar B is ``c~``;
* the signature sign(e_i) of an internal node of an ET is ``{`` label children ``}``, each
  child spelled ``{...}`` (internal), ``[label]`` (frontier nonterminal) or ``"word"``
  (percent-escaped), e.g. ``{S[NP]{VP{V"saw"}[NP]}}`` for (S NP (VP (V saw) NP)).

Treebank labels never hold whitespace or any of ``{ } [ ] ~ "`` and never start with
``@<`` (checked when a treebank is read, :func:`.corpus.check_label`), so no transformed
symbol equals a label, a prefix symbol ``@<...>`` of :mod:`strgm.grammars.cfg`, or another
transformed symbol; none holds whitespace. :func:`base_label` maps any of them back to the
label it stands for.
"""

from __future__ import annotations

__all__ = ["primed", "signed", "frontier", "word_sig", "base_label", "is_primed",
           "is_signed"]

_ESC = {c: f"%{ord(c):02X}" for c in '%{}[]~"'}


def primed(label: str) -> str:
    """c' of Table 1: ``label~``."""
    return label + "~"


def word_sig(word: str) -> str:
    """A word inside a signature: ``"word"`` with ``% { } [ ] ~ "`` and whitespace
    percent-escaped."""
    return '"' + "".join(_ESC.get(ch, f"%{ord(ch):02X}" if ch.isspace() else ch)
                         for ch in word) + '"'


def frontier(label: str) -> str:
    """A frontier nonterminal inside a signature: ``[label]``."""
    return "[" + label + "]"


def signed(label: str, children) -> str:
    """sign(e_i) for a node labelled ``label`` whose children are given by their
    signatures (``signed(...)``, ``frontier(label)`` or ``word_sig(word)``)."""
    return "{" + label + "".join(children) + "}"


def is_primed(symbol: str) -> bool:
    return symbol.endswith("~") and not symbol.startswith("{")


def is_signed(symbol: str) -> bool:
    return symbol.startswith("{") and symbol.endswith("}")


def base_label(symbol: str) -> str:
    """The (grammar) label a transformed symbol stands for: ``NP`` for ``NP``, ``NP~`` and
    ``{NP[DT]{NN"car"}}``; other symbols are returned unchanged."""
    if is_signed(symbol):
        j = 1
        while j < len(symbol) and symbol[j] not in '{}["':
            j += 1
        return symbol[1:j]
    if is_primed(symbol):
        return symbol[:-1]
    return symbol
