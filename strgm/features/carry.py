"""What a re-weighted composition hands on when its cover grows (PEP's working sets).

PEP's working set grows by a trie level every few proximal steps, and the composition
C = p·EOS ∘ T of a message p with the counting transducer T of the cover's feature DFA
is then rebuilt on a finer cover (:class:`strgm.features.moments.CompositionCache`).
The new DFA's contexts C' contain the old ones C, so every state (q, h') of the new
product refines one state (q, h) of the old: h = the longest suffix of h' in C
(:meth:`strgm.features.dfa.FeatureDFA.coarser_states`; both are the longest suffix of
the history read so far that is a context, and C ⊆ C'). Under one θ whose features
have their prefixes in C, the arcs out of (q, h') carry the weights of the arcs out of
(q, h) and lead to refinements of the same targets, so the new system is a lumping of
the old:

    (A' ỹ)(q, h') = (A y)(q, h),    ỹ(q, h') := y(q, h),

and the lifted backward solution β̃ is the new β exactly, the lifted Collatz–Wielandt
vector certifies the same bound r. For the next cavity θ (which moved a little) they
are the candidates :class:`fst_factors.wfsa.reweighted.Reweighted` tries first: the
certificate is checked by one product with the new matrix (and replaced by a full
certification when it fails), and β̃ is only a starting point of sweeps that run to an
exact fixed point, so a wrong candidate costs time, never accuracy. This saves the
x = (I − A')⁻¹ 1 solve that a rebuilt composition would otherwise start with.
Cost O(|C'|·depth) for the state map and O(|Q_C'|) for the lift.
"""

from __future__ import annotations

from typing import Optional

import numpy as np


def carry_over(old, new) -> bool:
    """Give ``new`` (a rebuilt :class:`~strgm.features.moments.Composition` of the same
    message on a finer cover) the certificate and β of ``old`` lifted to its states, when
    both are cyclic compiled products whose every state is kept and ``old`` was solved.
    True when something was carried."""
    if old is None or old.p is not new.p or old.levels is not None \
            or new.levels is not None or not old.product or not new.product \
            or "reweighted" not in old.__dict__:
        return False
    before = old.reweighted
    if before.certificate is None and True not in before._warm:
        return False
    if not (_every_state_kept(old) and _every_state_kept(new)):
        return False
    rows = lifted_states(old, new)
    if rows is None:
        return False
    after = new.reweighted
    if before.certificate is not None:
        after.certificate = before.certificate[rows]
    if True in before._warm:
        after._warm[True] = before._warm[True][rows]
    return True


def _every_state_kept(comp) -> bool:
    topo = comp.topology
    return topo is not None and len(topo.keep) == comp.table.num_states


def lifted_states(old, new) -> Optional[np.ndarray]:
    """For every state of ``new``'s product, the state of ``old``'s it refines (module
    docstring; the sink, last in both, to the sink); None if some pair is missing."""
    (q_old, h_old), (q_new, h_new) = old.product, new.product
    coarse = new.cover.dfa.coarser_states(old.cover.dfa)
    nh = old.cover.dfa.num_states
    nq = int(max(q_old.max(initial=0), q_new.max(initial=0))) + 1
    index = np.full(nq * nh, -1, dtype=np.int64)
    index[q_old * nh + h_old] = np.arange(len(q_old))
    rows = index[q_new * nh + coarse[h_new]]
    if (rows < 0).any():
        return None
    return np.concatenate([rows, [old.table.num_states - 1]])
