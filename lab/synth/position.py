"""Board contents for synthetic scenes: cell names, physical checks, random plausible positions.

A position is `board` (size strings, top rank first, '.', 'L', 'D') plus `bridges` (pairs of
cell names, each pair sorted by (file, rank), the tuple sorted). This module enforces what a
camera could physically see: a bridge stands on two tiles of one colour a bridge's distance
apart, over empty cells, each tile carries at most one bridge end and bridges do not cross.
It does not judge the game rules (that is the referee's business), but `random_position`
samples boards that look like real play: tiles in groups of at most four.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

Cell = tuple[int, int]
"""(file, rank), both 0-based: (0, 0) is a1."""
Bridge = tuple[str, str]

BRIDGE_OFFSETS: tuple[Cell, ...] = (
    (0, 2),
    (2, 0),
    (2, 2),
    (2, -2),
    (1, 2),
    (2, 1),
    (1, -2),
    (2, -1),
)
"""(dfile, drank) from the lower-file end of a bridge (then lower rank) to the other end."""


def cell_name(cell: Cell) -> str:
    """'a1' for (0, 0), 'j10' for (9, 9)."""
    return f"{chr(ord('a') + cell[0])}{cell[1] + 1}"


def parse_cell(name: str, size: int = 10) -> Cell:
    """The (file, rank) of a cell name; ValueError for names off the board."""
    if len(name) < 2 or not name[0].isalpha() or not name[1:].isdigit():
        raise ValueError(f"bad cell name {name!r}")
    cell = (ord(name[0].lower()) - ord("a"), int(name[1:]) - 1)
    if not (0 <= cell[0] < size and 0 <= cell[1] < size):
        raise ValueError(f"cell {name!r} is off the {size}x{size} board")
    return cell


def sort_bridge(a: str, b: str, size: int = 10) -> Bridge:
    """The two cell names of a bridge in (file, rank) order."""
    ca, cb = parse_cell(a, size), parse_cell(b, size)
    return (a, b) if ca <= cb else (b, a)


def cell_at(board: tuple[str, ...], cell: Cell) -> str:
    """The character ('.', 'L' or 'D') at a cell of a board given top rank first."""
    return board[len(board) - 1 - cell[1]][cell[0]]


def crossed_cells(a: Cell, b: Cell) -> tuple[Cell, ...]:
    """The cells a bridge from a to b lies over (one for straight/diagonal, two for knight)."""
    df, dr = b[0] - a[0], b[1] - a[1]
    if (abs(df), abs(dr)) in ((0, 2), (2, 0), (2, 2)):
        return ((a[0] + df // 2, a[1] + dr // 2),)
    if (abs(df), abs(dr)) == (1, 2):
        mid = a[1] + dr // 2
        return ((a[0], mid), (b[0], mid))
    if (abs(df), abs(dr)) == (2, 1):
        mid = a[0] + df // 2
        return ((mid, a[1]), (mid, b[1]))
    raise ValueError(f"{cell_name(a)}-{cell_name(b)} is not a bridge's distance apart")


def _orient(p: Cell, q: Cell, r: Cell) -> int:
    v = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    return (v > 0) - (v < 0)


def _on_segment(p: Cell, q: Cell, r: Cell) -> bool:
    return min(p[0], q[0]) <= r[0] <= max(p[0], q[0]) and min(p[1], q[1]) <= r[1] <= max(p[1], q[1])


def segments_cross(a: Cell, b: Cell, c: Cell, d: Cell) -> bool:
    """True when segments ab and cd (between cell centres) touch or cross."""
    o1, o2, o3, o4 = _orient(a, b, c), _orient(a, b, d), _orient(c, d, a), _orient(c, d, b)
    if o1 != o2 and o3 != o4:
        return True
    return (
        (o1 == 0 and _on_segment(a, b, c))
        or (o2 == 0 and _on_segment(a, b, d))
        or (o3 == 0 and _on_segment(c, d, a))
        or (o4 == 0 and _on_segment(c, d, b))
    )


def validate_position(board: tuple[str, ...], bridges: tuple[Bridge, ...], size: int) -> None:
    """Raise ValueError unless the position is physically possible (see module docstring)."""
    if not isinstance(board, tuple) or len(board) != size:
        raise ValueError(f"board must be a tuple of {size} strings, top rank first")
    for row in board:
        if not isinstance(row, str) or len(row) != size or set(row) - {".", "L", "D"}:
            raise ValueError(f"bad board row {row!r}: {size} characters of '.', 'L', 'D'")
    if list(bridges) != sorted(bridges, key=lambda br: [parse_cell(c, size) for c in br]):
        raise ValueError("bridges must be sorted")
    used: set[Cell] = set()
    segments: list[tuple[Cell, Cell]] = []
    for bridge in bridges:
        if len(bridge) != 2:
            raise ValueError(f"bridge {bridge!r} must be a pair of cell names")
        a, b = parse_cell(bridge[0], size), parse_cell(bridge[1], size)
        name = f"{bridge[0]}-{bridge[1]}"
        if a >= b:
            raise ValueError(f"bridge {name}: cells must be sorted by (file, rank)")
        colour = cell_at(board, a)
        if colour == "." or cell_at(board, b) != colour:
            raise ValueError(f"bridge {name} must stand on two tiles of one colour")
        for crossed in crossed_cells(a, b):
            if cell_at(board, crossed) != ".":
                raise ValueError(f"bridge {name} passes over a tile at {cell_name(crossed)}")
        if a in used or b in used:
            raise ValueError(f"bridge {name}: a tile carries at most one bridge end")
        used.update((a, b))
        for c, d in segments:
            if segments_cross(a, b, c, d):
                raise ValueError(f"bridge {name} crosses {cell_name(c)}-{cell_name(d)}")
        segments.append((a, b))


def board_from_grid(grid: Array) -> tuple[str, ...]:
    """Board strings (top rank first) from an int grid indexed [file, rank]: 0 . 1 L 2 D."""
    chars = ".LD"
    size = grid.shape[0]
    return tuple(
        "".join(chars[int(grid[f, r])] for f in range(size)) for r in range(size - 1, -1, -1)
    )


def grid_from_board(board: tuple[str, ...]) -> Array:
    """The inverse of `board_from_grid`."""
    size = len(board)
    grid = np.zeros((size, size), np.int8)
    for row_index, row in enumerate(board):
        for f, ch in enumerate(row):
            grid[f, size - 1 - row_index] = ".LD".index(ch)
    return grid


def _neighbours(cell: Cell, size: int, diagonal: bool) -> list[Cell]:
    out = []
    for df in (-1, 0, 1):
        for dr in (-1, 0, 1):
            if (df, dr) == (0, 0) or (not diagonal and df != 0 and dr != 0):
                continue
            f, r = cell[0] + df, cell[1] + dr
            if 0 <= f < size and 0 <= r < size:
                out.append((f, r))
    return out


def _try_group(
    grid: Array, colour: int, island_of: Array, rng: np.random.Generator, want: int
) -> list[Cell]:
    size = grid.shape[0]
    seed = (int(rng.integers(size)), int(rng.integers(size)))

    def free(cell: Cell, group: list[Cell]) -> bool:
        if grid[cell] != 0:
            return False
        for n in _neighbours(cell, size, diagonal=False):
            if grid[n] == colour and n not in group:
                return False
        return all(not (grid[n] == colour and island_of[n]) for n in _neighbours(cell, size, True))

    if not free(seed, []):
        return []
    group = [seed]
    while len(group) < want:
        options = sorted(
            {
                n
                for c in group
                for n in _neighbours(c, size, False)
                if n not in group and free(n, group)
            }
        )
        if not options:
            break
        group.append(options[int(rng.integers(len(options)))])
    if len(group) == 4:
        for c in group:
            for n in _neighbours(c, size, diagonal=True):
                if n not in group and grid[n] == colour:
                    return []
    return group


def random_position(
    rng: np.random.Generator,
    size: int = 10,
    light_tiles: int = 20,
    dark_tiles: int = 20,
    bridges: int = 4,
) -> tuple[tuple[str, ...], tuple[Bridge, ...]]:
    """A plausible mid-game board: groups of 1-4 tiles per colour, then bridges.

    Groups of one colour never touch orthogonally and islands (groups of four) never touch
    their colour diagonally, as in real play. Tile counts are targets: a crowded board may
    end with fewer. Bridges are added greedily where physically possible (see module doc).
    """
    grid = np.zeros((size, size), np.int8)
    island_of = np.zeros((size, size), bool)
    remaining = {1: light_tiles, 2: dark_tiles}
    attempts = 0
    while (remaining[1] > 0 or remaining[2] > 0) and attempts < 400:
        attempts += 1
        colour = 1 if remaining[1] >= remaining[2] else 2
        want = min(
            int(rng.choice([1, 2, 3, 4, 4], p=[0.15, 0.2, 0.2, 0.25, 0.2])), remaining[colour]
        )
        group = _try_group(grid, colour, island_of, rng, want)
        if not group:
            continue
        for c in group:
            grid[c] = colour
            island_of[c] = len(group) == 4
        remaining[colour] -= len(group)

    candidates: list[tuple[Cell, Cell]] = []
    for f in range(size):
        for r in range(size):
            if grid[f, r] == 0:
                continue
            for df, dr in BRIDGE_OFFSETS:
                b = (f + df, r + dr)
                if 0 <= b[0] < size and 0 <= b[1] < size and grid[b] == grid[f, r]:
                    if all(grid[c] == 0 for c in crossed_cells((f, r), b)):
                        candidates.append(((f, r), b))
    order = rng.permutation(len(candidates))
    chosen: list[tuple[Cell, Cell]] = []
    used: set[Cell] = set()
    for index in order:
        if len(chosen) >= bridges:
            break
        a, b = candidates[int(index)]
        if a in used or b in used:
            continue
        if any(segments_cross(a, b, c, d) for c, d in chosen):
            continue
        chosen.append((a, b))
        used.update((a, b))
    chosen.sort()
    return board_from_grid(grid), tuple((cell_name(a), cell_name(b)) for a, b in chosen)


def _groups(grid: Array) -> list[list[Cell]]:
    """Orthogonally connected groups of one colour."""
    size = grid.shape[0]
    seen = np.zeros(grid.shape, bool)
    out = []
    for f in range(size):
        for r in range(size):
            if grid[f, r] == 0 or seen[f, r]:
                continue
            colour, stack, group = grid[f, r], [(f, r)], []
            seen[f, r] = True
            while stack:
                c = stack.pop()
                group.append(c)
                for n in _neighbours(c, size, diagonal=False):
                    if not seen[n] and grid[n] == colour:
                        seen[n] = True
                        stack.append(n)
            out.append(group)
    return out


def looks_plausible(grid: Array) -> bool:
    """Groups of at most four, and no island (group of four) touching its colour diagonally."""
    size = grid.shape[0]
    for group in _groups(grid):
        if len(group) > 4:
            return False
        if len(group) == 4:
            members = set(group)
            colour = grid[group[0]]
            for c in group:
                for n in _neighbours(c, size, diagonal=True):
                    if n not in members and grid[n] == colour:
                        return False
    return True


def random_game(
    rng: np.random.Generator, moves: int, size: int = 10, bridge_chance: float = 0.2
) -> list[tuple[tuple[str, ...], tuple[Bridge, ...]]]:
    """Successive plausible positions of a game, starting from the empty board.

    Light and dark alternate; a move puts two tiles of the mover's colour on free cells
    that are not under a bridge (keeping `looks_plausible`), or builds one bridge
    (sometimes, when one is physically possible). A player who can do neither passes and
    the position repeats. Not a referee: legality beyond what the camera sees is not judged.
    """
    grid = np.zeros((size, size), np.int8)
    bridges: list[tuple[Cell, Cell]] = []
    blocked: set[Cell] = set()
    out: list[tuple[tuple[str, ...], tuple[Bridge, ...]]] = [(board_from_grid(grid), ())]

    def bridge_options(colour: int) -> list[tuple[Cell, Cell]]:
        used = {c for br in bridges for c in br}
        options = []
        for f in range(size):
            for r in range(size):
                if grid[f, r] != colour or (f, r) in used:
                    continue
                for df, dr in BRIDGE_OFFSETS:
                    b = (f + df, r + dr)
                    if not (0 <= b[0] < size and 0 <= b[1] < size) or b in used:
                        continue
                    if grid[b] != colour or not all(grid[c] == 0 for c in crossed_cells((f, r), b)):
                        continue
                    if any(segments_cross((f, r), b, c, d) for c, d in bridges):
                        continue
                    options.append(((f, r), b))
        return options

    def try_tiles(colour: int) -> bool:
        own = [c for c in zip(*np.nonzero(grid == colour), strict=True)]
        for _ in range(300):
            picks: list[Cell] = []
            for _k in range(2):
                if own and rng.random() < 0.6:
                    base = own[int(rng.integers(len(own)))]
                    cell = (
                        int(base[0]) + int(rng.integers(-2, 3)),
                        int(base[1]) + int(rng.integers(-2, 3)),
                    )
                else:
                    cell = (int(rng.integers(size)), int(rng.integers(size)))
                picks.append(cell)
            if picks[0] == picks[1]:
                continue
            if not all(0 <= c[0] < size and 0 <= c[1] < size for c in picks):
                continue
            if any(grid[c] != 0 or c in blocked for c in picks):
                continue
            for c in picks:
                grid[c] = colour
            if looks_plausible(grid):
                return True
            for c in picks:
                grid[c] = 0
        return False

    for move in range(moves):
        colour = 1 if move % 2 == 0 else 2
        options = bridge_options(colour)
        if options and rng.random() < bridge_chance:
            a, b = options[int(rng.integers(len(options)))]
            bridges.append((a, b))
            blocked.update(crossed_cells(a, b))
        elif not try_tiles(colour) and options:
            a, b = options[int(rng.integers(len(options)))]
            bridges.append((a, b))
            blocked.update(crossed_cells(a, b))
        named = tuple((cell_name(a), cell_name(b)) for a, b in sorted(bridges))
        out.append((board_from_grid(grid), named))
    return out
