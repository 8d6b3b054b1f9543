"""The pipeline's output: a plain frozen value saying what is on the board and how sure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vision.cells import SIZE, Cell, CellState, cell_name

Bridge = tuple[Cell, Cell]
"""A bridge as its two end cells, sorted by (file, rank)."""


@dataclass(frozen=True)
class Observation:
    """One frame's reading of the board.

    `cells[rank][file]` (rank 0 = rank 1, the a1 side) holds the state read for the cell;
    `confidence` is a number in [0, 1] per cell in the same layout; `occluded_cells` lists
    cells something (a hand, an arm) hides, and `occluded` says whether anything does.
    `corners` are the grid's outer corners in the image: a1's corner, j1's, j10's, a10's.
    `moved` lists the cells near which the picture changed from the frame before (the live
    reader's, see `BoardReader`; every cell when there is none to compare with): what
    waits for the picture to rest (`ponte.live.settle.Stirring`) goes by it.
    """

    cells: tuple[tuple[CellState, ...], ...]
    bridges: tuple[Bridge, ...]
    confidence: tuple[tuple[float, ...], ...]
    occluded_cells: frozenset[Cell]
    occluded: bool
    corners: tuple[tuple[float, float], ...]
    moved: frozenset[Cell] = frozenset()

    def state(self, cell: Cell) -> CellState:
        """The state read at a (file, rank) cell."""
        return self.cells[cell[1]][cell[0]]

    def board_rows(self) -> list[str]:
        """The board as 10 strings, top rank (10) first, '.' empty, 'L' light, 'D' dark."""
        return [
            "".join(self.cells[rank][f].value for f in range(SIZE))
            for rank in range(SIZE - 1, -1, -1)
        ]

    def bridge_names(self) -> list[list[str]]:
        """The bridges as sorted pairs of cell names, the list sorted by (file, rank)."""
        return [[cell_name(*a), cell_name(*b)] for a, b in sorted(self.bridges)]

    def to_json(self) -> dict[str, Any]:
        """The JSON form `ponte read --json` prints (without the image path and error)."""
        return {
            "board": self.board_rows(),
            "bridges": self.bridge_names(),
            "occluded": self.occluded,
        }

    def picture(self) -> str:
        """The board as a text picture: rank numbers left, files below, bridges listed."""
        lines = []
        for row, text in zip(range(SIZE, 0, -1), self.board_rows(), strict=True):
            marks = []
            for f, ch in enumerate(text):
                marks.append("?" if (f, row - 1) in self.occluded_cells else ch)
            lines.append(f"{row:>2} " + " ".join(marks))
        lines.append("   " + " ".join("abcdefghij"))
        if self.bridges:
            lines.append("bridges: " + ", ".join(f"{a}-{b}" for a, b in self.bridge_names()))
        if self.occluded:
            lines.append(f"occluded: {len(self.occluded_cells)} cell(s) hidden (marked ?)")
        return "\n".join(lines)


def sort_bridge(a: Cell, b: Cell) -> Bridge:
    """A bridge with its ends in (file, rank) order."""
    return (a, b) if a <= b else (b, a)
