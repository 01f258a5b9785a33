"""What the grammar side's chains share besides :func:`strgm.chains.driver.drive` (the one
loop of every learner): the compiled grammar and corpus every chain runs on, and the
warning for a chain that did not move."""

from __future__ import annotations

from strgm.errors import InputError
from strgm.validate import check_size

__all__ = ["chain_inputs", "stuck_chain"]


def chain_inputs(grammar, corpus, max_memory=None, compiled=None, purpose="estimate from"):
    """(compiled grammar, corpus as tuples) shared by every chain: the corpus must be
    non-empty without empty sentences; ``max_memory`` bytes bound one chart (batches are
    sized to fit)."""
    from strgm.grammars.cfg import compile_grammar

    cg = compiled if compiled is not None else compile_grammar(grammar)
    if max_memory is not None:
        cg.max_chart_bytes = check_size("max_memory", max_memory)
    sentences = [tuple(s) for s in corpus]
    if not sentences:
        raise InputError(f"the corpus is empty (no sentences to {purpose})")
    if any(len(s) == 0 for s in sentences):
        raise InputError("the corpus holds an empty sentence")
    return cg, sentences


def stuck_chain(trace, key: str, window: int = 10, acceptance=None):
    """A one-line warning when a chain has not moved: ``key`` (its log P) took the same
    value over the last ``window`` sweeps, or the MH acceptance rate is exactly 1 with a
    constant log P (every proposal is the current state: each sentence has one parse, or
    the proposal never leaves the current trees). None when the chain moved or the run
    is shorter than ``window`` sweeps."""
    values = [r[key] for r in trace if key in r][-window:]
    if len(values) < window or len(set(values)) > 1:
        return None
    why = (f"acceptance {acceptance:.3f}, " if acceptance is not None else "")
    return (f"the chain did not move: {why}{key} stayed at {values[-1]:.6g} for the last "
            f"{window} sweeps; check that the sentences are ambiguous under the grammar, "
            "or run more sweeps")

