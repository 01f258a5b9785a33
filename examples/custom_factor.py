"""A factor of your own, W = reverse(U): neighbours, a kind, and the message to one
neighbour from the others' acceptors (log64, ε-free, trimmed, arc-sorted). Every method
uses it unchanged (README, "A factor of your own")."""

from dataclasses import dataclass

import pynini

import strgm
import fst_factors.transducers as ff
from strgm.factors import Factor


@dataclass(frozen=True, eq=False)
class Reversal(Factor):
    """target = reverse(source): each message is the other side's, reversed."""

    name: str
    source: str
    target: str

    kind = "reversal"
    variables = property(lambda self: (self.source, self.target))

    def message_to(self, var, incoming, num_labels):
        self._missing(var, incoming)
        other = self.target if var == self.source else self.source
        return pynini.arcsort(pynini.reverse(incoming[other]).rmepsilon().connect(), "ilabel")


if __name__ == "__main__":
    alphabet = strgm.Alphabet.from_words(["stɑk"])
    g = strgm.FactorGraph(alphabet)
    g.add_variable("word")
    g.add_unary("prior", "word", ff.geometric_unigram_prior(alphabet.num_segments, 4))
    g.add_variable("backwards", observed="stɑk")
    g.add_factor(Reversal("reverse", "word", "backwards"))
    print(strgm.infer(g, "bp").belief("word").kbest(2))
