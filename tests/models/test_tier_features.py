"""Harmony templates over single vowel features (back, round, high) of the output and the
tier: every indicator agrees with the feature table (brute force over the events), and
back harmony learned after front unrounded stems carries over to front rounded ones,
which the (back, round) class templates cannot do."""

import pytest

from fst_factors.alphabet import Alphabet
from strgm.datasets.paradigm import Paradigm
from strgm.errors import InputError
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.ipa_features import feature_table
from fst_factors.transducers import edit_features
from fst_factors.transducers.edit_actions import COPY, INS, SUB
from strgm.workflows.training import train_paradigm

SYMS = ["k", "n", "a", "o", "u", "i", "e", "y", "ø"]
_NEW = ("out_bkT", "out_bkTx", "out_rdT", "out_rdTh", "ins_bkT")


def _model(on=True, alphabet=None):
    m = PhonologyEditModel(alphabet or Alphabet(SYMS))
    return PhonologyEditModel(m.alphabet, m.spec, dict(m.classes, tier_features=on))


def _expected(st, syms):
    """Brute force: for every event, the names of the new templates that must fire,
    read off the IPA feature table (the tier context T decoded through a vowel whose
    tier class it is)."""
    table = feature_table(syms, warn=False)
    info = st.info
    tier_vowel = {int(info.tier[i]): syms[i] for i in range(len(syms)) if info.tier[i] >= 0}
    a = st.ev_attrs
    out = []
    for e in range(st.num_events):
        kind, y, T, x = (int(a[k][e]) for k in ("kind", "y", "T", "x"))
        fy = table[syms[y - 1]] if 1 <= y <= len(syms) else None
        fT = table[tier_vowel[T]] if T in tier_vowel else None
        names = set()
        if fy and fy["type"] == "vowel" and fT:
            bk, bt = int(fy["back"]), int(fT["back"])
            rd, rt, hi = int(fy["round"]), int(fT["round"]), int(fy["high"])
            if kind in (COPY, SUB):
                names |= {("out_bkT", bk, bt), ("out_bkTx", bk, bt, x), ("out_rdT", rd, rt),
                          ("out_rdTh", rd, rt, hi)}
            if kind == INS:
                names.add(("ins_bkT", bk, bt))
        out.append(names)
    return out


def _fired(st):
    rows = st.features.tocsr()
    return [{st.feature_names[c] for c in rows.indices[rows.indptr[e]:rows.indptr[e + 1]]
             if st.feature_names[c][0] in _NEW} for e in range(st.num_events)]


def test_every_harmony_feature_agrees_with_the_feature_table():
    st = _model().structure
    fired = _fired(st)
    assert fired == _expected(st, SYMS)
    assert sum(map(len, fired)) > 1000  # the check is not vacuous


def test_a_broken_attribute_is_caught(monkeypatch):
    """Negative control: back and round of the tier swapped must disagree with the
    table (``a`` is back unrounded, ``y`` front rounded)."""
    real = edit_features._harmony_attributes

    def swapped(*args):
        d = real(*args)
        return dict(d, bkT=d["rdT"], rdT=d["bkT"])

    monkeypatch.setattr(edit_features, "_harmony_attributes", swapped)
    from strgm.models import edit_model
    edit_model._CACHE.clear()
    st = _model().structure
    assert _fired(st) != _expected(st, SYMS)
    edit_model._CACHE.clear()


def test_off_adds_nothing():
    on, off = _model(True).structure, _model(False).structure
    assert not any(n[0] in _NEW for n in off.feature_names)
    assert set(off.feature_names) < set(on.feature_names)


def test_saved_setting_round_trips_and_is_checked(tmp_path):
    m = _model(True).initial()
    m.save(str(tmp_path / "m.json"))
    assert PhonologyEditModel.load(str(tmp_path / "m.json")).classes["tier_features"] is True
    d = m.to_dict()
    d["classes"]["tier_features"] = "yes"
    with pytest.raises(InputError, match="tier_features"):
        PhonologyEditModel.from_dict(d, "m.json")


def _gap_paradigm():
    """Back harmony of the suffix -nak/-nek; most stems are back. Front rounded stems
    occur bare only (their suffixed forms are held out), so only a template over the
    back feature alone carries harmony from front unrounded stems to them."""
    back = ["kak", "kok", "kuk", "nak", "nok", "nuk", "kan", "kon", "kun", "nan", "non",
            "nun", "kakak", "kokok", "kukuk", "nanak", "nonok"]
    front = ["kik", "kek", "nin", "nen", "kin", "ken"]
    rounded = ["kyk", "køk", "nyn", "nøn"]
    pairs = []
    for i, s in enumerate(back + front + rounded):
        suf = "nak" if s in back else "nek"
        pairs += [((f"R{i}",), s), ((f"R{i}", "DAT"), s + suf)]
    return Paradigm.from_pairs(pairs, "<back harmony, rounded gap>")


@pytest.mark.slow
def test_back_harmony_generalises_to_front_rounded_stems():
    para = _gap_paradigm()
    held = sorted(e.key for e in para.entries if len(e.morphemes) == 2
                  and set(e.surface) & set("yø"))
    runs = {on: train_paradigm(para, "pruned", held, model=_model(on, para.alphabet()).initial(), em_iters=3, l2=0.1, infer_opts={"max_iters": 3})
        for on in (True, False)}
    assert runs[True].scores.exact_match == 1.0
    assert runs[False].scores.exact_match < 1.0  # the class templates cannot


def test_the_cli_option_reaches_the_saved_model_and_its_help_states_the_default(tmp_path):
    from strgm.cli import main
    from strgm.cli.train import DEFAULT_TIER_FEATURES
    from strgm.models.edit_model import DEFAULT_CLASSES

    assert DEFAULT_TIER_FEATURES is DEFAULT_CLASSES["tier_features"]
    f = tmp_path / "toy.tsv"
    f.write_text("R1\tkak\nR1 DAT\tkaknak\nR2\tkik\nR2 DAT\tkiknek\n", encoding="utf-8")
    for value, want in (("on", True), ("off", False), (None, DEFAULT_TIER_FEATURES)):
        model = tmp_path / f"{value}.json"
        opt = ["--tier-features", value] if value else []
        assert main(["train", str(f), "--em-iters", "0", *opt, "--save", str(model),
                     "--quiet", "--show-processes", "0", "--transparent", "none"]) == 0
        m = PhonologyEditModel.load(str(model))
        assert m.classes["tier_features"] is want
        assert any(n[0] == "out_bkT" for n in m.structure.feature_names) is want
