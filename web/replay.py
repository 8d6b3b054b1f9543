"""Replaying a recorded game move by move from its `.pdd` record, with the referee.

A record holds the moves as played, illegal ones included (the live loop flags those and
lets play go on), so a move the referee refuses is replayed as flagged when it could stand
on the board, the way the live loop judged it.
"""

from __future__ import annotations

import io
from typing import Any

from referee import Game, IllegalMoveError, Move, Pass, Swap, read_record
from referee.view import game_state


class ReplayError(ValueError):
    """The record cannot be replayed (it does not parse, or a move cannot stand)."""


def replay(pdd_text: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The record's tags and the state before any move (index 0) and after each move."""
    try:
        record = read_record(io.StringIO(pdd_text))
        game = Game(record.board_size, record.supply)
    except ValueError as exc:
        raise ReplayError(f"the record cannot be read: {exc}") from None
    states = [game_state(game, placeable=False)]
    for k, move in enumerate(record.moves):
        _play(game, move, k + 1)
        states.append(game_state(game, placeable=False))
    _recorded_ending(states[-1], record.tags)
    return record.tags, states


def _recorded_ending(state: dict[str, Any], tags: dict[str, str]) -> None:
    """A game ended from the controls has moves that do not end it: its ending is the
    record's `Result` (and `Termination`), which the final state then shows."""
    result = tags.get("Result", "*")
    if state["outcome"] is not None or result not in ("light", "dark", "draw", "void"):
        return
    state["over"] = True
    state["outcome"] = {
        "termination": tags.get("Termination") or ("void" if result == "void" else "ended"),
        "result": result,
        "winner": result if result in ("light", "dark") else None,
    }


def _play(game: Game, move: Move, ply: int) -> None:
    try:
        game.push(move)
    except IllegalMoveError as exc:
        if isinstance(move, Pass | Swap):
            raise ReplayError(f"move {ply} ({move}) cannot be replayed: {exc}") from None
        try:
            game.push_flagged(move)
        except ValueError as again:
            raise ReplayError(f"move {ply} ({move}) cannot be replayed: {again}") from None
