"""Arc tables remembered for the automata that were just built from them.

:func:`fst_factors.wfsa.core.from_arc_table` builds an automaton from numpy arrays by OpenFst's
binary format. When the caller asks it to (``remember=True``), it keeps the arrays as
the automaton's :class:`fst_factors.wfsa.core.ArcTable`, so that the next
:func:`fst_factors.wfsa.core.arc_table` of the *same object* returns them instead of
serialising the automaton and parsing it back. A concatenation's message to a part is
built that way (:func:`fst_factors.wfsa.quotient.quotient`) and then read by EP's p̂
composition (:mod:`strgm.features.product`): the round trip arrays → OpenFst → arrays
was about a tenth of a PEP run with an EM-trained phonology (docs/pep.md).

The contract is the one :class:`strgm.features.moments.CompositionCache` already has:
automata are values, never modified in place. Each entry holds the automaton itself, so
its ``id`` cannot be reused while remembered; a lookup also checks the number of states.
The table's arrays are read-only, so that no reader can change what a later reader
gets. Only the last :data:`CAPACITY` automata are remembered (first in, first out): the
table is wanted once, soon after the automaton is built. O(1) per call.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Optional

#: How many automata are remembered at once.
CAPACITY = 64


class KnownTables:
    """A bounded map automaton → arc table, by object identity (module docstring)."""

    def __init__(self, capacity: int = CAPACITY):
        self.capacity = capacity
        self._entries: "OrderedDict[int, tuple[Any, Any]]" = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    def remember(self, fst, table) -> None:
        """Keep ``table`` (made read-only here) as the arcs of ``fst``."""
        for a in (table.src, table.dst, table.ilabel, table.olabel, table.weight,
                  table.final):
            a.flags.writeable = False
        with self._lock:
            self._entries.pop(id(fst), None)
            self._entries[id(fst)] = (fst, table)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def get(self, fst) -> Optional[Any]:
        """The remembered table of this very object, or None."""
        with self._lock:
            hit = self._entries.get(id(fst))
        if hit is None or hit[0] is not fst or fst.num_states() != hit[1].num_states:
            return None
        self.hits += 1
        return hit[1]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


#: The one instance :mod:`fst_factors.wfsa.core` consults.
KNOWN = KnownTables()
