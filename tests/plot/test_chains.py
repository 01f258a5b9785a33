"""The sampler pictures (``strgm hmm|tsg|pcfg train --plot``, :func:`plot_chains`): a
title, a y label that names the quantity with its unit (not a JSON key), one line per
chain, the burn-in shaded and R̂ in the legend."""

import pytest

from tests.robustness.harness import run_cli

pytest.importorskip("matplotlib")
WORDS = "\n".join(["k a t", "t a k", "a t a", "k a k a"] * 3) + "\n"
KEYS = ("loglik", "log_p_trees", "log_likelihood", "neg_log_prob", "objective")


def rows(chains=2, n=10):
    return [{"chain": c, "seed": 7 + c, "iteration": i, "loglik": -50.0 + i + c}
            for c in range(chains) for i in range(1, n + 1)]


def legend(ax) -> str:
    return " | ".join(t.get_text() for t in ax.get_legend().get_texts())


def burn_in_spans(ax) -> list:
    from matplotlib.patches import Rectangle

    return [p for p in ax.patches if isinstance(p, Rectangle) and "burn-in" in p.get_label()]


def check_readable(ax, chains: int, burn: bool, rhat: bool) -> None:
    assert ax.get_title()
    assert ax.get_ylabel() not in KEYS and "(nats)" in ax.get_ylabel()
    assert len(ax.get_lines()) - (1 if burn else 0) == chains  # the burn-in end is a line
    assert bool(burn_in_spans(ax)) == burn
    assert ("R̂" in legend(ax)) == rhat


def test_one_line_per_chain_burn_in_and_rhat(mpl):
    from strgm.plot import plot_chains

    ax = plot_chains(rows(3), key="loglik", burn_in=4, rhat={"rhat": 1.234})
    check_readable(ax, 3, burn=True, rhat=True)
    assert "1.234" in legend(ax) and "seed 9" in legend(ax)
    span = burn_in_spans(ax)[0]
    assert span.get_x() + span.get_width() == pytest.approx(4)
    assert "too few sweeps" in legend(plot_chains(rows(2), key="loglik", rhat=None))
    # one chain, no burn-in: one line, no span, no R̂ across chains
    check_readable(plot_chains(rows(1), key="loglik"), 1, burn=False, rhat=False)


@pytest.fixture
def drawn(monkeypatch):
    """The Axes every --plot figure was drawn on (save_figure still writes the file)."""
    import strgm.plot

    got, save = [], strgm.plot.save_figure
    monkeypatch.setattr(strgm.plot, "save_figure",
                        lambda ax, path, **kw: (got.append(ax), save(ax, path, **kw))[1])
    return got


@pytest.mark.parametrize("chains", [1, 2])
def test_hmm_train_plot(tmp_path, drawn, chains):
    (tmp_path / "s.txt").write_text(WORDS)
    o = run_cli(["hmm", "train", tmp_path / "s.txt", "--save", tmp_path / "m.json",
                 "--iters", "10", "--burn-in", "3", "--states", "3", "--chains", str(chains),
                 "--plot", tmp_path / "h.png", "--quiet"])
    assert o.code == 0, o.stderr
    check_readable(drawn[0], chains, burn=True, rhat=chains > 1)


@pytest.mark.parametrize("chains", [1, 2])
def test_tsg_train_plot(tmp_path, drawn, chains):
    (tmp_path / "a.mrg").write_text("( (S (NP (DT the) (NN dog)) (VP (VBD barked))) )\n"
                                    "( (S (NP (DT a) (NN cat)) (VP (VBD ran))) )\n")
    o = run_cli(["tsg", "train", tmp_path / "a.mrg", "--save", tmp_path / "t.json",
                 "--iters", "10", "--chains", str(chains), "--plot", tmp_path / "t.png",
                 "--quiet"])
    assert o.code == 0, o.stderr
    check_readable(drawn[0], chains, burn=chains > 1, rhat=chains > 1)


@pytest.mark.parametrize("method,chains", [("gibbs", 1), ("gibbs", 2), ("vb", 1)])
def test_pcfg_train_plot(tmp_path, drawn, method, chains):
    (tmp_path / "g.lt").write_text("S --> A B\nS --> A\nA --> a\nB --> b\nA --> A A\n")
    (tmp_path / "c.yld").write_text("a b\na\na a b\n")
    sampler = method == "gibbs"
    o = run_cli(["pcfg", "train", tmp_path / "g.lt", tmp_path / "c.yld", "--method", method,
                 "--iters", "10", *(["--burn-in", "3", "--chains", str(chains)] if sampler
                                    else []),
                 "--out", tmp_path / "o.lt", "--plot", tmp_path / "p.png", "--quiet"])
    assert o.code == 0, o.stderr
    check_readable(drawn[0], chains, burn=sampler, rhat=chains > 1)


def test_plot_convergence_of_a_chains_file(tmp_path, drawn):
    (tmp_path / "s.txt").write_text(WORDS)
    o = run_cli(["hmm", "train", tmp_path / "s.txt", "--save", tmp_path / "m.json",
                 "--iters", "10", "--burn-in", "3", "--states", "3", "--chains", "3",
                 "--json", tmp_path / "h.json", "--quiet"])
    assert o.code == 0, o.stderr
    o = run_cli(["plot", "convergence", tmp_path / "h.json", "--out", tmp_path / "c.png"])
    assert o.code == 0, o.stderr
    check_readable(drawn[0], 3, burn=True, rhat=True)
