"""`ponte eval games --videos`: recorded game videos through the live loop, counted against
their truth lines, the record against the moves played."""

from __future__ import annotations

import csv
import dataclasses
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from lab.gameeval import COLUMNS
from lab.gamevideos import GameVideoError, evaluate_videos, load_games, video_folder
from lab.raytrace.games import write_video
from lab.scenes import boards_of_moves, demo_moves, position_of
from ponte.cli import main

SETUP = "overhead-cream-red"


def _write_synth_game(folder: Path, number: int, seed: int, turns: int) -> list[str]:
    """A game drawn by `lab.synth` written in the format of `lab.raytrace.games`: an H.264
    video, a truth line a frame, the moves played. Returns the moves."""
    from lab.synth import SETUPS, SequenceTiming, render_sequence
    from lab.synth.setups import random_spec

    moves = demo_moves(seed, turns)[0]
    positions = [position_of(b) for b in boards_of_moves(moves, flagged=False)]
    rng = np.random.default_rng([seed, list(SETUPS).index(SETUP)])
    spec = dataclasses.replace(random_spec(rng, SETUP), board=positions[0][0], bridges=(),
                               hands=())
    images, lines = [], []
    for image, truth in render_sequence(positions, spec, SequenceTiming(fps=10.0)):
        images.append(image)
        lines.append(json.dumps({
            "index": truth.index, "time_s": round(truth.time_s, 3), "move": truth.move,
            "phase": str(truth.phase), "board": list(truth.board),
            "bridges": [list(b) for b in truth.bridges],
            "occluded_cells": sorted(truth.frame.occluded_cells), "bumped": truth.bumped,
            "corners": np.asarray(truth.frame.corners).tolist(), "setup": SETUP}))
    folder.mkdir(parents=True, exist_ok=True)
    assert write_video(images, folder / f"{number:02d}.mp4", 10.0) == "h264"
    (folder / f"{number:02d}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / f"{number:02d}.moves").write_text("\n".join(moves) + "\n", encoding="utf-8")
    return moves


@pytest.fixture(scope="module")
def synth_games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("games")
    _write_synth_game(folder, 0, 3, 2)
    return folder


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _lines(path: Path) -> int:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return len(handle.read().splitlines())
    return len(path.read_text(encoding="utf-8").splitlines())


def test_a_recorded_game_video_is_read_through_the_live_loop_into_its_record(
    synth_games: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "games.csv"
    status = main(["eval", "games", "--videos", str(synth_games), "--out", str(out)])
    rows = _rows(out)
    assert list(rows[0]) == COLUMNS
    game, total = rows
    assert status == 0, capsys.readouterr().err
    assert (game["setup"], game["seed"], game["knock"]) == (SETUP, "0", "0")
    assert (game["moves"], game["read_right"], game["first_wrong"], game["flags"]) == (
        "2", "2", "", "0")
    assert (game["fast"], game["drop"], game["pieces_dropped"]) == ("0", "0.0", "0")
    # Every frame of the video read, each counted against its truth line once the camera
    # had calibrated itself on the empty board.
    frames = _lines(synth_games / "00.jsonl")
    assert int(game["frames"]) == frames
    counted = int(game["hand_frames"]) + int(game["still_frames"])
    assert 0 < int(game["hand_frames"]) and frames - 20 <= counted < frames
    assert int(game["still_frames_wrong"]) <= 2
    assert 0.4 <= float(game["delay_median_s"]) <= float(game["delay_max_s"]) < 2.0
    assert (total["setup"], total["read_right"], total["frames"]) == ("all", "2", str(frames))
    err = capsys.readouterr().err
    assert "ok " in err and f"written to {out}" in err


def _blank_game(folder: Path, frames: int = 6) -> Path:
    """A game folder of `frames` grey frames, each with a truth line, and no moves."""
    folder.mkdir()
    write_video([np.full((64, 96, 3), 128, np.uint8)] * frames, folder / "00.mp4", 10.0)
    empty = ["." * 10] * 10
    (folder / "00.jsonl").write_text("".join(json.dumps({
        "index": k, "time_s": k / 10, "move": 0, "phase": "still", "board": empty,
        "bridges": [], "bumped": False, "setup": SETUP}) + "\n" for k in range(frames)),
        encoding="utf-8")
    (folder / "00.moves").write_text("", encoding="utf-8")
    return folder


def test_a_folder_of_game_videos_is_loaded_with_a_truth_line_a_frame(tmp_path: Path) -> None:
    (game,) = load_games(_blank_game(tmp_path / "games"))
    assert (game.number, game.moves, len(game.truths)) == (0, (), 6)
    assert game.truths[5].index == 5 and game.truths[5].setup == SETUP


@pytest.mark.parametrize(("spoil", "message"), [
    ("nothing", "no game videos"),
    ("moves", "has no 00.moves beside it"),
    ("jsonl", "has no 00.jsonl beside it"),
    ("short", "has 6 frames but 00.jsonl 3 truth lines"),
    ("renumbered", "the truth of frame 1 where frame 0's belongs"),
    ("not json", "00.jsonl:1: not JSON"),
    ("no board", "00.jsonl:1: no 'board' in the truth line"),
])
def test_a_folder_that_is_not_one_of_game_videos_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spoil: str, message: str
) -> None:
    folder = _blank_game(tmp_path / "spoilt")
    truth = folder / "00.jsonl"
    lines = truth.read_text(encoding="utf-8").splitlines()
    if spoil == "nothing":
        (folder / "00.mp4").unlink()
    elif spoil in ("moves", "jsonl"):
        (folder / f"00.{spoil}").unlink()
    elif spoil == "short":
        truth.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    elif spoil == "renumbered":
        truth.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    elif spoil == "not json":
        truth.write_text("{\n", encoding="utf-8")
    else:
        line = {"index": 0, "time_s": 0.0, "move": 0, "phase": "still"}
        truth.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(GameVideoError, match=message):
        load_games(folder)
    out = tmp_path / "x.csv"
    assert main(["eval", "games", "--videos", str(folder), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_eval_games_refuses_a_missing_folder_and_generator_options_with_videos(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "x.csv")
    assert main(["eval", "games", "--videos", str(tmp_path / "none"), "--out", out]) == 2
    assert "no folder of game videos" in capsys.readouterr().err
    folder = str(_blank_game(tmp_path / "games"))
    assert main(["eval", "games", "--videos", folder, "--fast", "--out", out]) == 2
    assert "--fast says how to generate games" in capsys.readouterr().err
    assert not Path(out).exists()


def test_a_frozen_folder_of_game_videos_is_found_by_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lab.gamevideos

    frozen = tmp_path / "frozen"
    frozen.mkdir()
    folder = _blank_game(frozen / "tiny-games")
    monkeypatch.setattr(lab.gamevideos, "FROZEN", frozen)
    assert video_folder("tiny-games") == folder
    assert video_folder(str(folder)) == folder
    with pytest.raises(GameVideoError, match="or one of tiny-games$"):
        video_folder("other-games")


@pytest.mark.slow
def test_a_small_raytraced_game_is_read_end_to_end(tmp_path: Path) -> None:
    """The format `lab.raytrace.games` writes is the one read here: every frame of its video
    has its truth line, matched to it by index once the camera has calibrated itself, and
    the table has the game's row. (At this size, the smallest the board is found in, the
    moves are not expected to be read right.)"""
    from lab.raytrace.games import Timing, write_game
    from lab.raytrace.model import SETUPS
    from lab.raytrace.render import DRAFT

    setup = next(iter(SETUPS))
    folder = tmp_path / "raytraced"
    write_game(folder, 0, setup, 5, 2, Timing(fps=5.0), dataclasses.replace(DRAFT, scale=0.35))
    out = tmp_path / "games.csv"
    assert evaluate_videos(folder, out) in (0, 1)
    game, total = _rows(out)
    frames = _lines(folder / "00.jsonl.gz")
    assert (game["setup"], game["seed"], game["moves"]) == (setup, "0", "2")
    assert int(game["frames"]) == frames == int(total["frames"])
    assert 0 < int(game["hand_frames"]) + int(game["still_frames"]) < frames
