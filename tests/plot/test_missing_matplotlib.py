"""Without matplotlib every plotting function says what to install, and importing
strgm.plot (or drawing an SVG tree) does not need it."""

import subprocess
import sys

import pytest

from strgm.errors import MissingDependencyError, StrgmError
from strgm.plot import (check_figure_path, plot_belief, plot_convergence, plot_predictions,
                        plot_tradeoff, plot_tree, save_figure)

CALLS = {
    "plot_belief": lambda: plot_belief([("a", 0.5), ("b", 0.5)], k=2),
    "plot_convergence": lambda: plot_convergence([1.0, 0.5]),
    "plot_tradeoff": lambda: plot_tradeoff([(1.0, 0.5, "λ")]),
    "plot_predictions": lambda: plot_predictions(
        {"w": {"gold": "a", "predicted": "a", "p_gold": 1.0, "exact": True}}),
    "plot_tree": lambda: plot_tree(("S", "a")),
    "save_figure": lambda: save_figure(object(), "x.png"),
    "check_figure_path": lambda: check_figure_path("x.png"),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_each_function_names_the_extra(monkeypatch, name):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'strgm\[plot\]'") as e:
        CALLS[name]()
    assert isinstance(e.value, ImportError) and isinstance(e.value, StrgmError)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", [n for n in CALLS if "figure" not in n])
def test_negative_control_with_matplotlib_they_draw(mpl, name):
    assert CALLS[name]() is not None


def test_the_package_imports_without_matplotlib():
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "import strgm.plot as p\n"
            "print(len(p.TreeView(('S', 'a')).svg()) > 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
