"""Synthetic game videos: a hand brings each move onto the board, leaves, the board settles.

`render_sequence(positions, spec, timing)` yields `(image, SequenceTruth)` per frame. Between
two successive positions the hand of the player whose colour changed reaches in from that
player's side, takes away what disappeared, puts down each new tile (carrying it between
its fingers), then builds each new bridge, and leaves; then the board stays still for
`timing.still_s`. An optional camera bump moves the camera a little at a given time. The
static part of each board state is rendered once and reused, so frames are cheap.
`write_video` stores frames (with any truth) through cv2.VideoWriter ('mp4v' for .mp4,
'MJPG' for .avi).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

import cv2
import numpy.typing as npt

from lab.synth.position import Bridge, Cell, cell_at, parse_cell
from lab.synth.render import Frame, render
from lab.synth.spec import CameraSpec, HandSpec, InvalidScene, SceneSpec

Array = npt.NDArray[Any]

Position = tuple[tuple[str, ...], tuple[Bridge, ...]]
"""(board strings top rank first, sorted bridges): one state of the game on the board."""

_T = TypeVar("_T")
"""The truth that travels with each frame written to a video."""


class Phase(StrEnum):
    """What is happening in a frame of a synthetic game video."""

    STILL = "still"
    """No hand over the board; the board shows a settled position."""
    HAND = "hand"
    """A hand is reaching in, placing or removing pieces, or leaving."""


@dataclass(frozen=True)
class CameraBump:
    """A knock on the camera (or the board): the view shakes for `shake_s`, then stays
    shifted by the given amounts."""

    at_s: float
    azimuth_deg: float = 1.5
    elevation_deg: float = -1.0
    shift: tuple[float, float] = (0.15, -0.1)
    shake_s: float = 0.3


def _bumped(camera: CameraSpec, bump: CameraBump, now: float) -> CameraSpec:
    """The camera at time `now` (>= bump.at_s): a damped swing settling on the new pose."""
    u = (now - bump.at_s) / bump.shake_s if bump.shake_s > 0 else 1.0
    amount = 1.0 if u >= 1.0 else 1.0 - math.exp(-4.0 * u) * math.cos(3.0 * math.pi * u)
    return replace(
        camera,
        azimuth_deg=camera.azimuth_deg + bump.azimuth_deg * amount,
        elevation_deg=min(90.0, camera.elevation_deg + bump.elevation_deg * amount),
        target=(
            camera.target[0] + bump.shift[0] * amount,
            camera.target[1] + bump.shift[1] * amount,
        ),
    )


@dataclass(frozen=True)
class SequenceTiming:
    """Frame rate and how long each part of a move takes (seconds)."""

    fps: float = 15.0
    still_s: float = 1.5
    reach_s: float = 0.8
    hover_s: float = 0.35
    place_s: float = 0.5
    leave_s: float = 0.7
    light_side_deg: float = 270.0
    """Where the light player sits (board frame, as HandSpec.from_deg); dark sits opposite."""
    exposure_s: float = 0.03
    """Shutter time: a moving hand is blurred over the distance it moves meanwhile."""
    light_drift: float = 0.0
    """Slow change of the room light: exposure varies by up to this fraction (e.g. 0.15)."""
    light_drift_period_s: float = 20.0
    bump: CameraBump | None = None


@dataclass(frozen=True, eq=False)
class SequenceTruth:
    """Ground truth of one video frame: the rendered Frame plus where it lies in the game."""

    index: int
    time_s: float
    move: int
    """How many moves are complete on the board (0 = the first position)."""
    phase: Phase
    bumped: bool
    frame: Frame

    @property
    def board(self) -> tuple[str, ...]:
        return self.frame.board

    @property
    def bridges(self) -> tuple[Bridge, ...]:
        return self.frame.bridges

    @property
    def occluded(self) -> bool:
        return self.frame.occluded


@dataclass(frozen=True)
class _Action:
    kind: str  # "place", "remove", "bridge", "unbridge"
    where: tuple[float, float]
    colour: str
    cell: Cell | None = None
    bridge: Bridge | None = None


def _actions(before: Position, after: Position, size: int) -> list[_Action]:
    board_a, bridges_a = before
    board_b, bridges_b = after
    out: list[_Action] = []

    def centre(cell: Cell) -> tuple[float, float]:
        return (cell[0] + 0.5, cell[1] + 0.5)

    def mid(bridge: Bridge) -> tuple[float, float]:
        a, b = parse_cell(bridge[0], size), parse_cell(bridge[1], size)
        return ((a[0] + b[0]) / 2 + 0.5, (a[1] + b[1]) / 2 + 0.5)

    for br in sorted(set(bridges_a) - set(bridges_b)):
        out.append(
            _Action("unbridge", mid(br), cell_at(board_a, parse_cell(br[0], size)), bridge=br)
        )
    cells = [(f, r) for r in range(size) for f in range(size)]
    for c in cells:
        if cell_at(board_a, c) != "." and cell_at(board_b, c) != cell_at(board_a, c):
            out.append(_Action("remove", centre(c), cell_at(board_a, c), cell=c))
    for c in cells:
        if cell_at(board_b, c) != "." and cell_at(board_b, c) != cell_at(board_a, c):
            out.append(_Action("place", centre(c), cell_at(board_b, c), cell=c))
    for br in sorted(set(bridges_b) - set(bridges_a)):
        out.append(_Action("bridge", mid(br), cell_at(board_b, parse_cell(br[0], size)), bridge=br))
    return out


def _apply(position: Position, action: _Action) -> Position:
    board, bridges = position
    rows = [list(r) for r in board]
    n = len(board)
    if action.cell is not None:
        f, r = action.cell
        rows[n - 1 - r][f] = action.colour if action.kind == "place" else "."
    new_bridges = set(bridges)
    if action.kind == "bridge" and action.bridge is not None:
        new_bridges.add(action.bridge)
    if action.kind == "unbridge" and action.bridge is not None:
        new_bridges.discard(action.bridge)
    key = {b: [parse_cell(c, n) for c in b] for b in new_bridges}
    return tuple("".join(r) for r in rows), tuple(sorted(new_bridges, key=lambda b: key[b]))


@dataclass(frozen=True)
class _Key:
    t: float
    x: float
    y: float
    height: float
    holding: str


@dataclass(frozen=True)
class _Plan:
    keys: list[_Key]
    events: list[tuple[float, _Action]]
    side: float
    start: float
    end: float


def _smooth(u: float) -> float:
    u = min(max(u, 0.0), 1.0)
    return u * u * (3.0 - 2.0 * u)


def _plan_move(
    start: float, actions: list[_Action], side_deg: float, timing: SequenceTiming
) -> tuple[list[_Key], list[tuple[float, _Action]], float]:
    """Hand keyframes, (time, action) events and the end time of one move."""
    ang = math.radians(side_deg)
    far = 16.0
    first = actions[0].where
    keys = [_Key(start, first[0] + far * math.cos(ang), first[1] + far * math.sin(ang), 5.0, "")]
    events: list[tuple[float, _Action]] = []
    t = start + timing.reach_s
    holding = ""
    for act in actions:
        carry = {"place": act.colour, "bridge": "B"}.get(act.kind, holding)
        keys.append(_Key(t, act.where[0], act.where[1], 2.4, carry))
        t += timing.hover_s
        keys.append(_Key(t, act.where[0], act.where[1], 2.4, carry))
        t += timing.place_s / 2
        keys.append(_Key(t, act.where[0], act.where[1], 0.9, carry))
        events.append((t, act))
        holding = {"remove": act.colour, "unbridge": "B"}.get(act.kind, "")
        t += timing.place_s / 2
        keys.append(_Key(t, act.where[0], act.where[1], 2.4, holding))
    last = actions[-1].where
    t += timing.leave_s
    keys.append(_Key(t, last[0] + far * math.cos(ang), last[1] + far * math.sin(ang), 5.0, holding))
    return keys, events, t


def _hand_at(keys: list[_Key], t: float, side_deg: float, template: HandSpec) -> HandSpec | None:
    if t < keys[0].t or t >= keys[-1].t:
        return None
    for a, b in zip(keys, keys[1:], strict=False):
        if a.t <= t < b.t:
            u = _smooth((t - a.t) / max(b.t - a.t, 1e-9))
            return replace(
                template,
                target=(a.x + (b.x - a.x) * u, a.y + (b.y - a.y) * u),
                height=a.height + (b.height - a.height) * u,
                from_deg=side_deg,
                holding=a.holding if u < 0.5 else b.holding,
            )
    return None


def render_sequence(
    positions: Sequence[Position],
    spec: SceneSpec,
    timing: SequenceTiming = SequenceTiming(),  # noqa: B008 - frozen value
    hand: HandSpec | None = None,
) -> Iterator[tuple[Array, SequenceTruth]]:
    """Frames of a game video through `positions` (the first is shown at the start).

    `spec` gives camera, looks and lighting (its own board and hands are ignored); `hand`
    gives skin, sleeve and size of the players' hand (its target and height are animated).
    Raises InvalidScene if a position is not physically possible.
    """
    if not positions:
        raise InvalidScene("render_sequence needs at least one position")
    if timing.fps <= 0:
        raise InvalidScene(f"frame rate {timing.fps} must be positive")
    size = spec.size
    for board, bridges in positions:
        replace(spec, board=board, bridges=bridges)  # validates
    template = hand if hand is not None else HandSpec()
    plans: list[_Plan] = []
    t = timing.still_s
    for before, after in zip(positions, positions[1:], strict=False):
        actions = _actions(before, after, size)
        if not actions:
            plans.append(_Plan([], [], 0.0, t, t))
            t += timing.still_s
            continue
        colour = actions[-1].colour
        side = timing.light_side_deg if colour == "L" else timing.light_side_deg + 180.0
        keys, events, end = _plan_move(t, actions, side, timing)
        plans.append(_Plan(keys, events, side, t, end))
        t = end + timing.still_s
    total = t
    frame_count = int(math.floor(total * timing.fps + 1e-9))
    for index in range(frame_count):
        now = index / timing.fps
        position = positions[0]
        move = 0
        hand_spec: HandSpec | None = None
        for m, plan in enumerate(plans):
            if now < plan.start:
                break
            if now >= plan.end:
                position, move = positions[m + 1], m + 1
                continue
            for ev_t, act in plan.events:
                if now >= ev_t:
                    position = _apply(position, act)
            hand_spec = _hand_at(plan.keys, now, plan.side, template)
            later = _hand_at(plan.keys, now + timing.exposure_s, plan.side, template)
            if hand_spec is not None and later is not None and timing.exposure_s > 0:
                motion = (
                    later.target[0] - hand_spec.target[0],
                    later.target[1] - hand_spec.target[1],
                    later.height - hand_spec.height,
                )
                hand_spec = replace(hand_spec, motion=motion)
            break
        bump = timing.bump
        bumped = bump is not None and now >= bump.at_s
        camera = _bumped(spec.camera, bump, now) if bump is not None and bumped else spec.camera
        lighting = spec.lighting
        if timing.light_drift > 0:
            swing = math.sin(2.0 * math.pi * now / max(timing.light_drift_period_s, 1e-3))
            # quantised so the cached light maps are reused between nearby frames
            gain = 1.0 + round(timing.light_drift * swing * 50.0) / 50.0
            lighting = replace(lighting, exposure=lighting.exposure * gain)
        frame_spec = replace(
            spec,
            lighting=lighting,
            board=position[0],
            bridges=position[1],
            camera=camera,
            hands=(hand_spec,) if hand_spec is not None else (),
            effects=replace(spec.effects, noise_seed=index),
        )
        frame = render(frame_spec)
        phase = Phase.HAND if hand_spec is not None else Phase.STILL
        yield frame.image, SequenceTruth(index, now, move, phase, bumped, frame)


def write_video(path: str | Path, frames: Iterable[tuple[Array, _T]], fps: float) -> list[_T]:
    """Write frames to an .mp4 ('mp4v') or .avi ('MJPG') file; return their truths."""
    path = Path(path)
    codecs = {".mp4": "mp4v", ".avi": "MJPG"}
    if path.suffix.lower() not in codecs:
        raise ValueError(f"video file {path} must end in .mp4 or .avi")
    writer: cv2.VideoWriter | None = None
    truths = []
    try:
        for image, truth in frames:
            if writer is None:
                h, w = image.shape[:2]
                fourcc = cv2.VideoWriter.fourcc(*codecs[path.suffix.lower()])
                writer = cv2.VideoWriter(str(path), fourcc, fps, (w, h))
                if not writer.isOpened():
                    raise OSError(f"cannot open a video writer for {path}")
            writer.write(image)
            truths.append(truth)
    finally:
        if writer is not None:
            writer.release()
    return truths
