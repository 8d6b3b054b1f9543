"""Ray-traced game frames: a hand's frame traced over the still board's trace is the frame
traced whole, the hand goes where the move's cells are on a turned board, and a game shared
between processes is the game rendered by one."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from lab.raytrace.games import Timing, turn_poses
from lab.raytrace.model import Hand, random_scene, random_table
from lab.raytrace.render import DRAFT, changed_box, render, traced_canvas
from lab.raytrace.scene import hand_balls

SMALL = dataclasses.replace(DRAFT, scale=0.2)


def _hand(reach: tuple[float, float]) -> Hand:
    return Hand((5.0, -17.0, 10.0), reach, 1.2, 10.0, (0.7, 0.5, 0.4), (0.1, 0.2, 0.5), 0.6,
                "light")


def test_a_hand_traced_over_the_still_board_matches_the_frame_traced_whole() -> None:
    table = random_table((5, 1), "webcam-overhead")
    board = random_scene(table, (5, 1, 0), turns=4)
    still = render(board, SMALL, board=table.seed)
    assert still.canvas is not None
    with_hand = dataclasses.replace(board, hands=(_hand((4.5, 3.5)),))
    whole = render(with_hand, SMALL, board=table.seed)
    over = render(with_hand, SMALL, board=table.seed,
                  over=(still.canvas, hand_balls(with_hand.hands[0])))
    assert whole.canvas is not None and over.canvas is not None
    diff = np.abs(whole.canvas.astype(int) - over.canvas.astype(int)).max(axis=2)
    # Area lights are sampled with jitter: single pixels of a soft shadow may differ a little.
    assert float(np.mean(diff > 24)) < 0.002
    assert over.truth["board"] == whole.truth["board"]
    # The hand changed the picture, and the box holds every change.
    small = dataclasses.replace(with_hand, camera=dataclasses.replace(
        with_hand.camera, width=round(with_hand.camera.width * SMALL.scale),
        height=round(with_hand.camera.height * SMALL.scale)))
    cw, ch, _ = traced_canvas(small.camera)
    box = changed_box(small, hand_balls(with_hand.hands[0]), (cw, ch))
    assert box is not None
    x0, y0, x1, y1 = box
    moved = np.abs(whole.canvas.astype(int) - still.canvas.astype(int)).max(axis=2) > 24
    assert moved.sum() > 50
    outside = moved.copy()
    outside[y0:y1, x0:x1] = False
    assert outside.sum() <= 0.002 * moved.size


def test_the_hand_reaches_for_the_moves_cells_on_a_turned_board() -> None:
    timing = Timing(fps=5.0)
    for turns, where in ((0, (4.5, 1.5)), (1, (8.5, 4.5)), (2, (5.5, 8.5)), (3, (1.5, 5.5))):
        poses = turn_poses("e2,f2", "light", 0.0, timing, 0.3, turns)
        put_down = [p for p, placed in poses if p.holds == "nothing" and placed == 1][0]
        assert (round(put_down.x, 6), round(put_down.y, 6)) == where


def test_a_game_already_written_is_left_as_it_is(tmp_path: Path) -> None:
    from lab.raytrace import VERSION
    from lab.raytrace.games import write_game

    (tmp_path / "VERSION").write_text(VERSION + "\n", encoding="utf-8")
    files = {name: f"{name} as written".encode() for name in
             ("03.mp4", "03.jsonl.gz", "03.moves")}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    video = write_game(tmp_path, 3, "webcam-overhead", 2, 24, Timing(), SMALL)
    assert video == tmp_path / "03.mp4"
    assert {name: (tmp_path / name).read_bytes() for name in files} == files
    assert not (tmp_path / "03.frames").exists()


@pytest.mark.slow
def test_a_game_rendered_in_two_parts_is_the_game_rendered_in_one(tmp_path: Path) -> None:
    from lab.raytrace.games import write_game

    tiny = dataclasses.replace(DRAFT, scale=0.12)
    timing = Timing(fps=2.0)
    whole = write_game(tmp_path / "one", 0, "webcam-overhead", 3, 2, timing, tiny)
    shared = tmp_path / "two"
    for part in ((0, 2), (1, 2)):
        assert write_game(shared, 0, "webcam-overhead", 3, 2, timing, tiny, part=part) \
            == shared / "00.mp4"
        assert not (shared / "00.mp4").exists()
    kept = sorted(p.name for p in (shared / "00.frames").glob("*.json"))
    joined = write_game(shared, 0, "webcam-overhead", 3, 2, timing, tiny)
    assert not (shared / "00.frames").exists()
    # The parts rendered every frame the sequential run did (a still board held on between
    # its first frame and the next move is not kept, it is the same trace with new noise).
    truths = [json.loads(line) for line in gzip.decompress(
        (tmp_path / "one" / "00.jsonl.gz").read_bytes()).decode().splitlines()]
    assert truths == [json.loads(line) for line in gzip.decompress(
        (shared / "00.jsonl.gz").read_bytes()).decode().splitlines()]
    assert len(kept) < len(truths) and {t["phase"] for t in truths} == {"still", "hand"}
    assert (tmp_path / "one" / "00.moves").read_text() == (shared / "00.moves").read_text()
    assert _frames(whole) == _frames(joined)


def _frames(video: Path) -> list[bytes]:
    capture = cv2.VideoCapture(str(video))
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(frame.tobytes())
    capture.release()
    assert frames
    return frames
