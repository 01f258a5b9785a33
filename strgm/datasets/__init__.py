"""Data sets (a layer of docs/architecture.md §1): paradigm files (long TSV, wide CSV), the
English verb paradigm from CMUdict, and synthetic paradigms with gold underlying forms.

    read_paradigm(path) -> Paradigm          every error names the file and line
    english_paradigm(n_roots, seed)          the ``strgm demo`` data
    synthetic_paradigm(n_words, seed)        a known rule cascade, gold URs
    example(name), example_path(name)        sample data shipped with the package
"""

from strgm.datasets.paradigm import (UNKNOWN, Paradigm, ParadigmEntry, read_paradigm,
                                     read_paradigm_csv, read_paradigm_tsv)
from strgm.datasets.cmudict_paradigm import arpabet_to_ipa, english_paradigm, regular_verbs
from strgm.datasets.synthetic import SyntheticData, synthetic_paradigm
from strgm.datasets.examples import EXAMPLES, example, example_path

__all__ = [
    "UNKNOWN", "Paradigm", "ParadigmEntry", "read_paradigm", "read_paradigm_csv",
    "read_paradigm_tsv",
    "arpabet_to_ipa", "english_paradigm", "regular_verbs",
    "SyntheticData", "synthetic_paradigm", "EXAMPLES", "example", "example_path",
]
