"""Plain views of a game for the edges: a JSON-ready state and a text picture of the board.

`game_state(game)` is the referee's part of what the web page draws and the live loop
sends: the board, whose turn, supply, the score with its breakdown, flags, the outcome.
Everything in it is built from str, int, bool, None, lists and dicts.
"""

from __future__ import annotations

from typing import Any

from referee.cells import Colour
from referee.game import Game
from referee.position import Position


def board_state(position: Position) -> dict[str, Any]:
    """Tiles, bridges, blocked and flagged cells of a position."""
    geo = position.geo
    tiles = {
        geo.names[i]: Colour.from_code(code).value
        for i, code in enumerate(position.cells)
        if code
    }
    return {
        "size": position.size,
        "tiles": tiles,
        "bridges": [
            {
                "from": b.a.name,
                "to": b.b.name,
                "colour": b.colour.value,
                "under": [c.name for c in b.under],
            }
            for b in position.bridges
        ],
        "blocked": [geo.names[i] for i, n in enumerate(position.blocked) if n],
        "obstructed": [geo.names[i] for i, n in enumerate(position.obstructed) if n],
    }


def game_state(game: Game, placeable: bool = True) -> dict[str, Any]:
    """The whole referee state of a game as JSON-ready values.

    With `placeable`, also the cells where the player to move could put a tile (for the
    page's "where can I play" toggle).
    """
    position = game.position
    colour = game.turn
    outcome = game.outcome()
    moves = game.moves
    last = moves[-1] if moves else None
    state: dict[str, Any] = {
        "board": board_state(position),
        "turn": colour.value if colour else None,
        "turns_completed": game.turns_completed,
        "swapped": game.swapped,
        "swap_allowed": game.swap_allowed(),
        "pass_allowed": game.pass_allowed(),
        "can_place_two": bool(colour and position.can_place_two(colour)),
        "light_passed": game.light_passed,
        "supply": {
            "light": position.tiles_in_supply(Colour.LIGHT),
            "dark": position.tiles_in_supply(Colour.DARK),
            "bridges": position.bridges_in_supply(),
            "kind": position.supply.value,
        },
        "moves": [
            {
                "ply": m.ply,
                "turn": m.turn,
                "colour": m.colour.value if m.colour else None,
                "move": str(m.move),
                "flag": m.flag,
                "withdrawn": m.withdrawn,
            }
            for m in moves
        ],
        "last_move": None
        if last is None
        else {
            "ply": last.ply,
            "move": str(last.move),
            "colour": last.colour.value if last.colour else None,
            "cells": [c.name for c in last.move.cells],
        },
        "score": game.score().to_dict(breakdown=True),
        "flags": [f.to_dict(game.turns_completed) for f in game.flags],
        "over": game.is_over(),
        "outcome": None
        if outcome is None
        else {
            "termination": outcome.termination.value,
            "result": outcome.result,
            "winner": outcome.winner.value if outcome.winner else None,
        },
    }
    if placeable and colour is not None:
        cells = {c for pair in position.legal_tile_pairs(colour) for c in pair.cells}
        state["placeable"] = [c.name for c in sorted(cells)]
    else:
        state["placeable"] = []
    return state


def board_text(position: Position) -> str:
    """The board as a text picture, top rank first: L light, D dark, + under a bridge,
    ! a flagged piece, . empty.

    >>> from referee.position import Position
    >>> print(board_text(Position(10)).splitlines()[-1])
        a b c d e f g h i j
    """
    geo = position.geo
    rows = []
    for rank in range(position.size - 1, -1, -1):
        marks = []
        for file in range(position.size):
            i = rank * position.size + file
            code = position.cells[i]
            if code:
                marks.append("L" if code == 1 else "D")
            elif position.obstructed[i]:
                marks.append("!")
            elif position.blocked[i]:
                marks.append("+")
            else:
                marks.append(".")
        rows.append(f"{rank + 1:>3} " + " ".join(marks))
    rows.append("    " + " ".join(chr(ord("a") + f) for f in range(geo.size)))
    return "\n".join(rows)
