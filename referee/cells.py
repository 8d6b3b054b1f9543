"""Cells, colours and the fixed geometry of a board of a given size.

Cells are named like chess squares: file letter then rank number, ``a1`` .. ``j10`` on the
10 x 10 board (``l12`` on 12 x 12). Inside a position a cell is an index
``rank * size + file``; `Geometry` holds the neighbour tables and bridge shapes for one size,
computed once and shared.
"""

from __future__ import annotations

import enum
import re
from functools import cache
from typing import NamedTuple

SIZES = (10, 12)
"""Board sizes the referee knows: the physical board (10) and Brettspielnetz's (12)."""

_CELL_RE = re.compile(r"([a-z])([1-9][0-9]?)\Z")


class Colour(enum.Enum):
    """The two colours of tiles; a player plays one of them."""

    LIGHT = "light"
    """The light tiles (cream or white); the first two tiles of a game are light."""
    DARK = "dark"
    """The dark tiles (red, brown or black, depending on the edition)."""

    @property
    def other(self) -> Colour:
        return Colour.DARK if self is Colour.LIGHT else Colour.LIGHT

    @property
    def code(self) -> int:
        """The colour's value in a position's cell array (0 means empty)."""
        return 1 if self is Colour.LIGHT else 2

    @staticmethod
    def from_code(code: int) -> Colour:
        return Colour.LIGHT if code == 1 else Colour.DARK


class Cell(NamedTuple):
    """A cell by 0-based file (column, ``a`` = 0) and rank (row, ``1`` = 0).

    >>> Cell.parse("c4")
    Cell(file=2, rank=3)
    >>> Cell(2, 3).name
    'c4'
    """

    file: int
    rank: int

    @property
    def name(self) -> str:
        return f"{chr(ord('a') + self.file)}{self.rank + 1}"

    def __str__(self) -> str:
        return self.name

    @staticmethod
    def parse(text: str) -> Cell:
        """Parse a cell name (case-insensitive); raises ValueError for anything else.

        Any letter and any number 1-99 parses; whether the cell is on the board is a
        question for the board (`Geometry.contains`).
        """
        match = _CELL_RE.match(text.strip().lower())
        if match is None:
            raise ValueError(f"not a cell name: {text!r} (expected a letter and a number, e.g. c4)")
        return Cell(ord(match.group(1)) - ord("a"), int(match.group(2)) - 1)


def cell_name(index: int, size: int) -> str:
    """The name of the cell with this index on a board of this size."""
    return f"{chr(ord('a') + index % size)}{index // size + 1}"


class BridgeShape(enum.Enum):
    """The three ways a bridge can span (example 7 of the rules)."""

    STRAIGHT = "straight"
    """Two cells apart along a file or rank; one cell underneath."""
    DIAGONAL = "diagonal"
    """Two cells apart along a diagonal; one cell underneath."""
    KNIGHT = "knight"
    """A knight's move apart; the two cells crossed by the line between centres underneath."""


def bridge_shape(df: int, dr: int) -> BridgeShape | None:
    """The shape of a bridge whose ends are (df, dr) apart, or None if no bridge fits."""
    a, b = sorted((abs(df), abs(dr)))
    if (a, b) == (0, 2):
        return BridgeShape.STRAIGHT
    if (a, b) == (2, 2):
        return BridgeShape.DIAGONAL
    if (a, b) == (1, 2):
        return BridgeShape.KNIGHT
    return None


def cells_under(a: Cell, b: Cell) -> tuple[Cell, ...]:
    """The cells a bridge from a to b lies over (its blocked cells); () if not a bridge shape.

    >>> [c.name for c in cells_under(Cell.parse("a1"), Cell.parse("b3"))]
    ['a2', 'b2']
    """
    df, dr = b.file - a.file, b.rank - a.rank
    shape = bridge_shape(df, dr)
    if shape is None:
        return ()
    if shape is not BridgeShape.KNIGHT:
        return (Cell(a.file + df // 2, a.rank + dr // 2),)
    sf = 1 if df > 0 else -1
    sr = 1 if dr > 0 else -1
    if abs(df) == 1:  # long along the ranks: the line crosses the row between them
        return (Cell(a.file, a.rank + sr), Cell(a.file + sf, a.rank + sr))
    return (Cell(a.file + sf, a.rank), Cell(a.file + sf, a.rank + sr))


BRIDGE_OFFSETS: tuple[tuple[int, int], ...] = tuple(
    (df, dr)
    for df in range(-2, 3)
    for dr in range(-2, 3)
    if bridge_shape(df, dr) is not None
)
"""All 16 (file, rank) offsets at which a bridge can reach from a tile."""


class Geometry:
    """Neighbour tables and bridge spans for one board size (use `geometry(size)`)."""

    def __init__(self, size: int) -> None:
        if size not in SIZES:
            raise ValueError(f"board size must be one of {SIZES}, not {size}")
        self.size = size
        self.area = size * size
        n = size
        orth: list[tuple[int, ...]] = []
        diag: list[tuple[int, ...]] = []
        for i in range(self.area):
            f, r = i % n, i // n
            orth.append(
                tuple(
                    (r + dr) * n + f + df
                    for df, dr in ((1, 0), (-1, 0), (0, 1), (0, -1))
                    if 0 <= f + df < n and 0 <= r + dr < n
                )
            )
            diag.append(
                tuple(
                    (r + dr) * n + f + df
                    for df, dr in ((1, 1), (1, -1), (-1, 1), (-1, -1))
                    if 0 <= f + df < n and 0 <= r + dr < n
                )
            )
        self.orth: tuple[tuple[int, ...], ...] = tuple(orth)
        """Orthogonal neighbours of each cell index."""
        self.diag: tuple[tuple[int, ...], ...] = tuple(diag)
        """Diagonal neighbours of each cell index."""
        self.ring: tuple[tuple[int, ...], ...] = tuple(
            o + d for o, d in zip(orth, diag, strict=True)
        )
        """All 8 neighbours of each cell index."""
        spans: list[tuple[tuple[int, tuple[int, ...]], ...]] = []
        for i in range(self.area):
            a = Cell(i % n, i // n)
            out = []
            for df, dr in BRIDGE_OFFSETS:
                b = Cell(a.file + df, a.rank + dr)
                if self.contains(b):
                    under = tuple(self.index(c) for c in cells_under(a, b))
                    out.append((self.index(b), under))
            spans.append(tuple(out))
        self.spans: tuple[tuple[tuple[int, tuple[int, ...]], ...], ...] = tuple(spans)
        """For each cell index: (other end, cells underneath) of every bridge from it."""
        self.names: tuple[str, ...] = tuple(cell_name(i, n) for i in range(self.area))

    def contains(self, cell: Cell) -> bool:
        return 0 <= cell.file < self.size and 0 <= cell.rank < self.size

    def index(self, cell: Cell) -> int:
        return cell.rank * self.size + cell.file

    def cell(self, index: int) -> Cell:
        return Cell(index % self.size, index // self.size)


@cache
def geometry(size: int) -> Geometry:
    """The shared geometry of a board of this size."""
    return Geometry(size)
