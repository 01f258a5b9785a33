"""The tests mirror the packages (tests/README.md): every folder directly under tests/ is
named after a package of strgm (tests/inference for strgm/inference, ...) or is
fst_factors, or is one of the few cross-cutting folders listed below; and every test
folder is a Python package, so test modules are imported by their dotted path
(``tests.models.test_em``) and helpers as ``from tests.<folder>.<module> import ...``.
Each check is also shown to fail on a bad tree."""

from pathlib import Path

from tests.architecture.hygiene import ROOT

#: folders under tests/ whose subject is not one package, and why
CROSS_CUTTING = {
    "architecture": "the house rules of docs/architecture.md, over the whole tree",
    "core": "strgm's top-level modules (strgm/*.py: graph, factors, progress, display, ...)",
    "robustness": "bad inputs and fault injection across every command",
}
#: folders that hold no tests of their own
NOT_TEST_FOLDERS = {"__pycache__", "data"}


def packages() -> set:
    """strgm's subpackages, and fst_factors."""
    return {p.parent.name for p in (ROOT / "strgm").glob("*/__init__.py")} | {"fst_factors"}


def misplaced_folders(tests: Path, allowed: set) -> list:
    """Folders directly under ``tests`` that are neither a package's nor allowed."""
    return sorted(p.name for p in tests.iterdir()
                  if p.is_dir() and not p.name.startswith(".")
                  and p.name not in allowed | {"__pycache__"})


def folders_without_init(tests: Path) -> list:
    """Folders of test code (a ``.py`` file in them) that are not packages."""
    return sorted(str(d.relative_to(tests.parent)) for d in [tests, *tests.rglob("*")]
                  if d.is_dir() and not NOT_TEST_FOLDERS & set(d.relative_to(tests).parts)
                  and any(d.glob("*.py")) and not (d / "__init__.py").exists())


def test_every_folder_under_tests_is_a_package_or_cross_cutting():
    assert "inference" in packages() and "cli" in packages()
    assert misplaced_folders(ROOT / "tests", packages() | set(CROSS_CUTTING)) == []


def test_every_test_folder_is_a_package():
    assert folders_without_init(ROOT / "tests") == []


def test_the_layout_checks_can_fail(tmp_path):
    tests = tmp_path / "tests"
    for d in ("inference", "foundation", "robustness", "inference/deep", "inference/data",
              "__pycache__"):
        (tests / d).mkdir(parents=True)
    for f in ("__init__.py", "inference/__init__.py", "inference/test_a.py",
              "inference/deep/test_b.py", "foundation/test_c.py", "inference/data/gen.py"):
        (tests / f).write_text("", encoding="utf-8")
    assert misplaced_folders(tests, packages() | set(CROSS_CUTTING)) == ["foundation"]
    assert folders_without_init(tests) == ["tests/foundation", "tests/inference/deep"]
