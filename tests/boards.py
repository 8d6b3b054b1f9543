"""Boards drawn as text, and an independent checker of board legality, for the tests."""

from __future__ import annotations

from referee import Bridge, Cell, Position, Supply, parse_move


def position_from_rows(
    rows: str, bridges: str = "", size: int | None = None, supply: Supply = Supply.PHYSICAL
) -> Position:
    """A position drawn as text: one line per rank, top rank first; `L` light, `D` dark,
    `.` empty. A smaller drawing fills the board's bottom-left corner. Bridges are given as
    space-separated `a1-c1` and must be legal on the drawn tiles."""
    lines = [line.strip() for line in rows.strip().splitlines() if line.strip()]
    position = Position(size or 10, supply)
    for r, line in enumerate(reversed(lines)):
        for f, ch in enumerate(line):
            if ch in "LD":
                i = position.geo.index(Cell(f, r))
                position.cells[i] = 1 if ch == "L" else 2
                position.tiles_left[position.cells[i]] -= 1
    for text in bridges.split():
        move = parse_move(text)
        assert isinstance(move, Bridge)
        colour = position.tile_at(move.a)
        assert colour is not None, f"no tile at {move.a}"
        verdict = position.bridge_verdict(colour, move)
        assert verdict is None, verdict
        position.build_bridge(colour, move)
    return position


def oracle_problems(position: Position) -> list[str]:
    """Everything wrong with a board by the rules, computed independently of the referee's
    own judging code: groups by breadth-first search over a dict of tiles."""
    size = position.size
    tiles = {}
    for f in range(size):
        for r in range(size):
            colour = position.tile_at(Cell(f, r))
            if colour is not None:
                tiles[(f, r)] = colour
    group_of: dict[tuple[int, int], int] = {}
    groups: list[list[tuple[int, int]]] = []
    for start, colour in tiles.items():
        if start in group_of:
            continue
        group_of[start] = len(groups)
        members, queue = [start], [start]
        while queue:
            f, r = queue.pop()
            for nb in ((f + 1, r), (f - 1, r), (f, r + 1), (f, r - 1)):
                if tiles.get(nb) is colour and nb not in group_of:
                    group_of[nb] = len(groups)
                    members.append(nb)
                    queue.append(nb)
        groups.append(members)
    problems = []
    for k, members in enumerate(groups):
        colour = tiles[members[0]]
        if len(members) > 4:
            problems.append(f"group of {len(members)} at {members}")
        if len(members) == 4:
            for f, r in members:
                for df in (-1, 0, 1):
                    for dr in (-1, 0, 1):
                        nb = (f + df, r + dr)
                        if tiles.get(nb) is colour and group_of[nb] != k:
                            problems.append(f"island {members} touches {nb}")
    ends: dict[Cell, int] = {}
    for b in position.bridges:
        for end in (b.a, b.b):
            ends[end] = ends.get(end, 0) + 1
            if tiles.get((end.file, end.rank)) is not b.colour:
                problems.append(f"bridge {b.move} end {end} is not a {b.colour.value} tile")
        for c in b.under:
            if (c.file, c.rank) in tiles:
                problems.append(f"bridge {b.move} over tile {c}")
    problems += [f"{c} carries {n} bridges" for c, n in ends.items() if n > 1]
    return problems
