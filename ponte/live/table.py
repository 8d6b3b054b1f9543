"""The game at the table: a referee `Game` driven by settled boards and players' controls.

Everything that changes the game is an `Op` — a small JSON-ready value — applied in order;
replaying the same ops on a new `Table` rebuilds the same game (that is how a restarted
assistant resumes from its database). `Table.judge(board, t)` turns a settled board into
ops (corrections, a move, anomaly flags raised and cleared) and applies them; controls
(swap, pass, override, undo, end) are ops too. Each applied op yields the events the
watchers see.

Pure: no I/O, no clocks (times are given), no threads (the session holds the lock).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from contracts.live import EventType
from ponte.live.infer import (
    ABSENT,
    EMPTY,
    PRESENT,
    Anomaly,
    bridge_key,
    corrections,
    expected_board,
    interpret,
    tile_key,
)
from ponte.live.settle import BoardView, bridge_ends, cell_key
from referee import (
    Bridge,
    Cell,
    Game,
    Illegal,
    IllegalMoveError,
    Move,
    Pass,
    Reason,
    Supply,
    Swap,
    Tiles,
    bridge_shape,
    parse_move,
)
from referee.view import game_state

Op = dict[str, Any]
"""One change to the game: {"op": "push" | "flag_move" | "raise" | "clear" | "pop" |
"override" | "end", ...}; JSON-ready."""

Emitted = tuple[EventType, dict[str, Any]]


class OpError(ValueError):
    """An op or control that cannot be applied here (the message says why); `status` is
    400 for a malformed request, 409 for one the game does not allow now."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Table:
    """A game in progress at the table, with its anomalies and players' overrides."""

    size: int = 10
    supply: Supply = Supply.PHYSICAL
    game: Game = field(init=False)
    anomalies: dict[int, Anomaly] = field(default_factory=dict)
    """Open anomaly flags by flag id."""
    overrides: dict[str, str] = field(default_factory=dict)
    """"cell:d4" -> light/dark/empty, "bridge:a1-c1" -> present/absent: the players say the
    camera is wrong there."""
    ended_by_control: bool = False
    ops: list[Op] = field(default_factory=list)
    pending: str | None = None

    def __post_init__(self) -> None:
        self.game = Game(self.size, self.supply)

    # ----------------------------------------------------------------- reading

    @property
    def over(self) -> bool:
        return self.ended_by_control or self.game.is_over()

    @property
    def should_be_empty(self) -> bool:
        """Whether nothing should be on the board: no move made and no flag open."""
        return not self.game.moves and not self.anomalies

    def open_anomalies(self) -> dict[str, Anomaly]:
        return {a.key: a for a in self.anomalies.values()}

    def corrected(self, board: BoardView) -> BoardView:
        """The board with the players' overrides laid over the camera's reading."""
        if not self.overrides:
            return board
        tiles = dict(board.tiles)
        bridges = set(board.bridges)
        for key, value in self.overrides.items():
            kind, _, where = key.partition(":")
            if kind == "cell":
                if value == EMPTY:
                    tiles.pop(where, None)
                else:
                    tiles[where] = value
            else:
                a, _, b = where.partition("-")
                if value == PRESENT:
                    bridges.add(bridge_ends(a, b))
                else:
                    bridges.discard(bridge_ends(a, b))
        return BoardView(tiles, frozenset(bridges))

    def state(self) -> dict[str, Any]:
        state = game_state(self.game, placeable=not self.over)
        state["pending"] = self.pending
        state["overrides"] = dict(self.overrides)
        state["ended"] = self.over
        state["undo_allowed"] = bool(self.game.moves) and not self.ended_by_control
        if self.over:
            state["swap_allowed"] = state["pass_allowed"] = False
        termination = self.termination()
        if termination is not None and state.get("outcome") is None:
            result = self.result()
            state["over"] = True
            state["outcome"] = {
                "termination": termination,
                "result": result,
                "winner": result if result in ("light", "dark") else None,
            }
        return state

    # ----------------------------------------------------------------- judging

    def judge(self, board: BoardView, t: float) -> list[Emitted]:
        """Judge a settled board (the camera's reading); apply and return what followed."""
        events: list[Emitted] = []
        if self.over:
            return self._after_end(board, t)
        self._forget_agreeing_overrides(board, events, t)
        seen = self.corrected(board)
        for flag_id in corrections(self.game, seen):
            events += self.apply({"op": "clear", "flag": flag_id}, t)
        plan = interpret(self.game, seen, self.open_anomalies())
        wanted = {a.key: a for a in plan.anomalies.values()}
        for flag_id, anomaly in list(self.anomalies.items()):
            if wanted.get(anomaly.key) is not anomaly:
                events += self.apply({"op": "clear", "flag": flag_id}, t)
        if plan.move is not None:
            if plan.passes:
                events += self.apply({"op": "push", "move": "pass"}, t)
            events += self._play_seen(plan.move, t)
        if plan.pending != self.pending:
            self.pending = plan.pending
            mover = self.game.turn
            if plan.pending is not None and mover is not None:
                colour = mover.other if plan.passes else mover
                events.append((EventType.NOTICE, {
                    "kind": "one_tile",
                    "cells": [plan.pending],
                    "message": f"one {colour.value} tile on {plan.pending}: "
                    "a turn is two tiles, waiting for the second",
                    "t": t,
                }))
        if not self.over:
            current = set(self.open_anomalies())
            for anomaly in wanted.values():
                if anomaly.key not in current:
                    events += self.apply(_raise_op(anomaly), t)
        return events

    def _after_end(self, board: BoardView, t: float) -> list[Emitted]:
        """Pieces put down after the end are no move: say so once (a notice, no flag)."""
        seen = self.corrected(board)
        final = expected_board(self.game)
        cells = sorted((c for c, v in seen.tiles.items() if final.tiles.get(c) != v), key=cell_key)
        cells += [f"{a}-{b}" for a, b in sorted(seen.bridges - final.bridges)]
        if not cells:
            return []
        return [(EventType.NOTICE, {
            "kind": "after_end",
            "cells": cells,
            "message": f"the game is over (result {self.result()}): "
            f"{', '.join(cells)} {'is' if len(cells) == 1 else 'are'} not part of it",
            "t": t,
        })]

    def _play_seen(self, move: Tiles | Bridge, t: float) -> list[Emitted]:
        verdict = self.game.verdict(move)
        if verdict is None:
            return self.apply({"op": "push", "move": str(move)}, t)
        if verdict.reason in (Reason.OCCUPIED, Reason.OFF_BOARD, Reason.SAME_CELL,
                              Reason.NOT_A_BRIDGE_SHAPE):
            cells = tuple(c.name for c in move.cells)
            anomaly = Anomaly(
                bridge_key(bridge_ends(*cells)) if isinstance(move, Bridge) else tile_key(cells[0]),
                PRESENT,
                verdict,
            )
            return self.apply(_raise_op(anomaly), t)
        return self.apply({"op": "flag_move", "move": str(move)}, t)

    def _forget_agreeing_overrides(self, board: BoardView, events: list[Emitted],
                                   t: float) -> None:
        for key, value in list(self.overrides.items()):
            kind, _, where = key.partition(":")
            if kind == "cell":
                agrees = board.tiles.get(where, EMPTY) == value
            else:
                a, _, b = where.partition("-")
                agrees = (bridge_ends(a, b) in board.bridges) == (value == PRESENT)
            if agrees:
                events += self.apply({"op": "override", "key": key, "value": None}, t)

    # ----------------------------------------------------------------- controls

    def control_op(self, action: str, params: Mapping[str, Any]) -> Op:
        """The op a player's control stands for; OpError if it cannot be done now."""
        game = self.game
        if action in ("swap", "pass"):
            if self.over:
                raise OpError("the game is over")
            move: Move = Swap() if action == "swap" else Pass()
            verdict = game.verdict(move)
            if verdict is not None:
                raise OpError(verdict.message)
            return {"op": "push", "move": str(move)}
        if action == "undo":
            if not game.moves:
                raise OpError("there is no move to undo")
            if self.ended_by_control:
                raise OpError("the game was ended from the controls, so its moves are final: "
                              "start a new game")
            return {"op": "pop"}
        if action == "end_game":
            if self.over:
                raise OpError("the game is already over")
            return {"op": "end"}
        if action == "override":
            return self._override_op(params)
        if action == "drop_override":
            key = params.get("key")
            if not isinstance(key, str) or key not in self.overrides:
                where = key.partition(":")[2] if isinstance(key, str) else key
                raise OpError(f"there is no override on {where} to drop")
            return {"op": "override", "key": key, "value": None}
        raise OpError(f"unknown control {action!r}", 400)

    def control_ops(self, action: str, params: Mapping[str, Any]) -> list[Op]:
        """The ops a player's control stands for: `control_op`'s, and for an undo also the
        overrides that put the undone move's pieces there taken back with it (else the next
        look at the board would make the same move again from them)."""
        op = self.control_op(action, params)
        if action != "undo":
            return [op]
        move = self.game.moves[-1].move
        keys = {tile_key(c.name) for c in move.cells}
        if isinstance(move, Bridge):
            keys.add(bridge_key(bridge_ends(move.a.name, move.b.name)))
        return [op] + [{"op": "override", "key": key, "value": None}
                       for key in self.overrides if key in keys]

    def _override_op(self, params: Mapping[str, Any]) -> Op:
        size = self.size
        if "cell" in params:
            cell = _cell(params["cell"], size)
            value = params.get("value")
            if value not in ("light", "dark", EMPTY):
                raise OpError('override "value" must be "light", "dark" or "empty"', 400)
            return {"op": "override", "key": tile_key(cell), "value": value}
        if "bridge" in params:
            ends = params["bridge"]
            if not isinstance(ends, list | tuple) or len(ends) != 2:
                raise OpError('override "bridge" must be two cell names, e.g. ["a1", "c1"]', 400)
            a, b = _cell(ends[0], size), _cell(ends[1], size)
            ca, cb = Cell.parse(a), Cell.parse(b)
            shape = bridge_shape(abs(ca.file - cb.file), abs(ca.rank - cb.rank))
            if shape is None:
                raise OpError(f"{a}-{b} is not a bridge's shape", 400)
            present = params.get("present", True)
            if not isinstance(present, bool):
                raise OpError('override "present" must be true or false', 400)
            return {"op": "override", "key": bridge_key(bridge_ends(a, b)),
                    "value": PRESENT if present else ABSENT}
        raise OpError('override needs "cell" and "value", or "bridge" and "present"', 400)

    # ----------------------------------------------------------------- applying

    def apply(self, op: Op, t: float) -> list[Emitted]:
        """Apply one op and return its events; the op is appended to `ops`."""
        was_over = self.game.is_over()
        kind = op.get("op")
        game = self.game
        events: list[Emitted] = []
        try:
            if kind == "push":
                played = game.push(parse_move(op["move"]))
                events.append((EventType.MOVE, {
                    "ply": played.ply,
                    "turn": played.turn,
                    "move": str(played.move),
                    "colour": played.colour.value if played.colour else None,
                    "t": t,
                }))
                self.pending = None
                colour = game.turn
                if colour is not None and game.turns_completed > 0 and not (
                    game.position.can_place_two(colour)
                ):
                    events.append((EventType.NOTICE, {
                        "kind": "cannot_place_two",
                        "colour": colour.value,
                        "message": f"{colour.value} cannot place two tiles: "
                        "build a bridge or pass",
                        "t": t,
                    }))
            elif kind == "flag_move":
                move = parse_move(op["move"])
                assert isinstance(move, Tiles | Bridge)
                flag = game.push_flagged(move)
                self.pending = None
                events.append((EventType.ILLEGAL, {
                    "ply": len(game.moves),
                    **_flag_data(flag.to_dict(game.turns_completed)),
                    "t": t,
                }))
            elif kind == "raise":
                verdict = Illegal(Reason(op["reason"]), tuple(op["cells"]), op["message"])
                flag = game.raise_flag(verdict, [Cell.parse(c) for c in op["obstructs"]])
                self.anomalies[flag.id] = Anomaly(
                    op["key"], op["state"], verdict, tuple(op["obstructs"])
                )
                events.append((EventType.ILLEGAL, {
                    "ply": len(game.moves),
                    **_flag_data(flag.to_dict(game.turns_completed)),
                    "t": t,
                }))
            elif kind == "clear":
                flag_id = int(op["flag"])
                cleared = next((f for f in game.flags if f.id == flag_id), None)
                if cleared is None:
                    raise OpError(f"no flag {flag_id} is up")
                undone = bool(game.moves and game.moves[-1].flag == flag_id)
                game.clear_flag(flag_id)
                self.anomalies.pop(flag_id, None)
                events.append((EventType.CORRECTED, {
                    "ply": len(game.moves),
                    "flag": flag_id,
                    "reason": cleared.verdict.reason.value,
                    "cells": list(cleared.verdict.cells),
                    "move": str(cleared.move) if cleared.move else None,
                    "undone": undone,
                    "t": t,
                }))
            elif kind == "pop":
                played = game.pop()
                self.anomalies = {
                    k: v for k, v in self.anomalies.items() if k in {f.id for f in game.flags}
                }
                self.pending = None
                events.append((EventType.STATE, {"undone": str(played.move),
                                                 "ply": played.ply, "t": t}))
            elif kind == "override":
                key, value = str(op["key"]), op.get("value")
                if value is None:
                    self.overrides.pop(key, None)
                else:
                    self.overrides[key] = str(value)
            elif kind == "end":
                self.ended_by_control = True
            else:
                raise OpError(f"unknown op {kind!r}")
        except (IllegalMoveError, KeyError, TypeError) as exc:
            raise OpError(f"cannot apply {op}: {exc}") from None
        self.ops.append(dict(op))
        if game.is_over() and not was_over:
            events += self._ending(t)
        elif kind == "end":
            events += self._ending(t)
        return events

    def _ending(self, t: float) -> list[Emitted]:
        events: list[Emitted] = []
        current = self.game.score()
        result = self.result()
        if result == "void":
            events.append((EventType.VOID, {
                "ply": len(self.game.moves),
                "flags": [f.to_dict(self.game.turns_completed) for f in self.game.flags],
                "t": t,
            }))
        events.append((EventType.END, {
            "ply": len(self.game.moves),
            "score": current.to_dict(breakdown=True),
            "winner": result if result in ("light", "dark") else None,
            "result": result,
            "termination": self.termination(),
            "t": t,
        }))
        return events

    def termination(self) -> str | None:
        """How the game ended: passed, void or ended (from the controls); None while on."""
        outcome = self.game.outcome()
        if outcome is not None:
            return outcome.termination.value
        if self.ended_by_control:
            return "void" if self.game.flags else "ended"
        return None

    def result(self) -> str:
        """The record's Result: light, dark, draw or void once the game is over, `*` before.

        A game ended from the controls is scored as it stands, like one that ended by
        passing: the winner by the tie-breaks (points, islands, bridges), void if a flag is
        still up (the printed rule: illegal tiles still there when the game ends).
        """
        outcome = self.game.outcome()
        if outcome is not None:
            return outcome.result
        if self.ended_by_control:
            if self.game.flags:
                return "void"
            leader = self.game.score().leader()
            return leader.value if leader else "draw"
        return "*"


def _flag_data(flag: dict[str, object]) -> dict[str, object]:
    """A flag as event data: its id as "flag" (an event's own "id" is the event number)."""
    data = dict(flag)
    data["flag"] = data.pop("id")
    return data


def _raise_op(anomaly: Anomaly) -> Op:
    return {
        "op": "raise",
        "key": anomaly.key,
        "state": anomaly.state,
        "reason": anomaly.verdict.reason.value,
        "cells": list(anomaly.verdict.cells),
        "message": anomaly.verdict.message,
        "obstructs": list(anomaly.obstructs),
    }


def _cell(value: object, size: int) -> str:
    if not isinstance(value, str):
        raise OpError("a cell must be a name like \"d4\"", 400)
    try:
        cell = Cell.parse(value)
    except ValueError as exc:
        raise OpError(str(exc), 400) from None
    if not (0 <= cell.file < size and 0 <= cell.rank < size):
        raise OpError(f"{value} is not on the {size} x {size} board", 400)
    return cell.name


def replay(ops: list[Op], size: int = 10, supply: Supply = Supply.PHYSICAL) -> Table:
    """A table rebuilt from its ops (what a restarted assistant does)."""
    table = Table(size, supply)
    for op in ops:
        table.apply(op, 0.0)
    return table

