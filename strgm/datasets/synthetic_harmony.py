"""A synthetic back-harmony paradigm with transparent (neutral) vowels, as in Hungarian.

Vowels: back a o u, front rounded ø y, and the *neutral* front unrounded i e. A suffix
vowel is back when the last non-neutral vowel of the stem is back, and front otherwise
(also when the stem has neutral vowels only): /kasin-nek/ → [kasinnak] (the i is skipped),
/kisin-nek/ → [kisinnek], /kyt-nek/ → [kytnek]. The suffixes are DAT /-nek/ (e ~ a) and
INE /-ben/ (e ~ a); each root appears bare and with every suffix, so the harmony class of
every root is visible in its training words and only the tier can tell which vowel
decides it. Roots are C V C V C with the vowels drawn so that every harmony pattern (back
then neutral, neutral only, front rounded, …) occurs.
"""

from __future__ import annotations

import numpy as np

from strgm.datasets.paradigm import Paradigm

BACK = "aou"
FRONT_ROUNDED = "øy"
NEUTRAL = "ie"
CONSONANTS = "ptksmnlr"
SUFFIXES = {"DAT": "nek", "INE": "ben"}
HARMONY = {"e": "a"}  # front suffix vowel -> back


def harmonise(stem: str, suffix: str) -> str:
    """The suffix after ``stem``: back vowels if the last non-neutral stem vowel is back."""
    decisive = [v for v in stem if v in BACK + FRONT_ROUNDED]
    back = bool(decisive) and decisive[-1] in BACK
    return "".join(HARMONY.get(c, c) if back else c for c in suffix)


def neutral_harmony_paradigm(n_roots: int = 40, seed: int = 0) -> Paradigm:
    """``n_roots`` distinct roots × (bare, DAT, INE); deterministic given ``seed``."""
    rng = np.random.default_rng(seed)
    vowels = BACK + FRONT_ROUNDED + NEUTRAL
    roots: list = []
    while len(roots) < n_roots:
        c = rng.choice(list(CONSONANTS), 3)
        v1 = rng.choice(list(vowels))
        v2 = rng.choice(list(NEUTRAL)) if rng.random() < 0.6 else rng.choice(list(vowels))
        root = f"{c[0]}{v1}{c[1]}{v2}{c[2]}"
        if root not in roots:
            roots.append(root)
    pairs = []
    for i, root in enumerate(roots, 1):
        label = f"R{i:02d}"
        pairs.append(((label,), root))
        for s, ur in SUFFIXES.items():
            pairs.append(((label, s), root + harmonise(root, ur)))
    return Paradigm.from_pairs(pairs, source=f"<neutral harmony n={n_roots} seed={seed}>")
