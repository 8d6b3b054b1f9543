"""Cell names and states: chess-like names `a1`..`j10`, files left to right, ranks bottom up.

>>> cell_name(0, 0), cell_name(9, 9), parse_cell("c2")
('a1', 'j10', (2, 1))
"""

from __future__ import annotations

from enum import Enum

SIZE = 10
FILES = "abcdefghijklmnopqrstuvwxyz"

Cell = tuple[int, int]
"""A cell as (file, rank), both 0-based; (0, 0) is a1."""


class CellState(Enum):
    """What lies on one cell, as the camera reads it."""

    EMPTY = "."
    """Nothing on the cell (it may lie under a bridge)."""
    LIGHT = "L"
    """A light tile (cream or white)."""
    DARK = "D"
    """A dark tile (red, brown or black, depending on the edition)."""


def cell_name(file: int, rank: int) -> str:
    """The name of the cell at 0-based (file, rank)."""
    return f"{FILES[file]}{rank + 1}"


def parse_cell(name: str, size: int = SIZE) -> Cell:
    """The 0-based (file, rank) of a cell name; ValueError for a name off the board."""
    text = name.strip().lower()
    if len(text) < 2 or text[0] not in FILES[:size] or not text[1:].isdigit():
        raise ValueError(f"not a cell name: {name!r}")
    rank = int(text[1:]) - 1
    if not 0 <= rank < size:
        raise ValueError(f"not a cell name: {name!r}")
    return FILES.index(text[0]), rank


def bridge_kind(a: Cell, b: Cell) -> str | None:
    """'straight', 'diagonal' or 'knight' when a bridge can join cells a and b, else None."""
    d = sorted((abs(a[0] - b[0]), abs(a[1] - b[1])))
    return {(0, 2): "straight", (2, 2): "diagonal", (1, 2): "knight"}.get((d[0], d[1]))


def cells_under(a: Cell, b: Cell) -> tuple[Cell, ...]:
    """The cells a bridge from a to b passes over: one for straight/diagonal, two for knight."""
    kind = bridge_kind(a, b)
    if kind is None:
        raise ValueError(f"{cell_name(*a)}-{cell_name(*b)} is not a bridge distance")
    if kind != "knight":
        return (((a[0] + b[0]) // 2, (a[1] + b[1]) // 2),)
    df, dr = b[0] - a[0], b[1] - a[1]
    if abs(df) == 2:
        step = df // 2
        return ((a[0] + step, a[1]), (a[0] + step, b[1]))
    step = dr // 2
    return ((a[0], a[1] + step), (b[0], a[1] + step))
