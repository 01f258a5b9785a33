"""strgm: inference in graphical models over strings.

Variables range over strings, factors are weighted finite-state machines (pynini, log64
semiring). See README.md for a tour and docs/architecture.md for the layers and the
mathematics. What a user needs is reachable from here; each name is imported on first
use, so ``import strgm`` stays quick:

    import strgm
    g = strgm.FactorGraph(strgm.Alphabet.from_words(["kæts", "dɔɡz"], boundary="+"))
    ...                                    # variables and factors (README, "Build your own")
    result = strgm.infer(g, "pep")         # an InferenceResult: one Belief per variable
    result.belief("UR").kbest(3)

    run = strgm.infer_paradigm(strgm.example("english-verbs"), "pruned", holdout=0.1)
    train = strgm.train_paradigm(strgm.read_paradigm("words.tsv"), holdout=0.1)
    model = strgm.load_model("hmm.json")   # a model saved by `strgm hmm|tsg train --save`

The error hierarchy (:class:`StrgmError` and its subclasses) is here too. The command line
is :mod:`strgm.cli`.
"""

from strgm.errors import (  # noqa: F401
    DivergenceError,
    GraphError,
    InconsistentEvidenceError,
    InputError,
    MessageTooLargeError,
    StrgmError,
    UnknownSymbolError,
)

__version__ = "0.1.0"

#: Public name → the module that defines it (imported on first use, PEP 562).
_LAZY = {
    # strings, graphs and inference
    "Alphabet": "fst_factors.alphabet",
    "FactorGraph": "strgm.graph",
    "infer": "strgm.inference",
    "Belief": "strgm.inference.belief",
    "InferenceResult": "strgm.inference.result",
    # data
    "example": "strgm.datasets.examples",
    "example_path": "strgm.datasets.examples",
    "read_paradigm": "strgm.datasets.paradigm",
    # phonology
    "build_phonology_model": "strgm.models.phonology",
    "train_phonology": "strgm.models.em",
    "infer_paradigm": "strgm.workflows.paradigm",
    "train_paradigm": "strgm.workflows.training",
    # grammars, tree-substitution grammars, infinite HMMs
    "Grammar": "strgm.grammars",
    "parse_grammar": "strgm.grammars",
    "read_grammar": "strgm.grammars",
    "GrammarParameters": "strgm.grammars.factor_message",
    "HMMSettings": "strgm.hmm",
    "HMMSampler": "strgm.hmm",
    "load_model": "strgm.workflows.model_files",
}

__all__ = ["DivergenceError", "GraphError", "InconsistentEvidenceError", "InputError",
           "MessageTooLargeError", "StrgmError", "UnknownSymbolError", "__version__",
           *_LAZY]


def __getattr__(name: str):
    """The lazily imported public names of :data:`_LAZY` (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'strgm' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
