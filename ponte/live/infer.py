"""Move inference: from the record's board and a settled board to what happened at the table.

The board the referee believes in is the record (RULINGS.md), so every settled board is
compared with the whole board the record expects — legal pieces plus flagged pieces still
standing — not only with the previous frame. The difference is read as:

- the pieces of a flagged move taken back (all of them, or any of the last move's): a
  correction (`corrections`);
- two new tiles of the mover's colour: a `Tiles` move; one new bridge: a `Bridge` move;
- one new tile of the mover's colour and nothing else: not a turn yet (`Plan.pending`);
- a legal move of the *other* colour while light is to move and cannot place two tiles:
  light passed (the only turn it could make without touching the board) and dark moved
  (`Plan.passes`). Not for dark: dark's pass ends the game, so light has no move after it;
  light's tiles then stay a wrong-colour anomaly whose message says dark may pass from the
  controls;
- anything left over is an *anomaly*, one per cell or bridge: a tile of the wrong colour,
  too many pieces at once, a tile that appeared or vanished outside a turn, a bridge that
  vanished. Anomalies become referee flags (`Game.raise_flag`) that go down when the board
  is put right.

Pure: plain values and a `referee.Game` in, a `Plan` out; nothing here changes the game.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ponte.live.settle import BoardView, BridgeEnds, bridge_ends, cell_key
from referee import Bridge, Cell, Colour, Game, Illegal, Reason, Tiles

EMPTY = "empty"
PRESENT = "present"
ABSENT = "absent"


def tile_key(cell: str) -> str:
    return f"cell:{cell}"


def bridge_key(ends: BridgeEnds) -> str:
    return f"bridge:{ends[0]}-{ends[1]}"


@dataclass(frozen=True, slots=True)
class Anomaly:
    """Something on the board that no turn explains, at one cell or bridge.

    `state` is what the board showed there when it was noticed ("light", "dark", "empty",
    "present", "absent"); the anomaly lasts while the board keeps showing it.
    """

    key: str
    state: str
    verdict: Illegal
    obstructs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Plan:
    """What a settled board means: a move (or none), a lone tile waiting, the anomalies."""

    move: Tiles | Bridge | None = None
    pending: str | None = None
    """The cell of a single new tile of the mover's: one tile and a pause is not a turn."""
    anomalies: Mapping[str, Anomaly] = field(default_factory=dict)
    passes: bool = False
    """The mover passed first: `move` (or the `pending` tile) is the other colour's."""


def expected_board(game: Game) -> BoardView:
    """The board the record says stands on the table: legal pieces and flagged moves' pieces."""
    position = game.position
    tiles = {
        position.geo.cell(i).name: Colour.from_code(code).value
        for i, code in enumerate(position.cells)
        if code
    }
    bridges = {bridge_ends(b.a.name, b.b.name) for b in position.bridges}
    for flag in game.flags:
        if isinstance(flag.move, Tiles) and flag.colour is not None:
            for cell in flag.move.cells:
                tiles[cell.name] = flag.colour.value
        elif isinstance(flag.move, Bridge):
            bridges.add(bridge_ends(flag.move.a.name, flag.move.b.name))
    return BoardView(tiles, frozenset(bridges))


def _move_present(board: BoardView, move: Tiles | Bridge, colour: Colour | None) -> list[bool]:
    """For each piece of a flagged move, whether it still stands on the board."""
    if isinstance(move, Tiles):
        want = colour.value if colour else None
        return [board.tiles.get(c.name) == want for c in move.cells]
    return [bridge_ends(move.a.name, move.b.name) in board.bridges]


def corrections(game: Game, board: BoardView) -> list[int]:
    """Flags of moves whose pieces were taken back: any piece of the last move (the mover
    plays again), or all pieces of an older one (withdrawn)."""
    if game.is_over():
        return []
    moves = game.moves
    last_flag = moves[-1].flag if moves else None
    out = []
    for flag in game.flags:
        if flag.move is None:
            continue
        present = _move_present(board, flag.move, flag.colour)
        if (flag.id == last_flag and not all(present)) or not any(present):
            out.append(flag.id)
    return out


def _flagged_cells(game: Game) -> set[str]:
    cells: set[str] = set()
    for flag in game.flags:
        if isinstance(flag.move, Tiles):
            cells.update(c.name for c in flag.move.cells)
    return cells


def _flagged_bridges(game: Game) -> set[BridgeEnds]:
    return {
        bridge_ends(f.move.a.name, f.move.b.name) for f in game.flags if isinstance(f.move, Bridge)
    }


def _as_move(
    added: Mapping[str, str], new_bridges: set[BridgeEnds], mover: Colour
) -> Tiles | Bridge | None:
    if not new_bridges and len(added) == 2 and all(v == mover.value for v in added.values()):
        a, b = sorted(added, key=cell_key)
        return Tiles(Cell.parse(a), Cell.parse(b))
    if not added and len(new_bridges) == 1:
        a, b = next(iter(new_bridges))
        return Bridge(Cell.parse(a), Cell.parse(b))
    return None


def interpret(game: Game, board: BoardView, open_anomalies: Mapping[str, Anomaly]) -> Plan:
    """Read a settled board against the record (after `corrections` have been applied).

    `open_anomalies` are the anomalies already flagged; one that the board still shows keeps
    its reason (and its flag), so its window runs on.
    """
    mover = game.turn
    if mover is None:
        return Plan()
    expected = expected_board(game)
    flagged_cells = _flagged_cells(game)
    flagged_bridges = _flagged_bridges(game)

    added: dict[str, str] = {}
    changed: dict[str, tuple[str, str]] = {}
    vanished: dict[str, str] = {}
    for cell, colour in board.tiles.items():
        before = expected.tiles.get(cell)
        if before is None:
            added[cell] = colour
        elif before != colour:
            changed[cell] = (before, colour)
    for cell, colour in expected.tiles.items():
        if cell not in board.tiles and cell not in flagged_cells:
            vanished[cell] = colour
    new_bridges = set(board.bridges - expected.bridges)
    lost_bridges = set(expected.bridges - board.bridges) - flagged_bridges

    def still_shown(key: str, state: str) -> bool:
        old = open_anomalies.get(key)
        return old is not None and old.state == state

    fresh = {c: v for c, v in added.items() if not still_shown(tile_key(c), v)}
    fresh_bridges = {b for b in new_bridges if not still_shown(bridge_key(b), PRESENT)}
    move = None if changed else _as_move(added, new_bridges, mover)
    if move is None and not changed:
        move = _as_move(fresh, fresh_bridges, mover)
    passes = False
    if (added or new_bridges) and not changed and _may_pass_first(game, move):
        other = mover.other
        for pieces, bridges in ((added, new_bridges), (fresh, fresh_bridges)):
            theirs = _as_move(pieces, bridges, other)
            if theirs is not None and _legal_for(game, other, theirs):
                move, passes = theirs, True
                break
    pending = None
    if move is not None:
        for moved in move.cells:
            added.pop(moved.name, None)
        if isinstance(move, Bridge):
            new_bridges.discard(bridge_ends(move.a.name, move.b.name))
    elif not fresh_bridges and not changed:
        own = [c for c, v in fresh.items() if v == mover.value]
        other_tiles = [c for c, v in fresh.items() if v == mover.other.value]
        if len(own) == 1:
            pending = own[0]
            added.pop(pending)
        elif not own and len(other_tiles) == 1 and _may_pass_first(game, None):
            pending, passes = other_tiles[0], True  # light cannot move: dark's first tile
            added.pop(pending)

    anomalies: dict[str, Anomaly] = {}

    def keep(key: str, state: str, anomaly: Anomaly) -> None:
        old = open_anomalies.get(key)
        anomalies[key] = old if old is not None and old.state == state else anomaly

    crowd = len(added) + len(new_bridges) > 2 or bool(added and new_bridges)
    for cell, colour in added.items():
        if crowd:
            verdict = Illegal(
                Reason.TOO_MANY_PIECES,
                (cell,),
                f"more pieces appeared at once than a turn places ({colour} tile on {cell})",
            )
        elif colour != mover.value:
            hint = ""
            if mover is Colour.DARK and game.pass_allowed():
                hint = (" (dark cannot place two tiles: dark may build a bridge, or pass"
                        " from the controls, which ends the game)")
            verdict = Illegal(
                Reason.WRONG_COLOUR,
                (cell,),
                f"a {colour} tile on {cell}, but it is {mover.value}'s turn{hint}",
            )
        else:
            verdict = Illegal(
                Reason.TILE_APPEARED, (cell,), f"a {colour} tile appeared on {cell} outside a turn"
            )
        keep(tile_key(cell), colour, Anomaly(tile_key(cell), colour, verdict, (cell,)))
    for cell, (before, now) in changed.items():
        verdict = Illegal(
            Reason.TILE_APPEARED,
            (cell,),
            f"the tile on {cell} was {before} and is now {now}",
        )
        keep(tile_key(cell), now, Anomaly(tile_key(cell), now, verdict))
    for cell, colour in vanished.items():
        verdict = Illegal(
            Reason.TILE_VANISHED, (cell,), f"the {colour} tile on {cell} is missing"
        )
        keep(tile_key(cell), EMPTY, Anomaly(tile_key(cell), EMPTY, verdict))
    for ends in new_bridges:
        verdict = Illegal(
            Reason.TOO_MANY_PIECES,
            ends,
            f"a bridge {ends[0]}-{ends[1]} appeared with other pieces",
        )
        keep(bridge_key(ends), PRESENT, Anomaly(bridge_key(ends), PRESENT, verdict))
    for ends in lost_bridges:
        verdict = Illegal(
            Reason.BRIDGE_VANISHED, ends, f"the bridge {ends[0]}-{ends[1]} is missing"
        )
        keep(bridge_key(ends), ABSENT, Anomaly(bridge_key(ends), ABSENT, verdict))
    return Plan(move, pending, anomalies, passes)


def _may_pass_first(game: Game, move: Tiles | Bridge | None) -> bool:
    """Whether the board may be read as the mover's pass and the other colour's move: light
    is to move, cannot place two tiles, and what appeared is no legal move of light's."""
    if game.turn is not Colour.LIGHT or not game.pass_allowed():
        return False
    return move is None or game.verdict(move) is not None


def _legal_for(game: Game, colour: Colour, move: Tiles | Bridge) -> bool:
    """Whether `colour` may make the move on the current position (a pass changes nothing
    on the board, so the position after the mover's pass is this one)."""
    position = game.position
    if isinstance(move, Tiles):
        return position.tiles_verdict(colour, move) is None
    return position.bridge_verdict(colour, move) is None
