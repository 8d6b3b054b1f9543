"""Scoring: islands joined by a colour's own bridges (through sandbanks) score k(k+1)/2.

>>> [triangular(k) for k in range(1, 9)]
[1, 3, 6, 10, 15, 21, 28, 36]
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.cells import Cell, Colour
from referee.moves import Bridge
from referee.position import Position


def triangular(k: int) -> int:
    """Points for a joined set of k islands: 1, 3, 6, 10, ..."""
    return k * (k + 1) // 2


@dataclass(frozen=True, slots=True)
class JoinedGroup:
    """Islands joined through the colour's bridges (and sandbanks), with their points."""

    islands: tuple[tuple[Cell, ...], ...]
    sandbanks: tuple[tuple[Cell, ...], ...]
    bridges: tuple[Bridge, ...]
    points: int

    def to_dict(self) -> dict[str, object]:
        return {
            "points": self.points,
            "islands": [[c.name for c in island] for island in self.islands],
            "sandbanks": [[c.name for c in bank] for bank in self.sandbanks],
            "bridges": [str(b) for b in self.bridges],
        }


@dataclass(frozen=True, slots=True)
class ColourScore:
    """One colour's total: points, islands, bridges, and the joined groups that scored."""

    colour: Colour
    points: int
    islands: int
    bridges: int
    groups: tuple[JoinedGroup, ...]

    def to_dict(self, breakdown: bool = False) -> dict[str, object]:
        out: dict[str, object] = {
            "points": self.points,
            "islands": self.islands,
            "bridges": self.bridges,
        }
        if breakdown:
            out["groups"] = [g.to_dict() for g in self.groups]
        return out


@dataclass(frozen=True, slots=True)
class Score:
    """Both colours' scores."""

    light: ColourScore
    dark: ColourScore

    def of(self, colour: Colour) -> ColourScore:
        return self.light if colour is Colour.LIGHT else self.dark

    def leader(self) -> Colour | None:
        """Who is ahead by the tie-breaks: points, then islands, then bridges; None if equal."""
        a = (self.light.points, self.light.islands, self.light.bridges)
        b = (self.dark.points, self.dark.islands, self.dark.bridges)
        if a == b:
            return None
        return Colour.LIGHT if a > b else Colour.DARK

    def to_dict(self, breakdown: bool = False) -> dict[str, object]:
        return {"light": self.light.to_dict(breakdown), "dark": self.dark.to_dict(breakdown)}


def score_colour(position: Position, colour: Colour) -> ColourScore:
    """Score one colour: join its groups along its own bridges and count islands per set."""
    groups = position.groups(colour)
    geo = position.geo
    owner = {i: k for k, g in enumerate(groups) for i in g}
    parent = list(range(len(groups)))

    def find(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    own_bridges = [b for b in position.bridges if b.colour is colour]
    for b in own_bridges:
        ra, rb = find(owner[geo.index(b.a)]), find(owner[geo.index(b.b)])
        if ra != rb:
            parent[ra] = rb
    sets: dict[int, list[int]] = {}
    for k in range(len(groups)):
        sets.setdefault(find(k), []).append(k)

    def cells(g: list[int]) -> tuple[Cell, ...]:
        return tuple(sorted(geo.cell(i) for i in g))

    joined = []
    for members in sets.values():
        islands = [cells(groups[k]) for k in members if len(groups[k]) == 4]
        if not islands:
            continue
        banks = [cells(groups[k]) for k in members if len(groups[k]) < 4]
        member_set = set(members)
        bridges = tuple(
            b.move for b in own_bridges if owner[geo.index(b.a)] in member_set
        )
        joined.append(
            JoinedGroup(tuple(sorted(islands)), tuple(sorted(banks)), bridges,
                        triangular(len(islands)))
        )
    joined.sort(key=lambda g: (-g.points, g.islands))
    return ColourScore(
        colour=colour,
        points=sum(g.points for g in joined),
        islands=sum(len(g.islands) for g in joined),
        bridges=len(own_bridges),
        groups=tuple(joined),
    )


def score(position: Position) -> Score:
    """Score both colours of a position."""
    return Score(score_colour(position, Colour.LIGHT), score_colour(position, Colour.DARK))
