"""`python -m lab.sweep`: one parameter of the parameter file tried over values on
validation sets, into the table its value is chosen from."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from lab.sweep import COLUMNS, SweepError, check_set, sweep, thresholds_with, with_others


def test_each_value_is_measured_through_calibration_and_reading(
    synth_still_set: Path, tmp_path: Path
) -> None:
    """A parameter of locating the board counts as well as one of reading it: with no board
    allowed to cover less than nine tenths of the photo, no table is calibrated."""
    out = tmp_path / "min_board_area.csv"
    rows = sweep("min_board_area", ["0.04", "0.9"], [synth_still_set], out, limit=4, jobs=1)
    with out.open(newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert list(table[0]) == list(COLUMNS) and len(table) == len(rows)
    total = {r["value"]: r for r in table if r["setup"] == "all"}
    assert set(total) == {"0.04", "0.9"}
    assert int(total["0.04"]["frames"]) == 4 == int(total["0.9"]["frames"])
    assert int(total["0.04"]["calibration_misses"]) == 0
    assert int(total["0.9"]["calibration_misses"]) == int(total["0.9"]["empty_photos"]) == 4
    assert int(total["0.9"]["errors"]) == 4 and int(total["0.04"]["errors"]) == 0
    assert int(total["0.04"]["cells"]) > 0


def test_a_test_split_an_unknown_parameter_or_a_bad_value_is_refused(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1] / "lab" / "frozen"
    with pytest.raises(SweepError, match="test split"):
        check_set(root / "synth-test")
    with pytest.raises(SweepError, match="not a scene set"):
        check_set(tmp_path)
    with pytest.raises(SweepError, match="no parameter"):
        thresholds_with("no_such_parameter", "1")
    with pytest.raises(SweepError, match="whole number"):
        thresholds_with("mirror_looks", "2.5")
    assert thresholds_with("foot_p", "0.9").foot_p == 0.9
    with pytest.raises(SweepError, match="NAME=VALUE"):
        with_others(["foot_p"])
    assert with_others(["foot_p=0.7", "mirror_looks=3"]).mirror_looks == 3
    done = subprocess.run(
        [sys.executable, "-m", "lab.sweep", "foot_p", "0.9", "--set", str(root / "raytrace-test"),
         "--out", str(tmp_path / "x.csv")],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "test split" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "x.csv").exists()
