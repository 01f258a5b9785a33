"""K independent chains of a DP-TSG sampler, one task each (``strgm tsg train --chains K
[--scheduler ...]``).

Chain k starts from seed ``seed + k`` (chain 0 is the single-chain run of the same seed)
and runs the sampler's own sweeps unchanged, so each chain is an exact MCMC chain (the
blocked Metropolis–Hastings sampler stays exact: nothing is shared between chains). The
prepared training trees travel once as bracketed text (the Penn Treebank form,
:func:`strgm.grammars.ptb.parse_trees` reads it back) with the sampler's settings; a
chain returns its final state as the plain dictionary of its checkpoint files
(:meth:`~strgm.grammars.tsg.state.TSGState.to_dict`: indicators as a 0/1 string,
hyperparameters, RNG state, trace).

The model of the run is chain 0's, the same as a single-chain run (an elementary-tree
grammar is one state of one chain; states of different chains are not averaged). The
other chains serve to judge convergence: the log-likelihood of the trees after burn-in
(the first half of the sweeps) is summarised by split-R̂ and the effective sample size
(:mod:`strgm.distributed.diagnostics`; Gelman et al., BDA3 §11.4–11.5). A task whose
worker dies is re-run from its seed with the same result.
"""

from __future__ import annotations

from strgm.chains.runner import map_chains
from strgm.distributed.chains import burned_in_summary
from strgm.errors import StrgmError
from strgm.validate import check_int

__all__ = ["QUANTITY", "bracketed", "run_tsg_chain", "run_tsg_chains"]

#: The quantity whose convergence is reported.
QUANTITY = "log_likelihood"


def bracketed(tree) -> str:
    """A tree of nested tuples (label, children...) in bracketed (PTB) form."""
    if isinstance(tree, str):
        return tree
    return "(" + " ".join([tree[0]] + [bracketed(c) for c in tree[1:]]) + ")"


def encode_trees(trees) -> str:
    """The trees as bracketed text, one per line; checked to read back unchanged."""
    from strgm.grammars.ptb import parse_trees

    text = "\n".join(bracketed(t) for t in trees)
    if [tuple(t) for t in parse_trees(text)] != [tuple(t) for t in trees]:
        raise StrgmError("a prepared tree does not survive its bracketed form (a label or "
                         "word with spaces or brackets?); run without --chains/--scheduler")
    return text


def make_kernel(problem: dict):
    """The sampler of ``problem`` (trees as text and the sampler's settings)."""
    from strgm.grammars.ptb import parse_trees
    from strgm.grammars.tsg import BlockedMHTSG, LocalGibbsTSG

    cls = BlockedMHTSG if problem["sampler"] == "blocked" else LocalGibbsTSG
    return cls(parse_trees(problem["trees"]), alpha=problem["alpha"], s=problem["s"],
               resample_hyper=problem["resample_hyper"])


def run_tsg_chain(task: dict, problem: dict) -> dict:
    """One chain (a task): ``task`` holds seed, init, iters and the settings recorded in
    the state; the final state as its checkpoint dictionary."""
    from strgm.chains.driver import drive

    kernel = make_kernel(problem)
    state = kernel.init(task["seed"], task["init"])
    state.settings = dict(task["settings"])
    state = drive(kernel.sample, state, task["iters"])
    return state.to_dict()


def run_tsg_chains(pool, problem: dict, *, chains: int, seed: int, init: str, iters: int,
                   settings: dict) -> tuple:
    """(final states of the ``chains`` chains as dictionaries, in seed order, and the
    R̂/ESS summary of the log-likelihood over the second half of the sweeps, None with
    fewer than 4 sweeps there) on ``pool``."""
    chains = check_int("chains", chains, min=1)
    tasks = [{"seed": seed + c, "init": init, "iters": iters,
              "settings": {**settings, "--seed": seed + c}} for c in range(chains)]
    out = map_chains(pool, run_tsg_chain, problem, tasks, "strgm-tsg-chain")
    return out, burned_in_summary([d["trace"] for d in out], QUANTITY, iters // 2)
