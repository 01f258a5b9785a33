"""EM's E-step split over blocks of words (docs/architecture.md §1, §5).

A paradigm is one connected component of its factor graph (every word shares an affix
with others), so the E-step is split over *blocks of words* with messages exchanged per
round (:func:`strgm.inference.blocks.block_jacobi`):

* **Blocks.** Words are grouped by their root, the morpheme of the word that the fewest
  words share (ties: the first), so that only affixes are shared between blocks. Groups
  are dealt to ``n`` blocks largest first (longest-processing-time order) by the summed
  squared surface lengths, a proxy of their message sizes.
* **Inference.** A block holds its words' concatenation and phonology factors; each round
  it sweeps them against the other blocks' messages of the previous round. The phonology
  messages of the observed surfaces are computed once, in round 0, by their block. T_θ
  itself does not travel: θ and the model's description are scattered, and each process
  makes T_θ once (:func:`phonology_machine`, a recipe of
  :func:`strgm.inference.blocks.block_jacobi`).
* **Counts.** The expected edit counts and log Z of each block's words are computed by a
  task that receives θ (scattered once per E-step, with the structure's description) and
  the messages μ_{U→phonology} of its words as OpenFst bytes, and returns two arrays; the
  sums are taken in block order.

The result does not depend on where the blocks run: serially (``pool`` None) or on any
Dask cluster, the same blocks give identical θ, trace and beliefs. It can differ from
the unsplit E-step (another schedule), and on 2 cores it was slower than the unsplit
E-step on every paradigm measured (``benchmarks/results/distributed_blocks.md``).

Use: ``with block_e_step(4, pool): train_phonology(...)`` (the ``strgm train``
options ``--blocks N`` and ``--scheduler``).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Iterator, Optional

import numpy as np
import pynini

from strgm.alphabet import Alphabet
from strgm.datasets.paradigm import Paradigm
from strgm.errors import OptionError
from strgm.inference.blocks import BLOCK_METHODS, SerialPool, block_jacobi
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.phonology import build_phonology_model, factor_machine
from strgm.models.training import expected_counts
from strgm.transducers.contextual_edit import ContextSpec
from strgm.validate import check_int

#: Inference options a split E-step takes (those of block_jacobi).
BLOCK_OPTIONS = ("max_iters", "tol", "kbest", "max_states", "max_memory")
_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("strgm_block_e_step", default=None)
_COMPILED: "OrderedDict[str, object]" = OrderedDict()


@dataclass(frozen=True)
class BlockSetting:
    """``n`` blocks of words, run on ``pool`` (a task pool; None: here)."""

    n: int
    pool: object = None


@contextlib.contextmanager
def block_e_step(n: int, pool=None) -> Iterator[BlockSetting]:
    """Within the body, EM's E-steps are split over ``n`` ≥ 1 blocks of words."""
    setting = BlockSetting(check_int("blocks", n, min=1), pool)
    token = _ACTIVE.set(setting)
    try:
        yield setting
    finally:
        _ACTIVE.reset(token)


def active_block_setting() -> Optional[BlockSetting]:
    """The setting of the enclosing :func:`block_e_step`, or None."""
    return _ACTIVE.get()


def word_blocks(train: Paradigm, n: int) -> list:
    """The keys of the words of each block (module docstring); empty blocks dropped."""
    n = check_int("blocks", n, min=1)
    used = Counter(m for e in train.observed for m in set(e.morphemes))
    groups: dict = {}
    for e in train.observed:
        root = min(e.morphemes, key=lambda m: used[m])  # min keeps the first of ties
        groups.setdefault(root, []).append(e)
    weight = {r: sum(len(e.segments) ** 2 for e in es) for r, es in groups.items()}
    blocks: list = [[] for _ in range(n)]
    load = [0] * n
    for r in sorted(groups, key=lambda r: (-weight[r], r)):
        b = min(range(n), key=lambda i: (load[i], i))
        blocks[b].extend(e.key for e in groups[r])
        load[b] += weight[r]
    return [b for b in blocks if b]


def split_e_step(model: PhonologyEditModel, train: Paradigm, method: str,
                 infer_opts: dict, setting: BlockSetting, progress=None):
    """:func:`strgm.models.em.e_step` with inference and counts split over blocks of
    words: (counts, Σ_w log Z_w, detached result, graph model)."""
    if method not in BLOCK_METHODS:
        raise OptionError("method", method, "an E-step split over blocks of words "
                          "(--blocks, --scheduler) runs " + " or ".join(BLOCK_METHODS))
    extra = sorted(set(infer_opts) - set(BLOCK_OPTIONS))
    if extra:
        raise OptionError(extra[0], infer_opts[extra[0]],
                          "does not apply to an E-step split over blocks of words")
    pool = setting.pool or SerialPool()
    pm = build_phonology_model(train, alphabet=model.alphabet, phonology=model.fst(),
                               boundary=model.alphabet.boundary)
    words = word_blocks(train, setting.n)
    factors = [[n for k in keys for n in (f"concat:{k}", f"phonology:{k}")
                if n in pm.graph.factors] for keys in words]
    if progress:
        progress(f"E-step ({method}, {len(words)} blocks of words)")
    arrays = _model_arrays(model)
    # on a cluster T_θ is made where the blocks run from θ (kilobytes, not megabytes);
    # in this process its bytes are read back instead (30 ms, not a 1 s compile)
    recipes = [(pm.graph.factors[n].fst, phonology_machine, arrays)
               for keys in factors for n in keys if n.startswith("phonology:")
               ] if getattr(pool, "distributed", False) else []
    res = block_jacobi(pm.graph, factors, method, pool=pool, progress=progress,
                       recipes=recipes,
                       **infer_opts)
    surfaces = {e.key: e.segments for e in train.observed}
    items = [{"mu": [res.message(pm.ur_vars[k], f"phonology:{k}").write_to_string()
                     for k in keys],
              "surfaces": [np.asarray(model.alphabet.encode(surfaces[k]), dtype=np.int32)
                           for k in keys]} for keys in words]
    shared = pool.scatter(arrays)
    parts = pool.map(block_counts, items, shared, key="strgm-counts")
    counts = np.zeros(model.structure.num_events)
    ll = 0.0
    for c, lz in parts:
        counts += c
        ll += lz
    detached = res.detach(list(pm.morpheme_vars.values()))
    return counts, ll, detached, pm


def _model_arrays(model: PhonologyEditModel) -> dict:
    """What a count task needs of the model: its description (alphabet, context windows,
    classes; JSON) and θ."""
    spec = {"left_input": model.spec.left_input, "right_input": model.spec.right_input,
            "left_output": model.spec.left_output, "tier": model.spec.tier}
    desc = json.dumps({"alphabet": model.alphabet.to_dict(), "spec": spec,
                       "classes": model.classes}, sort_keys=True)
    theta = np.asarray(model.theta, dtype=float)
    digest = hashlib.sha1(desc.encode() + theta.tobytes()).hexdigest()
    return {"description": desc, "theta": theta, "digest": digest}


def _model_of(arrays: dict) -> tuple:
    """(model, compiled arc-id transducer), built once per process (cached by digest)."""
    key = arrays["digest"]
    if key not in _COMPILED:
        d = json.loads(arrays["description"])
        classes = {k: tuple(v) if isinstance(v, list) else v  # as read from a file
                   for k, v in d["classes"].items()}
        model = PhonologyEditModel(Alphabet.from_dict(d["alphabet"]), ContextSpec(**d["spec"]),
                                   classes, np.asarray(arrays["theta"], dtype=float))
        _COMPILED[key] = (model, model.fst(ids=True))
        while len(_COMPILED) > 2:
            _COMPILED.popitem(last=False)
    return _COMPILED[key]


def phonology_machine(arrays: dict) -> pynini.Fst:
    """T_θ of :func:`_model_arrays`' model (the phonology factors' machine), made where the
    blocks run so that only θ and the description travel (a block's recipe)."""
    model = _model_of(arrays)[0]
    return factor_machine(model.fst(), model.alphabet)


def block_counts(item: dict, arrays: dict) -> tuple:
    """One task: (expected edit counts, Σ log Z) of a block's words, a pure function of
    its inputs (a task whose worker dies runs again with the same result)."""
    model, t_ids = _model_of(arrays)
    pairs = [(pynini.Fst.read_from_string(mu), tuple(int(a) for a in s))
             for mu, s in zip(item["mu"], item["surfaces"])]
    return expected_counts(model.structure, model.theta, pairs, t_ids=t_ids)
