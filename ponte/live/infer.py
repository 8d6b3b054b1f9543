"""Move inference: from the record's board and a settled board to what happened at the table.

The board the referee believes in is the record (RULINGS.md), so every settled board is
compared with the whole board the record expects — legal pieces plus flagged pieces still
standing — not only with the previous frame. The difference is read as:

- the pieces of a flagged move taken back (all of them, or any of the last move's): a
  correction (`corrections`);
- two new tiles of the mover's colour: a `Tiles` move; one new bridge: a `Bridge` move;
- a legal move of the *other* colour while light is to move and cannot place two tiles:
  light passed (the only turn it could make without touching the board) and dark moved.
  Not for dark: dark's pass ends the game, so light has no move after it; light's tiles
  then stay a wrong-colour anomaly whose message says dark may pass from the controls;
- more than one turn's pieces: the turns the camera did not see one by one, read in turn
  order (`ponte.live.catchup`), perhaps ending with the next player's first tile. One
  explanation is recorded turn by turn; several equally likely ones are recorded not at
  all but offered to the players (`Plan.unsure`);
- one new tile and nothing else: not a turn yet (`Plan.pending`);
- the rest is an *anomaly*: the new pieces no turn explains (one anomaly for all of them:
  a wrong colour, too many pieces, a tile outside a turn), and each recorded piece no
  longer seen or read as the other colour (a request to put it back; the record keeps it
  and the game is never void for it). Anomalies become referee flags (`Game.raise_flag`)
  that go down by themselves when the board reads right again.

When an anomaly is still shown, the pieces beside it are read on their own as well, so a
move is still recorded while a stray piece lies on the board.

Pure: plain values and a `referee.Game` in, a `Plan` out; nothing here changes the game.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ponte.live.catchup import Explanation, Turn, best, explanations
from ponte.live.settle import BoardView, BridgeEnds, bridge_ends, cell_key
from referee import Bridge, Cell, Colour, Game, Illegal, Pass, Reason, Tiles

EMPTY = "empty"
PRESENT = "present"
ABSENT = "absent"
GROUP = "pieces:"
"""The key of an anomaly for several pieces at once: "pieces:" and each piece's key=state."""


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
    """What a settled board means: the turns it shows (usually one), a lone tile waiting,
    the anomalies, or the explanations to ask the players about."""

    moves: tuple[Turn, ...] = ()
    """The turns to record, in order (a pass only before a turn of the other colour)."""
    pending: str | None = None
    """The cell of a single new tile waiting for its second: one tile is not a turn."""
    anomalies: Mapping[str, Anomaly] = field(default_factory=dict)
    unsure: tuple[Explanation, ...] = ()
    """Several explanations of the new pieces, equally likely: none is recorded until the
    players confirm the first or put the board right."""


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


def piece_state(board: BoardView, key: str) -> str:
    """What the board shows at a cell ("light", "dark", "empty") or a bridge ("present",
    "absent"), by the cell's or bridge's key."""
    kind, _, where = key.partition(":")
    if kind == "cell":
        return board.tiles.get(where, EMPTY)
    a, _, b = where.partition("-")
    return PRESENT if bridge_ends(a, b) in board.bridges else ABSENT


def anomaly_pieces(anomaly: Anomaly) -> tuple[tuple[str, str], ...]:
    """The (key, state) of each cell or bridge an anomaly stands for (a group names
    several: "pieces:cell:c3=dark cell:c4=dark")."""
    if anomaly.key.startswith(GROUP):
        pieces = (p.partition("=") for p in anomaly.key[len(GROUP):].split())
        return tuple((key, state) for key, _, state in pieces)
    return ((anomaly.key, anomaly.state),)


def _shows(board: BoardView, anomaly: Anomaly) -> bool:
    return all(piece_state(board, k) == v for k, v in anomaly_pieces(anomaly))


def interpret(
    game: Game,
    board: BoardView,
    open_anomalies: Mapping[str, Anomaly],
    seen: Mapping[str, int] | None = None,
) -> Plan:
    """Read a settled board against the record (after `corrections` have been applied).

    `open_anomalies` are the anomalies already flagged; one that the board still shows keeps
    its reason (and its flag), so its window runs on. `seen` says on which settled board
    each new piece was first seen (`catchup.explanations`).
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

    shown = {key for anomaly in open_anomalies.values() if _shows(board, anomaly)
             for key, _ in anomaly_pieces(anomaly)}
    fresh = {c: v for c, v in added.items() if tile_key(c) not in shown}
    fresh_bridges = {b for b in new_bridges if bridge_key(b) not in shown}

    moves: tuple[Turn, ...] = ()
    pending = None
    unsure: tuple[Explanation, ...] = ()
    explained: tuple[dict[str, str], set[BridgeEnds]] | None = None
    for pieces, bridges in ((added, new_bridges), (fresh, fresh_bridges)):
        if pieces is fresh and fresh == added and fresh_bridges == new_bridges:
            break  # no open anomaly is shown: the same pieces again
        one = _one_turn(game, pieces, bridges)
        if one is not None:
            moves, explained = one, (pieces, bridges)
            break
        # All the new pieces explained: judged with no anomaly flag over them, as they will be.
        judged = _without_anomalies(game) if pieces is added else game
        found = best(explanations(judged, pieces, frozenset(bridges), board.tiles, seen))
        if len(found) == 1:
            moves, pending, explained = found[0].moves, found[0].pending, (pieces, bridges)
            break
        if found:
            unsure, explained = tuple(found), (pieces, bridges)
            break
    if explained is not None:
        for cell in list(explained[0]):
            added.pop(cell, None)
        new_bridges -= explained[1]
    elif not fresh_bridges:
        own = [c for c, v in fresh.items() if v == mover.value]
        other_tiles = [c for c, v in fresh.items() if v == mover.other.value]
        if len(own) == 1:
            pending = own[0]
            added.pop(pending)
        elif not own and len(other_tiles) == 1 and _may_pass_first(game, None):
            pending = other_tiles[0]  # light cannot move: dark's first tile
            added.pop(pending)

    anomalies: dict[str, Anomaly] = {}

    def keep(key: str, state: str, anomaly: Anomaly) -> None:
        old = open_anomalies.get(key)
        anomalies[key] = old if old is not None and old.state == state else anomaly

    if len(added) + len(new_bridges) == 1:
        for cell, colour in added.items():
            keep(tile_key(cell), colour,
                 Anomaly(tile_key(cell), colour, _added_verdict(game, {cell: colour}, set()),
                         (cell,)))
        for ends in new_bridges:
            verdict = Illegal(Reason.TOO_MANY_PIECES, ends,
                              f"a bridge {ends[0]}-{ends[1]} appeared outside a turn")
            keep(bridge_key(ends), PRESENT, Anomaly(bridge_key(ends), PRESENT, verdict))
    elif added or new_bridges:
        group = GROUP + " ".join(
            [f"{tile_key(c)}={added[c]}" for c in sorted(added, key=cell_key)]
            + [f"{bridge_key(b)}={PRESENT}" for b in sorted(new_bridges)])
        keep(group, PRESENT, Anomaly(group, PRESENT, _added_verdict(game, added, new_bridges),
                                     tuple(sorted(added, key=cell_key))))
    for cell, (before, now) in changed.items():
        verdict = Illegal(
            Reason.TILE_VANISHED,
            (cell,),
            f"the {before} tile on {cell} is read as {now}: put the {before} tile back "
            "(the record keeps it)",
        )
        keep(tile_key(cell), now, Anomaly(tile_key(cell), now, verdict))
    for cell, colour in vanished.items():
        verdict = Illegal(
            Reason.TILE_VANISHED, (cell,),
            f"the {colour} tile on {cell} is missing: put it back (the record keeps it)"
        )
        keep(tile_key(cell), EMPTY, Anomaly(tile_key(cell), EMPTY, verdict))
    for ends in lost_bridges:
        verdict = Illegal(
            Reason.BRIDGE_VANISHED, ends,
            f"the bridge {ends[0]}-{ends[1]} is missing: put it back (the record keeps it)"
        )
        keep(bridge_key(ends), ABSENT, Anomaly(bridge_key(ends), ABSENT, verdict))
    return Plan(moves, pending, anomalies, unsure)


def _without_anomalies(game: Game) -> Game:
    """The game with the flags of pieces outside a turn taken down (a copy)."""
    raised = [f.id for f in game.flags if f.move is None and f.obstructs]
    if not raised:
        return game
    fork = game.copy()
    for flag_id in raised:
        fork.clear_flag(flag_id)
    return fork


def _one_turn(game: Game, pieces: Mapping[str, str],
              bridges: set[BridgeEnds]) -> tuple[Turn, ...] | None:
    """The mover's turn that places exactly these pieces, or light's pass and dark's legal
    turn where light cannot place two tiles; None if no one turn does."""
    mover = game.turn
    assert mover is not None
    move = _as_move(pieces, bridges, mover)
    theirs = _as_move(pieces, bridges, mover.other)
    if theirs is not None and _may_pass_first(game, move) and _legal_for(
            game, mover.other, theirs):
        return (Pass(), theirs)
    return None if move is None else (move,)


def _added_verdict(game: Game, added: Mapping[str, str], bridges: set[BridgeEnds]) -> Illegal:
    """Why pieces that no turn explains are flagged: the wrong colour, too many, or a tile
    outside a turn."""
    mover = game.turn
    assert mover is not None
    cells = sorted(added, key=cell_key)
    where = tuple(cells) + tuple(e for b in sorted(bridges) for e in b)
    colours = set(added.values())
    if not bridges and colours == {mover.other.value} and len(cells) <= 2:
        hint = ""
        if mover is Colour.DARK and game.pass_allowed():
            hint = (" (dark cannot place two tiles: dark may build a bridge, or pass"
                    " from the controls, which ends the game)")
        tiles = f"a {mover.other.value} tile" if len(cells) == 1 else f"{mover.other.value} tiles"
        return Illegal(Reason.WRONG_COLOUR, where,
                       f"{tiles} on {', '.join(cells)}, but it is "
                       f"{mover.value}'s turn{hint}")
    if len(cells) == 1 and not bridges:
        return Illegal(Reason.TILE_APPEARED, where,
                       f"a {added[cells[0]]} tile appeared on {cells[0]} outside a turn")
    parts = [f"{colour} tile on {c}" for c, colour in ((c, added[c]) for c in cells)]
    parts += [f"bridge {a}-{b}" for a, b in sorted(bridges)]
    return Illegal(Reason.TOO_MANY_PIECES, where,
                   "more pieces appeared at once than the turns since the last settled board "
                   f"explain ({', '.join(parts)})")


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
