"""The progress bar leaves one finished line on standard output that holds no clock."""

import pytest

from attnbook.progress import progress


def finished_line(out: str) -> str:
    return out.replace("\r\n", "\n").split("\r")[-1].strip()


def test_bar_finishes_on_stdout_without_a_clock(capsys):
    assert list(progress(range(7), desc="training")) == list(range(7))
    out, err = capsys.readouterr()
    assert err == ""
    line = finished_line(out)
    assert line.startswith("training: 100%|") and line.endswith("| 7/7"), line
    assert "it/s" not in out and "s/it" not in out and "<" not in line


def test_same_line_on_every_run(capsys):
    for _ in progress(range(3), desc="runs"):
        pass
    first = finished_line(capsys.readouterr().out)
    for _ in progress(range(3), desc="runs"):
        pass
    assert finished_line(capsys.readouterr().out) == first


def test_disabled_bar_prints_nothing(capsys):
    assert list(progress([1, 2], desc="x", disable=True)) == [1, 2]
    assert capsys.readouterr() == ("", "")


def test_desc_is_required():
    with pytest.raises(ValueError, match="desc"):
        progress([1], desc="")
