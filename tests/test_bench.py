"""`ponte bench referee` runs and reports its three figures (speed is not asserted)."""

from __future__ import annotations

import pytest

from ponte.cli import main


def test_bench_referee_reports_three_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "referee", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "us" in out and "ms" in out and "per second" in out
    assert len(out.strip().splitlines()) == 3
