"""Every loader of a JSON or model file a user can pass survives mutated files.

Each loader reads a good file written by strgm's own writer on a tiny input (module
fixture), mutated by :mod:`tests.robustness.json_mutations` (a key deleted, a value of
another type, extreme numbers, ``NaN``/``1e400`` tokens, huge integers, a huge list, deep
nesting; truncation, byte flips, bytes that are not UTF-8). The property: the load either
succeeds or raises a :class:`~strgm.errors.StrgmError` whose message is one line; never
another exception, and never longer than a time limit. Where the loaded object has a cheap
query (a belief's probabilities), its answers are checked to make sense.

Each loader also has a broken variant — the loader with its conversion of malformed
input into :class:`~strgm.errors.InputError` removed (monkeypatched) — for which the same
fuzz finds a counterexample, so each fuzz test can fail.

Defects the fuzz found have a reproducer each (``test_known_*``), kept as regression
tests now that they are fixed. ``KNOWN`` lists defects not yet fixed: files that trigger
one are left out of the fuzz (so that it keeps looking for others), and the reproducer is
marked strict-xfail until the fix.

Loaders of the inventory (see the module's ``LOADERS``): phonology model
(``PhonologyEditModel.load``, ``strgm infer --model``: its recorded UR prior too), EM
checkpoint (``load_checkpoint``), saved beliefs (``load_beliefs``, and the manifest check
of ``--save-beliefs``), HMM model (``hmm.model_file.load_model``, ``--prior hmm:MODEL``),
HMM / TSG / PCFG sampler / PCFG estimator checkpoints, TSG model, rule grammar
(``strgm rules --grammar``).
"""

from __future__ import annotations

import contextlib
import json
import random
import shutil
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from strgm.errors import StrgmError
from tests.robustness import json_mutations as jm
from tests.robustness.harness import run_cli

TIME_LIMIT = 20  # seconds a single load (and its query) may take
EXAMPLES = 60  # per loader in the default run
SLOW_EXAMPLES = 400

GRAMMAR = "S --> A B\nS --> S S\nA --> a\nA --> b\nB --> a\nB --> b\n"
WORDS = "R1\tpata\nR1 PL\tpatas\nR2\tkiti\nR2 PL\tkitis\n"


# ------------------------------------------------------------------ good files
@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    """A directory of good files, each written by strgm itself on a tiny input."""
    d = tmp_path_factory.mktemp("good")
    (d / "g.lt").write_text(GRAMMAR)
    (d / "c.yld").write_text("a b\nb a\na b a b\n")
    (d / "s.txt").write_text("a b\nb a\na a b\n")
    (d / "t.mrg").write_text("(S (A a) (B b))\n(S (A b) (B a))\n")
    (d / "w.tsv").write_text(WORDS)
    for argv in (["hmm", "train", d / "s.txt", "--save", d / "hmm.json", "--iters", "2", "-L", "3",
                  "--checkpoint", d / "hmm_ck.json"],
                 ["tsg", "train", d / "t.mrg", "--save", d / "tsg.json", "--iters", "2",
                  "--checkpoint", d / "tsg_ck.json"],
                 ["pcfg", "train", d / "g.lt", d / "c.yld", "--iters", "2", "--method",
                  "em", "--checkpoint", d / "em_ck.json"],
                 ["pcfg", "train", d / "g.lt", d / "c.yld", "--iters", "2", "--method",
                  "gibbs", "--checkpoint", d / "gibbs_ck.json"],
                 ["train", d / "w.tsv", "--em-iters", "1", "--save", d / "phon.json",
                  "--checkpoint", d / "phon_ck.json"],
                 ["rules", d / "w.tsv", "--save", d / "rules.json"]):
        o = run_cli([*argv, "--quiet"])
        assert o.code == 0, (argv, o.stderr)
    _save_beliefs(d / "beliefs")
    return d


def _save_beliefs(d: Path) -> None:
    import fst_factors.transducers as ff
    from fst_factors.alphabet import Alphabet
    from strgm.graph import FactorGraph
    from strgm.inference import infer

    alph = Alphabet(["a", "b"], boundary="+")
    g = FactorGraph(alph)
    for v in ("M1", "M2"):
        g.add_variable(v)
        g.add_unary(f"p{v}", v, ff.geometric_unigram_prior(alph.size, 1.0))
    infer(g, "bp").save(d)


# ------------------------------------------------------------------ the loaders
def _phonology(path):
    from strgm.models.edit_model import PhonologyEditModel

    return PhonologyEditModel.load(str(path))


def _infer_model(path):
    """What ``strgm infer --model`` reads of a model: its recorded UR prior, then the
    model itself."""
    from strgm.models.ur_prior import prior_from_record, recorded_prior

    record = recorded_prior(str(path))
    if record:
        prior_from_record(record, str(path))
    return _phonology(path)


def _em_checkpoint(path):
    from strgm.models.em_checkpoint import load_checkpoint

    return load_checkpoint(str(path))


def _beliefs(path):
    """``path`` is the mutated manifest; the directory beside it is loaded, and every
    belief answers a query."""
    from strgm.inference.result import load_beliefs

    r = load_beliefs(path.parent)
    for name in r.variables:
        for _, p in r.belief(name).kbest(3):
            assert 0.0 <= p <= 1.0 + 1e-9, (name, p)
    return r


def _save_target(path):
    """What ``--save-beliefs DIR`` reads of an earlier save in DIR: its manifest, to tell
    the files it owns from foreign ones."""
    from strgm.cli.saved_dir import check_beliefs_dir

    return check_beliefs_dir(path.parent, force=True)


def _hmm_model(path):
    from strgm.hmm.model_file import load_model

    return load_model(path)


def _hmm_prior(path):
    from strgm.models.ur_prior import load_hmm_prior

    return load_hmm_prior(str(path))


def _hmm_checkpoint(path):
    from strgm.hmm.state import HMMState

    return HMMState.load(path)


def _tsg_model(path):
    from strgm.grammars.tsg.model_file import load_model

    return load_model(path)


def _tsg_checkpoint(path):
    from strgm.grammars.tsg.state import TSGState

    return TSGState.load(path)


def _sampler_checkpoint(path):
    from strgm.grammars.sampler_state import SamplerState

    return SamplerState.load(path)


def _estimator_checkpoint(path):
    from strgm.grammars.estimator_state import EstimatorState

    return EstimatorState.load(path)


def _rule_grammar(path):
    from strgm.cli.rules import _load

    return _load(str(path))


#: name -> (good file in the fixture directory, loader of a path)
LOADERS = {
    "phonology_model": ("phon.json", _phonology),
    "infer_model": ("phon.json", _infer_model),
    "em_checkpoint": ("phon_ck.json", _em_checkpoint),
    "beliefs": ("beliefs/beliefs.json", _beliefs),
    "save_beliefs_target": ("beliefs/beliefs.json", _save_target),
    "hmm_model": ("hmm.json", _hmm_model),
    "hmm_prior": ("hmm.json", _hmm_prior),
    "hmm_checkpoint": ("hmm_ck.json", _hmm_checkpoint),
    "tsg_model": ("tsg.json", _tsg_model),
    "tsg_checkpoint": ("tsg_ck.json", _tsg_checkpoint),
    "pcfg_sampler_checkpoint": ("gibbs_ck.json", _sampler_checkpoint),
    "pcfg_estimator_checkpoint": ("em_ck.json", _estimator_checkpoint),
    "rule_grammar": ("rules.json", _rule_grammar),
}


# ------------------------------------------------------------------ the property
class _TimeUp(BaseException):
    pass


@contextlib.contextmanager
def _time_limit(seconds: int):
    def up(signum, frame):
        raise _TimeUp()
    old = signal.signal(signal.SIGALRM, up)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def check_load(load, path: Path) -> None:
    """The property: ``load(path)`` succeeds, or raises a StrgmError of one line; any
    other outcome is an AssertionError naming it."""
    try:
        with _time_limit(TIME_LIMIT):
            load(path)
    except StrgmError as e:
        msg = str(e)
        assert msg and "\n" not in msg, f"a StrgmError of {msg.count(chr(10)) + 1} lines"
    except _TimeUp:
        raise AssertionError(f"load took more than {TIME_LIMIT} s") from None
    except AssertionError:
        raise
    except BaseException as e:  # noqa: BLE001 - RecursionError, MemoryError, ... too
        raise AssertionError(f"{type(e).__name__}: {str(e)[:200]}") from None


class Case:
    """A loader's working copy: the good file's directory copied once, the mutated file
    written over the copy of the good one for each example."""

    def __init__(self, good: Path, name: str, tmp: Path):
        self.name = name
        rel, self.load = LOADERS[name]
        self.blob = (good / rel).read_bytes()
        src = (good / rel).parent
        work = tmp / name
        if src != good:  # a directory of its own (saved beliefs): copy it whole
            shutil.copytree(src, work / src.name)
        else:
            work.mkdir()
            for f in good.iterdir():  # files a model may name beside it
                if f.is_file():
                    shutil.copy(f, work / f.name)
        self.path = work / rel

    def check(self, blob: bytes) -> None:
        self.path.write_bytes(blob)
        check_load(self.load, self.path)


@st.composite
def mutated(draw, blob: bytes):
    kind = draw(st.sampled_from(jm.KINDS))
    return jm.mutate(blob, kind, lambda lo, hi: draw(st.integers(lo, hi)),
                     lambda s: draw(st.sampled_from(s)))


def fuzz(case: Case, examples: int, shrink: bool = True) -> None:
    """Run the property on ``examples`` mutations of the case's good file (hypothesis,
    derandomised, so a run is reproducible)."""
    phases = (Phase.explicit, Phase.generate) + ((Phase.shrink,) if shrink else ())

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              phases=phases, suppress_health_check=list(HealthCheck))
    @given(mutated(case.blob))
    def run(blob):
        assume(not _known(case.name, case.blob, blob))
        case.check(blob)

    run()


# ------------------------------------------------------------------ broken variants
def _raw_load_json_state(path, what, build, advice="", expect=()):
    """:func:`strgm.chains.codec.load_json_state` without its checks: the parse
    handed to ``build`` as it comes, no error turned into an InputError."""
    return build(json.loads(Path(path).read_bytes()))


def _broken_json_state(module: str):
    def patch(monkeypatch):
        monkeypatch.setattr(f"{module}.load_json_state", _raw_load_json_state)
    return patch


def _broken_phonology(monkeypatch):
    from strgm.models.edit_model import PhonologyEditModel

    monkeypatch.setattr(PhonologyEditModel, "load", classmethod(
        lambda cls, path: cls.from_dict(json.loads(Path(path).read_bytes()), path)))


def _broken_em(monkeypatch):
    from strgm.models import em_checkpoint
    from strgm.models.edit_model import PhonologyEditModel

    def raw(path):
        d = json.loads(Path(path).read_bytes())
        return em_checkpoint.Checkpoint(PhonologyEditModel.from_dict(d["model"], path),
                                        d["trace"], d["iteration"], d.get("stop"),
                                        d.get("settings"))
    monkeypatch.setattr(em_checkpoint, "load_checkpoint", raw)


def _broken_beliefs(monkeypatch):
    monkeypatch.setattr("strgm.inference.saved._read_index",
                        lambda d: json.loads((Path(d) / "beliefs.json").read_bytes()))


def _broken_save_target(monkeypatch):
    def raw(d):
        index = json.loads((Path(d) / "beliefs.json").read_bytes())
        return {"beliefs.json"} | {v["file"] for v in index["variables"].values()}
    monkeypatch.setattr("strgm.inference.saved.owned_entries", raw)


def _broken_rules(monkeypatch):
    from strgm.models.rule_phonology import grammar_from_dict

    monkeypatch.setattr("strgm.cli.rules._load", lambda path: grammar_from_dict(
        json.loads(Path(path).read_bytes()), path))


#: loader -> a monkeypatch that removes its checks (the broken variant)
BROKEN = {
    "phonology_model": _broken_phonology,
    "infer_model": _broken_phonology,
    "em_checkpoint": _broken_em,
    "beliefs": _broken_beliefs,
    "save_beliefs_target": _broken_save_target,
    "hmm_model": _broken_json_state("strgm.hmm.model_file"),
    "hmm_prior": _broken_json_state("strgm.hmm.model_file"),
    "hmm_checkpoint": _broken_json_state("strgm.chains.codec"),  # ChainState.load
    "tsg_model": _broken_json_state("strgm.grammars.tsg.model_file"),
    "tsg_checkpoint": _broken_json_state("strgm.chains.codec"),  # ChainState.load
    "pcfg_sampler_checkpoint": _broken_json_state("strgm.chains.codec"),  # ChainState.load
    "pcfg_estimator_checkpoint": _broken_json_state("strgm.chains.codec"),  # ChainState.load
    "rule_grammar": _broken_rules,
}


# ------------------------------------------------------------------ known defects
def _deep(good, bad, blob: bytes) -> bool:
    return b"[" * 900 in blob


def _overflowing(good, bad, blob: bytes) -> bool:
    return b"9" * 300 in blob or b"1e400" in blob


def _infinity(good, bad, blob: bytes) -> bool:
    return b"Infinity" in blob


def _int64_hyper(good, bad, blob: bytes) -> bool:
    return isinstance(bad, dict) and any(
        isinstance(bad.get(k), int) and not -2 ** 63 <= bad[k] < 2 ** 64
        for k in ("alpha", "gamma", "kappa", "lam"))


def _boundary(good, bad, blob: bytes) -> bool:
    return bad is not None and any(p[-1] == "boundary" and not isinstance(v, (str, type(None)))
                                   for p, v in jm.paths(bad))


def _many_symbols(good, bad, blob: bytes) -> bool:
    return bad is not None and any(p[-1] == "symbols" and isinstance(v, (list, str))
                                   and len(v) >= 10 ** 4 for p, v in jm.paths(bad))


def _changed(*prefix):
    def affects(good, bad, blob: bytes) -> bool:
        try:
            return jm.get(bad, prefix) != jm.get(good, prefix)
        except (KeyError, IndexError, TypeError):
            return False
    return affects


CHECKPOINTS = {"hmm_checkpoint", "tsg_checkpoint", "pcfg_sampler_checkpoint"}

#: defect -> (which mutated files it affects: f(good tree, mutated tree or None, bytes),
#: the loaders it reaches). Their files are left out of the fuzz (``assume``), so that it
#: looks for other defects; each defect has a strict-xfail reproducer below
#: (``test_known_*``), which passes once the defect is fixed.
KNOWN: dict = {}  # every defect the fuzz found is fixed; its test_known_* stays


def _known(name: str, good_blob: bytes, blob: bytes) -> bool:
    good = json.loads(good_blob)
    try:
        bad = json.loads(blob)
    except (ValueError, RecursionError):
        bad = None
    return any(name in loaders and affects(good, bad, blob)
               for affects, loaders in KNOWN.values())


@pytest.mark.parametrize("name", list(LOADERS))
def test_every_mutated_file_loads_or_is_one_clean_error(good, tmp_path, name):
    fuzz(Case(good, name, tmp_path), EXAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(LOADERS))
def test_every_mutated_file_loads_or_is_one_clean_error_more(good, tmp_path, name):
    fuzz(Case(good, name, tmp_path), SLOW_EXAMPLES)


@pytest.mark.parametrize("name", list(LOADERS))
def test_the_good_file_loads(good, tmp_path, name):
    """Control: the unmutated file loads (so a refusal of every mutation would show)."""
    case = Case(good, name, tmp_path)
    case.load(case.path)


@pytest.mark.parametrize("name", list(LOADERS))
def test_every_kind_of_mutation_changes_the_file(good, name):
    """Control of the mutations: each kind, with a seeded generator, yields files other
    than the good one (a mutation that did nothing would make the fuzz vacuous)."""
    blob = (good / LOADERS[name][0]).read_bytes()
    rng = random.Random(0)
    for kind in jm.KINDS:
        outs = {jm.mutate(blob, kind, rng.randint, rng.choice) for _ in range(8)}
        assert outs - {blob}, kind


@pytest.mark.parametrize("name", list(LOADERS))
def test_the_fuzz_finds_a_counterexample_in_a_broken_loader(good, tmp_path, monkeypatch,
                                                           name):
    """The broken variant: the loader with its checks removed fails the same fuzz."""
    BROKEN[name](monkeypatch)
    case = Case(good, name, tmp_path)
    case.load(case.path)  # the good file still loads
    with pytest.raises(AssertionError):
        fuzz(case, EXAMPLES, shrink=False)


def _edited(good, tmp_path, name: str, edit) -> Case:
    case = Case(good, name, tmp_path)
    tree = json.loads(case.blob)
    edit(tree)
    case.path.write_bytes(jm.dumps(tree))
    return case


def _set_symbols(tree):
    alphabet = tree["alphabet"] if "alphabet" in tree else tree["alphabets"][0]
    alphabet["symbols"] = ["a"] * 10 ** 5


@pytest.mark.parametrize("name", ["phonology_model", "beliefs"])
def test_known_an_alphabet_of_many_copies_is_refused_fast(good, tmp_path, name):
    case = _edited(good, tmp_path, name, _set_symbols)
    try:
        with _time_limit(5), pytest.raises(StrgmError, match="duplicate symbols"):
            case.load(case.path)
    except _TimeUp:
        pytest.fail("refused after more than 5 s")


@pytest.mark.parametrize("name", list(LOADERS))
def test_known_deeply_nested_json_is_one_clean_error(good, tmp_path, name):
    case = Case(good, name, tmp_path)
    check_load(case.load, _write(case, b"[" * 10 ** 5 + b"]" * 10 ** 5))


def _write(case: Case, blob: bytes) -> Path:
    case.path.write_bytes(blob)
    return case.path


@pytest.mark.parametrize("name", sorted(CHECKPOINTS | {"tsg_model"}))
@pytest.mark.parametrize("field, value", [("has_uint32", 2 ** 31), ("uinteger", 2 ** 70)])
def test_known_an_rng_state_out_of_range_is_one_clean_error(good, tmp_path, name, field,
                                                           value):
    case = _edited(good, tmp_path, name, lambda t: t.get("rng_state", t.get("state", {})
                                                         .get("rng_state")).__setitem__(
        field, value))
    check_load(case.load, case.path)


@pytest.mark.parametrize("name", ["hmm_model", "hmm_prior"])
@pytest.mark.parametrize("value", [[4], None])
def test_known_emissions_size_of_another_type_is_one_clean_error(good, tmp_path, name,
                                                                value):
    case = _edited(good, tmp_path, name, lambda t: t["emissions"].__setitem__("V", value))
    check_load(case.load, case.path)


@pytest.mark.parametrize("value", ["x", [], None])
def test_known_rule_grammar_forms_not_an_object_is_one_clean_error(good, tmp_path, value):
    case = _edited(good, tmp_path, "rule_grammar",
                   lambda t: t.__setitem__("underlying_forms", value))
    check_load(case.load, case.path)


@pytest.mark.parametrize("value", [[1], {}])
def test_known_a_manifest_file_name_of_another_type_is_one_clean_error(good, tmp_path,
                                                                      value):
    case = _edited(good, tmp_path, "save_beliefs_target",
                   lambda t: t["variables"]["M1"].__setitem__("file", value))
    check_load(case.load, case.path)


HUGE = "9" * 400  # an integer no float holds
OVERFLOWS = [("phonology_model", ("theta", 0, 1), HUGE),
             ("phonology_model", ("theta", 1, 0, 1), "1e400"),
             ("em_checkpoint", ("trace", 0, "objective"), HUGE),
             ("beliefs", ("variables", "M1", "log_z"), HUGE),
             ("hmm_model", ("settings", "alpha"), HUGE),
             ("hmm_prior", ("emissions", "V"), "1e400"),
             ("hmm_checkpoint", ("alpha",), HUGE),
             ("tsg_model", ("state", "last_accept"), HUGE),
             ("tsg_checkpoint", ("alpha", 0), HUGE),
             ("pcfg_sampler_checkpoint", ("counts", 0), HUGE),
             ("pcfg_estimator_checkpoint", ("theta", 0), HUGE),
             ("rule_grammar", ("train_correct",), "1e400"),
             ("rule_grammar", ("description_length",), HUGE)]


@pytest.mark.parametrize("name, path, token", OVERFLOWS,
                         ids=[f"{n}-{'.'.join(map(str, p))}-{t[:5]}" for n, p, t in OVERFLOWS])
def test_known_an_overflowing_number_is_one_clean_error(good, tmp_path, name, path, token):
    case = _edited(good, tmp_path, name, lambda t: jm._set(t, path, jm.raw(token)))
    check_load(case.load, case.path)


def test_known_rule_grammar_with_infinity_is_one_clean_error(good, tmp_path):
    case = _edited(good, tmp_path, "rule_grammar",
                   lambda t: t.__setitem__("train_words", jm.raw("Infinity")))
    check_load(case.load, case.path)


@pytest.mark.parametrize("value", [-10 ** 30, 10 ** 30])
def test_known_hmm_checkpoint_hyper_beyond_int64_is_one_clean_error(good, tmp_path, value):
    case = _edited(good, tmp_path, "hmm_checkpoint", lambda t: t.__setitem__("alpha", value))
    check_load(case.load, case.path)


def test_known_hmm_prior_vocabulary_entry_of_another_type_is_one_clean_error(good,
                                                                             tmp_path):
    case = _edited(good, tmp_path, "hmm_prior", lambda t: t["vocab"].__setitem__(-1, ["x"]))
    check_load(case.load, case.path)


def _set_boundary(value):
    def edit(tree):
        alphabet = tree["alphabet"] if "alphabet" in tree else tree["alphabets"][0]
        alphabet["boundary"] = value
    return edit


@pytest.mark.parametrize("name", ["phonology_model", "infer_model"])
@pytest.mark.parametrize("value", [1, 2.5])
def test_known_an_alphabet_boundary_of_another_type_is_one_clean_error(good, tmp_path, name,
                                                                      value):
    case = _edited(good, tmp_path, name, _set_boundary(value))
    check_load(case.load, case.path)
