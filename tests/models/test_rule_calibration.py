"""Calibrated q over the forms a rule cascade leaves open (strgm.models.rule_calibration),
against brute force.

Oracles: q of equation (1) equals the Dirichlet–multinomial predictive computed as a
ratio of marginal likelihoods, each summed over every ordering of the draws with the
Pólya urn's sequential probabilities; ℓ of equation (2) equals the average of (1) over
every place of the cascade's vote; the leave-one-out forms equal
rule_ambiguity.heldout_forms run on the training words with the word really removed;
α̂ is the argmax of the objective on a dense scan that contains the grid. Negative
controls: a leave-one-out that keeps the word among the training words (no column
subtracted) gives other forms than the brute force; the uncalibrated weights print
"1.00" where the calibrated ones never do (the CLI tests could fail).
"""

from __future__ import annotations

import itertools
import math
import random
from types import SimpleNamespace

import numpy as np
import pytest

from strgm.models.rule_ambiguity import heldout_forms
from strgm.models.rule_analogy import analogy_support
from strgm.models import rule_calibration as rc
from strgm.models.rule_calibration import (GRID, MAX_Q, calibrated_forms,
                                           fit_concentration, loo_forms, loo_objective,
                                           loo_probability, posterior)
from tests.models.test_rule_analogy import NT, deletion_run


def urn_sequence_probability(seq, k, alpha) -> float:
    """P(x_1 … x_n) under the Pólya urn of Dirichlet(α/K, …, α/K), draw by draw."""
    counts, p = [0] * k, 1.0
    for i, x in enumerate(seq):
        p *= (counts[x] + alpha / k) / (i + alpha)
        counts[x] += 1
    return p


def dm_predictive(counts, alpha, f) -> float:
    """P(next draw = f | the draws have these counts): Σ P(s, f) / Σ P(s) over every
    distinct ordering s of the draws."""
    draws = [g for g, c in enumerate(counts) for _ in range(c)]
    orders = set(itertools.permutations(draws))
    k = len(counts)
    return (sum(urn_sequence_probability(s + (f,), k, alpha) for s in orders)
            / sum(urn_sequence_probability(s, k, alpha) for s in orders))


@pytest.mark.parametrize("seed", range(12))
def test_q_is_the_dirichlet_multinomial_predictive_by_enumeration(seed):
    rng = random.Random(seed)
    k = rng.randint(2, 4)
    counts = [rng.randint(0, 2) for _ in range(k)]
    counts[rng.randrange(k)] += 1  # the cascade's vote: at least one supporter
    alpha = rng.choice(GRID[20:])  # large enough that the MAX_Q bound is not binding
    got = posterior(counts, alpha)
    want = [dm_predictive(counts, alpha, f) for f in range(k)]
    assert max(got) < MAX_Q
    assert np.allclose(got, want, rtol=0, atol=1e-9)
    if len(set(counts)) > 1:  # negative controls: the old s/S, and α per form, differ
        assert not np.allclose([c / sum(counts) for c in counts], want, atol=1e-3)
        per_form = [(c + alpha) / (sum(counts) + k * alpha) for c in counts]
        assert not np.allclose(per_form, want, atol=1e-6)


def test_the_bound_holds_exactly_and_keeps_the_order():
    q = posterior([200, 1, 0], 1 / 64)
    assert math.isclose(max(q), MAX_Q, abs_tol=1e-12) and q[0] > q[1] > q[2] > 0
    assert math.isclose(sum(q), 1.0)
    assert math.isclose(posterior([1, 0], 1 / 64)[0], MAX_Q)  # one vote, no pairs
    assert posterior([1, 0], 1.0) == [0.75, 0.25]  # not binding: equation (1)
    assert posterior([3], 0.5) == [1.0]  # a decided word


@pytest.mark.parametrize("seed", range(12))
def test_the_loo_probability_averages_over_every_place_of_the_vote(seed):
    rng = random.Random(seed)
    k = rng.randint(2, 5)
    pairs = [rng.randint(0, 3) for _ in range(k)]
    o = rng.randrange(k)
    vote = [rng.randint(0, 1) for _ in range(k)]
    vote = [v / sum(vote) for v in vote] if any(vote) else [1 / k] * k
    for alpha in (GRID[0], 1.0, GRID[-1]):
        # q of equation (1) with the vote on c, averaged over c ~ vote
        want = sum(w * (pairs[o] + (c == o) + alpha / k) / (sum(pairs) + 1 + alpha)
                   for c, w in enumerate(vote))
        assert math.isclose(loo_probability(pairs, o, vote, alpha), want, rel_tol=0,
                            abs_tol=1e-12)
        # negative control: the vote on the observed form (what the learned URs would
        # leak) is another number unless the vote is already there
        if vote[o] < 1:
            leak = (pairs[o] + 1 + alpha / k) / (sum(pairs) + 1 + alpha)
            assert not math.isclose(leak, want, abs_tol=1e-6)


def test_the_fit_is_the_argmax_of_the_objective_on_a_dense_scan():
    rng = random.Random(3)
    cases = [([rng.randint(0, 2) for _ in range(2)], 0, [0.5, 0.5]) for _ in range(15)]
    dense = sorted(set(GRID) | {2.0 ** (k / 32) for k in range(-192, 321)})
    best = max(dense, key=lambda a: loo_objective(cases, a))
    a = fit_concentration(cases)
    assert loo_objective(cases, a) == max(loo_objective(cases, g) for g in GRID)
    assert abs(math.log2(a) - math.log2(best)) <= 0.25  # the grid's step
    want = sum(math.log(loo_probability(p, o, w, 1.0)) for p, o, w in cases)
    assert math.isclose(loo_objective(cases, 1.0), want + rc.log_prior(1.0))
    assert fit_concentration([]) == rc.PRIOR_CONCENTRATION  # no case: the prior's mode


def _labelled(run):
    g = run.grammar
    lab = {s: i + 1 for i, s in enumerate(g.symbols)}
    return [(e.morphemes, tuple(lab[x] for x in e.segments)) for e in run.train]


def brute_faithful(rest, ms, g, n) -> list:
    """Forms of every combination of consistent URs (on ``rest``) whose open URs each
    occur, contiguously, in a word of ``rest`` holding that morpheme."""
    from strgm.models.rule_ambiguity import consistent_urs

    def shown(m, u):
        return any(u == x[i:i + len(u)] for ms2, x in rest if m in ms2
                   for i in range(len(x) - len(u) + 1))

    sets = []
    for m in ms:
        c = consistent_urs(rest, g.urs, g.rules, m, n)
        sets.append(c if len(c) == 1 else [u for u in c if shown(m, u)])
    return {tuple(surface(g.rules, [a for u in combo for a in u], n))
            for combo in itertools.product(*sets)}


def surface(rules, ur, n):
    from strgm.models.rule_apply import apply_rules, pack, unpack

    return unpack(apply_rules(rules, pack([ur], n), n), n)[0]


@pytest.mark.parametrize("nt", [NT, {}])
def test_loo_forms_equal_heldout_forms_with_the_word_removed(nt):
    run = deletion_run(nt)
    g, words = run.grammar, _labelled(run)
    n = len(g.symbols)
    got = loo_forms(words, g.urs, g.rules, n)
    assert len(got) == len(words) - 1  # R9 FEM is held out: R9 [ban] is alone
    undecided = 0
    for i, (ms, _) in enumerate(words):
        rest = words[:i] + words[i + 1:]
        if all(any(m in ms2 for ms2, _ in rest) for m in ms):
            forms, faithful = got[i]
            assert forms == heldout_forms(rest, g.urs, g.rules, {i: ms}, n)[i]
            assert set(faithful) == brute_faithful(rest, ms, g, n)
            undecided += len(forms) > 1
            if len(forms) > 1:  # a bare n-final root: its faithful UR lacks the t
                assert len(faithful) == 1 and faithful[0][-2] != g.symbols.index("t") + 1
    assert undecided >= (4 if nt else 1)
    # negative control: the word left among the training words decides itself
    kept = {i: heldout_forms(words, g.urs, g.rules, {i: ms}, n)[i]
            for i, (ms, _) in enumerate(words) if i in got}
    assert kept != {i: f for i, (f, _) in got.items()}


@pytest.mark.parametrize("nt", [NT, {}])
def test_the_cases_are_the_definition_applied_word_by_word(nt):
    """Each case (n₋ᵥ, o, w) recomputed with the word removed: forms by heldout_forms,
    pairs by pair_support, the vote uniform on the brute-force faithful forms."""
    from strgm.models.rule_analogy import pair_support

    run = deletion_run(nt)
    g, words = run.grammar, _labelled(run)
    n = len(g.symbols)
    seg = {i + 1: x for i, x in enumerate(g.symbols)}
    train = [(e.morphemes, tuple(e.segments)) for e in run.train]
    want = []
    for i, (ms, x) in enumerate(words):
        rest = words[:i] + words[i + 1:]
        if not all(any(m in ms2 for ms2, _ in rest) for m in ms):
            continue
        forms = [tuple(seg[a] for a in f)
                 for f in heldout_forms(rest, g.urs, g.rules, {i: ms}, n)[i]]
        obs = tuple(seg[a] for a in x)
        if len(forms) < 2 or obs not in forms:
            continue
        ok = {tuple(seg[a] for a in f) for f in brute_faithful(rest, ms, g, n)}
        pairs = pair_support(train[:i] + train[i + 1:], ms, forms)
        vote = [f in ok for f in forms] if ok else [True] * len(forms)
        want.append(([pairs[f] for f in forms], forms.index(obs),
                     [v / sum(vote) for v in vote]))
    got = calibrated_forms(run).cases
    assert got == want and any(min(w) == 0 for _, _, w in got)


def test_calibrated_q_ranks_as_the_supports_and_learns_from_the_nt_roots():
    run = deletion_run(NT)
    cal = calibrated_forms(run)
    ranked = cal.ranked["R9 FEM"]
    assert [f for f, _ in ranked] == [f for f, _ in run.ranked_forms()["R9 FEM"]]
    assert ranked[0][0] == "bantə" and math.isclose(sum(q for _, q in ranked), 1.0)
    assert cal.cases and all(len(p) == len(w) >= 2 for p, _, w in cal.cases)
    forms = [tuple(f) for f in run.heldout_forms()["R9 FEM"]]  # the cascade's first
    s = analogy_support([(e.morphemes, tuple(e.segments)) for e in run.train],
                        ("R9", "FEM"), forms)
    assert (s[tuple("banə")], s[tuple("bantə")]) == (2, 4)  # the vote and [sin]; /-nt/
    want = dict(zip(forms, posterior(list(s.values()), cal.alpha)))
    assert all(math.isclose(q, want[tuple(f)]) for f, q in ranked)


def test_an_undecided_word_without_pairs_is_no_longer_certain():
    run = deletion_run({})
    old = run.ranked_forms()["R9 FEM"]
    assert old[0][1] == 1.0  # the uncalibrated weights: the cascade's form is "certain"
    new = calibrated_forms(run).ranked["R9 FEM"]
    assert [f for f, _ in new] == [f for f, _ in old]
    assert max(q for _, q in new) < 0.995 and min(q for _, q in new) > 0


def _holdout_file(tmp_path, run):
    from strgm.datasets.paradigm import Paradigm
    from strgm.models.phonology import holdout_split

    para = Paradigm.from_pairs([(e.morphemes, e.surface) for e in run.train + run.held_out])
    seed = next(s for s in range(200) if "R9 FEM" in holdout_split(para, 0.1, s))
    f = tmp_path / "cat.tsv"
    f.write_text("".join(f"{e.key}\t{e.surface}\n" for e in run.train + run.held_out),
                 encoding="utf-8")
    return f, seed


def _undecided_probabilities(text: str) -> list:
    notes = [x.split("(undecided: ")[1].rstrip(")") for x in text.splitlines()
             if "(undecided: " in x]
    return [p.rsplit(" ", 1)[1] for n in notes for p in n.split(" | ")]


@pytest.mark.parametrize("nt", [NT, {}])
def test_strgm_rules_prints_no_undecided_form_with_1_00(tmp_path, capsys, nt):
    import json

    from strgm.cli import main
    from strgm.cli.rules import undecided_note
    from strgm.models.rule_phonology import grammar_to_dict

    run = deletion_run(nt)
    f, seed = _holdout_file(tmp_path, run)
    g, js = tmp_path / "g.json", tmp_path / "o.json"
    g.write_text(json.dumps(grammar_to_dict(run.grammar)), encoding="utf-8")
    assert main(["rules", str(f), "--grammar", str(g), "--holdout", "0.1", "--seed",
                 str(seed), "--json", str(js), "--quiet"]) == 0
    probs = _undecided_probabilities(capsys.readouterr().out)
    assert probs and "1.00" not in probs
    word = next(w for w in json.loads(js.read_text(encoding="utf-8"))["holdout"]["words"]
                if w["key"] == "R9 FEM")
    assert probs[:len(word["weights"])] == [f"{q:.2f}" for q in word["weights"]]
    if not nt:  # negative control: the uncalibrated weights print 1.00 on this word
        old = run.ranked_forms()["R9 FEM"]
        assert "1.00" in _undecided_probabilities(
            undecided_note([f for f, _ in old], [q for _, q in old]))


def test_the_family_report_prints_the_q_it_scores(capsys):
    from strgm.cli.families import family_report

    run = deletion_run({})
    gold = {"R9 FEM": "bantə"}
    edit = {k: {"gold": v, "predicted": "x", "p_gold": 0.01} for k, v in gold.items()}
    train_run = SimpleNamespace(held_out={"R9 FEM": SimpleNamespace(surface="bantə")},
                                scores=SimpleNamespace(per_word=edit))
    job = SimpleNamespace(result=lambda progress=None: run)
    out = family_report(train_run, SimpleNamespace(done=lambda: None), job)
    w = out["family_choice"]["per_word"]["R9 FEM"]
    probs = _undecided_probabilities(capsys.readouterr().out)
    assert w["family"] == "rules" and probs and "1.00" not in probs
    assert probs == [f"{q:.2f}" for q in w["rules_weights"]]
    q = dict(zip(w["rules_forms"], w["rules_weights"]))
    eps = w["epsilon"]
    assert math.isclose(w["neg_logp"], -math.log((1 - eps) * q["bantə"] + eps * 0.01))
    assert q["bantə"] > 0.01  # the true form keeps a share of the rules' mass
    forms = [tuple(f) for f in run.heldout_forms()["R9 FEM"]]
    s = analogy_support([(e.morphemes, tuple(e.segments)) for e in run.train],
                        ("R9", "FEM"), forms)
    want = dict(zip(forms, posterior(list(s.values()),
                                     out["family_choice"]["concentration"])))
    assert all(math.isclose(x, want[tuple(f)]) for f, x in q.items())


def test_the_family_report_names_a_morpheme_seen_in_no_training_word(capsys, monkeypatch):
    """A held-out word whose morpheme no training word has gets no prediction: the report
    prints a dash and names the morpheme, never the text "None"; a word with a
    prediction gets no such note (the control)."""
    import strgm.workflows.family_choice as fc
    from strgm.cli.families import family_report

    run = deletion_run({})
    per_word = {"R9 FEM": {"gold": "bantə", "predicted": "bantə", "family": "edit",
                           "neg_logp": 0.1},
                "R99": {"gold": "xlep", "predicted": None, "family": "edit",
                        "neg_logp": math.inf}}
    choice = SimpleNamespace(rules=run, per_word=per_word, exact_match=0.5,
                             mean_neg_logp=math.inf, to_dict=lambda: {})
    monkeypatch.setattr(fc, "choose_family", lambda *a, **k: choice)
    edit = {"R9 FEM": {"gold": "bantə", "predicted": "bantə", "p_gold": 0.9},
            "R99": {"gold": "xlep", "predicted": None, "p_gold": 0.0,
                    "unseen_morphemes": ["R99"]}}
    train_run = SimpleNamespace(scores=SimpleNamespace(per_word=edit))
    family_report(train_run, SimpleNamespace(done=lambda: None), None)
    lines = {ln.split()[0]: ln for ln in capsys.readouterr().out.splitlines()
             if ln.startswith("  R")}
    assert "None" not in lines["R99"] and "  —  (edit)" in lines["R99"]
    assert "(no prediction: R99 in no training word)" in lines["R99"]
    assert "no prediction" not in lines["R9"]
