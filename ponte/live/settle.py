"""Settling: turn a stream of per-frame readings into boards worth judging.

A camera sees hands, half-placed tiles and flicker; the referee must only ever see a board
that has come to rest. `SettleDetector` commits a board when every reading for `window`
seconds agreed and none was occluded. Hands in the picture therefore never create, remove
or move tiles: while anything occludes the board the clock is reset.

Pure: plain values in, plain values out; time is whatever the caller stamps readings with.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

DEFAULT_WINDOW = 0.4
"""Seconds a board must stay still and unoccluded before it is committed."""

BridgeEnds = tuple[str, str]
"""A bridge as its two end cell names, sorted by (file, rank)."""


def cell_key(name: str) -> tuple[int, int]:
    """Sort key of a cell name: (file, rank)."""
    return (ord(name[0]) - ord("a"), int(name[1:]))


def bridge_ends(a: str, b: str) -> BridgeEnds:
    """A bridge's ends in (file, rank) order."""
    return (a, b) if cell_key(a) <= cell_key(b) else (b, a)


@dataclass(frozen=True, slots=True)
class BoardView:
    """What lies on the board: tile colour ("light"/"dark") by cell name, and the bridges."""

    tiles: Mapping[str, str] = field(default_factory=dict)
    bridges: frozenset[BridgeEnds] = frozenset()

    @staticmethod
    def of(tiles: Mapping[str, str], bridges: Iterable[tuple[str, str]] = ()) -> BoardView:
        return BoardView(dict(tiles), frozenset(bridge_ends(a, b) for a, b in bridges))

    def key(self) -> tuple[tuple[tuple[str, str], ...], tuple[BridgeEnds, ...]]:
        """A hashable, order-free form (equal boards have equal keys)."""
        return (tuple(sorted(self.tiles.items())), tuple(sorted(self.bridges)))

    def same_as(self, other: BoardView | None) -> bool:
        return other is not None and self.key() == other.key()

    def to_dict(self) -> dict[str, object]:
        return {
            "tiles": dict(sorted(self.tiles.items(), key=lambda kv: cell_key(kv[0]))),
            "bridges": [list(b) for b in sorted(self.bridges)],
        }

    @staticmethod
    def from_dict(data: Mapping[str, object]) -> BoardView:
        tiles = data.get("tiles", {})
        bridges = data.get("bridges", [])
        assert isinstance(tiles, Mapping) and isinstance(bridges, list)
        return BoardView.of({str(k): str(v) for k, v in tiles.items()},
                            [(str(a), str(b)) for a, b in bridges])


@dataclass(frozen=True, slots=True)
class Reading:
    """One frame's reading, stamped with the frame's time in seconds."""

    t: float
    board: BoardView
    occluded: bool = False
    occluded_cells: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Settled:
    """A board that has come to rest: when it started being still and when it was committed."""

    board: BoardView
    since: float
    t: float


class SettleDetector:
    """Commits a board once it has been unchanged and unoccluded for `window` seconds.

    `feed(reading)` returns a `Settled` the first time a still stretch reaches the window
    and None otherwise; a board is committed once per still stretch, so an unchanged board
    seen for minutes is judged once (a hand passing over starts a new stretch).
    """

    def __init__(self, window: float = DEFAULT_WINDOW) -> None:
        if window < 0:
            raise ValueError("the settle window cannot be negative")
        self.window = window
        self._candidate: BoardView | None = None
        self._since = 0.0
        self._committed = False
        self.moving = False
        """Whether the latest reading was occluded or differed from the one before."""

    def feed(self, reading: Reading) -> Settled | None:
        if reading.occluded:
            self._candidate = None
            self._committed = False
            self.moving = True
            return None
        if not reading.board.same_as(self._candidate):
            self._candidate = reading.board
            self._since = reading.t
            self._committed = False
            self.moving = True
        else:
            self.moving = False
        if not self._committed and reading.t - self._since >= self.window:
            self._committed = True
            return Settled(reading.board, self._since, reading.t)
        return None

    def latest(self) -> BoardView | None:
        """The board of the current still stretch (None while occluded)."""
        return self._candidate

    def reset(self) -> None:
        self._candidate = None
        self._committed = False
