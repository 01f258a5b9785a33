"""A trained DP-TSG as one file: the training trees, the chain's last state and how the
trees were prepared.

A model must let ``strgm tsg parse`` rebuild the MAP grammar and the true predictive of
eq. (1) (Cohn & Blunsom 2010) exactly, without the treebank it was trained on.  Both are
functions of the (prepared) training trees, their substitution indicators, α and s, so
the file holds exactly those: strict JSON, written atomically,

    {"format": "strgm-tsg-model", "version": 1,
     "prepare": {"unk_threshold": 1, "horizontal": 1, ...},   # how TREES were prepared
     "trees": ["(S (NP (DT The) ...))", ...],                  # binarised, rare words
                                                              # replaced by signatures
     "state": {...}}                                           # a TSGState (state.py)

(``.npz`` gives the same JSON compressed).  Loading checks the format, re-reads the trees
(one-line errors name the file and the tree) and checks that the state belongs to them.

A Pitman–Yor model (``state.process == "py"``, its discounts and seating in the state) is
read by the parser and the factor through its DP reading (:func:`.pitman_yor.map_view`):
``model.kernel`` / ``model.state`` are then the view, whose MAP grammar and first-order
predictive are the PY ones, and ``model.sampler`` / ``model.trained`` the trained sampler
and state (what the file holds and ``tsg show`` counts).
"""

from __future__ import annotations

from pathlib import Path

from strgm.errors import InputError
from strgm.grammars.binarize import binarize, debinarize
from strgm.grammars.cfg import tree_to_str
from strgm.chains.codec import get_field, load_json_state, save_json_state
from strgm.grammars.ptb import parse_trees
from strgm.grammars.tsg.blocked import BlockedMHTSG
from strgm.grammars.tsg.local import LocalGibbsTSG
from strgm.grammars.tsg.pitman_yor import map_view
from strgm.grammars.tsg.state import TSGState, check_tsg_state
from strgm.grammars.unknown_words import is_signature, map_sentence, replace_rare
from strgm.validate import check_int

__all__ = ["TSGModel", "save_model", "load_model", "prepare_trees", "MODEL_FORMAT"]

MODEL_FORMAT = "strgm-tsg-model"
_KERNELS = {"tsg-blocked": BlockedMHTSG, "tsg-local": LocalGibbsTSG}


def prepare_trees(trees, unk_threshold: int = 1, horizontal: int | None = 1) -> tuple:
    """(prepared trees, settings) from cleaned treebank trees: words seen at most
    ``unk_threshold`` times replaced by their word-shape signature
    (:func:`strgm.grammars.unknown_words.replace_rare`), then right-binarised with
    horizontal Markovisation ``horizontal`` (:func:`strgm.grammars.binarize.binarize`;
    None: none), so that every node has one or two children as the TSG requires."""
    check_int("unk_threshold", unk_threshold, min=0)
    replaced, _ = replace_rare(list(trees), unk_threshold)
    prepared = [binarize(t, horizontal) for t in replaced]
    return prepared, {"unk_threshold": unk_threshold, "horizontal": horizontal}


class TSGModel:
    """A kernel over the prepared training trees, its state and the preparation settings
    (``prepare``: a JSON-ready dict, as :func:`prepare_trees` returns); for a PY state
    ``kernel``/``state`` become its DP reading (module docstring)."""

    def __init__(self, kernel, state: TSGState, prepare: dict):
        check_tsg_state(kernel, state)
        self.sampler, self.trained, self.prepare = kernel, state, dict(prepare)
        self.kernel, self.state = (kernel, state) if state.process == "dp" else \
            map_view(kernel, state)
        words = {w for w in kernel.table.rule_word if w is not None}
        self.terminals = frozenset(words)
        self.known = frozenset(w for w in words if not is_signature(w))

    def __repr__(self) -> str:
        return (f"TSGModel(sampler={self.state.kind!r}, trees={len(self.kernel.table.trees)}, "
                f"terminals={len(self.terminals)}, iterations={self.state.iteration})")

    def map_words(self, words) -> tuple:
        """The sentence as the model's terminals: a known word stays, an unknown one
        becomes the finest signature of its back-off chain the model knows
        (:func:`strgm.grammars.unknown_words.map_sentence`)."""
        return map_sentence(tuple(words), self.known, self.terminals)

    @staticmethod
    def restore(tree, words):
        """A parse over mapped words and binarised labels as a Penn Treebank tree: leaves
        replaced by ``words`` in order, binarisation nodes spliced out."""
        it = iter(words)

        def go(t):
            return next(it) if isinstance(t, str) else (t[0],) + tuple(go(c) for c in t[1:])
        return debinarize(go(tree))

    def to_dict(self) -> dict:
        return {"format": MODEL_FORMAT, "version": 1, "prepare": self.prepare,
                "trees": [tree_to_str(t) for t in self.kernel.table.trees],
                "state": self.trained.to_dict()}

    @classmethod
    def from_dict(cls, d) -> "TSGModel":
        """The model described by ``d``; an InputError naming the first bad field."""
        if not isinstance(d, dict) or d.get("format") != MODEL_FORMAT:
            raise InputError(f"not a TSG model (expected format {MODEL_FORMAT!r}; a sampler "
                             "checkpoint is not a model: train with --save)")
        if d.get("version") != 1:
            raise InputError(f"unsupported TSG model version {d.get('version')!r}")
        prepare = get_field(d, "prepare", dict)
        texts = get_field(d, "trees", list)
        trees = []
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InputError(f"field 'trees': entry {i} is not a string")
            got = parse_trees(text, f"tree {i}")
            if len(got) != 1:
                raise InputError(f"field 'trees': entry {i} holds {len(got)} trees, not 1")
            trees.append(got[0])
        state = TSGState.from_dict(get_field(d, "state", dict))
        kernel = _KERNELS[state.kind](trees, process=state.process)  # α, s, d: the state's
        try:
            return cls(kernel, state, prepare)
        except InputError as e:
            raise InputError(f"the model's state does not fit its trees: {e.detail}") from None


def save_model(path, model: TSGModel) -> None:
    """Write ``model`` atomically (strict JSON; ``.npz`` compressed)."""
    save_json_state(path, model.to_dict())


def load_model(path) -> TSGModel:
    """Read a model written by :func:`save_model`; a missing, damaged or foreign file is an
    InputError naming it."""
    p = Path(path)
    return load_json_state(p, "TSG model", TSGModel.from_dict,
                           advice="train it again or restore an intact copy",
                           expect=(MODEL_FORMAT, "a TSG model"))
