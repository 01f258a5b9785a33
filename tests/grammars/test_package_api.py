"""strgm.grammars has a public package API and stays in its layer (docs/architecture.md)."""

import subprocess
import sys

import strgm.grammars as G


def test_every_public_name_is_importable():
    assert all(hasattr(G, n) for n in G.__all__)
    assert G.estimators.run is not G.samplers.run  # one driver, two families of kernels
    assert set(G.KERNELS) == {"em", "map", "vb", "cvb"}


def test_importing_grammars_loads_no_datasets_models_or_cli():
    code = ("import sys, strgm.grammars; "
            "print(sorted(m for m in sys.modules if m.startswith(('strgm.datasets', "
            "'strgm.models', 'strgm.cli', 'strgm.workflows'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out


def test_every_raise_in_the_package_is_a_strgm_error():
    """Every ``raise X(...)`` in strgm/grammars names a StrgmError subclass (or a helper
    returning one), never a bare ValueError/RuntimeError/TypeError/KeyError."""
    import ast
    import inspect
    from pathlib import Path

    import strgm.errors as errors
    from strgm.grammars.estimator_kernels import unparsable_corpus_error

    ok = {n for n, c in vars(errors).items()
          if inspect.isclass(c) and issubclass(c, errors.StrgmError)}
    assert isinstance(unparsable_corpus_error(1), errors.StrgmError)
    ok.add("unparsable_corpus_error")
    bad = []
    for f in sorted(Path(G.__file__).parent.glob("*.py")):
        for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call):
                name = getattr(n.exc.func, "id", None)
                if name not in ok:
                    bad.append(f"{f.name}:{n.lineno}: {name}")
    assert not bad, bad
