"""What the numbers of a trace mean, for axis labels and titles: every key a producer
writes into its trace rows, with its unit, and the word for one step of its x axis.

Log-probabilities are natural logarithms, so their unit is the nat. A key that is not
listed here is shown as it is, and its unit is unknown.
"""

from __future__ import annotations

__all__ = ["QUANTITIES", "describe", "BELIEF_CHANGE"]

#: key -> (y-axis label with unit, title, x-axis label)
QUANTITIES = {
    "objective": ("EM objective: log evidence − L2 penalty (nats)",
                  "EM: objective per iteration", "EM iteration"),
    "log_evidence": ("log evidence (nats)", "EM: log evidence per iteration",
                     "EM iteration"),
    "log_p_trees": ("log P(trees | α) (nats)", "PCFG sampler: log P of the sampled trees",
                    "sweep"),
    "log_likelihood": ("log-likelihood of the trees (nats)",
                       "TSG sampler: log-likelihood per sweep", "sweep"),
    "loglik": ("log-likelihood of the sequences (nats)",
               "HMM sampler: log-likelihood per sweep", "sweep"),
    "neg_log_prob": ("−log P(corpus) (nats)", "estimator: −log P(corpus) per iteration",
                     "iteration"),
    "bits_per_token": ("bits per token (bits)", "bits per token per iteration", "iteration"),
}

#: the belief change of message passing: the largest change of a belief between two
#: iterations, in the inference method's own measure (a ratio: no unit)
BELIEF_CHANGE = ("largest belief change between iterations (no unit)",
                 "belief change per iteration", "iteration")


def describe(key) -> tuple[str, str, str]:
    """(y label, title, x label) of a trace key; an unknown key is its own label."""
    if key in QUANTITIES:
        return QUANTITIES[key]
    return str(key), f"{key} per iteration", "iteration"
