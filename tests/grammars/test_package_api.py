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
