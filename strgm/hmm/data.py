"""Sequences for the infinite HMMs: reading, the symbol vocabulary, length batches.

A :class:`Sequences` holds every sequence concatenated in one array (``x``: symbol
indices, or a (N, D) float array for vector data) with ``offsets`` (sequence s is
``x[offsets[s]:offsets[s+1]]``). The kernels never loop over symbols in Python: they loop
over time steps within batches of equal-length sequences (:meth:`Sequences.batches`),
so a sweep costs O(Σ_T T) Python steps whatever the number of sequences.

Symbol files hold one sequence per line: tokens separated by spaces, or one word of
segmented IPA (``fst_factors.alphabet.segment``: "tʃaːt" is t͡ʃ… by tie bars and diacritics).
Blank lines and empty sequences are refused with the file and line.

The vocabulary ends with :data:`UNK`, a symbol never seen in training: its emission
probability is the model's mass for unknown symbols (a Dirichlet pseudo-count of η
per state), so scoring a sequence with a token unseen in training gives a finite
log-likelihood; :func:`encode` counts those tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fst_factors.alphabet import segment
from strgm.errors import InputError
from strgm.safe_io import read_text

__all__ = ["Sequences", "UNK", "read_symbol_file", "read_vector_file", "build_vocab",
           "encode"]

UNK = "<unk>"


@dataclass(frozen=True)
class Sequences:
    """Sequences concatenated: ``x`` (N,) int or (N, D) float, ``offsets`` (S+1,)."""

    x: np.ndarray
    offsets: np.ndarray

    @classmethod
    def from_list(cls, seqs) -> "Sequences":
        """From a list of arrays (ints, or (T, D) floats); each must be non-empty."""
        seqs = [np.asarray(s) for s in seqs]
        if not seqs:
            raise InputError("no sequences")
        for i, s in enumerate(seqs):
            if len(s) == 0:
                raise InputError(f"sequence {i + 1} is empty")
        offsets = np.concatenate([[0], np.cumsum([len(s) for s in seqs])]).astype(np.int64)
        return cls(np.concatenate(seqs), offsets)

    @property
    def num_sequences(self) -> int:
        return len(self.offsets) - 1

    @property
    def num_tokens(self) -> int:
        return int(self.offsets[-1])

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def sequence(self, s: int) -> np.ndarray:
        return self.x[self.offsets[s]:self.offsets[s + 1]]

    def batches(self):
        """(T, seq ids, positions) per distinct length T: ``positions`` is an (n, T)
        array of token indices into ``x``, so ``x[positions]`` is the batch."""
        lengths = self.lengths
        for T in np.unique(lengths):
            ids = np.flatnonzero(lengths == T)
            yield int(T), ids, self.offsets[ids][:, None] + np.arange(T)

    def first_last(self) -> tuple[np.ndarray, np.ndarray]:
        """Token indices of each sequence's first and last symbol."""
        return self.offsets[:-1], self.offsets[1:] - 1

    def transitions(self) -> tuple[np.ndarray, np.ndarray]:
        """(t, t+1) token index pairs of every within-sequence transition."""
        idx = np.arange(self.num_tokens - 1)
        keep = np.ones(len(idx), dtype=bool)
        keep[self.offsets[1:-1] - 1] = False
        return idx[keep], idx[keep] + 1


def read_symbol_file(path) -> list[tuple[str, ...]]:
    """Token tuples, one per line of ``path`` (see the module docstring)."""
    out = []
    for i, line in enumerate(read_text(path, "sequence file").splitlines(), 1):
        toks = segment(line)
        if not toks:
            raise InputError("empty sequence (every line must hold at least one token)",
                             str(path), i)
        out.append(toks)
    if not out:
        raise InputError("no sequences in the file", str(path))
    return out


def read_vector_file(path) -> list[np.ndarray]:
    """Vector sequences: one vector per line as numbers separated by spaces, a blank
    line between sequences. Every vector must have the same dimension."""
    seqs, cur, dim = [], [], None
    lines = read_text(path, "vector sequence file").splitlines() + [""]
    for i, line in enumerate(lines, 1):
        if not line.strip():
            if cur:
                seqs.append(np.array(cur))
            cur = []
            continue
        try:
            v = [float(t) for t in line.split()]
        except ValueError:
            raise InputError(f"not a vector of numbers: {line.strip()[:40]!r}",
                             str(path), i) from None
        if not np.all(np.isfinite(v)) or (dim is not None and len(v) != dim):
            raise InputError(f"expected {dim} finite numbers, got {len(v)}" if dim else
                             "non-finite number", str(path), i)
        dim = len(v)
        cur.append(v)
    if not seqs:
        raise InputError("no sequences in the file", str(path))
    return seqs


def build_vocab(token_seqs) -> tuple[str, ...]:
    """Sorted training symbols followed by :data:`UNK`."""
    syms = sorted({t for s in token_seqs for t in s})
    if UNK in syms:
        raise InputError(f"the symbol {UNK!r} is reserved for unknown symbols")
    return tuple(syms) + (UNK,)


def encode(token_seqs, vocab) -> tuple[Sequences, int]:
    """(Sequences of vocabulary indices, number of tokens not in ``vocab``, which are
    mapped to :data:`UNK`)."""
    index = {s: i for i, s in enumerate(vocab)}
    unk = index[UNK]
    seqs, unseen = [], 0
    for toks in token_seqs:
        ids = np.fromiter((index.get(t, unk) for t in toks), dtype=np.int64, count=len(toks))
        unseen += sum(t not in index for t in toks)
        seqs.append(ids)
    return Sequences.from_list(seqs), unseen
