"""`ponte bench referee` and `ponte bench vision` run and report their figures (speed is not
asserted)."""

from __future__ import annotations

import pytest

from ponte.cli import main


def test_bench_referee_reports_three_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "referee", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "us" in out and "ms" in out and "per second" in out
    assert len(out.strip().splitlines()) == 3


@pytest.mark.slow
def test_bench_vision_times_the_reader_on_bytes_and_on_frames_decoded_whole(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "vision", "--quick"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split()[:2] == ["setup", "reader"] and "decoded whole ms" in lines[0]
    assert "quietest" in lines[0]
    rows = [line.split() for line in lines[1:4]]
    assert [row[0] for row in rows] == ["overhead-cream-red", "angled45-white-black",
                                        "phone-rotated-brown"]
    assert all(float(v) > 0 for row in rows for v in row[1:6])
    assert "decoded whole first" in lines[4] and "at its quietest" in lines[4]


def test_bench_web_names_its_parts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "web", "--part", "nope"]) == 2
    assert "choose crowd or browser" in capsys.readouterr().err
