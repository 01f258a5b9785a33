"""Sample data shipped with the package, by name (``strgm.safe_io.EXAMPLES``).

Every name also works wherever a command or reader takes a file: ``example:NAME``
(``strgm infer example:english-verbs``, ``read_grammar("example:toy-grammar")``).

    example("english-verbs")   -> Paradigm   12 CMUdict verbs (bare, PAST, 3SG, PROG)
    example("synthetic")       -> Paradigm   40 words from a known rule cascade
    example("synthetic-urs")   -> dict       its gold underlying forms, morpheme -> UR
    example("phonemes")        -> list       400 CMUdict pronunciations, IPA segment tuples
    example_path(name)         -> Path       the file itself (also for "toy-grammar",
                                             "toy-corpus" and "trees", which the grammar
                                             readers take: read_grammar, read_yld, read_mrg)

The English data derive from the CMU Pronouncing Dictionary (BSD licence, shipped as
``strgm/data/LICENSE-cmudict.txt``); the rest was written for strgm.
"""

from __future__ import annotations

from pathlib import Path

from fst_factors.alphabet import segment
from strgm.datasets.paradigm import read_paradigm
from strgm.errors import InputError
from strgm.safe_io import EXAMPLE_PREFIX, EXAMPLES, read_text, resolve_input

__all__ = ["example", "example_path", "EXAMPLES"]

_PARSED = ("english-verbs", "synthetic", "synthetic-urs", "phonemes")


def example_path(name: str) -> Path:
    """The shipped file called ``name`` (an InputError listing the names otherwise)."""
    return resolve_input(EXAMPLE_PREFIX + str(name))


def example(name: str):
    """The example ``name`` parsed (see the module docstring for what each gives)."""
    path = example_path(name)
    if name == "synthetic-urs":
        rows = [ln.split("\t") for ln in read_text(path).splitlines()
                if ln.strip() and not ln.startswith("#")]
        return {m: u for m, u in rows}
    if name == "phonemes":
        return [segment(ln) for ln in read_text(path).splitlines() if ln.strip()]
    if name in ("english-verbs", "synthetic"):
        return read_paradigm(EXAMPLE_PREFIX + name)
    raise InputError(f"example {name!r} is not parsed here: pass example_path({name!r}) "
                     f"(or 'example:{name}') to its reader; parsed examples: "
                     f"{', '.join(_PARSED)}")
