"""`ponte bench live`: the live loop's latency and CPU use at 30 fps, 720p.

1. *Settle-to-verdict latency*: the board is judged on the frame that completes its settle
   window, so the latency is that frame's work — reading it with the vision pipeline —
   plus judging the settled board against the record, committing the step to SQLite
   (with its JPEG) and publishing the events. Measured separately on a whole plausible
   game (every move of `heuristic_game`, through `LiveSession` with a real database) and on
   720p frames read by the real `BoardReader`; the figure is the sum of the two p95s.
2. *CPU use*: a 720p, 30 fps synthetic game video played in real time through the whole
   loop (decode, vision, settle, session, camera picture); CPU seconds of this process
   over wall seconds (1.0 = one core).
3. *Reading a game*: the bundled demo video transcribed through the real pipeline; how
   many of its moves come out, in order.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ponte.live.infer import expected_board
from ponte.live.session import LiveSession
from ponte.live.settle import Reading
from ponte.live.store import Store
from referee import Game
from referee.playout import heuristic_game


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _judging_latency(data: Path, games: int) -> list[float]:
    """Seconds from the settling frame's reading to its events being published."""
    times: list[float] = []
    for seed in range(games):
        store = Store(data / f"judge-{seed}")
        session = LiveSession(store, settle_window=0.4)
        replayed = Game()
        t = 0.0
        for played in heuristic_game(seed).moves:
            text = str(played.move)
            if text in ("swap", "pass"):
                replayed.push(played.move)
                session.control(text, {})
                continue
            replayed.push(played.move)
            board = expected_board(replayed)
            for _ in range(20):
                t += 1 / 30
                start = time.perf_counter()
                events = session.feed(Reading(t, board), snapshot=lambda: b"\xff" * 12000)
                if events:
                    times.append(time.perf_counter() - start)
        store.close()
    return times


def _video(path: Path, fps: float, moves: int) -> None:
    from lab.scenes import Beat, boards_of_moves, render_script, write_video

    game = heuristic_game(3)
    texts = [str(m.move) for m in game.moves if str(m.move) not in ("swap", "pass")][:moves]
    beats = [Beat(b, hand_frames=int(fps * 1.2), still_frames=int(fps * 1.5))
             for b in boards_of_moves(texts)]
    write_video(path, render_script(beats, fps=fps, size=(1280, 720)), fps)


def _reading_times(video: Path, frames: int) -> tuple[list[float], int]:
    from ponte.live.camera import CameraReader
    from ponte.live.sources import open_source

    source = open_source(str(video))
    camera = CameraReader()
    times: list[float] = []
    occluded = 0
    try:
        while len(times) < frames and (frame := source.read()) is not None:
            if not camera.calibrated:
                camera.read(frame.image, frame.t)
                continue
            start = time.perf_counter()
            reading = camera.read(frame.image, frame.t)
            times.append(time.perf_counter() - start)
            occluded += reading.occluded
    finally:
        source.close()
    return times, occluded


def _cpu_share(video: Path, data: Path, seconds: float) -> tuple[float, int, float]:
    from ponte.live.camera import CameraReader
    from ponte.live.loop import run_live
    from ponte.live.sources import open_source

    store = Store(data / "cpu")
    session = LiveSession(store)
    source = open_source(str(video))
    wall0, cpu0 = time.monotonic(), time.process_time()
    try:
        stats = run_live(source, CameraReader(), session, realtime=True, duration=seconds)
    finally:
        source.close()
        store.close()
    wall, cpu = time.monotonic() - wall0, time.process_time() - cpu0
    return cpu / wall, stats.frames, stats.frames / wall


def _demo_through_vision() -> tuple[int, int, int, int]:
    """The bundled demo video transcribed through the real vision pipeline: moves read in
    order matching the game, moves in the game, flags raised, settled boards."""
    from contracts.live import EventType
    from lab.scenes import demo_moves
    from ponte.commands.demo import DEMO_VIDEO
    from ponte.live.camera import CameraReader
    from ponte.live.loop import transcribe
    from ponte.live.sources import open_source

    source = open_source(str(DEMO_VIDEO))
    try:
        result = transcribe(source, CameraReader())
    finally:
        source.close()
    truth = demo_moves()[0]
    read = [str(m.move) for m in result.table.game.moves]
    right = 0
    for seen, played in zip(read, truth, strict=False):
        if seen != played:
            break
        right += 1
    flags = sum(1 for kind, _ in result.events if kind is EventType.ILLEGAL)
    return right, len(truth), flags, len(result.events)


def run(args: argparse.Namespace) -> int:
    quick = bool(getattr(args, "quick", False))
    fps = 30.0
    with tempfile.TemporaryDirectory(prefix="ponte-bench-live-") as tmp:
        data = Path(tmp)
        judged = _judging_latency(data, 1 if quick else 4)
        video = data / "game720.avi"
        _video(video, fps, 3 if quick else 8)
        reads, occluded = _reading_times(video, 60 if quick else 300)
        share, frames, rate = _cpu_share(video, data, 4.0 if quick else 20.0)
    right, total, flags, events = _demo_through_vision()
    judge_p95 = _p95(judged) * 1e3
    read_p95 = _p95(reads) * 1e3 if reads else float("nan")
    print("live loop (ponte bench live)")
    print(f"  judging a settled board + commit + publish: median "
          f"{statistics.median(judged) * 1e3:.1f} ms, p95 {judge_p95:.1f} ms "
          f"({len(judged)} settled boards)")
    print(f"  reading one 720p frame (vision BoardReader): median "
          f"{statistics.median(reads) * 1e3:.1f} ms, p95 {read_p95:.1f} ms "
          f"({len(reads)} frames, {occluded} read as occluded)")
    print(f"  settle-to-verdict latency (p95 sum): {judge_p95 + read_p95:.1f} ms "
          f"(target <= 300 ms)")
    print(f"  CPU at 30 fps 720p in real time: {share:.2f} of one core "
          f"({frames} frames at {rate:.1f} fps; target <= 0.5)")
    print(f"  demo video through the real vision pipeline: {right} of {total} moves read "
          f"in order ({flags} flags, {events} events; the game has 1 flag, corrected)")
    return 0
