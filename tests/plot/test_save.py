"""save_figure: the format from the extension, written atomically; a bad path or
extension is one line naming the path, and a failed save leaves no trace."""

import os

import pytest

from strgm.errors import InputError
from strgm.plot import check_figure_path, plot_convergence, save_figure

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def ax(mpl):
    return plot_convergence([3.0, 2.0, 1.0])


def test_png_and_svg(ax, tmp_path):
    out = save_figure(ax, tmp_path / "curve.png")
    assert out == tmp_path / "curve.png"
    assert out.read_bytes().startswith(PNG)
    save_figure(ax.figure, str(tmp_path / "curve.SVG"))  # a Figure; any case of extension
    assert b"<svg" in (tmp_path / "curve.SVG").read_bytes()[:500]
    assert sorted(os.listdir(tmp_path)) == ["curve.SVG", "curve.png"]


def test_replaces_an_existing_file(ax, tmp_path):
    target = tmp_path / "x.png"
    target.write_bytes(b"old")
    save_figure(ax, target)
    assert target.read_bytes().startswith(PNG)


@pytest.mark.parametrize("name, message", [
    ("curve.xyz", "unknown image extension '.xyz'; use one of "),
    ("curve", "no file extension; use one of "),
    ("missing/curve.png", "directory .* does not exist"),
    ("file.txt/curve.png", "directory .* does not exist"),
])
def test_one_line_errors_and_nothing_written(ax, tmp_path, name, message):
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(InputError, match=message) as e:
        save_figure(ax, tmp_path / name)
    assert "\n" not in str(e.value) and str(tmp_path / name) in str(e.value)
    assert os.listdir(tmp_path) == ["file.txt"]


def test_unwritable_target_is_an_input_error(ax, tmp_path):
    (tmp_path / "dir.png").mkdir()  # a directory where the file should go
    with pytest.raises(InputError, match="cannot write") as e:
        save_figure(ax, tmp_path / "dir.png")
    assert "\n" not in str(e.value)
    assert os.listdir(tmp_path) == ["dir.png"] and not os.listdir(tmp_path / "dir.png")


def test_a_failed_render_leaves_the_old_file_and_no_temporary(ax, tmp_path, monkeypatch):
    target = tmp_path / "x.png"
    target.write_bytes(b"old")

    def broken(buf, **kw):
        buf.write(PNG + b"half an image")
        raise RuntimeError("renderer died")

    monkeypatch.setattr(ax.figure, "savefig", broken)
    with pytest.raises(RuntimeError, match="renderer died"):
        save_figure(ax, target)
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["x.png"]


def test_not_a_figure(mpl):
    with pytest.raises(InputError, match="Figure or Axes, got int"):
        save_figure(3, "x.png")


def test_check_figure_path_before_the_work(mpl, tmp_path):
    check_figure_path(tmp_path / "ok.pdf")  # fine: nothing is written
    assert os.listdir(tmp_path) == []
    with pytest.raises(InputError, match=r"option --plot: unknown image extension '\.txt'"):
        check_figure_path(tmp_path / "out.txt")
    with pytest.raises(InputError, match="option --fig: directory .* does not exist"):
        check_figure_path(tmp_path / "no" / "out.png", "--fig")
