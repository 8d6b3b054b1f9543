"""`ponte eval protocol`: the test splits of both sources measured in one command each way."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

import lab.protocol as protocol
from ponte.cli import main

FROZEN = Path(protocol.__file__).with_name("frozen")


def test_the_shipped_networks_measure_every_split_under_the_readmes_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PONTE_MODELS", "/somewhere/else")
    env, commands = protocol.plan("synth", None, tmp_path)
    assert "PONTE_MODELS" not in env
    outs = [c[c.index("--out") + 1] for c in commands]
    assert outs == [str(tmp_path / f"{n}.csv") for n in
                    ("set_synth_test", "set_raytrace_test", "games_raytrace_test")]
    assert commands[2][:2] == ["games", "--videos"]


def test_networks_trained_on_raytrace_are_measured_from_their_folder_apart(
        tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    env, commands = protocol.plan("raytrace", models, tmp_path, ["synth-test"])
    assert env["PONTE_MODELS"] == str(models.resolve())
    assert len(commands) == 1
    assert commands[0][commands[0].index("--out") + 1] == str(
        tmp_path / "set_synth_test_trained_raytrace.csv")


@pytest.mark.parametrize(("args", "says"), [
    (["--trained-on", "raytrace"], "needs --models DIR"),
    (["--models", "x"], "the shipped ones"),
    (["--only", "synth-tset"], "no test split 'synth-tset'"),
])
def test_a_protocol_that_cannot_run_says_why_in_one_line(
        args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "protocol", *args]) == 2
    err = capsys.readouterr().err
    assert says in err
    assert "Traceback" not in err


def test_the_protocol_measures_a_split_in_a_process_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A frozen folder of three images of the synth test split stands in for the splits.
    frozen = tmp_path / "frozen"
    small = frozen / "synth-test"
    lines = (FROZEN / "synth-test" / "truth.jsonl").read_text(encoding="utf-8").splitlines()
    for sub in ("images", "empty"):
        (small / sub).mkdir(parents=True)
    kept = []
    for line in lines[:3]:
        record = json.loads(line)
        for key in ("image", "empty"):
            shutil.copy(FROZEN / "synth-test" / record[key], small / record[key])
        kept.append(line)
    (small / "truth.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    monkeypatch.setattr(protocol, "FROZEN", frozen)
    results = tmp_path / "results"
    assert protocol.run("synth", None, results, ["synth-test"]) == 0
    with open(results / "set_synth_test.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    totals = [r for r in rows if r["setup"] == "all"]
    assert totals and all(int(r["frames"]) == 3 for r in totals)
    assert (results / "set_synth_test_mistakes.csv").exists()


def test_train_renders_two_parts_of_the_train_split_and_fits_each_network_on_its_part(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lab.raytrace.trainset import TRAIN_SEED, default_folder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(protocol.importlib.util, "find_spec", lambda name: object())
    models = tmp_path / "models"
    commands = protocol.training(models, 600, "draft")
    renders = [c for c in commands if c[0] == "lab.raytrace.trainset"]
    assert [(c[c.index("--images") + 1], c[c.index("--seed") + 1]) for c in renders] == [
        ("600", str(TRAIN_SEED)), ("300", str(TRAIN_SEED + 1))]
    fits = {c[0]: c for c in commands if c not in renders}
    assert list(fits) == ["lab.train", "lab.train_patches", "lab.train_decks"]
    assert commands.index(renders[-1]) < commands.index(fits["lab.train"])
    first, second = (str(default_folder({"XDG_CACHE_HOME": str(tmp_path / "cache")},
                                        "draft", TRAIN_SEED + k)) for k in (0, 1))
    scenes = {m: c[c.index("--scenes-from") + 1] for m, c in fits.items()}
    assert scenes == {"lab.train": first, "lab.train_patches": second,
                      "lab.train_decks": second}
    assert all(c[c.index("--out") + 1] == str(models) and "--torch" in c
               for c in fits.values())


def test_train_without_pytorch_says_how_to_install_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(protocol.importlib.util, "find_spec", lambda name: None)
    args = ["eval", "protocol", "--trained-on", "raytrace", "--models",
            str(tmp_path / "models"), "--train"]
    assert main(args) == 2
    assert "pip install torch==2.13.0" in capsys.readouterr().err
    assert not (tmp_path / "models").exists()
    assert main(["eval", "protocol", "--train"]) == 2
    assert "--trained-on raytrace --models" in capsys.readouterr().err
