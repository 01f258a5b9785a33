"""Tables align IPA by display width, not by code points."""

from strgm.cli.report import _table, display_width


def test_display_width_of_ipa():
    assert display_width("t͡ʃaː") == 4  # t, ʃ, a, ː: the tie bar takes no column
    assert display_width("ŋ̊") == 1
    assert display_width("日本") == 4
    assert display_width("") == 0


def test_columns_line_up_with_tie_bars():
    text = _table(["ur", "p"], [["t͡ʃa", "0.5"], ["ka", "0.25"]])
    lines = text.splitlines()
    starts = [display_width(ln[: ln.index("0.")]) for ln in lines[2:]]
    assert starts[0] == starts[1]


def test_negative_control_code_point_padding_misaligns():
    rows = [["t͡ʃa", "0.5"], ["ka", "0.25"]]
    w = max(len(r[0]) for r in rows)
    lines = ["  ".join([r[0].ljust(w), r[1]]) for r in rows]
    starts = [display_width(ln[: ln.index("0.")]) for ln in lines]
    assert starts[0] != starts[1]


def test_warnings_become_one_line_each_once(capsys):
    """Warnings inside a command are shown, one line each, once per message."""
    import warnings

    from strgm.cli.common import warnings_as_lines

    with warnings_as_lines():
        for _ in range(3):
            warnings.warn("chain stuck: acceptance 1.000", UserWarning)
        warnings.warn("second\nline hidden", RuntimeWarning)
        warnings.warn("ep stopped after 3 iterations (last change 1.4e+00)", UserWarning)
        warnings.warn("ep stopped after 3 iterations (last change 9.9e-01)", UserWarning)
    err = capsys.readouterr().err.splitlines()
    assert err == ["strgm: warning: chain stuck: acceptance 1.000", "strgm: warning: second",
                   "strgm: warning: ep stopped after 3 iterations (last change 1.4e+00)"]
