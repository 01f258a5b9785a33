"""Proportional analogy among the forms a rule cascade leaves open
(strgm.models.rule_analogy), against a brute-force reading of its definition.

Oracle: on random small paradigms the supports equal those counted by enumerating
every training word v and every ordered pair (v', w') of training words and checking
the definition's conditions literally. End to end: a learned t-deletion after n leaves
/ban/ vs /bant/ open for a root seen only bare, and the other n-final roots (all
/-nt/) decide it. Negative controls: without the one segment of context, the cell's
affix alone carries a change to a word it does not fit (English-like [roɪŋ] → [roz]
makes [lɪftɪŋ] → [lɪftz]), and with no n-final root to compare the cascade's choice
stays.
"""

from __future__ import annotations

import itertools
import json
import math
import random

import pytest

from strgm.cli import main
from strgm.datasets.paradigm import Paradigm
from strgm.models.phonology import holdout_split
from strgm.models.rule_analogy import analogy_choice, analogy_support
from strgm.models.rule_phonology import FORMAT, RuleRun, grammar_from_dict, grammar_to_dict


def brute_support(train, morphemes, forms, context: bool = True) -> dict:
    forms = [tuple(f) for f in forms]
    s = {f: 0 for f in forms}
    s[forms[0]] += 1
    if len(forms) == 1:
        return s
    mw = set(morphemes)
    for ms, x in train:
        shared = mw & set(ms)
        if not shared:
            continue
        a_cell, b_cell = set(ms) - shared, mw - shared
        for (m1, x1), (m2, y1) in itertools.permutations(train, 2):
            stem = set(m1) & set(m2)
            if (not stem or stem & mw or set(m1) != stem | a_cell
                    or set(m2) != stem | b_cell or stem & (a_cell | b_cell)):
                continue
            n = len([0 for c, d in itertools.takewhile(lambda t: t[0] == t[1],
                                                       zip(x1, y1))])
            p, a, b = x1[:n], x1[n:], y1[n:]
            if not p or len(x) <= len(a) or tuple(x[len(x) - len(a):]) != tuple(a):
                continue
            q = tuple(x[:len(x) - len(a)])
            f = q + tuple(b)
            if f in s and (not context or q[-1] == p[-1]):
                s[f] += 1
    return s


def random_paradigm(rng):
    roots = [f"R{i}" for i in range(6)]
    cells = [(), ("A",), ("B",)]
    train = []
    for r in roots:
        stem = tuple(rng.choice("ptkan") for _ in range(rng.randint(1, 3)))
        for c in cells:
            if rng.random() < 0.8:
                suffix = {(): (), ("A",): tuple(rng.choice(["a", "ta", "na"])),
                          ("B",): tuple(rng.choice(["i", "ti"]))}[c]
                train.append(((r,) + c, stem + suffix))
    return train


@pytest.mark.parametrize("seed", range(25))
def test_supports_equal_the_brute_force_reading_of_the_definition(seed):
    rng = random.Random(seed)
    train = random_paradigm(rng)
    for morphemes in [("R9", "A"), ("R9", "B"), ("R9",)]:
        base = tuple(rng.choice("ptkan") for _ in range(2))
        train9 = train + [(("R9",) + c, base + sfx) for c, sfx in [((), ()), (("A",), ("a",))]
                          if ("R9",) + c != morphemes]
        forms = [base + tuple(x) for x in ["a", "ta", "na", "i", "ti", ""]]
        rng.shuffle(forms)
        assert analogy_support(train9, morphemes, forms) == \
            brute_support(train9, morphemes, forms)


def test_a_form_without_alternatives_keeps_all_the_weight():
    train = [(("R1",), tuple("pan")), (("R1", "F"), tuple("panta"))]
    got = analogy_choice(train, {"R2 F": ("R2", "F")}, {"R2 F": [tuple("bana")]})
    assert got == {"R2 F": [(tuple("bana"), 1.0)]}


def test_one_segment_of_context_keeps_the_affix_from_carrying_a_change():
    words = {"ro": ("ro", "roz", "roɪŋ"), "kal": ("kal", "kalz", "kalɪŋ"),
             "tɪp": ("tɪp", "tɪps", "tɪpɪŋ")}
    train = []
    for i, (bare, s3, prog) in enumerate(words.values()):
        train += [((f"R{i}",), tuple(bare)), ((f"R{i}", "3SG"), tuple(s3)),
                  ((f"R{i}", "PROG"), tuple(prog))]
    train += [(("R9",), tuple("lɪft")), (("R9", "PROG"), tuple("lɪftɪŋ"))]
    forms = [tuple("lɪfts"), tuple("lɪftz")]
    good = analogy_support(train, ("R9", "3SG"), forms)
    assert good == brute_support(train, ("R9", "3SG"), forms)
    assert good[tuple("lɪftz")] == 0
    broken = brute_support(train, ("R9", "3SG"), forms, context=False)
    assert max(broken, key=broken.get) == tuple("lɪftz")  # the control is told apart


PLAIN = {"R1": "mal", "R2": "sɛk", "R3": "pɔk", "R4": "tot", "R5": "kas", "R12": "sin"}
NT = {"R6": "kən", "R7": "pan", "R8": "lun", "R10": "sen"}


def deletion_run(nt: dict) -> RuleRun:
    """t → ∅ / n _ # with the true URs: R9 [ban] seen only bare, its feminine held out."""
    pairs = []
    for r, bare in {**PLAIN, **nt}.items():
        pairs += [((r,), bare), ((r, "FEM"), bare + ("tə" if r in nt else "ə"))]
    pairs += [(("R9",), "ban"), (("R9", "FEM"), "bantə")]
    para = Paradigm.from_pairs(pairs)
    symbols = sorted({x for e in para.entries for x in e.segments})
    urs = {r: list(b) + (["t"] if r in nt else []) for r, b in {**PLAIN, **nt}.items()}
    urs.update({"R9": list("ban"), "FEM": ["ə"]})
    rule = {"text": "t → ∅ / n_#", "mapping": [["t", ""]], "insert": "", "left": ["n"],
            "right": ["#"], "tier": None}
    g = grammar_from_dict({"format": FORMAT, "symbols": symbols, "underlying_forms": urs,
                           "rules": [rule], "train_correct": 0, "train_words": 0,
                           "description_length": 0.0})
    held = [e for e in para.entries if e.key == "R9 FEM"]
    return RuleRun(g, held, {}, [e for e in para.entries if e.key != "R9 FEM"])


def test_the_other_n_final_roots_decide_a_root_seen_only_bare():
    run = deletion_run(NT)
    assert all(run.grammar.predict(e.morphemes) == e.surface for e in run.train)
    assert run.cascade_predictions()["R9 FEM"] == "banə"
    forms = run.heldout_forms()["R9 FEM"]
    assert set(forms) >= {"banə", "bantə"}  # the rules leave /ban/ vs /bant/ open
    ranked = run.ranked_forms()["R9 FEM"]
    assert ranked[0][0] == "bantə" and math.isclose(sum(q for _, q in ranked), 1.0)
    assert dict(ranked)["bantə"] == 4 / 6  # four /-nt/ roots against the cascade's one
    assert run.predictions()["R9 FEM"] == "bantə"


def test_without_n_final_roots_the_cascade_keeps_its_choice():
    run = deletion_run({})
    assert len(run.heldout_forms()["R9 FEM"]) > 1
    assert run.ranked_forms()["R9 FEM"][0][0] == "banə"
    assert run.predictions()["R9 FEM"] == run.cascade_predictions()["R9 FEM"] == "banə"


def test_the_command_line_prints_and_saves_the_weights(tmp_path, capsys):
    run = deletion_run(NT)
    lines = [f"{e.key}\t{e.surface}" for e in run.train + run.held_out]
    para_file, g_file, js = tmp_path / "cat.tsv", tmp_path / "g.json", tmp_path / "o.json"
    para_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    g_file.write_text(json.dumps(grammar_to_dict(run.grammar)), encoding="utf-8")
    para = Paradigm.from_pairs([(e.morphemes, e.surface) for e in run.train + run.held_out])
    seed = next(s for s in range(200) if "R9 FEM" in holdout_split(para, 0.1, s))
    assert main(["rules", str(para_file), "--grammar", str(g_file), "--holdout", "0.1",
                 "--seed", str(seed), "--json", str(js), "--quiet"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "R9 FEM" in x)
    word = next(w for w in json.loads(js.read_text(encoding="utf-8"))["holdout"]["words"]
                if w["key"] == "R9 FEM")
    assert word["forms"][:2] == ["bantə", "banə"] and math.isclose(sum(word["weights"]), 1)
    assert word["weights"][0] > word["weights"][1] > 0
    assert line.split()[2] == "bantə" and (
        f"(undecided: bantə {word['weights'][0]:.2f} | banə {word['weights'][1]:.2f}" in line)
