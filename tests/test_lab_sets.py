"""`ponte eval set`: the pipeline measured on a frozen scene set of either source."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

from lab.sets import SET_COLUMNS, load_set


def _ponte(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ponte", *args], capture_output=True,
                          text=True, timeout=300, check=False)


def test_both_frozen_test_splits_hold_truth_with_an_empty_photo_for_every_image() -> None:
    root = Path(__file__).resolve().parents[1] / "lab" / "frozen"
    for name in ("synth-test", "raytrace-test"):
        records = load_set(root / name)
        assert records
        setups = {r["setup"] for r in records}
        assert len(setups) >= 7
        for r in records:
            assert (root / name / r["image"]).is_file() and (root / name / r["empty"]).is_file()
            assert len(r["board"]) == 10 and len(r["corners"]) == 4


def test_a_frozen_set_is_measured_per_setup_and_mode(tmp_path: Path) -> None:
    out = tmp_path / "set.csv"
    done = _ponte("eval", "set", "synth-test", "--limit", "3", "--out", str(out))
    assert done.returncode == 0, done.stderr
    with out.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(SET_COLUMNS)
    total = [r for r in rows if r["setup"] == "all" and r["mode"] == "tracker"]
    assert total and int(total[0]["frames"]) == 3 and int(total[0]["empty_photos"]) == 3


def test_an_unknown_set_is_refused_with_the_sets_there_are(tmp_path: Path) -> None:
    done = _ponte("eval", "set", "no-such-set", "--out", str(tmp_path / "x.csv"))
    assert done.returncode == 2
    assert "no scene set 'no-such-set'" in done.stderr and "synth-test" in done.stderr
    assert "Traceback" not in done.stderr
