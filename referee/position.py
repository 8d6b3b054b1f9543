"""A position: the tiles, bridges and supply on the board, with the rules that judge a move.

The position holds only pieces that were placed legally. Pieces flagged as illegal (the
two-round window, see `referee.game`) are not part of it: their cells are *obstructed* —
nothing may be placed on them or built over them, and they count as no tile of anybody's
for the distance rule (RULINGS.md: later turns are judged with the flagged tiles taken away).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from referee.cells import Cell, Colour, Geometry, cells_under, geometry
from referee.moves import Bridge, Tiles
from referee.verdicts import Illegal, Reason


class Supply(enum.Enum):
    """How many pieces the players have."""

    PHYSICAL = "physical"
    """The boxed game: 40 tiles of each colour and one common pool of 15 bridges."""
    UNLIMITED = "unlimited"
    """Board Game Arena: no limits on tiles or bridges."""


TILES_PER_COLOUR = 40
BRIDGE_POOL = 15
_UNLIMITED = 1 << 30


@dataclass(frozen=True, slots=True)
class PlacedBridge:
    """A bridge on the board: its two ends (sorted), its colour and the cells under it."""

    a: Cell
    b: Cell
    colour: Colour
    under: tuple[Cell, ...]

    @property
    def move(self) -> Bridge:
        return Bridge(self.a, self.b)


class Position:
    """Tiles, bridges and supply; judges and applies tile and bridge moves.

    Moves are applied without judging by `place_tiles` / `build_bridge` (the game judges
    first); `tiles_verdict` and `bridge_verdict` return None for a legal move or an
    `Illegal` verdict with the reason and the cells involved.
    """

    def __init__(self, size: int = 10, supply: Supply = Supply.PHYSICAL) -> None:
        self.geo: Geometry = geometry(size)
        self.size = size
        self.supply = supply
        area = self.geo.area
        self.cells = bytearray(area)
        """0 empty, 1 light tile, 2 dark tile, per cell index."""
        self.blocked = bytearray(area)
        """How many bridges lie over each cell."""
        self.obstructed = bytearray(area)
        """How many flagged (illegal, uncorrected) pieces stand on each cell."""
        self.bridge_end = [-1] * area
        """For a tile carrying a bridge end: the index of the tile at the other end."""
        self.bridges: list[PlacedBridge] = []
        full = _UNLIMITED if supply is Supply.UNLIMITED else TILES_PER_COLOUR
        self.tiles_left = [0, full, full]
        """Tiles left in supply, indexed by colour code (1 light, 2 dark)."""
        self.bridges_left = _UNLIMITED if supply is Supply.UNLIMITED else BRIDGE_POOL

    # ----------------------------------------------------------------- reading

    def copy(self) -> Position:
        other = Position.__new__(Position)
        other.geo, other.size, other.supply = self.geo, self.size, self.supply
        other.cells = bytearray(self.cells)
        other.blocked = bytearray(self.blocked)
        other.obstructed = bytearray(self.obstructed)
        other.bridge_end = list(self.bridge_end)
        other.bridges = list(self.bridges)
        other.tiles_left = list(self.tiles_left)
        other.bridges_left = self.bridges_left
        return other

    def tile_at(self, cell: Cell) -> Colour | None:
        code = self.cells[self.geo.index(cell)]
        return Colour.from_code(code) if code else None

    def tiles(self, colour: Colour) -> list[Cell]:
        code = colour.code
        return [self.geo.cell(i) for i, c in enumerate(self.cells) if c == code]

    def blocked_cells(self) -> list[Cell]:
        return [self.geo.cell(i) for i, n in enumerate(self.blocked) if n]

    def tiles_in_supply(self, colour: Colour) -> int | None:
        """Tiles the colour has left, or None with unlimited supply."""
        return None if self.supply is Supply.UNLIMITED else self.tiles_left[colour.code]

    def bridges_in_supply(self) -> int | None:
        """Bridges left in the common pool, or None with unlimited supply."""
        return None if self.supply is Supply.UNLIMITED else self.bridges_left

    def group(self, cell: Cell) -> list[Cell]:
        """The group (orthogonally joined tiles of one colour) containing this tile."""
        i = self.geo.index(cell)
        if not self.cells[i]:
            return []
        return [self.geo.cell(j) for j in self._group(i, self.cells[i])]

    def groups(self, colour: Colour) -> list[list[int]]:
        """All groups of a colour as lists of cell indices, in order of their first cell."""
        code, seen, out = colour.code, bytearray(self.geo.area), []
        for i, c in enumerate(self.cells):
            if c == code and not seen[i]:
                g = self._group(i, code)
                for j in g:
                    seen[j] = 1
                out.append(g)
        return out

    def _group(self, start: int, code: int) -> list[int]:
        cells, orth = self.cells, self.geo.orth
        group, stack = [start], [start]
        while stack:
            for j in orth[stack.pop()]:
                if cells[j] == code and j not in group:
                    group.append(j)
                    stack.append(j)
        return group

    # ----------------------------------------------------------------- judging

    def _indices(self, move: Tiles | Bridge) -> tuple[int, int] | Illegal:
        """The cell indices of a move's two cells, or why one is not on the board."""
        for cell in move.cells:
            if not self.geo.contains(cell):
                return Illegal(
                    Reason.OFF_BOARD,
                    (cell.name,),
                    f"{cell.name} is not on the {self.size} x {self.size} board",
                )
        return self.geo.index(move.a), self.geo.index(move.b)

    def _free_problem(self, i: int) -> Illegal | None:
        name = self.geo.names[i]
        if self.cells[i]:
            colour = Colour.from_code(self.cells[i]).value
            return Illegal(Reason.OCCUPIED, (name,), f"{name} already holds a {colour} tile")
        if self.obstructed[i]:
            return Illegal(
                Reason.FLAGGED_CELL,
                (name,),
                f"{name} holds a flagged piece; it must be taken back before the cell is used",
            )
        if self.blocked[i]:
            return Illegal(Reason.BLOCKED, (name,), f"{name} lies under a bridge")
        return None

    def tiles_verdict(self, colour: Colour, move: Tiles) -> Illegal | None:
        """None if the colour may place these two tiles now, else why not."""
        indices = self._indices(move)
        if isinstance(indices, Illegal):
            return indices
        ia, ib = indices
        if ia == ib:
            name = move.a.name
            return Illegal(Reason.SAME_CELL, (name,), f"both tiles are on {name}")
        if self.tiles_left[colour.code] < 2:
            left = self.tiles_left[colour.code]
            return Illegal(
                Reason.NO_TILES_LEFT, (), f"{colour.value} has {left} tile(s) left, needs 2"
            )
        for i in (ia, ib):
            problem = self._free_problem(i)
            if problem is not None:
                return problem
        return self._placement_problem(colour.code, (ia, ib))

    def _placement_problem(self, code: int, new: tuple[int, ...]) -> Illegal | None:
        """Judge new tiles on free cells by the group rules (all placed together)."""
        cells = self.cells
        for i in new:
            cells[i] = code
        try:
            groups: list[list[int]] = []
            for i in new:
                if any(i in g for g in groups):
                    continue
                g = self._group(i, code)
                if len(g) > 4:
                    return Illegal(
                        Reason.GROUP_TOO_LARGE,
                        self._names(g),
                        f"{self._describe(new)} would make a group of {len(g)} "
                        f"{Colour.from_code(code).value} tiles ({self._list(g)}); "
                        "an island has exactly 4",
                    )
                groups.append(g)
            for i in new:
                g = next(g for g in groups if i in g)
                problem = self._distance_problem(code, i, g)
                if problem is not None:
                    return problem
            return None
        finally:
            for i in new:
                cells[i] = 0

    def _distance_problem(self, code: int, tile: int, g: list[int]) -> Illegal | None:
        cells, ring, diag = self.cells, self.geo.ring, self.geo.diag
        if len(g) == 4:
            for x in g:
                for y in ring[x]:
                    if cells[y] == code and y not in g:
                        return self._too_close(code, g, self._group(y, code))
            return None
        for y in diag[tile]:
            if cells[y] == code and y not in g:
                other = self._group(y, code)
                if len(other) == 4:
                    return self._too_close(code, other, g)
        return None

    def _too_close(self, code: int, island: list[int], other: list[int]) -> Illegal:
        colour = Colour.from_code(code).value
        kind = "island" if len(other) == 4 else "sandbank"
        return Illegal(
            Reason.ISLAND_TOO_CLOSE,
            self._names(island) + self._names(other),
            f"the {colour} island {self._list(island)} would touch the {colour} {kind} "
            f"{self._list(other)}; an island may not touch another tile of its colour, "
            "not even diagonally",
        )

    def bridge_verdict(self, colour: Colour, move: Bridge) -> Illegal | None:
        """None if the colour may build this bridge now, else why not."""
        indices = self._indices(move)
        if isinstance(indices, Illegal):
            return indices
        ia, ib = indices
        names = (move.a.name, move.b.name)
        under = cells_under(move.a, move.b)
        if not under:
            return Illegal(
                Reason.NOT_A_BRIDGE_SHAPE,
                names,
                f"{move} is not a bridge: its ends must be two cells apart in a line or "
                "diagonally, or a knight's move apart",
            )
        code = colour.code
        for i in (ia, ib):
            if self.cells[i] != code:
                name = self.geo.names[i]
                what = (
                    "no tile"
                    if not self.cells[i]
                    else f"a {Colour.from_code(self.cells[i]).value} tile"
                )
                return Illegal(
                    Reason.BRIDGE_END_NOT_OWN_TILE,
                    (name,),
                    f"a {colour.value} bridge needs {colour.value} tiles at both ends; "
                    f"{name} holds {what}",
                )
        for i in (ia, ib):
            if self.bridge_end[i] >= 0:
                name = self.geo.names[i]
                other = self.geo.names[self.bridge_end[i]]
                return Illegal(
                    Reason.BRIDGE_END_IN_USE,
                    (name, other),
                    f"the tile at {name} already carries the bridge {name}-{other}; "
                    "a tile carries at most one bridge",
                )
        for c in under:
            i = self.geo.index(c)
            if self.cells[i] or self.obstructed[i]:
                return Illegal(
                    Reason.BRIDGE_OVER_TILE,
                    (c.name,),
                    f"the bridge {move} would stand over the tile at {c.name}",
                )
        for placed in self.bridges:
            if segments_cross(move.a, move.b, placed.a, placed.b):
                return Illegal(
                    Reason.BRIDGES_CROSS,
                    names + (placed.a.name, placed.b.name),
                    f"the bridge {move} would cross the bridge {placed.move}",
                )
        if self.bridges_left < 1:
            return Illegal(Reason.NO_BRIDGES_LEFT, (), "no bridges are left in the pool")
        return None

    # ----------------------------------------------------------------- changing

    def place_tiles(self, colour: Colour, move: Tiles) -> None:
        """Put two tiles down without judging (the caller judged)."""
        for c in move.cells:
            self.cells[self.geo.index(c)] = colour.code
        self.tiles_left[colour.code] -= 2

    def build_bridge(self, colour: Colour, move: Bridge) -> PlacedBridge:
        """Build a bridge without judging (the caller judged)."""
        placed = PlacedBridge(move.a, move.b, colour, cells_under(move.a, move.b))
        ia, ib = self.geo.index(move.a), self.geo.index(move.b)
        self.bridge_end[ia], self.bridge_end[ib] = ib, ia
        for c in placed.under:
            self.blocked[self.geo.index(c)] += 1
        self.bridges.append(placed)
        self.bridges_left -= 1
        return placed

    def remove_bridge(self, move: Bridge) -> None:
        """Take down a bridge built by `build_bridge`."""
        for k, placed in enumerate(self.bridges):
            if placed.a == move.a and placed.b == move.b:
                del self.bridges[k]
                break
        else:
            raise ValueError(f"no bridge {move} on the board")
        self.bridge_end[self.geo.index(move.a)] = -1
        self.bridge_end[self.geo.index(move.b)] = -1
        for c in placed.under:
            self.blocked[self.geo.index(c)] -= 1
        self.bridges_left += 1

    def obstruct(self, cells: Iterable[Cell], delta: int = 1) -> None:
        """Mark (delta 1) or unmark (delta -1) cells that hold flagged pieces."""
        for c in cells:
            if self.geo.contains(c):
                i = self.geo.index(c)
                self.obstructed[i] = max(0, self.obstructed[i] + delta)

    # ----------------------------------------------------------------- generating

    def _group_labels(self, code: int) -> tuple[list[int], list[list[int]]]:
        """Label each tile of the colour with its group number; -1 elsewhere."""
        labels = [-1] * self.geo.area
        groups: list[list[int]] = []
        for i, c in enumerate(self.cells):
            if c == code and labels[i] < 0:
                g = self._group(i, code)
                for j in g:
                    labels[j] = len(groups)
                groups.append(g)
        return labels, groups

    def single_tile_cells(self, colour: Colour) -> dict[int, frozenset[int]]:
        """Free cells where one tile of the colour alone would be legal, each with the group
        that tile would be part of (as cell indices)."""
        code = colour.code
        cells, blocked, obstructed = self.cells, self.blocked, self.obstructed
        orth, diag, ring = self.geo.orth, self.geo.diag, self.geo.ring
        labels, groups = self._group_labels(code)
        out: dict[int, frozenset[int]] = {}
        for i in range(self.geo.area):
            if cells[i] or blocked[i] or obstructed[i]:
                continue
            joined = {labels[j] for j in orth[i] if labels[j] >= 0}
            size = 1 + sum(len(groups[k]) for k in joined)
            if size > 4:
                continue
            members = [i]
            for k in joined:
                members.extend(groups[k])
            if size == 4:
                if any(cells[y] == code and y not in members for x in members for y in ring[x]):
                    continue
            elif any(
                labels[y] >= 0 and labels[y] not in joined and len(groups[labels[y]]) == 4
                for y in diag[i]
            ):
                continue
            out[i] = frozenset(members)
        return out

    def _pairs(self, colour: Colour) -> Iterator[tuple[int, int]]:
        """Yield legal tile pairs (i, j), in (file, rank) order of cells, i before j."""
        if self.tiles_left[colour.code] < 2:
            return
        singles = self.single_tile_cells(colour)
        if len(singles) < 2:
            return
        code, cells, ring, orth = colour.code, self.cells, self.geo.ring, self.geo.orth
        size = self.size
        order = sorted(singles, key=lambda i: (i % size, i // size))
        zone: dict[int, frozenset[int]] = {}
        touch: dict[int, frozenset[int]] = {}
        for i in order:
            g = singles[i]
            touch[i] = frozenset(y for x in g for y in orth[x])
            zone[i] = g.union(y for x in g for y in ring[x])
        for k, i in enumerate(order):
            gi, zi, ti = singles[i], zone[i], touch[i]
            for j in order[k + 1 :]:
                gj = singles[j]
                if zi.isdisjoint(gj):
                    yield i, j
                    continue
                if gi.isdisjoint(gj) and j not in ti and i not in touch[j]:
                    # Two groups that touch only diagonally: fine unless one is an island.
                    if len(gi) < 4 and len(gj) < 4:
                        yield i, j
                    continue
                merged = gi | gj
                if len(merged) < 4:
                    yield i, j
                elif len(merged) == 4 and not any(
                    cells[y] == code and y not in merged for x in merged for y in ring[x]
                ):
                    yield i, j

    def legal_tile_pairs(self, colour: Colour) -> list[Tiles]:
        """Every pair of cells where the colour may place its two tiles now."""
        cell = self.geo.cell
        return [_tiles(cell(i), cell(j)) for i, j in self._pairs(colour)]

    def can_place_two(self, colour: Colour) -> bool:
        """Whether the colour can place two tiles now (if not, it may pass)."""
        return next(self._pairs(colour), None) is not None

    def legal_bridges(self, colour: Colour) -> list[Bridge]:
        """Every bridge the colour may build now."""
        if self.bridges_left < 1:
            return []
        code, cells, obstructed = colour.code, self.cells, self.obstructed
        bridge_end, cell = self.bridge_end, self.geo.cell
        out = []
        for i, c in enumerate(cells):
            if c != code or bridge_end[i] >= 0:
                continue
            for j, under in self.geo.spans[i]:
                if j < i or cells[j] != code or bridge_end[j] >= 0:
                    continue
                if any(cells[u] or obstructed[u] for u in under):
                    continue
                a, b = cell(i), cell(j)
                if any(segments_cross(a, b, o.a, o.b) for o in self.bridges):
                    continue
                out.append(Bridge(a, b))
        return out

    # ----------------------------------------------------------------- helpers

    def _names(self, indices: Iterable[int]) -> tuple[str, ...]:
        size = self.size
        ordered = sorted(indices, key=lambda i: (i % size, i // size))
        return tuple(self.geo.names[i] for i in ordered)

    def _list(self, indices: Iterable[int]) -> str:
        return ",".join(self._names(indices))

    def _describe(self, new: tuple[int, ...]) -> str:
        if len(new) == 1:
            return f"a tile on {self.geo.names[new[0]]}"
        return f"tiles on {self._list(new)}"


def _tiles(a: Cell, b: Cell) -> Tiles:
    """A `Tiles` from cells already in order (skips the sorting in `Tiles.__post_init__`)."""
    move = object.__new__(Tiles)
    object.__setattr__(move, "a", a)
    object.__setattr__(move, "b", b)
    return move


def _orient(ax: int, ay: int, bx: int, by: int, cx: int, cy: int) -> int:
    v = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
    return (v > 0) - (v < 0)


def _on_segment(ax: int, ay: int, bx: int, by: int, px: int, py: int) -> bool:
    return min(ax, bx) <= px <= max(ax, bx) and min(ay, by) <= py <= max(ay, by)


def segments_cross(a: Cell, b: Cell, c: Cell, d: Cell) -> bool:
    """Whether the segments between the centres a-b and c-d share any point.

    Bridges share no ends (one bridge per tile), so any common point means they cross or
    overlap; this also catches two diagonals that cross between cells (``a2-c4`` and
    ``a3-c1``). Parallel knight's bridges over a common cell do not touch.
    """
    if max(a.file, b.file) < min(c.file, d.file) or max(c.file, d.file) < min(a.file, b.file):
        return False
    if max(a.rank, b.rank) < min(c.rank, d.rank) or max(c.rank, d.rank) < min(a.rank, b.rank):
        return False
    o1 = _orient(a.file, a.rank, b.file, b.rank, c.file, c.rank)
    o2 = _orient(a.file, a.rank, b.file, b.rank, d.file, d.rank)
    o3 = _orient(c.file, c.rank, d.file, d.rank, a.file, a.rank)
    o4 = _orient(c.file, c.rank, d.file, d.rank, b.file, b.rank)
    if o1 != o2 and o3 != o4:
        return True
    return (
        (o1 == 0 and _on_segment(a.file, a.rank, b.file, b.rank, c.file, c.rank))
        or (o2 == 0 and _on_segment(a.file, a.rank, b.file, b.rank, d.file, d.rank))
        or (o3 == 0 and _on_segment(c.file, c.rank, d.file, d.rank, a.file, a.rank))
        or (o4 == 0 and _on_segment(c.file, c.rank, d.file, d.rank, b.file, b.rank))
    )
