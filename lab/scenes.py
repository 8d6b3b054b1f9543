"""Game videos for tests and the demo, made with the synthetic scene renderer.

A *script* is the list of physical boards a game goes through; between two boards a
player's hand reaches over the board (occluding it for a number of frames), then the board
stays still. `render_script` draws every frame with `lab.synth.render` (so the hand's
occlusion comes from the renderer's own ground truth), `write_video` stores them with
cv2.VideoWriter, and the live loop reads the file back through cv2.VideoCapture.

Each frame comes with its `Truth` (board, bridges, occlusion as drawn), for tests.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from lab.synth import CameraSpec, HandSpec, SceneSpec, render
from ponte.live.settle import BoardView, cell_key
from ponte.live.sources import Image
from referee import Game, parse_move

FPS = 10.0
SIZE = (640, 360)


@dataclass(frozen=True)
class Beat:
    """One board of the script: how many frames a hand covers it first, then still frames."""

    board: BoardView
    hand_frames: int = 6
    still_frames: int = 8
    bump: bool = False
    """The camera is knocked (and stays moved) from this beat on."""


@dataclass(frozen=True)
class Truth:
    index: int
    t: float
    board: BoardView
    occluded: bool
    occluded_cells: frozenset[str]


def boards_of_moves(moves: Iterable[str], flagged: bool = True) -> list[BoardView]:
    """The physical board after each move of a game (illegal ones left on the board)."""
    from ponte.live.infer import expected_board

    game = Game()
    out = [BoardView()]
    for text in moves:
        move = parse_move(text)
        if game.verdict(move) is None:
            game.push(move)
        elif flagged:
            game.push_flagged(move)  # type: ignore[arg-type]
        else:
            raise ValueError(f"{text} is illegal here")
        if str(move) != "swap":
            out.append(expected_board(game))
    return out


def rows_of(board: BoardView, size: int = 10) -> tuple[str, ...]:
    rows = []
    for rank in range(size, 0, -1):
        row = ""
        for file in "abcdefghij"[:size]:
            colour = board.tiles.get(f"{file}{rank}")
            row += "L" if colour == "light" else "D" if colour == "dark" else "."
        rows.append(row)
    return tuple(rows)


def position_of(board: BoardView) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """A board as `lab.synth.render_sequence` takes it: its rows (`rows_of`) and its
    bridges, each as its two end cells, sorted by (file, rank)."""
    return rows_of(board), tuple(sorted(board.bridges,
                                        key=lambda e: (cell_key(e[0]), cell_key(e[1]))))


def _changed_cell(before: BoardView, after: BoardView) -> tuple[float, float]:
    cells = {c for c in set(before.tiles) | set(after.tiles)
             if before.tiles.get(c) != after.tiles.get(c)}
    for a, b in before.bridges ^ after.bridges:
        cells.update((a, b))
    if not cells:
        return (5.0, 5.0)
    name = min(cells, key=cell_key)
    file, rank = cell_key(name)
    return (file + 0.5, rank - 0.5)


def render_script(beats: Sequence[Beat], fps: float = FPS,
                  size: tuple[int, int] = SIZE) -> Iterator[tuple[Image, Truth]]:
    """Every frame of the script with its ground truth."""
    camera = CameraSpec(width=size[0], height=size[1], focal_px=size[0] * 0.75)
    base = SceneSpec(board=rows_of(BoardView()), camera=camera)
    cache: dict[object, object] = {}
    index = 0
    previous = BoardView()
    bumped = False
    for beat in beats:
        bumped = bumped or beat.bump
        cam = dataclasses.replace(camera, azimuth_deg=2.0, target=(5.2, 4.9)) if bumped \
            else camera
        spec = dataclasses.replace(base, board=rows_of(beat.board),
                                   bridges=tuple(sorted(beat.board.bridges,
                                                        key=lambda b: (cell_key(b[0]),
                                                                       cell_key(b[1])))),
                                   camera=cam)
        target = _changed_cell(previous, beat.board)
        for k in range(beat.hand_frames):
            half = beat.board if k >= beat.hand_frames // 2 else previous
            hand_spec = dataclasses.replace(
                spec, board=rows_of(half),
                bridges=tuple(sorted(half.bridges, key=lambda b: (cell_key(b[0]),
                                                                   cell_key(b[1])))),
                hands=(HandSpec(target=target, height=1.5 + 0.3 * (k % 3)),),
            )
            frame = render(hand_spec)
            yield frame.image, frame_truth(index, fps, frame)
            index += 1
        key = (spec.board, spec.bridges, bumped)
        still = cache.get(key)
        if still is None:
            still = render(spec)
            cache[key] = still
        for _ in range(beat.still_frames):
            yield still.image, frame_truth(index, fps, still)  # type: ignore[attr-defined]
            index += 1
        previous = beat.board


def frame_truth(index: int, fps: float, frame: object) -> Truth:
    """The truth of a rendered frame (its board, bridges and what hides it), the `index`th
    of a video at `fps`."""
    board: tuple[str, ...] = frame.board  # type: ignore[attr-defined]
    size = len(board)
    tiles = {}
    for r, row in enumerate(board):
        for f, ch in enumerate(row):
            if ch in "LD":
                tiles[f"{'abcdefghij'[f]}{size - r}"] = "light" if ch == "L" else "dark"
    bridges = [tuple(b) for b in frame.bridges]  # type: ignore[attr-defined]
    return Truth(
        index,
        index / fps,
        BoardView.of(tiles, bridges),
        bool(frame.occluded),  # type: ignore[attr-defined]
        frozenset(frame.occluded_cells),  # type: ignore[attr-defined]
    )


def write_video(path: Path, frames: Iterable[tuple[Image, Truth]],
                fps: float = FPS) -> list[Truth]:
    """Store the frames through cv2.VideoWriter (.mp4: mp4v, .avi: MJPG); return the truths."""
    from lab.synth import write_video as synth_write

    return synth_write(path, frames, fps)


def truths_to_json(truths: Sequence[Truth]) -> list[dict[str, object]]:
    return [
        {"index": t.index, "t": t.t, "board": t.board.to_dict(), "occluded": t.occluded,
         "occluded_cells": sorted(t.occluded_cells)}
        for t in truths
    ]


def truths_from_json(data: Sequence[dict[str, object]]) -> list[Truth]:
    out = []
    for item in data:
        board = item["board"]
        cells = item["occluded_cells"]
        assert isinstance(board, dict) and isinstance(cells, list)
        out.append(Truth(int(str(item["index"])), float(str(item["t"])),
                         BoardView.from_dict(board), bool(item["occluded"]),
                         frozenset(str(c) for c in cells)))
    return out


def demo_moves(seed: int = 5, turns: int = 14) -> tuple[list[str], int, str]:
    """A short plausible game: its board moves, and an illegal placement the mover makes
    (then takes back) before the move at that index."""
    import random

    from referee.playout import heuristic_move

    rng = random.Random(seed)
    game = Game()
    moves: list[str] = []
    illegal_at, illegal = -1, ""
    while len(moves) < turns and not game.is_over():
        move = heuristic_move(game, rng)
        if str(move) in ("swap", "pass"):
            continue
        if illegal_at < 0 and len(moves) >= turns // 2 and game.turn is not None:
            wrong = _illegal_pair(game, move)
            if wrong:
                illegal_at, illegal = len(moves), wrong
        game.push(move)
        moves.append(str(move))
    return moves, illegal_at, illegal


DEMO_SEED = 21
"""The heuristic players' game (`demo_game`) the bundled demo video shows: a whole game of
42 moves with bridges of all three shapes, ending in light's pass and dark's last move."""


def demo_game(seed: int = DEMO_SEED) -> tuple[list[str], int, str]:
    """A whole plausible game for the demo, as `demo_moves` gives it but played to its end:
    no swap (a control, not seen on the board); light passes when it cannot place two
    tiles and dark's next move ends the game (dark's own pass would not be seen, so the
    game is one that light's pass ends). The illegal placement comes halfway."""
    import random

    from referee import Colour
    from referee.playout import heuristic_move

    rng = random.Random(seed)
    game = Game()
    moves: list[str] = []
    illegal_at, illegal = -1, ""
    while not game.is_over():
        move = heuristic_move(game, rng)
        if str(move) == "swap":
            continue
        if str(move) == "pass" and game.turn is Colour.DARK:
            raise ValueError(f"seed {seed}: dark passes, which the board does not show")
        if illegal_at < 0 and len(moves) >= 20 and str(move) != "pass":
            wrong = _illegal_pair(game, move)
            if wrong:
                illegal_at, illegal = len(moves), wrong
        game.push(move)
        moves.append(str(move))
    return moves, illegal_at, illegal


def _illegal_pair(game: Game, move: object) -> str:
    """Two cells next to one of the mover's tiles, in a line, where the mover's two tiles
    would make a group too large or an island too close, sharing no cell with `move`;
    empty when there are none."""
    from referee import Reason, Tiles

    if game.turn is None:
        return ""
    cells = set(getattr(move, "cells", ()))
    for cell in game.position.tiles(game.turn):
        for d in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            a = type(cell)(cell.file + d[0], cell.rank + d[1])
            b = type(cell)(cell.file + 2 * d[0], cell.rank + 2 * d[1])
            if not (game.position.geo.contains(a) and game.position.geo.contains(b)):
                continue
            verdict = game.verdict(Tiles(a, b))
            if verdict is not None and verdict.reason in (
                Reason.GROUP_TOO_LARGE, Reason.ISLAND_TOO_CLOSE
            ) and not set(Tiles(a, b).cells) & cells:
                return str(Tiles(a, b))
    return ""


def demo_beats(seed: int = DEMO_SEED) -> list[Beat]:
    """The demo video's script: the whole game of `demo_game`, its illegal placement left
    on the board a while and then corrected (a pass shows nothing on the board)."""
    moves, illegal_at, illegal = demo_game(seed)
    boards = boards_of_moves(moves)
    beats = [Beat(boards[0], hand_frames=0, still_frames=20)]
    for k, board in enumerate(boards[1:]):
        if k == illegal_at:
            before = boards[k]
            wrong = dict(before.tiles)
            colour = "light" if k % 2 == 0 else "dark"
            for name in illegal.split(","):
                wrong[name] = colour
            beats.append(Beat(BoardView(wrong, before.bridges), still_frames=25))
        if board != boards[k]:
            beats.append(Beat(board, still_frames=12))
    return beats


DEMO_TIMING = dict(still_s=0.9, reach_s=0.3, hover_s=0.2, place_s=0.3, leave_s=0.3)
"""How long each part of a move takes in the demo video (`SequenceTiming`, seconds): the
still pause is over twice the live loop's settle window."""


def write_demo_video(path: Path, fps: float = FPS) -> list[Truth]:
    """Render the demo game with the synth helper's `render_sequence` (a hand carries each
    piece in from the mover's side) and store it (.mp4: mp4v, .avi: MJPG)."""
    from lab.synth import SequenceTiming, render_sequence
    from lab.synth import write_video as synth_write

    boards = [beat.board for beat in demo_beats()]
    positions = [position_of(b) for b in boards]
    camera = CameraSpec(width=SIZE[0], height=SIZE[1], focal_px=SIZE[0] * 0.75)
    spec = SceneSpec(board=positions[0][0], camera=camera)
    timing = SequenceTiming(fps=fps, **DEMO_TIMING)
    sequence = synth_write(path, render_sequence(positions, spec, timing), fps)
    return [frame_truth(k, fps, item.frame) for k, item in enumerate(sequence)]


if __name__ == "__main__":
    import sys

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/demo/game.mp4")
    out.parent.mkdir(parents=True, exist_ok=True)
    truths = write_demo_video(out)
    print(f"{out}: {len(truths)} frames, {out.stat().st_size // 1024} KiB")
