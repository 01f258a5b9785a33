"""The action kinds of the contextual edit transducer's decisions
(:mod:`fst_factors.transducers.contextual_edit`): insert a segment, continue (consume the next
input symbol, or stop at the end), copy, substitute, delete."""

INS, CONT, COPY, SUB, DEL = 0, 1, 2, 3, 4
