"""Settling: turn a stream of per-frame readings into boards worth judging.

A camera sees hands, half-placed tiles and flicker; the referee must only ever see a board
that has come to rest. `SettleDetector` commits a board when nothing has occluded it and
every cell and bridge has read the same for `window` seconds (0.3-0.5 s). Hands in the
picture therefore never create, remove or move tiles: while anything occludes the board
the clock is reset. A reading the camera holds back only because the picture moved near a
changed cell a moment ago (`Reading.pending`) goes on the clock but is never committed.

Before that, `Stirring` holds back a reading in which a cell or a bridge reads otherwise
than on the last reading nothing hid while the picture near it moved a moment ago: the hand
that put a piece down is leaving, or an arm's shadow goes by. Such a reading is `pending`.

One cell that never rests — a glare spot flipping between two readings — must not hold the
game up for ever. A cell (or bridge) that changed `flicker_changes` times or more within the
last `flicker_window` seconds is *flickering*; it does not stop the rest of the board from
settling, and it settles at its value on the *reference* board (the board committed last,
or the one the caller gave: the record's at the start) unless one other reading held it for
`change_share` of the flicker window — a flickering cell is never committed as a change
unless it has stably changed. Without a reference nothing tells which of a flickering
cell's readings is the board, so it holds the board back as before; so do more than
`MAX_FLICKERING` flickering places, or a board that, flicker apart, differs from the
reference in more places than a turn explains (`MAX_CHANGES_WITH_FLICKER`): that is what a
hand the camera failed to see as a hand looks like.

Pure: plain values in, plain values out; time is whatever the caller stamps readings with.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from referee.cells import Cell, cells_under

DEFAULT_WINDOW = 0.4
"""Seconds a board must stay still and unoccluded before it is committed."""
FLICKER_WINDOW = 2.0
"""Seconds over which a cell's changes are counted to tell flicker from a move (at least
twice the settle window)."""
FLICKER_CHANGES = 4
"""A cell that changed this many times within the flicker window is flickering."""
MAX_FLICKERING = 2
"""More places flickering at once than this is not glare: the board waits, as without a
reference."""
MAX_CHANGES_WITH_FLICKER = 4
"""While something flickers, a board that differs from the reference in more places than
this (a turn is two tiles or a bridge, perhaps with a piece taken back) waits to be still:
a hand the camera did not see as one reads as many pieces, and one of them flickering must
not let it through."""
CHANGE_SHARE = 0.8
"""A flickering cell counts as changed only if one new reading held this share of the
flicker window."""

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
    pending: bool = False
    """Occluded only because some places read otherwise than before while the picture near
    them moved a moment ago (see `Stirring`): nothing hides the board and `board` is read
    in full, but not yet to be trusted. Such a reading goes on the still stretch (a change
    in it starts the stretch afresh, as any change does) but is never committed: the wait
    for the picture to rest and the settle window run together."""
    moved: frozenset[str] = frozenset()
    """The cells near which the picture changed from the frame before
    (`vision.observation.Observation.moved`): every cell when there was none to compare."""


@dataclass(frozen=True, slots=True)
class Settled:
    """A board that has come to rest: when it started being still and when it was committed."""

    board: BoardView
    since: float
    t: float


_NOTHING = ""
"""The flat value of an empty cell or an absent bridge."""


def _flat(board: BoardView) -> dict[str, str]:
    """A board as {cell: colour, "a1-c1": "bridge"}: one value per place that can change."""
    out = dict(board.tiles)
    for a, b in board.bridges:
        out[f"{a}-{b}"] = "bridge"
    return out


def _differences(a: Mapping[str, str], b: Mapping[str, str] | None) -> int:
    """In how many places two flat boards differ."""
    if b is None:
        return len(a)
    return sum(1 for key in a.keys() | b.keys() if a.get(key) != b.get(key))


def _unflat(flat: Mapping[str, str]) -> BoardView:
    tiles = {k: v for k, v in flat.items() if "-" not in k}
    bridges = []
    for key in flat:
        if "-" in key:
            a, _, b = key.partition("-")
            bridges.append((a, b))
    return BoardView.of(tiles, bridges)


class SettleDetector:
    """Commits a board once it has been unchanged and unoccluded for `window` seconds,
    flickering cells apart (see the module's docstring).

    `feed(reading)` returns a `Settled` the first time a still stretch reaches the window
    and None otherwise; a board is committed once per still stretch, so an unchanged board
    seen for minutes is judged once (a hand passing over starts a new stretch).
    `reference` is the board a flickering cell falls back to: the last committed one, or
    the one given (None: flicker holds the board back).
    """

    def __init__(
        self,
        window: float = DEFAULT_WINDOW,
        *,
        reference: BoardView | None = None,
        flicker_window: float | None = None,
        flicker_changes: int = FLICKER_CHANGES,
        change_share: float = CHANGE_SHARE,
    ) -> None:
        if window < 0:
            raise ValueError("the settle window cannot be negative")
        if flicker_window is None:
            flicker_window = max(FLICKER_WINDOW, 2 * window)
        if flicker_window <= window or flicker_changes < 2 or not 0.5 < change_share <= 1:
            raise ValueError("flicker needs a window longer than the settle window, at least "
                             "2 changes and a change share above one half")
        self.window = window
        self.flicker_window = flicker_window
        self.flicker_changes = flicker_changes
        self.change_share = change_share
        self.reference = reference
        self._current: dict[str, str] | None = None
        self._clear_since: float | None = None
        self._last_change: dict[str, float] = {}
        self._changes: dict[str, deque[tuple[float, str, str]]] = {}
        """Recent changes of each place: (time, value before, value after)."""
        self._committed: object | None = None
        self._resolved: BoardView | None = None
        self.moving = False
        """Whether the latest reading was occluded or differed from the one before."""

    def feed(self, reading: Reading) -> Settled | None:
        t = reading.t
        if reading.occluded and not reading.pending:
            self._clear_since = None
            self._committed = None
            self._resolved = None
            self.moving = True
            return None
        flat = _flat(reading.board)
        changed = False
        if self._current is not None and flat != self._current:
            for key in flat.keys() | self._current.keys():
                before, after = self._current.get(key, _NOTHING), flat.get(key, _NOTHING)
                if before != after:
                    self._note_change(key, t, before, after)
                    changed = True
        self._current = flat
        self.moving = changed or self._clear_since is None
        if self._clear_since is None:
            self._clear_since = t
        if reading.pending:
            self.moving = True
            self._resolved = None
            return None
        resolved = self._resolve(t)
        self._resolved = resolved[0] if resolved else None
        if resolved is None:
            return None
        board, since = resolved
        board_key = board.key()
        if board_key == self._committed:
            return None
        self._committed = board_key
        self.reference = board
        return Settled(board, since, t)

    def _note_change(self, key: str, t: float, before: str, after: str) -> None:
        self._last_change[key] = t
        changes = self._changes.setdefault(key, deque())
        changes.append((t, before, after))
        while len(changes) > 1 and changes[1][0] <= t - self.flicker_window:
            changes.popleft()  # keep one change older than the window: its value at the start

    def _resolve(self, t: float) -> tuple[BoardView, float] | None:
        """The board as it has settled at `t` and since when, or None if it has not."""
        assert self._current is not None and self._clear_since is not None
        if t - self._clear_since < self.window:
            return None
        since = self._clear_since
        board = dict(self._current)
        reference = None if self.reference is None else _flat(self.reference)
        stale = []
        flickering = 0
        for key, last in self._last_change.items():
            if t - last >= self.window:
                since = max(since, last)
                if last < self._clear_since and t - last > self.flicker_window:
                    stale.append(key)  # at rest since before this stretch: forget it
                continue
            if reference is None or not self._flickering(key, t):
                return None
            flickering += 1
            value = self._flicker_value(key, t, reference.get(key, _NOTHING))
            if value == _NOTHING:
                board.pop(key, None)
            else:
                board[key] = value
        if flickering and (flickering > MAX_FLICKERING or _differences(board, reference)
                           > MAX_CHANGES_WITH_FLICKER):
            return None  # not a glare spot beside a turn: more likely an unseen hand
        for key in stale:
            del self._last_change[key], self._changes[key]
        return _unflat(board), since

    def _flickering(self, key: str, t: float) -> bool:
        start = t - self.flicker_window
        return sum(1 for when, _, _ in self._changes[key] if when > start) >= self.flicker_changes

    def _flicker_value(self, key: str, t: float, reference: str) -> str:
        """A flickering place's value: the reference's, unless another reading held it for
        `change_share` of the flicker window."""
        start = t - self.flicker_window
        changes = self._changes[key]
        held: dict[str, float] = {}
        value = changes[0][1]
        at = start
        for when, _, after in changes:
            if when <= start:
                value = after
                continue
            held[value] = held.get(value, 0.0) + when - at
            value, at = after, when
        held[value] = held.get(value, 0.0) + t - at
        best = max(held, key=lambda v: held[v])
        if best != reference and held[best] >= self.change_share * self.flicker_window:
            return best
        return reference

    def latest(self) -> BoardView | None:
        """The board of the current still stretch (None while occluded): as settled if it
        has, else as last read."""
        if self._clear_since is None or self._current is None:
            return None
        return self._resolved if self._resolved is not None else _unflat(self._current)

    def reset(self, reference: BoardView | None = None) -> None:
        """Forget the stream (a new game); `reference` is the board now expected."""
        self.reference = reference
        self._current = None
        self._clear_since = None
        self._last_change.clear()
        self._changes.clear()
        self._committed = None
        self._resolved = None


class Stirring:
    """Holds back a reading in which a place (a cell, a bridge) reads otherwise than on the
    last reading nothing hid while the picture near it (`Reading.moved`: one of its cells,
    for a bridge) moved less than `rest` seconds ago. A hand that has just put a piece down,
    or an arm's shadow going by, reads as a change; a piece put down still reads so once
    the picture around it rests (an arm's shadow can lie still for a moment, hence the
    wait). The reading comes back occluded and `pending`, the stirred cells among its
    occluded cells.

    A place whose reading changed `flicker_changes` times or more within the last
    `flicker_readings` readings nothing hid is a glare spot flickering, not something going
    by: it is not held back here (the settle detector knows how to wait for the rest of the
    board while one place flickers).

    `apply(reading)` takes the readings in order; time is the readings' own."""

    def __init__(self, rest: float, flicker_changes: int, flicker_readings: int) -> None:
        if rest < 0 or flicker_changes < 1 or flicker_readings < 1:
            raise ValueError("stirring needs a rest of 0 s or more and flicker counts of at "
                             "least 1")
        self.rest = rest
        self.flicker_changes = flicker_changes
        self._moved_at: dict[str, float] = {}
        """When the picture last moved near each cell ..."""
        self._latest = -float("inf")
        """... and the time of the latest reading."""
        self._clear: dict[str, str] | None = None
        """The last reading returned with nothing hidden (flat, see `_flat`) ..."""
        self._last: dict[str, str] | None = None
        """... and the last reading nothing hid, held back or not ..."""
        self._flips: deque[frozenset[str]] = deque(maxlen=flicker_readings)
        """... and the places that changed from one such reading to the next, for each of
        the last `flicker_readings`."""

    def apply(self, reading: Reading) -> Reading:
        """The reading, held back (occluded and `pending`) when it stirs."""
        if reading.t < self._latest:  # a video started over: no move lies ahead of it
            self._moved_at = {c: min(t, reading.t) for c, t in self._moved_at.items()}
        self._latest = reading.t
        for cell in reading.moved:
            self._moved_at[cell] = reading.t
        if reading.occluded:
            return reading
        flat = _flat(reading.board)
        if self._last is not None:
            self._flips.append(frozenset(_changed(flat, self._last)))
        self._last = flat
        clear, stirred = self._clear, set[str]()
        if clear is not None:
            counts: dict[str, int] = {}
            if len(self._flips) >= self.flicker_changes:
                for flips in self._flips:
                    for place in flips:
                        counts[place] = counts.get(place, 0) + 1
            for place in _changed(flat, clear):
                if counts.get(place, 0) >= self.flicker_changes:
                    continue  # flickering
                cells = _place_cells(place)
                if any(reading.t - self._moved_at.get(c, -float("inf")) < self.rest
                       for c in cells):
                    stirred.update(cells)
        if not stirred:
            self._clear = flat
            return reading
        return replace(reading, occluded=True, pending=True,
                       occluded_cells=reading.occluded_cells | stirred)


def _changed(a: Mapping[str, str], b: Mapping[str, str]) -> list[str]:
    """The places two flat boards (see `_flat`) differ in."""
    return [key for key in a.keys() | b.keys() if a.get(key) != b.get(key)]


def _place_cells(place: str) -> tuple[str, ...]:
    """The cells of a flat board's place: a cell itself, or a bridge's ends and the cells it
    lies over."""
    if "-" not in place:
        return (place,)
    first, _, second = place.partition("-")
    a, b = Cell.parse(first), Cell.parse(second)
    return (first, second, *(c.name for c in cells_under(a, b)))
