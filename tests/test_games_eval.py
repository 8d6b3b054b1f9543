"""`ponte eval games`: generated games through the live loop, the record against the game."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from lab.gameeval import COLUMNS, compare_moves, evaluate_games
from ponte.cli import main
from ponte.live.camera import CameraReader
from ponte.live.settle import BoardView, Reading


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _good_game(tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: str, seed: int,
               turns: int, **options: object) -> dict[str, str]:
    """The row of one game played through `evaluate_games`, which must call it good."""
    out = tmp_path / "games.csv"
    status = evaluate_games([setup], [seed], turns, out, **options)  # type: ignore[arg-type]
    assert status == 0, capsys.readouterr().err
    return _rows(out)[0]


def test_moves_are_compared_from_the_first_and_the_first_wrong_one_named() -> None:
    played = ["a1,a2", "j9,j10", "a1-a3"]
    assert compare_moves(played, played) == (3, "")
    assert compare_moves(played, ["a1,a2", "j9,j8", "a1-a3"]) == (1, "2: played j9,j10, read j9,j8")
    assert compare_moves(played, ["a1,a2"]) == (1, "2: played j9,j10, read -")
    assert compare_moves(played, [*played, "b2,b3"]) == (3, "4: played -, read b2,b3")
    assert compare_moves([], []) == (0, "")


@pytest.mark.slow
def test_a_generated_game_is_read_through_the_live_loop_into_its_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "games.csv"
    status = evaluate_games(["overhead-cream-red"], [3], 2, out, fps=10.0)
    rows = _rows(out)
    assert list(rows[0]) == COLUMNS
    game, total = rows
    assert status == 0, capsys.readouterr().err
    assert (game["moves"], game["read_right"], game["first_wrong"], game["flags"]) == (
        "2", "2", "", "0")
    assert total["setup"] == "all" and total["read_right"] == "2"
    # A move is committed once the board has been still for the settle window (0.4 s)
    # after its last piece was put down, and not long after.
    assert 0.4 <= float(game["delay_median_s"]) <= float(game["delay_max_s"]) < 2.0
    assert int(game["hand_frames"]) > 0 and int(game["still_frames"]) > 0
    assert int(game["hand_frames_wrong"]) <= int(game["hand_frames"])
    assert int(game["still_frames_held"]) <= int(game["still_frames_flagged"])
    assert "ok " in capsys.readouterr().err


def test_eval_games_refuses_bad_arguments(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "g.csv")
    assert main(["eval", "games", "--setups", "no-such-setup", "--out", out]) == 2
    assert "unknown setup 'no-such-setup'" in capsys.readouterr().err
    assert main(["eval", "games", "--seeds", "1,x", "--out", out]) == 2
    assert "--seeds must be whole numbers" in capsys.readouterr().err
    assert main(["eval", "games", "--turns", "0", "--out", out]) == 2
    assert not Path(out).exists()


def test_a_camera_that_misreads_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The evaluation can fail: a camera that sees a light tile on e5 on every clear frame
    gets its record wrong or flagged, and its still frames counted wrong."""
    real = CameraReader.read

    def misread(self: CameraReader, image: object, t: float) -> Reading:
        reading = real(self, image, t)
        if reading.occluded:
            return reading
        tiles = {**reading.board.tiles, "e5": "light"}
        return Reading(reading.t, BoardView(tiles, reading.board.bridges), occluded=False)

    monkeypatch.setattr(CameraReader, "read", misread)
    out = tmp_path / "games.csv"
    assert evaluate_games(["overhead-cream-red"], [3], 1, out, fps=10.0) == 1
    game = _rows(out)[0]
    assert game["first_wrong"] or int(game["flags"]) > 0
    assert int(game["still_frames_wrong"]) == int(game["still_frames"]) - int(
        game["still_frames_flagged"]) > 0
    assert "BAD" in capsys.readouterr().err


@pytest.mark.slow
def test_a_wide_angle_webcam_with_no_lens_file_is_read_right(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A game scene whose grid, located on the bent board alone, misses its lines by half a
    cell (wide-angle, seed 2): the loop measures the lens on them and reads the move."""
    game = _good_game(tmp_path, capsys, "wide-angle-distorted", 2, 1, fps=10.0,
                      measured_lens=False)
    assert (game["read_right"], game["first_wrong"], game["flags"]) == ("1", "", "0")


def test_the_dropping_reader_loses_each_new_piece_for_up_to_one_turn() -> None:
    from types import SimpleNamespace

    from lab.gameeval import DroppingReader

    empty = tuple("." * 10 for _ in range(10))
    placed = ("LL" + "." * 8, *empty[1:])
    seen = BoardView.of({"a10": "light", "b10": "light"})

    def frame(t: float, rows: tuple[str, ...]) -> SimpleNamespace:
        return SimpleNamespace(time_s=t, board=rows, bridges=())

    never = DroppingReader(0.0, 3.0, [1])
    assert never.apply(frame(1.0, placed), Reading(1.0, seen)).board == seen
    always = DroppingReader(1.0, 3.0, [1])
    always.apply(frame(0.0, empty), Reading(0.0, BoardView()))
    assert always.apply(frame(1.0, placed), Reading(1.0, seen)).board.tiles == {}
    assert always.dropped == 2
    back: dict[str, float] = {}  # when each piece is read again
    for step in range(1, 63):
        t = 1.0 + 0.05 * step
        for cell in always.apply(frame(t, placed), Reading(t, seen)).board.tiles:
            back.setdefault(cell, t)
    assert set(back) == {"a10", "b10"}
    assert max(back.values()) <= 4.05  # up to one turn (3 s here) after put down
    assert always.apply(frame(4.1, placed), Reading(4.1, seen)).board == seen


@pytest.mark.slow
def test_fast_play_with_every_piece_dropped_for_a_while_is_still_recorded_right(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = _good_game(tmp_path, capsys, "overhead-cream-red", 3, 2, fps=10.0, fast=True,
                      drop=1.0)
    assert (game["read_right"], game["first_wrong"], game["pieces_dropped"]) == ("2", "", "4")
    assert (game["flags_up_at_end"], game["void"], game["turn_shifted"]) == ("0", "0", "0")


def test_eval_games_refuses_a_share_that_is_not_one(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "g.csv")
    assert main(["eval", "games", "--drop", "1.5", "--out", out]) == 2
    assert "--drop is a share between 0 and 1" in capsys.readouterr().err


def test_a_loop_on_a_slower_core_reads_one_frame_in_so_many_and_the_rest_go_by() -> None:
    """`--every 3`: the loop reads frames 0, 3, 6, ... (the newest each time it is free);
    the moves' put-down times still come from every frame."""
    from types import SimpleNamespace

    import numpy as np

    from lab.gameeval import _Frames

    def truth(k: int) -> SimpleNamespace:
        board = ("." * 10,) * 9 + (("L" + "." * 9) if k >= 4 else "." * 10,)
        return SimpleNamespace(board=board, bridges=(), move=int(k >= 7), time_s=k / 15,
                               index=k, phase="still")

    items = [(np.full((16, 16, 3), 20 * k, np.uint8), truth(k)) for k in range(11)]
    frames = _Frames(iter(items), 15.0, every=3)
    read = []
    while (frame := frames.read()) is not None:
        read.append(frame.index)
    assert read == [0, 3, 6, 9]
    assert frames.put_down.times == [4 / 15]


@pytest.mark.slow
def test_a_game_read_one_frame_in_three_is_recorded_right(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = _good_game(tmp_path, capsys, "overhead-cream-red", 3, 2, every=3)
    assert (game["read_right"], game["first_wrong"], game["flags"]) == ("2", "", "0")
    assert game["read_every"] == "3"
    assert main(["eval", "games", "--every", "0", "--out", str(tmp_path / "g.csv")]) == 2
    assert "--every must be at least 1" in capsys.readouterr().err
