"""The `raytrace` train split and networks trained on it, loaded through `PONTE_MODELS`."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lab.raytrace import VERSION
from lab.raytrace.render import DRAFT
from lab.raytrace.trainset import TRAIN_SEED, default_folder, write_train_split
from lab.sets import load_set
from vision.learned import CELL_MODEL, SHIPPED_MODELS, Network

SMALL = dataclasses.replace(DRAFT, scale=0.5)


def test_the_train_split_is_kept_in_the_cache_by_version_seed_and_quality(
    tmp_path: Path,
) -> None:
    name = f"raytrace-train-v{VERSION}-seed{TRAIN_SEED}"
    assert TRAIN_SEED == 1000
    assert default_folder({"XDG_CACHE_HOME": str(tmp_path)}, "fine") == (
        tmp_path / "ponte-lab" / name)
    assert default_folder({}, "draft") == Path.home() / ".cache" / "ponte-lab" / f"{name}-draft"
    assert default_folder({"XDG_CACHE_HOME": str(tmp_path)}, "fine", 9000).name == (
        f"raytrace-train-v{VERSION}-seed9000")


def test_the_train_split_refuses_the_seeds_of_validation_and_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lab.raytrace.trainset import main

    with pytest.raises(ValueError, match="1000 and up"):
        write_train_split(tmp_path / "x", images=1, per_table=1, quality=SMALL, seed=2)
    with pytest.raises(SystemExit) as stop:
        main(["--seed", "2", "--out", str(tmp_path / "x")])
    assert stop.value.code == 2 and "validation's and test's" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.glob("*.npz")}


@pytest.mark.slow
def test_a_cell_network_trained_on_raytrace_stills_is_what_ponte_models_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lab.train import main

    stills = tmp_path / "train"
    assert write_train_split(stills, images=3, per_table=2, quality=SMALL) == 4  # 2 tables
    records = load_set(stills)
    assert len(records) == 4 and {r["scene"]["seed"][0] for r in records} == {TRAIN_SEED}
    assert len({r["setup"] for r in records}) == 2
    assert write_train_split(stills, images=4, per_table=2, quality=SMALL) == 0  # resumed

    shipped = _digests(SHIPPED_MODELS)
    models = tmp_path / "models"
    assert main(["--scenes-from", str(stills), "--epochs", "2", "--hidden", "8",
                 "--shade-weights", "3", "--jobs", "1", "--out", str(models)]) == 0
    assert "cells: 400 examples" in capsys.readouterr().err  # every image read
    assert _digests(SHIPPED_MODELS) == shipped
    assert set(_digests(models)) == {"cells.npz", "bridges.npz"}
    trained = Network.load(models / CELL_MODEL.name)
    assert trained.w1.shape[1] == 8

    env = {**os.environ, "PONTE_MODELS": str(models)}
    code = ("import json; from vision.learned import cell_network; "
            "print(json.dumps(cell_network().w1.tolist()))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert np.array_equal(np.array(json.loads(done.stdout), np.float32), trained.w1)

    table = tmp_path / "set.csv"
    done = subprocess.run([sys.executable, "-m", "ponte", "eval", "set", str(stills),
                           "--limit", "2", "--out", str(table)],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    with table.open(newline="") as handle:
        rows = {(r["setup"], r["mode"]): r for r in csv.DictReader(handle)}
    assert int(rows["all", "tracker"]["frames"]) == 2
    assert int(rows["all", "tracker"]["calibration_misses"]) == 0
