"""Feeds a live session the settled readings a camera would give as moves are made at the
table: for benchmarks, tests and trying the page without a camera."""

from __future__ import annotations

from collections.abc import Callable

from ponte.live.session import LiveSession
from ponte.live.settle import BoardView, Reading
from referee import Bridge, Game, Move, Pass, Swap, Tiles, parse_move


class PieceFeeder:
    """Lays pieces as a camera would see them, or uses a control for pass and swap."""

    def __init__(self, session: LiveSession) -> None:
        self.session = session
        self.tiles: dict[str, str] = {}
        self.bridges: list[tuple[str, str]] = []
        self.t = 0.0

    @property
    def game(self) -> Game:
        game: Game = self.session.table.game
        return game

    def clear(self) -> None:
        """An empty table (after a new game)."""
        self.tiles, self.bridges = {}, []

    def make(self, move: Move | str, snapshot: Callable[[], bytes | None] | None = None) -> None:
        """Make a move at the table: lay its pieces (seen by the camera) or use a control."""
        if isinstance(move, str):
            move = parse_move(move)
        if isinstance(move, Swap):
            self.session.control("swap", {})
            return
        if isinstance(move, Pass):
            self.session.control("pass", {})
            return
        colour = self.game.turn
        assert colour is not None
        if isinstance(move, Tiles):
            for cell in move.cells:
                self.tiles[cell.name] = colour.value
        elif isinstance(move, Bridge):
            self.bridges.append((move.a.name, move.b.name))
        self.t += 1.0
        self.session.feed(Reading(self.t, BoardView.of(self.tiles, self.bridges)), snapshot)
