"""Infinite HMMs: CMUdict pronunciations, synthetic data with known states, the diagnosis
of the samplers, local transitions, and the learned HMM as the prior on underlying
forms; :mod:`benchmarks.hmm.common` holds what they share."""
