"""Whole games as ray-traced videos: hands carry every piece in; fast play; a knocked camera.

`python -m lab.raytrace.games --out DIR --games 12 --turns 24 --seed 2`

Each game is a legal game (heuristic players, bridges of every shape) played on one table of
a setup (setups round-robin). Between two boards the mover's arm reaches in from that
player's side of the table, puts each tile down (carried between the fingers) or lays the
bridge on its two tiles, and leaves; the board then stays still for `still_s`, or in fast
play only `fast_still_s` before the next hand arrives. A knock (every third game, a third
of the way in, unless `--knock-at` says otherwise) shakes the camera for a moment and leaves
it slightly turned. The camera meters every frame on its own (a hand in view changes the
exposure). A frame with a hand is traced only inside the box that holds the arm, its
shadows and the pieces put down since the last still board, over that board's trace (the
rest of the picture cannot have changed); the hand's cells in the truth are those the
balls that hold the arm cover. Written per game: `NN.mp4` (H.264 where `ffmpeg` is
installed, else MPEG-4), `NN.jsonl.gz` (one truth line per frame: `index`, `time_s`, `move`
(moves completed), `phase` (`still`/`hand`), `board`, `bridges`, `occluded_cells`, `bumped`)
and `NN.moves` (the moves played, one a line). Frames already rendered are kept in
`NN.frames/`, so a stopped run resumes. With `--part K/N`, a process renders only the
frames of the moves whose number is K modulo N, into the same folder, and writes no video:
N such processes share one game between N cores, and a run without `--part` then puts
the video together from the kept frames.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import math
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from lab.raytrace import VERSION
from lab.raytrace.model import (
    SETUPS,
    BridgePiece,
    Hand,
    Scene,
    Table,
    TilePiece,
    random_table,
)
from lab.raytrace.render import DRAFT, Quality, render
from lab.raytrace.scene import _rotated, hand_balls
from referee import Bridge, Colour, Game, Pass, Swap, Tiles, bridge_shape, parse_move
from referee.playout import heuristic_move


@dataclass(frozen=True)
class Timing:
    """How the game is played in time (seconds) and filmed (frames a second)."""

    fps: float = 10.0
    still_s: float = 1.5
    fast_still_s: float = 0.3
    fast_share: float = 0.3
    """The share of turns after which the next hand arrives `fast_still_s` after the last
    left (fast play)."""
    reach_s: float = 0.7
    place_s: float = 0.5
    knock_at_turn: int | None = None


def game_moves(seed: int, turns: int) -> list[str]:
    """A legal game of `turns` board moves with bridges of every shape where it can."""
    rng = random.Random(seed)
    game = Game()
    moves: list[str] = []
    shapes_seen: set[str] = set()
    def shape(b: Bridge) -> str:
        found = bridge_shape(b.b.file - b.a.file, b.b.rank - b.a.rank)
        return found.value if found else ""

    while len(moves) < turns and not game.is_over():
        colour = game.turn
        assert colour is not None
        move: Tiles | Bridge | Pass | Swap | Any = None
        bridges = game.position.legal_bridges(colour) if len(moves) >= 4 else []
        new_shape = [b for b in bridges if shape(b) not in shapes_seen]
        if new_shape and rng.random() < 0.6:
            move = rng.choice(new_shape)
        elif bridges and rng.random() < 0.2:
            move = rng.choice(bridges)
        else:
            move = heuristic_move(game, rng)
            if isinstance(move, Swap | Pass):
                pairs = game.position.legal_tile_pairs(colour)
                if not pairs:
                    break
                move = rng.choice(pairs)
        if isinstance(move, Bridge):
            shapes_seen.add(shape(move))
        game.push(move)
        moves.append(str(move))
    return moves


def _board_after(moves: Sequence[str]) -> tuple[list[tuple[int, int, str]],
                                                 list[tuple[tuple[int, int], tuple[int, int]]]]:
    game = Game()
    for text in moves:
        game.push(parse_move(text))
    tiles = [(c.file, c.rank, colour.value) for colour in (Colour.LIGHT, Colour.DARK)
             for c in game.position.tiles(colour)]
    bridges = [((b.move.a.file, b.move.a.rank), (b.move.b.file, b.move.b.rank))
               for b in game.position.bridges]
    return tiles, bridges


@dataclass(frozen=True)
class Pose:
    """The hand's tip over the board at one moment, and what it carries."""

    x: float
    y: float
    z: float
    holds: str


def turn_poses(move: str, colour: str, side_deg: float, timing: Timing, tile_h: float,
                turns: int) -> list[tuple[Pose, int]]:
    """The hand's path for one turn, one pose a frame (in the board frame, the board
    turned by `turns` quarter turns); with each pose the number of the turn's pieces
    already put down."""
    a = math.radians(side_deg)
    home = (5 + 15 * math.sin(a), 5 - 15 * math.cos(a))
    parsed = parse_move(move)
    if isinstance(parsed, Bridge):
        ca, cb = parsed.a, parsed.b
        targets = [_rotated((ca.file + cb.file) / 2 + 0.5, (ca.rank + cb.rank) / 2 + 0.5,
                            turns)]
        carry = ["bridge"]
    else:
        assert isinstance(parsed, Tiles)
        targets = [_rotated(c.file + 0.5, c.rank + 0.5, turns) for c in parsed.cells]
        carry = [colour, colour]
    n_reach = max(2, round(timing.reach_s * timing.fps))
    n_place = max(2, round(timing.place_s * timing.fps))
    low = tile_h + 0.35
    poses: list[tuple[Pose, int]] = []
    here = (home[0], home[1], 4.0)
    for k, (tx, ty) in enumerate(targets):
        steps = n_reach if k == 0 else n_place
        for i in range(1, steps + 1):
            s = i / steps
            e = s * s * (3 - 2 * s)
            poses.append((Pose(here[0] + (tx - here[0]) * e, here[1] + (ty - here[1]) * e,
                               here[2] + (1.6 - here[2]) * e, carry[k]), k))
        poses.append((Pose(tx, ty, low, carry[k]), k))
        poses.append((Pose(tx, ty, low, "nothing"), k + 1))
        poses.append((Pose(tx, ty, 1.6, "nothing"), k + 1))
        here = (tx, ty, 1.6)
    for i in range(1, n_reach + 1):
        s = i / n_reach
        e = s * s * (3 - 2 * s)
        poses.append((Pose(here[0] + (home[0] - here[0]) * e, here[1] + (home[1] - here[1]) * e,
                           here[2] + (4.0 - here[2]) * e, "nothing"), len(targets)))
    return poses


def _scene(table: Table, tiles: list[tuple[int, int, str]],
           bridges: list[tuple[tuple[int, int], tuple[int, int]]], hand: Hand | None,
           looks: dict[Any, TilePiece | BridgePiece], camera: Any) -> Scene:
    pieces = tuple(looks[(f, r, c)] for f, r, c in tiles)  # type: ignore[misc]
    spans = tuple(looks[(a, b)] for a, b in bridges)  # type: ignore[misc]
    return Scene(table.setup, table.seed, camera, table.board_turns, table.edition, pieces,
                 spans, table.lights, table.ambient, table.table, table.table_colour,
                 (hand,) if hand else (), table.props, table.effects)


def _looks(rng: np.random.Generator, table: Table, tiles: list[tuple[int, int, str]],
           bridges: list[tuple[tuple[int, int], tuple[int, int]]],
           looks: dict[Any, Any]) -> None:
    e = table.edition
    for f, r, c in tiles:
        looks.setdefault((f, r, c), TilePiece(
            f, r, c, float(rng.normal(0, 0.03)), float(rng.normal(0, 0.03)),
            float(rng.normal(0, 3.0)), e.tile_size * float(rng.uniform(0.98, 1.02)),
            float(rng.uniform(-0.08, 0.08)), int(rng.integers(1 << 30))))
    for a, b in bridges:
        looks.setdefault((a, b), BridgePiece(a, b, float(rng.normal(0, 0.03)),
                                             float(rng.normal(0, 2.0))))


def game_frames(table: Table, moves: Sequence[str], timing: Timing, seed: int,
                quality: Quality, kept: Path | None = None,
                part: tuple[int, int] | None = None
                ) -> Iterator[tuple[np.ndarray, dict[str, Any]]]:
    """Render the game frame by frame: (image, truth) pairs. With `kept`, each rendered
    frame is kept there and taken from there when the same game is rendered again. With
    `part` (K, N) and `kept`, only the frames of the moves whose number is K modulo N are
    rendered; the others, unless kept already, are given as black frames with an empty
    truth (of the first frame's size, which the process of part 0 renders)."""
    rng = np.random.default_rng([seed, 77])
    looks: dict[Any, Any] = {}
    sides = {"light": float(rng.uniform(0, 360))}
    sides["dark"] = sides["light"] + 180.0
    skins = {c: Hand((0, 0, 0), (0, 0), 0, 0, s, v, float(rng.uniform(0.3, 0.8)), "nothing")
             for c, s, v in (("light", (0.75, 0.52, 0.4), (0.15, 0.2, 0.5)),
                             ("dark", (0.45, 0.28, 0.18), (0.5, 0.1, 0.1)))}
    camera = table.camera
    index = 0
    black: np.ndarray | None = None

    def blank() -> np.ndarray:
        nonlocal black
        if black is None:
            assert kept is not None
            while not (kept / "00000.json").exists():  # written after its image
                time.sleep(2.0)
            black = np.zeros_like(cv2.imread(str(kept / "00000.png"), cv2.IMREAD_COLOR))
        return black

    def shot(scene: Scene, phase: str, done: int, bumped: bool,
             over: tuple[np.ndarray, np.ndarray] | None = None
             ) -> tuple[np.ndarray, dict[str, Any], np.ndarray]:
        nonlocal index
        image_file = kept / f"{index:05d}.png" if kept else None
        canvas_file = kept / f"{index:05d}.canvas.png" if kept else None
        truth_file = kept / f"{index:05d}.json" if kept else None
        if image_file and canvas_file and truth_file and truth_file.exists():
            image = cv2.imread(str(image_file), cv2.IMREAD_COLOR)
            canvas = cv2.imread(str(canvas_file), cv2.IMREAD_COLOR)
            truth = json.loads(truth_file.read_text(encoding="utf-8"))
        elif part is not None and done % part[1] != part[0]:
            image = canvas = blank()
            truth = {}
        else:
            frame = render(dataclasses.replace(scene, seed=(*scene.seed, index)), quality,
                           over=over, board=table.seed, traced_mask=False)
            image = frame.image
            assert frame.canvas is not None
            canvas = frame.canvas
            truth = {"index": index, "time_s": round(index / timing.fps, 3), "move": done,
                     "phase": phase, "board": frame.truth["board"],
                     "bridges": frame.truth["bridges"],
                     "occluded_cells": frame.truth["occluded_cells"], "bumped": bumped,
                     "corners": frame.truth["corners"]}
            if image_file and canvas_file and truth_file:
                cv2.imwrite(str(image_file), image)
                cv2.imwrite(str(canvas_file), canvas)
                truth_file.write_text(json.dumps(truth), encoding="utf-8")
        index += 1
        return image, truth, canvas

    bumped = False
    still_board: tuple[np.ndarray, dict[str, Any], np.ndarray] | None = None
    board: tuple[list[Any], list[Any]] = ([], [])
    first_still = round(2.0 * timing.fps)
    turns = table.board_turns
    for done in range(len(moves) + 1):
        stills = first_still if done == 0 else round(
            (timing.fast_still_s if rng.random() < timing.fast_share else timing.still_s)
            * timing.fps)
        board = _board_after(moves[:done])
        _looks(rng, table, *board, looks)
        if timing.knock_at_turn is not None and done == timing.knock_at_turn:
            base = camera
            for k in range(4):
                wobble = (4 - k) / 4
                shaken = dataclasses.replace(
                    base, azimuth_deg=base.azimuth_deg + wobble * float(rng.normal(0, 1.5)),
                    roll_deg=base.roll_deg + wobble * float(rng.normal(0, 1.0)))
                yield shot(_scene(table, *board, None, looks, shaken), "still", done, True)[:2]
            camera = dataclasses.replace(base, azimuth_deg=base.azimuth_deg + float(
                rng.uniform(-1.5, 1.5)), elevation_deg=base.elevation_deg + float(
                rng.uniform(-1.0, 1.0)))
            bumped = True
            still_board = None
        for k in range(stills):
            if still_board is None or k == 0:
                still_board = shot(_scene(table, *board, None, looks, camera), "still", done,
                                   bumped)
                yield still_board[:2]
            else:
                image, truth, _ = still_board
                noisy = _renoise(image, rng, table.effects.noise)
                yield noisy, {**truth, "index": index, "time_s": round(index / timing.fps, 3)}
                index += 1
        if done == len(moves):
            break
        assert still_board is not None
        base_canvas = still_board[2]
        colour = "light" if done % 2 == 0 else "dark"
        before, after = _board_after(moves[:done]), _board_after(moves[:done + 1])
        _looks(rng, table, *after, looks)
        new_tiles = [t for t in after[0] if t not in before[0]]
        new_bridges = [b for b in after[1] if b not in before[1]]
        e = table.edition
        for pose, placed in turn_poses(moves[done], colour, sides[colour], timing,
                                        e.tile_height, turns):
            tiles = before[0] + new_tiles[:placed]
            bridges = after[1] if placed and new_bridges else before[1]
            skin = skins[colour]
            shoulder_a = math.radians(sides[colour])
            hand = dataclasses.replace(
                skin, shoulder=(5 + 22 * math.sin(shoulder_a), 5 - 22 * math.cos(shoulder_a),
                                10.0),
                reach=(pose.x, pose.y), height=pose.z, holds=pose.holds)
            scene = _scene(table, tiles, bridges, hand, looks, camera)
            balls = [hand_balls(hand)]
            balls += [_piece_balls(t, e, turns) for t in new_tiles[:placed]]
            if bridges is after[1]:
                balls += [_span_balls(b, e, turns) for b in new_bridges]
            yield shot(scene, "hand", done, bumped,
                       over=(base_canvas, np.concatenate(balls)))[:2]
        still_board = None


def _piece_balls(tile: tuple[int, int, str], e: Any, turns: int) -> np.ndarray:
    """A ball around a tile put down (its label cell) in the board frame."""
    x, y = _rotated(tile[0] + 0.5, tile[1] + 0.5, turns)
    return np.asarray([[x, y, e.tile_height / 2, 0.8 * e.tile_size + 0.1]])


def _span_balls(span: tuple[tuple[int, int], tuple[int, int]], e: Any, turns: int
                ) -> np.ndarray:
    """Balls along a bridge put down, from one end cell to the other."""
    (fa, ra), (fb, rb) = span
    ax, ay = _rotated(fa + 0.5, ra + 0.5, turns)
    bx, by = _rotated(fb + 0.5, rb + 0.5, turns)
    z = e.tile_height + e.bridge_height / 2
    return np.asarray([[ax + (bx - ax) * s, ay + (by - ay) * s, z, 0.9]
                       for s in np.linspace(-0.1, 1.1, 9)])


def _renoise(image: np.ndarray, rng: np.random.Generator, noise: float) -> np.ndarray:
    """The same view again with fresh sensor noise (a still board between two frames)."""
    grain = rng.normal(0.0, 255.0 * noise * 0.6, image.shape[:2]).astype(np.float32)
    out = image.astype(np.float32) + grain[..., None]
    return np.asarray(np.clip(out, 0, 255), dtype=np.uint8)


def write_video(frames: list[np.ndarray], path: Path, fps: float) -> str:
    """Encode frames as H.264 (ffmpeg) or MPEG-4 (OpenCV); return the codec used. H.264's
    colour planes want an even size: an odd last row or column is left out."""
    h, w = frames[0].shape[:2]
    h, w = h - h % 2, w - w % 2
    frames = [f[:h, :w] for f in frames]
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg:
        proc = subprocess.Popen(
            [ffmpeg, "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "bgr24",
             "-s", f"{w}x{h}", "-r", str(fps), "-i", "-", "-c:v", "libx264", "-preset",
             "slow", "-crf", "28", "-pix_fmt", "yuv420p", str(path)],
            stdin=subprocess.PIPE)
        assert proc.stdin is not None
        try:
            for f in frames:
                proc.stdin.write(np.ascontiguousarray(f).tobytes())
            proc.stdin.close()
        except BrokenPipeError:
            pass
        if proc.wait() == 0:
            return "h264"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (w, h))
    for f in frames:
        writer.write(f)
    writer.release()
    return "mp4v"


def write_game(out: Path, number: int, setup: str, seed: int, turns: int, timing: Timing,
               quality: Quality, megapixels: float | None = None,
               part: tuple[int, int] | None = None) -> Path:
    """Render game `number` into `out` (resuming from its kept frames; a game whose
    video, truth and moves are all there is left as it is); return the video. With
    `megapixels`, a camera larger than that is filmed at that size (`quality.scale` then
    set to match). With `part` (see `game_frames`), only that part's frames are rendered
    and kept, and no video is written."""
    out.mkdir(parents=True, exist_ok=True)
    stamp = out / "VERSION"
    if stamp.exists() and stamp.read_text(encoding="utf-8").strip() != VERSION:
        raise SystemExit(f"error: {out} was made by another raytrace generator version")
    video = out / f"{number:02d}.mp4"
    done = [video, out / f"{number:02d}.jsonl.gz", out / f"{number:02d}.moves"]
    if all(p.exists() for p in done):
        return video
    stamp.write_text(VERSION + "\n", encoding="utf-8")
    table = random_table((seed, 1000 + number), setup)
    if megapixels is not None:
        size = table.camera.width * table.camera.height
        quality = dataclasses.replace(quality, scale=min(1.0, math.sqrt(megapixels * 1e6 / size)))
    moves = game_moves(seed * 1000 + number, turns)
    kept = out / f"{number:02d}.frames"
    kept.mkdir(exist_ok=True)
    params = json.dumps({"setup": setup, "seed": seed, "turns": turns,
                         "timing": dataclasses.asdict(timing), "scale": quality.scale,
                         "antialias": quality.antialias}, sort_keys=True)
    made_with = kept / "PARAMS"
    if made_with.exists() and made_with.read_text(encoding="utf-8") != params:
        raise SystemExit(f"error: {kept} holds frames of this game made with other settings: "
                         "delete it or render with the same settings")
    made_with.write_text(params, encoding="utf-8")
    images: list[np.ndarray] = []
    truths: list[dict[str, Any]] = []
    for image, truth in game_frames(table, moves, timing, seed * 1000 + number, quality,
                                    kept, part):
        images.append(image)
        truths.append(truth)
    if part is not None:
        return video
    write_video(images, video, timing.fps)
    lines = "".join(json.dumps({**t, "setup": setup}) + "\n" for t in truths)
    with gzip.open(out / f"{number:02d}.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write(lines)
    (out / f"{number:02d}.moves").write_text("\n".join(moves) + "\n", encoding="utf-8")
    shutil.rmtree(kept, ignore_errors=True)
    return video


def _part(text: str) -> tuple[int, int]:
    """`K/N` -> (K, N), 0 <= K < N."""
    try:
        k, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: K/N, as 0/2") from None
    if not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"{text!r}: K/N with 0 <= K < N")
    return k, n


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.raytrace.games",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--first", type=int, default=0, help="number of the first game")
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fps", type=float, default=5.0,
                        help="frames a second (default 5: a slow camera, or a slow reader)")
    parser.add_argument("--megapixels", type=float, default=0.6,
                        help="film a camera larger than this at this size (default 0.6)")
    parser.add_argument("--knock-at", type=int,
                        help="knock the camera before this turn in every game (default: "
                             "every third game, a third of the way in)")
    parser.add_argument("--part", type=_part, metavar="K/N",
                        help="render only the moves whose number is K modulo N, and no "
                             "video (N processes share a game; then run without --part)")
    args = parser.parse_args(argv)
    names = list(SETUPS)
    for number in range(args.first, args.first + args.games):
        setup = names[number % len(names)]
        knock = args.knock_at if args.knock_at is not None else (
            args.turns // 3 if number % 3 == 2 else None)
        timing = Timing(fps=args.fps, knock_at_turn=knock)
        video = write_game(args.out, number, setup, args.seed, args.turns, timing, DRAFT,
                           args.megapixels, args.part)
        done = f"part {args.part[0]}/{args.part[1]} of " if args.part else ""
        print(f"{done}{video}: {setup}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
