"""strgm: inference in graphical models over strings.

Variables range over strings, factors are weighted finite-state machines (pynini, log64
semiring). See README.md for a tour and docs/architecture.md for the layers and the
mathematics. The use cases (infer underlying forms of a paradigm, train its phonology) are
in :mod:`strgm.workflows`; the command line is :mod:`strgm.cli`.
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
