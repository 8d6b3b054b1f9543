"""The frame loop: source -> camera reader -> session (or a bare table), frame after frame.

`run_live` drives a `LiveSession` from a `FrameSource` — in real time for a camera or a
stream (`NewestFrame`: always its newest frame), paced to the file's clock for the demo
(`Paced`), or as fast as possible — updating the camera picture a few times a second and
reporting camera trouble as camera events.
`transcribe` is the same chain without a database: a settle detector and a `Table`, as
fast as the machine allows, returning the events and the table.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from contracts.live import EventType
from ponte.live.camera import CameraReader, overlay_jpeg, warped_jpeg
from ponte.live.session import LiveSession
from ponte.live.settle import DEFAULT_WINDOW, BoardView, SettleDetector
from ponte.live.sources import Frame, FrameSource, Paced
from ponte.live.table import Emitted, Table

Progress = Callable[[int], None]


@dataclass
class LoopStats:
    """What a run of the loop did and how long its parts took."""

    frames: int = 0
    settled: int = 0
    events: int = 0
    seconds: float = 0.0
    verdict_latency: list[float] = field(default_factory=list)
    """Seconds from the frame that completed a settle to its events being out."""
    passed_over: int = 0
    """Frames the loop had no time for: it read the newest frame instead."""


def run_live(
    source: FrameSource,
    camera: CameraReader,
    session: LiveSession,
    *,
    realtime: bool = False,
    speed: float = 1.0,
    stop: threading.Event | None = None,
    duration: float | None = None,
    picture_every: float = 0.25,
    on_frame: Callable[[Frame], None] | None = None,
) -> LoopStats:
    """Feed the session from the source until it ends, `stop` is set or `duration` passes
    (`realtime`: a file or folder on the wall clock, `speed` times as fast: see `Paced`)."""
    stats = LoopStats()
    start = time.monotonic()
    if realtime:
        source = Paced(source, speed)
    last_picture = -1e9
    bumps = camera.bumps
    while stop is None or not stop.is_set():
        if duration is not None and time.monotonic() - start >= duration:
            break
        frame = source.read()
        if frame is None:
            if not source.live and not (stop is not None and stop.is_set()):
                session.camera_ended(f"{source.description} has ended")
            break
        began = time.perf_counter()
        reading = camera.read(frame.image, frame.t)
        obs = camera.last_observation
        events = session.feed(reading, _snapshot_maker(frame.image, obs))
        stats.frames += 1
        if events:
            stats.settled += 1
            stats.events += len(events)
            stats.verdict_latency.append(time.perf_counter() - began)
        if camera.bumps != bumps:
            bumps = camera.bumps
            session.set_camera_status("bumped", "the board or camera moved; found it again")
        _report(camera, session)
        now = time.monotonic()
        if now - last_picture >= picture_every:
            last_picture = now
            session.set_camera_picture(overlay_jpeg(frame.image, obs))
        if on_frame is not None:
            on_frame(frame)
    stats.seconds = time.monotonic() - start
    stats.passed_over = int(getattr(source, "passed_over", 0))
    return stats


def _report(camera: CameraReader, session: LiveSession) -> None:
    """Pass on what the camera reader says of itself: why it is blind, what it redid."""
    notices: list[str] = getattr(camera, "notices", [])
    blind = getattr(camera, "blind", None)
    if blind != session.blind:
        session.set_blind(blind)
    while notices:
        text = notices.pop(0)
        session.set_camera_status("recalibrated", text)
        session.say(f"camera: {text}")


def _snapshot_maker(image: Any, obs: Any) -> Callable[[], bytes | None] | None:
    if obs is None:
        return None
    return lambda: warped_jpeg(image, obs.corners)


@dataclass
class Transcript:
    table: Table
    events: list[Emitted]
    frames: int
    calibrated: bool
    last_t: float = 0.0
    """The time of the last frame read (seconds into the recording)."""


def transcribe(
    source: FrameSource,
    camera: CameraReader,
    *,
    settle_window: float = DEFAULT_WINDOW,
    progress: Progress | None = None,
    on_events: Callable[[list[Emitted]], None] | None = None,
) -> Transcript:
    """Read a whole recording through the loop, as fast as possible."""
    detector = SettleDetector(settle_window, reference=BoardView())  # a game starts empty
    table = Table()
    camera.expect_empty = lambda: table.should_be_empty
    judged = None
    events: list[Emitted] = []
    frames = 0
    last_t = 0.0
    while (frame := source.read()) is not None:
        frames += 1
        last_t = frame.t
        if progress is not None:
            progress(frames)
        reading = camera.read(frame.image, frame.t)
        settled = detector.feed(reading)
        if settled is None or settled.board.same_as(judged):
            continue
        judged = settled.board
        emitted = table.judge(settled.board, frame.t)
        events += emitted
        if on_events is not None and emitted:
            on_events(emitted)
        if table.over:
            break
    return Transcript(table, events, frames, camera.calibrated, last_t)


def event_line(kind: EventType, data: dict[str, object]) -> dict[str, object]:
    """One event as `ponte transcribe --json` prints it; a pass is `{"type": "pass", ...}`."""
    out: dict[str, object] = {"type": kind.value}
    if kind is EventType.MOVE and data.get("move") == "pass":
        out["type"] = "pass"
    keep = ("ply", "move", "colour", "reason", "cells", "message", "flag", "rounds_left",
            "undone", "score", "winner", "result", "termination", "kind", "t")
    for key in keep:
        if key in data:
            value = data[key]
            out[key] = round(value, 3) if key == "t" and isinstance(value, float) else value
    return out
