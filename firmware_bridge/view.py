"""What the LEDs should show, as a plain value, and how each layout renders it.

`LedView` is what the live loop hands over; `render_view(view, layout)` is a pure function
from it to an `LedFrame` (a palette plus one palette index per LED). Blinking and breathing
are palette effects that the firmware animates itself, so a frame is sent only when the
view changes (and as a keep-alive).

- idle: every LED breathes a dim blue.
- playing: the turn LED of the side to move is lit (light: warm white, dark: red-orange);
  the status LED is dim green; the board LEDs are dark.
- flagged: as playing, and each flagged cell's file and rank LEDs (edges) or its cell LED
  (matrix) blink magenta, as does the status LED.
- void: every LED blinks red slowly.
- over: the winner's turn LED (both on a draw) and the status LED are green.

>>> view = LedView(turn=Turn.LIGHT, flagged=frozenset({(0, 2)}), status=Status.FLAGGED)
>>> frame = render_view(view, load_layout("edges"))
>>> len(frame.indices), frame.colours()[0] == FLAG, frame.colours()[12] == FLAG
(23, True, True)
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from pathlib import Path

from firmware_bridge.protocol import Colour, Effect, LedFrame

#: The layouts shipped with the package.
LAYOUTS_FILE = Path(__file__).with_name("layouts.json")

OFF = Colour(0, 0, 0)
LIGHT = Colour(255, 150, 60)
"""The light player: warm white."""
DARK = Colour(255, 50, 0)
"""The dark player: red-orange."""
FLAG = Colour(255, 0, 160, Effect.BLINK)
"""An illegal tile: magenta, blinking."""
VOID = Colour(255, 0, 0, Effect.SLOW_BLINK)
"""The game is void: everything red, blinking slowly."""
WIN = Colour(0, 255, 40)
"""Game over: green on the winner's side."""
OK = Colour(0, 60, 10)
"""Status LED while play goes on without flags: dim green."""
IDLE = Colour(20, 30, 70, Effect.BREATHE)
"""No game: a calm, dim breathing blue."""


class Turn(enum.Enum):
    """Whose turn it is."""

    LIGHT = "light"
    """The light player moves."""
    DARK = "dark"
    """The dark player moves."""
    NONE = "none"
    """Nobody (no game, or the game is over)."""


class Status(enum.Enum):
    """The state of play as the LEDs show it."""

    IDLE = "idle"
    """No game running: calm breathing."""
    PLAYING = "playing"
    """A game is on and the board is legal."""
    FLAGGED = "flagged"
    """A game is on and some tiles are flagged as illegal."""
    VOID = "void"
    """The game cannot go on (e.g. the board no longer matches the record)."""
    OVER = "over"
    """The game has ended; `winner` says who won."""


class LayoutError(ValueError):
    """A layout name or layout file that cannot be used."""


@dataclass(frozen=True)
class LedView:
    """Everything the LEDs show. Cells are 0-based (file, rank): file 0 is 'a', rank 0 is '1'."""

    turn: Turn = Turn.NONE
    flagged: frozenset[tuple[int, int]] = field(default_factory=frozenset)
    status: Status = Status.IDLE
    winner: Turn = Turn.NONE
    board_size: int = 10

    def __post_init__(self) -> None:
        if self.board_size not in (10, 12):
            raise ValueError(f"board size must be 10 or 12, not {self.board_size}")
        for file, rank in self.flagged:
            if not (0 <= file < self.board_size and 0 <= rank < self.board_size):
                raise ValueError(f"flagged cell {(file, rank)} is off the board")


@dataclass(frozen=True)
class Layout:
    """How LEDs are wired: a sequence of parts, each `files`, `ranks` or `cells` (one LED
    per file, rank or cell) or a single LED (`turn_light`, `turn_dark`, `status`)."""

    name: str
    parts: tuple[str, ...]
    serpentine: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        unknown = set(self.parts) - _PART_NAMES
        if unknown:
            raise LayoutError(f"layout {self.name!r}: unknown parts {sorted(unknown)}")

    def led_count(self, board_size: int) -> int:
        return sum(_part_size(part, board_size) for part in self.parts)


_PART_NAMES = {"files", "ranks", "cells", "turn_light", "turn_dark", "status"}


def _part_size(part: str, board_size: int) -> int:
    if part in ("files", "ranks"):
        return board_size
    if part == "cells":
        return board_size * board_size
    return 1


def load_layout(name: str, path: Path = LAYOUTS_FILE) -> Layout:
    """The layout called `name` in the JSON file at `path`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LayoutError(f"cannot read layouts from {path}: {exc}") from exc
    if name not in data:
        raise LayoutError(f"no layout {name!r} in {path}; there are {sorted(data)}")
    entry = data[name]
    try:
        return Layout(
            name,
            tuple(entry["parts"]),
            bool(entry.get("serpentine", False)),
            str(entry.get("description", "")),
        )
    except (KeyError, TypeError) as exc:
        raise LayoutError(f"layout {name!r} in {path} is malformed: {exc}") from exc


def layout_names(path: Path = LAYOUTS_FILE) -> list[str]:
    return sorted(json.loads(path.read_text(encoding="utf-8")))


def _cell_offset(file: int, rank: int, size: int, serpentine: bool) -> int:
    if serpentine and rank % 2 == 1:
        return rank * size + (size - 1 - file)
    return rank * size + file


def render_view(view: LedView, layout: Layout) -> LedFrame:
    """The LED frame that shows `view` on `layout`."""
    size = view.board_size
    colours: list[Colour] = []
    flagged_files = {file for file, _ in view.flagged}
    flagged_ranks = {rank for _, rank in view.flagged}
    playing = view.status in (Status.PLAYING, Status.FLAGGED)
    for part in layout.parts:
        if view.status is Status.VOID:
            colours += [VOID] * _part_size(part, size)
        elif view.status is Status.IDLE:
            colours += [IDLE] * _part_size(part, size)
        elif part == "files":
            colours += [FLAG if f in flagged_files else OFF for f in range(size)]
        elif part == "ranks":
            colours += [FLAG if r in flagged_ranks else OFF for r in range(size)]
        elif part == "cells":
            cells = [OFF] * (size * size)
            for file, rank in view.flagged:
                cells[_cell_offset(file, rank, size, layout.serpentine)] = FLAG
            colours += cells
        elif part in ("turn_light", "turn_dark"):
            side = Turn.LIGHT if part == "turn_light" else Turn.DARK
            if view.status is Status.OVER:
                won = view.winner in (side, Turn.NONE)
                colours.append(WIN if won else OFF)
            elif playing and view.turn is side:
                colours.append(LIGHT if side is Turn.LIGHT else DARK)
            else:
                colours.append(OFF)
        else:  # status
            if view.status is Status.OVER:
                colours.append(WIN)
            elif view.flagged or view.status is Status.FLAGGED:
                colours.append(FLAG)
            else:
                colours.append(OK)
    return LedFrame.from_colours(colours)
