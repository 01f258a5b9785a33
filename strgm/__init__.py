"""strgm: inference in graphical models over strings.

Variables range over strings, factors are weighted finite-state machines (pynini, log64
semiring). See README.md for a tour and ARCHITECTURE.md for the mathematics.
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
