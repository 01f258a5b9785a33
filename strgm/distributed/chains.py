"""K independent chains of a PCFG sampler (Gibbs or collapsed MH), one task each.

Chain k starts from seed ``seed + k`` (chain 0 is the single-chain run of the same seed)
and runs :func:`strgm.grammars.samplers.run` unchanged, so each chain is an exact MCMC
chain whatever the others do; MH stays exact too (nothing is shared between chains).
Each task gets the grammar and the corpus as numpy arrays
(:func:`~strgm.distributed.pcfg_shards.encode_grammar`, broadcast once) and returns the
chain's averaged E[θ | t, α] and its trace as columns of numpy arrays.

The pooled estimate is the mean of the chains' averages (each averages the same number of
sweeps, so it is the average over all kept sweeps), and the chains' log P(t | α) after
burn-in are summarised by split-R̂ and the effective sample size
(:mod:`strgm.distributed.diagnostics`; Gelman et al., BDA3 §11.4–11.5).  A task whose
worker dies is re-run from its seed with the same result.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from strgm.chains.runner import map_chains
from strgm.distributed.diagnostics import chain_summary, summary_line
from strgm.distributed.pcfg_shards import decode_corpus, decode_grammar, encode_corpus, \
    encode_grammar
from strgm.validate import check_int

__all__ = ["ChainsResult", "run_chain", "run_chains"]

#: The quantity whose convergence is reported.
QUANTITY = "log_p_trees"


@dataclass
class ChainsResult:
    """The pooled θ, each chain's θ̄, trace, acceptance rate and unparsable sentences, and
    the R̂/ESS summary of log P(t | α) after burn-in (None with fewer than 4 draws)."""

    theta: np.ndarray
    thetas: list
    traces: list
    seeds: list
    acceptance: list = field(default_factory=list)
    unparsable: list = field(default_factory=list)
    summary: dict | None = None

    def __repr__(self) -> str:
        return (f"ChainsResult(chains={len(self.traces)}, rules={np.size(self.theta)}, "
                f"sweeps={len(self.traces[0]) if self.traces else 0}"
                f"{_diagnosed(self.summary)})")


def _diagnosed(summary) -> str:
    """``, rank_rhat=…`` for a repr, when there is a chain summary."""
    if not summary:
        return ""
    return f", rank_rhat={summary.get('rank_rhat', summary.get('rhat', float('nan'))):.4f}"


def trace_columns(trace: list) -> dict:
    """Trace rows as columns of numpy arrays (what a chain task returns)."""
    keys = list(trace[0]) if trace else []
    return {k: np.array([r.get(k, np.nan) for r in trace]) for k in keys}


def trace_rows(cols: dict) -> list:
    """The rows of :func:`trace_columns`' columns."""
    keys = list(cols)
    return [dict(zip(keys, vals)) for vals in zip(*(cols[k].tolist() for k in keys))]


def burned_in_summary(traces: list, quantity: str, burn_in: int) -> dict | None:
    """The split-R̂/ESS summary of ``quantity`` over the sweeps after ``burn_in`` of
    every chain's trace rows; None with fewer than 4 such sweeps."""
    kept = [[r[quantity] for r in t if r["iteration"] > burn_in] for t in traces]
    return chain_summary(np.array(kept), quantity) if kept and len(kept[0]) >= 4 else None


def run_chain(task: dict, problem: dict) -> dict:
    """One chain (a task): ``task`` holds seed, iters, burn_in, method, alpha,
    resample_alpha; ``problem`` the encoded grammar, corpus and held-out corpus."""
    from strgm.grammars.samplers import CollapsedMH, GibbsPCFG, run

    g = decode_grammar(problem["grammar"])
    symbols = [str(s) for s in problem["grammar"]["symbols"]]
    corpus = decode_corpus(problem["corpus"], symbols)
    held = decode_corpus(problem["heldout"], symbols) if "heldout" in problem else None
    cls = GibbsPCFG if task["method"] == "gibbs" else CollapsedMH
    mem = task.get("max_memory")
    k = cls(g, corpus, alpha=task.get("alpha"), resample_alpha=task.get("resample_alpha",
                                                                        False),
            max_memory=mem)
    state = k.init(task["seed"])
    res = run(k, state, task["iters"], burn_in=task["burn_in"], eval_every=1, heldout=held)
    st = res.state
    return {"theta": res.theta_mean, "trace": trace_columns(res.trace),
            "accepted": np.array([st.accepted, st.proposed], dtype=np.int64),
            "unparsable": np.array([i for i, t in enumerate(state.trees) if t is None],
                                   dtype=np.int64)}


def encode_problem(grammar, corpus, heldout=None) -> dict:
    """Grammar, corpus and held-out corpus as arrays (one dict, broadcast once)."""
    arrays = encode_grammar(grammar)
    symbols = {str(s): i for i, s in enumerate(arrays["symbols"])}
    out = {"grammar": arrays, "corpus": encode_corpus(corpus, range(len(corpus)), symbols)}
    if heldout is not None:
        out["heldout"] = encode_corpus(heldout, range(len(heldout)), symbols)
    return out


def run_chains(pool, method: str, grammar, corpus, *, chains: int, seed: int = 0,
               iters: int, burn_in: int = 0, alpha=None, resample_alpha: bool = False,
               heldout=None, max_memory=None) -> ChainsResult:
    """``chains`` independent chains of ``method`` (gibbs or mh) on ``pool`` (module
    docstring); the chains' results come back in seed order."""
    chains = check_int("chains", chains, min=1)
    tasks = [{"seed": seed + c, "iters": iters, "burn_in": burn_in, "method": method,
              "alpha": alpha, "resample_alpha": resample_alpha, "max_memory": max_memory}
             for c in range(chains)]
    out = map_chains(pool, run_chain, encode_problem(grammar, corpus, heldout), tasks,
                     "strgm-chain")
    traces = [trace_rows(o["trace"]) for o in out]
    thetas = [np.asarray(o["theta"]) for o in out]
    acc = [float(a / p) if p else float("nan") for a, p in (o["accepted"] for o in out)]
    summary = burned_in_summary(traces, QUANTITY, burn_in)
    return ChainsResult(np.mean(thetas, axis=0), thetas, traces, [t["seed"] for t in tasks],
                        acc if method == "mh" else [],
                        [o["unparsable"].tolist() for o in out], summary)


def report_chains(res: ChainsResult, method: str, log) -> list:
    """Report what a sampler run reports, chain by chain: the unparsable sentences of
    chain 0 and stuck chains as warnings (:func:`warnings.warn`; the command line shows
    each as one ``strgm: warning:`` line), acceptance rates on ``log``, then one line of
    split-R̂ and ESS on ``log``; returns the trace rows of every chain, each with its
    ``chain`` (0-based) and ``seed``."""
    from strgm.grammars.driver import stuck_chain

    bad = res.unparsable[0] if res.unparsable else []
    if bad:
        warnings.warn(f"{len(bad)} sentence(s) have no parse (line numbers "
                      f"{[i + 1 for i in bad[:20]]}); they are left out", stacklevel=2)
    rows = []
    for c, trace in enumerate(res.traces):
        acc = res.acceptance[c] if res.acceptance else None
        if acc is not None:
            print(f"chain {c}: acceptance rate {acc:.4f}", file=log)
        note = stuck_chain(trace, QUANTITY, acceptance=acc)
        if note:
            warnings.warn(f"chain {c}: {note}", stacklevel=2)
        rows += [{"chain": c, "seed": res.seeds[c], **r} for r in trace]
    print(summary_line(res.summary, len(res.traces), "log P(t)", "too few sweeps after "
                       "--burn-in for R-hat and ESS (need 4)"), file=log)
    return rows


def check_parallel(method: str, chains: int, spec, checkpoint=None, resume=None):
    """``--chains`` and ``--scheduler`` (``spec``) of ``strgm pcfg train``, before any
    work: chains are for the samplers, a checkpoint holds one serial chain, and collapsed
    VB's sweep is sequential. Returns ``spec``."""
    from strgm.errors import OptionError

    sampler = method in ("gibbs", "mh")
    if chains > 1 and not sampler:
        raise OptionError("--chains", chains, "independent chains are for the samplers "
                                              "(--method gibbs or mh)")
    # one Gibbs chain on --scheduler runs here (its tree draws on the workers): it keeps
    # its checkpoints; chains and MH on --scheduler run as tasks
    as_tasks = chains > 1 or (spec is not None and method == "mh")
    if sampler and as_tasks and (checkpoint or resume):
        opt, v = ("--chains", chains) if chains > 1 else ("--scheduler", spec.value)
        raise OptionError(opt, v, "a checkpoint holds one chain run here; drop "
                                  "--checkpoint and --resume")
    if spec is not None and method == "cvb":
        raise OptionError("--scheduler", spec.value, "collapsed VB updates one "
                          "sentence at a time against all others; --scheduler serves em, "
                          "map, vb and the samplers")
    return spec


def sample_chains(pool, method: str, grammar, corpus, log, **kw) -> tuple:
    """(pooled θ, trace rows of every chain, extra trace-JSON fields) of
    :func:`run_chains` with ``kw``, reported on ``log`` (:func:`report_chains`)."""
    res = run_chains(pool, method, grammar, corpus, **kw)
    rows = report_chains(res, method, log)
    return res.theta, rows, {"chains": len(res.traces), "seeds": res.seeds,
                             "diagnostics": res.summary}
