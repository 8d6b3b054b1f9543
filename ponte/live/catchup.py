"""Catch-up: turns the camera did not see one by one, read back in turn order.

Quick players do not wait for the camera, an arm may cover the board while the other player
moves, a reader may miss a piece until the next turn: the next settled board then differs
from the record's by more than one turn. `explanations` finds the sequences of turns, in
turn order, that place exactly the new pieces: two tiles of the mover's colour, one bridge
between two tiles of the mover's colour already down, light's pass where the rules force
one (light cannot place two tiles) followed by a legal turn of dark's, and at the end
perhaps the next player's first tile, waiting for its second. At most `MAX_TURNS` turns
that place pieces. Each turn is judged by the referee on the game as it stands after the
turns before it, exactly as if it had been seen alone: an illegal one is part of the
explanation, flagged when it is recorded.

Which explanation is likelier comes from when the pieces were first seen (`seen`: the
number of the settled board a piece was first on). A piece first seen after a piece of a
later turn is a *miss* the explanation must assume (the camera did not see it while it
lay there); explanations are ranked by how many misses they assume, and none that assumes
more than `MAX_MISSES` is offered. Where the best rank holds more than one explanation the
caller records none and asks the players.

Pure: a `referee.Game` and plain values in, values out; the game given is not changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations

from ponte.live.settle import BridgeEnds, cell_key
from referee import Bridge, Cell, Colour, Game, Illegal, IllegalMoveError, Pass, Tiles

MAX_TURNS = 3
"""Turns that place pieces one explanation may hold (passes come on top)."""
MAX_MISSES = 2
"""Pieces an explanation may assume the camera did not see while they lay on the board."""

Turn = Tiles | Bridge | Pass


@dataclass(frozen=True, slots=True)
class Explanation:
    """Turns that explain a settled board, in turn order, with the referee's verdicts."""

    moves: tuple[Turn, ...]
    verdicts: tuple[Illegal | None, ...]
    """None for a legal turn, else the referee's verdict (the turn is flagged)."""
    pending: str | None = None
    """The next player's first tile, waiting for its second (not a turn yet)."""
    misses: int = 0

    @property
    def flagged(self) -> int:
        return sum(1 for v in self.verdicts if v is not None)

    def describe(self, first: Colour) -> str:
        """The turns as words, e.g. "light e5,f6, then dark c3,c4"."""
        parts = []
        colour = first
        for move in self.moves:
            parts.append(f"{colour.value} {move}")
            colour = colour.other
        if self.pending is not None:
            parts.append(f"{colour.value}'s first tile {self.pending}")
        return ", then ".join(parts)


def piece_key(kind: str, where: str) -> str:
    return f"{kind}:{where}"


def explanations(
    game: Game,
    tiles: Mapping[str, str],
    bridges: frozenset[BridgeEnds],
    board_tiles: Mapping[str, str],
    seen: Mapping[str, int] | None = None,
    *,
    max_turns: int = MAX_TURNS,
) -> list[Explanation]:
    """Every explanation of the new `tiles` (cell -> colour) and `bridges` on the settled
    board (whose tiles are `board_tiles`) that assumes at most `MAX_MISSES` misses, best
    first: fewest misses, then fewest flagged turns. `seen` maps "cell:e5" / "bridge:a1-c1"
    to the settled board a piece was first seen on (missing: this one)."""
    if game.turn is None or not (tiles or bridges):
        return []
    found: dict[tuple[str, str | None], Explanation] = {}
    now = 1 + max(seen.values(), default=0) if seen else 0
    when = dict(seen or {})

    def finish(moves: tuple[Turn, ...], verdicts: tuple[Illegal | None, ...],
               groups: tuple[tuple[str, ...], ...], pending: str | None) -> None:
        while moves and isinstance(moves[-1], Pass):  # a pass is read only before a turn
            moves, verdicts, groups = moves[:-1], verdicts[:-1], groups[:-1]
        misses = _misses(groups, when, now)
        if misses > MAX_MISSES:
            return
        key = (" ".join(str(m) for m in moves), pending)
        if key not in found:
            found[key] = Explanation(moves, verdicts, pending, misses)

    def walk(g: Game, left: Mapping[str, str], left_bridges: frozenset[BridgeEnds],
             moves: tuple[Turn, ...], verdicts: tuple[Illegal | None, ...],
             groups: tuple[tuple[str, ...], ...], after_pass: bool) -> None:
        if not left and not left_bridges:
            finish(moves, verdicts, groups, None)
            return
        colour = g.turn
        if colour is None:
            return
        own = sorted((c for c, v in left.items() if v == colour.value), key=cell_key)
        placing = sum(1 for m in moves if not isinstance(m, Pass))
        if placing and len(left) == 1 and not left_bridges and own:
            finish(moves, verdicts, groups + ((piece_key("cell", own[0]),),), own[0])
        if placing >= max_turns:
            return

        def play(move: Tiles | Bridge, rest: Mapping[str, str],
                 rest_bridges: frozenset[BridgeEnds], pieces: tuple[str, ...]) -> None:
            verdict = g.verdict(move)
            if verdict is not None and after_pass:
                return  # a pass is read only where a legal turn of the other follows
            fork = g.copy()
            try:
                if verdict is None:
                    fork.push(move)
                else:
                    fork.push_flagged(move)
            except (IllegalMoveError, ValueError):
                return  # it could not stand on the board as read
            walk(fork, rest, rest_bridges, moves + (move,), verdicts + (verdict,),
                 groups + (pieces,), False)

        for a, b in combinations(own, 2):
            rest = {c: v for c, v in left.items() if c not in (a, b)}
            play(Tiles(Cell.parse(a), Cell.parse(b)), rest, left_bridges,
                 (piece_key("cell", a), piece_key("cell", b)))
        for ends in sorted(left_bridges):
            if any(e in left or board_tiles.get(e) != colour.value for e in ends):
                continue  # its tiles are not both down, or not the mover's
            play(Bridge(Cell.parse(ends[0]), Cell.parse(ends[1])), left,
                 left_bridges - {ends}, (piece_key("bridge", f"{ends[0]}-{ends[1]}"),))
        if colour is Colour.LIGHT and not after_pass and _one_dark_turn(left, left_bridges) \
                and g.pass_allowed():  # after light's pass dark has one turn: the last
            fork = g.copy()
            fork.push(Pass())
            walk(fork, left, left_bridges, moves + (Pass(),), verdicts + (None,),
                 groups + ((),), True)

    walk(game, dict(tiles), bridges, (), (), (), False)
    return sorted(found.values(), key=lambda e: (e.misses, e.flagged, len(e.moves),
                                                 " ".join(str(m) for m in e.moves),
                                                 e.pending or ""))


def _one_dark_turn(tiles: Mapping[str, str], bridges: frozenset[BridgeEnds]) -> bool:
    """Whether the pieces could be one turn of dark's (two tiles, one bridge, or a first
    tile): all that may follow light's pass."""
    dark = all(v == Colour.DARK.value for v in tiles.values())
    return (dark and len(tiles) in (1, 2) and not bridges) or (not tiles and len(bridges) == 1)


def _misses(groups: tuple[tuple[str, ...], ...], seen: Mapping[str, int], now: int) -> int:
    """Pieces first seen after a piece of a later turn: the camera must have missed them."""
    count = 0
    for k, group in enumerate(groups):
        later = [seen.get(p, now) for g in groups[k + 1:] for p in g]
        if not later:
            break
        first_later = min(later)
        count += sum(1 for p in group if seen.get(p, now) > first_later)
    return count


def best(found: list[Explanation]) -> list[Explanation]:
    """The explanations of the best rank (fewest misses): one to record, or several to ask
    about."""
    if not found:
        return []
    top = found[0].misses
    return [e for e in found if e.misses == top]
