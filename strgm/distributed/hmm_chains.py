"""K independent chains of the infinite-HMM sampler, one task each (``strgm hmm train
--chains K [--scheduler ...]``).

Chain k starts from seed ``seed + k`` (chain 0 is the single-chain run of the same seed)
and runs :func:`strgm.hmm.training.run_chain` unchanged, with the same burn-in and
thinning, so each chain is an exact MCMC chain whatever the others do. The data travel as
numpy arrays (the concatenated sequences and their offsets, broadcast once) with the
settings and the emission family as plain dictionaries; a chain returns its trace as
columns of numpy arrays and its kept samples (p0, P, stop, emission parameters) as arrays.

The model of the run is chain 0's, the same as a single-chain run: chains label their
states independently, so a posterior-mean model or a decoding averaged over samples of
different chains would mix unrelated states. The other chains serve to judge convergence:
that of the log-likelihood after burn-in is summarised by
split-R̂ and the effective sample size (:mod:`strgm.distributed.diagnostics`; Gelman et
al., BDA3 §11.4–11.5). A task whose worker dies is re-run from its seed with the same
result.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from strgm.chains.runner import map_chains
from strgm.distributed.chains import burned_in_summary, trace_columns, trace_rows
from strgm.validate import check_int

__all__ = ["HMMChains", "QUANTITY", "chain_posterior", "run_hmm_chain", "run_hmm_chains",
           "summary_line"]

#: The quantity whose convergence is reported.
QUANTITY = "loglik"


@dataclass
class HMMChains:
    """Each chain's trace (rows) and kept samples (records of arrays), the seeds, and the
    R̂/ESS summary of the log-likelihood after burn-in (None with fewer than 4 sweeps)."""

    traces: list
    samples: list
    seeds: list
    summary: dict | None = None
    warnings: list = field(default_factory=list)  # (chain, message)

    def __repr__(self) -> str:
        from strgm.distributed.chains import _diagnosed

        return (f"HMMChains(chains={len(self.traces)}, "
                f"sweeps={len(self.traces[0]) if self.traces else 0}, "
                f"samples={len(self.samples[0]) if self.samples else 0}"
                f"{_diagnosed(self.summary)})")


def _kernel(problem: dict):
    from strgm.hmm import HMMSampler, HMMSettings
    from strgm.hmm.data import Sequences
    from strgm.hmm.emissions import emissions_from_dict

    seqs = Sequences(np.asarray(problem["x"]), np.asarray(problem["offsets"]))
    return HMMSampler(seqs, HMMSettings.from_dict(problem["settings"]),
                      emissions_from_dict(problem["emissions"]))


def run_hmm_chain(task: dict, problem: dict) -> dict:
    """One chain (a task): ``task`` holds seed, iters, burn_in, thin; ``problem`` the
    sequences, settings and emission family (module docstring)."""
    from strgm.hmm.model import hmm_of_state
    from strgm.hmm.training import _sample_record, run_chain

    kernel = _kernel(problem)
    with warnings.catch_warnings(record=True) as caught:  # told by the client, per chain
        warnings.simplefilter("always")
        state = run_chain(kernel, kernel.init(task["seed"]), task["iters"],
                          task["burn_in"], task["thin"])
    trace = trace_columns(state.trace)
    kept = state.samples or [_sample_record(hmm_of_state(state, kernel.settings,
                                                         kernel.emissions))]
    samples = [{"p0": np.asarray(s["p0"]), "P": np.asarray(s["P"]),
                "stop": None if s["stop"] is None else np.asarray(s["stop"]),
                "params": {k: np.asarray(v) for k, v in s["params"].items()}}
               for s in kept]
    return {"trace": trace, "samples": samples,
            "warnings": [str(w.message) for w in caught]}


def encode_problem(seqs, settings, emissions) -> dict:
    """What every chain needs, as arrays and plain dictionaries (broadcast once)."""
    return {"x": np.asarray(seqs.x), "offsets": np.asarray(seqs.offsets),
            "settings": settings.to_dict(), "emissions": emissions.to_dict()}


def run_hmm_chains(pool, kernel, *, chains: int, seed: int, iters: int, burn_in: int,
                   thin: int) -> HMMChains:
    """``chains`` independent chains of ``kernel``'s sampler on ``pool`` (a
    :class:`~strgm.distributed.cluster.TaskPool`; module docstring), in seed order."""
    chains = check_int("chains", chains, min=1)
    tasks = [{"seed": seed + c, "iters": iters, "burn_in": burn_in, "thin": thin}
             for c in range(chains)]
    out = map_chains(pool, run_hmm_chain,
                     encode_problem(kernel.data, kernel.settings, kernel.emissions), tasks,
                     "strgm-hmm-chain")
    traces = [trace_rows(o["trace"]) for o in out]
    summary = burned_in_summary(traces, QUANTITY, burn_in)
    told = [(c, m) for c, o in enumerate(out) for m in o["warnings"]]
    return HMMChains(traces, [o["samples"] for o in out], [t["seed"] for t in tasks],
                     summary, told)


def chain_posterior(res: HMMChains, kernel, vocab, chain: int = 0):
    """The kept samples of one chain as an :class:`~strgm.hmm.model.HMMPosterior`."""
    from strgm.hmm.model import HMM, HMMPosterior

    em = kernel.emissions
    hs = tuple(HMM(r["p0"], r["P"], r["stop"], r["params"], em) for r in res.samples[chain])
    return HMMPosterior(hs, tuple(vocab), kernel.settings)


def summary_line(res: HMMChains) -> str:
    """One line: the chains' split-R̂ and ESS of the log-likelihood (or why not)."""
    from strgm.distributed.diagnostics import summary_line as line

    return line(res.summary, len(res.traces), "the log-likelihood",
                "too few sweeps after --burn-in for R-hat and ESS (need 4)")
