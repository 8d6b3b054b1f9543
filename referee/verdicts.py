"""Why a move is illegal: a reason code, the cells involved, and a sentence for people."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Reason(enum.Enum):
    """Every reason the referee gives for an illegal move or a flag."""

    OFF_BOARD = "off_board"
    """A cell is not on the board."""
    SAME_CELL = "same_cell"
    """Both tiles of a turn name the same cell."""
    OCCUPIED = "occupied"
    """A tile already lies on the cell."""
    BLOCKED = "blocked"
    """The cell lies under a bridge."""
    FLAGGED_CELL = "flagged_cell"
    """The cell holds a tile flagged as illegal; it may not be used until that is corrected."""
    GROUP_TOO_LARGE = "group_too_large"
    """The tiles would make a group of five or more tiles of one colour."""
    ISLAND_TOO_CLOSE = "island_too_close"
    """An island would touch another tile of its colour, even diagonally (the distance rule)."""
    NO_TILES_LEFT = "no_tiles_left"
    """The mover has fewer than two tiles left in supply."""
    NOT_A_BRIDGE_SHAPE = "not_a_bridge_shape"
    """The two ends are not two cells apart straight or diagonally, nor a knight's move apart."""
    BRIDGE_END_NOT_OWN_TILE = "bridge_end_not_own_tile"
    """A bridge end is not a tile of the mover's colour."""
    BRIDGE_END_IN_USE = "bridge_end_in_use"
    """A tile already carries a bridge; each tile carries at most one."""
    BRIDGE_OVER_TILE = "bridge_over_tile"
    """A tile lies under the bridge."""
    BRIDGES_CROSS = "bridges_cross"
    """The bridge would cross or overlap another bridge."""
    NO_BRIDGES_LEFT = "no_bridges_left"
    """The common pool of bridges is empty."""
    PASS_NOT_ALLOWED = "pass_not_allowed"
    """The mover could still place two tiles, so must place them or build a bridge."""
    SWAP_NOT_ALLOWED = "swap_not_allowed"
    """`swap` is only allowed right after the first move."""
    FIRST_MOVE_NOT_TILES = "first_move_not_tiles"
    """The first move of a game places two light tiles."""
    GAME_OVER = "game_over"
    """The game has ended; no more moves."""
    TILE_APPEARED = "tile_appeared"
    """A tile lies on the board that no turn placed (outside a turn)."""
    TILE_VANISHED = "tile_vanished"
    """A tile the record holds is missing from the board."""
    BRIDGE_VANISHED = "bridge_vanished"
    """A bridge the record holds is missing from the board."""
    WRONG_COLOUR = "wrong_colour"
    """Tiles of the wrong colour for the player to move."""
    TOO_MANY_PIECES = "too_many_pieces"
    """More than a turn's worth of pieces appeared at once."""


@dataclass(frozen=True, slots=True)
class Illegal:
    """The verdict on an illegal move: what rule, which cells, and why in words."""

    reason: Reason
    cells: tuple[str, ...]
    message: str

    def to_dict(self) -> dict[str, object]:
        return {"reason": self.reason.value, "cells": list(self.cells), "message": self.message}
