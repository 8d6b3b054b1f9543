"""The game: turn order, the pie rule, passing, the end, the outcome and the two-round window.

A game is a log of what happened at the table — moves (legal, or played over the referee's
flag), flags raised for pieces that appeared or vanished outside a turn, and flags cleared
— and the state that log leads to. `push` plays a legal move or raises; `push_flagged`
records an illegal placement that stays on the board (the tabletop case). Undoing and
correcting replay the log, so there is one way the state is ever computed.

Turns and rounds (RULINGS.md): a turn is one move on the board (`swap` is a choice, not a
turn); a round is a light turn and the dark turn after it, so turns 1-2 are round 1, 3-4
round 2, and so on. A flag raised in round k voids the game if it is still up when round
k+2 ends.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

from referee.cells import Cell, Colour, cells_under
from referee.moves import Bridge, IllegalMoveError, Move, Pass, Swap, Tiles
from referee.position import Position, Supply
from referee.scoring import Score, score
from referee.verdicts import Illegal, Reason


class Termination(enum.Enum):
    """How a game ended."""

    PASSED = "passed"
    """Light passed and dark took its last turn, or dark passed: the normal end."""
    VOID = "void"
    """An illegal placement was still on the board when its two-round window ran out (or
    when the game ended); the printed rules stop such a game and start again."""
    ENDED = "ended"
    """The players ended the game at the table before its natural end (`Game.end`): it is
    scored as it stands, and void if a flag is still up."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game: how it ended, the winner (None for a draw or a void game), the score."""

    termination: Termination
    winner: Colour | None
    score: Score

    @property
    def result(self) -> str:
        """The record's Result tag: light, dark, draw or void."""
        if self.termination is Termination.VOID:
            return "void"
        return self.winner.value if self.winner else "draw"


@dataclass(frozen=True, slots=True)
class Flag:
    """An illegal placement or an unexplained change that is still on the board."""

    id: int
    verdict: Illegal
    raised_in_turn: int
    """The turn during which it was raised (the flagged move's own turn)."""
    deadline: int
    """The game is void if the flag is still up when this turn has been completed."""
    colour: Colour | None = None
    """Who placed the flagged pieces (None for a change outside a turn)."""
    move: Tiles | Bridge | None = None
    """The flagged move, if the flag is for a move."""
    obstructs: tuple[Cell, ...] = ()
    """Cells physically holding the flagged pieces; unusable until the flag is cleared."""

    def rounds_left(self, turns_completed: int) -> int:
        """How many round ends remain before the game would be void (the current one counts)."""
        return max(0, self.deadline // 2 - turns_completed // 2)

    def to_dict(self, turns_completed: int) -> dict[str, object]:
        return {
            "id": self.id,
            **self.verdict.to_dict(),
            "colour": self.colour.value if self.colour else None,
            "move": str(self.move) if self.move else None,
            "turn": self.raised_in_turn,
            "deadline_turn": self.deadline,
            "rounds_left": self.rounds_left(turns_completed),
        }


@dataclass(frozen=True, slots=True)
class PlayedMove:
    """A move in the game's history."""

    ply: int
    """Position in the record, from 1 (counts `swap`)."""
    turn: int | None
    """The board turn, from 1 (None for `swap`)."""
    colour: Colour | None
    """The mover's colour (None for `swap`, which the second player says)."""
    move: Move
    flag: int | None = None
    """The flag raised for this move if it was illegal and left on the board."""
    withdrawn: bool = False
    """The flagged pieces were taken back after play had gone on: the turn had no effect."""


@dataclass(frozen=True, slots=True)
class _MoveEntry:
    move: Move
    flagged: Illegal | None


@dataclass(frozen=True, slots=True)
class _FlagEntry:
    verdict: Illegal
    obstructs: tuple[Cell, ...]


@dataclass(frozen=True, slots=True)
class _ClearEntry:
    flag_id: int


@dataclass(frozen=True, slots=True)
class _EndEntry:
    pass


_Entry = _MoveEntry | _FlagEntry | _ClearEntry | _EndEntry


_CANNOT_STAND = (
    Reason.OFF_BOARD,
    Reason.SAME_CELL,
    Reason.OCCUPIED,
    Reason.FLAGGED_CELL,
    Reason.GAME_OVER,
    Reason.NOT_A_BRIDGE_SHAPE,
)
"""Verdicts on moves that could not physically stand on the board, so cannot be flagged."""


def round_of(turn: int) -> int:
    """The round a board turn belongs to (turns 1-2: round 1, 3-4: round 2, ...)."""
    return (turn + 1) // 2


@dataclass
class _State:
    position: Position
    moves: list[PlayedMove] = field(default_factory=list)
    flags: dict[int, Flag] = field(default_factory=dict)
    next_flag_id: int = 1
    turns: int = 0
    swapped: bool = False
    light_passed: bool = False
    ended: bool = False
    agreed: bool = False
    void: bool = False


class Game:
    """A game of Ponte del Diavolo from the first move to the outcome."""

    def __init__(self, size: int = 10, supply: Supply = Supply.PHYSICAL) -> None:
        self.size = size
        self.supply = supply
        self._log: list[_Entry] = []
        self._s = _State(Position(size, supply))

    # ----------------------------------------------------------------- state

    @property
    def position(self) -> Position:
        """The legal pieces on the board (flagged pieces excluded, their cells obstructed)."""
        return self._s.position

    @property
    def moves(self) -> list[PlayedMove]:
        return list(self._s.moves)

    @property
    def flags(self) -> list[Flag]:
        """The flags still up, oldest first."""
        return list(self._s.flags.values())

    def cleared_flags(self) -> list[tuple[int, int]]:
        """Each flag that went down without undoing its move, in order: (how many moves had
        been played by then, the flag's id)."""
        out = []
        played = 0
        for entry in self._log:
            if isinstance(entry, _MoveEntry):
                played += 1
            elif isinstance(entry, _ClearEntry):
                out.append((played, entry.flag_id))
        return out

    @property
    def turns_completed(self) -> int:
        return self._s.turns

    @property
    def swapped(self) -> bool:
        """Whether the second player took light with `swap`."""
        return self._s.swapped

    @property
    def light_passed(self) -> bool:
        return self._s.light_passed

    def is_over(self) -> bool:
        return self._s.ended or self._s.void

    @property
    def turn(self) -> Colour | None:
        """The colour to move, or None once the game is over."""
        if self.is_over():
            return None
        return Colour.LIGHT if self._s.turns % 2 == 0 else Colour.DARK

    def swap_allowed(self) -> bool:
        s = self._s
        return not self.is_over() and len(s.moves) == 1 and s.turns == 1

    def pass_allowed(self) -> bool:
        colour = self.turn
        return colour is not None and self._s.turns > 0 and not self.position.can_place_two(colour)

    def score(self) -> Score:
        return score(self.position)

    def outcome(self) -> Outcome | None:
        """The outcome once the game is over, else None."""
        if self._s.void:
            return Outcome(Termination.VOID, None, self.score())
        if self._s.ended:
            current = self.score()
            how = Termination.ENDED if self._s.agreed else Termination.PASSED
            return Outcome(how, current.leader(), current)
        return None

    # ----------------------------------------------------------------- judging

    def verdict(self, move: Move) -> Illegal | None:
        """None if the move is legal now, else why not."""
        s = self._s
        colour = self.turn
        if colour is None:
            return Illegal(Reason.GAME_OVER, (), f"the game is over; {move} comes after the end")
        if isinstance(move, Swap):
            if self.swap_allowed():
                return None
            return Illegal(
                Reason.SWAP_NOT_ALLOWED, (), "swap is only allowed right after the first move"
            )
        if s.turns == 0 and not isinstance(move, Tiles):
            return Illegal(
                Reason.FIRST_MOVE_NOT_TILES,
                (),
                f"the first move places two light tiles, not {move}",
            )
        if isinstance(move, Tiles):
            return self.position.tiles_verdict(colour, move)
        if isinstance(move, Bridge):
            return self.position.bridge_verdict(colour, move)
        if self.position.can_place_two(colour):
            return Illegal(
                Reason.PASS_NOT_ALLOWED,
                (),
                f"{colour.value} can still place two tiles, so may not pass",
            )
        return None

    def is_legal(self, move: Move) -> bool:
        return self.verdict(move) is None

    def legal_moves(self) -> list[Move]:
        """Every legal move now: tile pairs, bridges, swap and pass where allowed."""
        colour = self.turn
        if colour is None:
            return []
        if self._s.turns == 0:
            return list(self.position.legal_tile_pairs(colour))
        pairs = self.position.legal_tile_pairs(colour)
        moves: list[Move] = list(pairs)
        moves.extend(self.position.legal_bridges(colour))
        if self.swap_allowed():
            moves.append(Swap())
        if not pairs:
            moves.append(Pass())
        return moves

    # ----------------------------------------------------------------- playing

    def push(self, move: Move) -> PlayedMove:
        """Play a legal move; raises IllegalMoveError (with the verdict) otherwise."""
        problem = self.verdict(move)
        if problem is not None:
            raise IllegalMoveError(problem)
        self._log.append(_MoveEntry(move, flagged=None))
        return self._apply_move(self._s, move, flagged=None)

    def push_flagged(self, move: Tiles | Bridge) -> Flag:
        """Record an illegal placement that was made at the table and stays there for now.

        The turn passes; the pieces count for nothing and their cells are obstructed until
        `clear_flag` is called. Raises ValueError if the move is legal (use `push`) or if it
        could not stand on the board at all (off the board, or the game is over).
        """
        problem = self.verdict(move)
        if problem is None:
            raise ValueError(f"{move} is legal: push it instead")
        if not isinstance(move, Tiles | Bridge) or problem.reason in _CANNOT_STAND:
            raise IllegalMoveError(problem)
        self._log.append(_MoveEntry(move, flagged=problem))
        self._apply_move(self._s, move, flagged=problem)
        return self._s.flags[self._s.next_flag_id - 1]

    def raise_flag(self, verdict: Illegal, obstructs: Iterable[Cell] = ()) -> Flag:
        """Flag a change outside a turn (a tile that appeared, vanished or moved)."""
        if self.is_over():
            raise ValueError("the game is over")
        entry = _FlagEntry(verdict, tuple(obstructs))
        self._log.append(entry)
        return self._apply_flag(self._s, entry)

    def clear_flag(self, flag_id: int) -> None:
        """The flagged pieces were taken back (or the missing piece returned).

        For the flag of the last move played this undoes that move (the mover plays again:
        a correction); for an older one the flag goes down and that turn stays in the
        history with no effect.
        """
        s = self._s
        if flag_id not in s.flags:
            raise ValueError(f"no flag {flag_id} is up")
        last = self._last_move_entry()
        if last is not None and s.moves and s.moves[-1].flag == flag_id:
            del self._log[last]
            self._rebuild()
            return
        self._log.append(_ClearEntry(flag_id))
        self._apply_clear(self._s, _ClearEntry(flag_id))

    def end(self) -> None:
        """The players end the game as it stands (by agreement, before its natural end).

        It is scored like a game that ended by passing, and void if a flag is still up.
        Raises ValueError if the game is already over.
        """
        if self.is_over():
            raise ValueError("the game is already over")
        self._log.append(_EndEntry())
        self._apply_end(self._s)

    def pop(self) -> PlayedMove:
        """Take back the last move (with any flag it raised); raises IndexError if none."""
        last = self._last_move_entry()
        if last is None:
            raise IndexError("no move to take back")
        played = self._s.moves[-1]
        del self._log[last:]
        self._rebuild()
        return played

    # ----------------------------------------------------------------- internals

    def _last_move_entry(self) -> int | None:
        for k in range(len(self._log) - 1, -1, -1):
            if isinstance(self._log[k], _MoveEntry):
                return k
        return None

    def _rebuild(self) -> None:
        s = _State(Position(self.size, self.supply))
        for entry in self._log:
            if isinstance(entry, _MoveEntry):
                self._apply_move(s, entry.move, flagged=entry.flagged)
            elif isinstance(entry, _FlagEntry):
                self._apply_flag(s, entry)
            elif isinstance(entry, _EndEntry):
                self._apply_end(s)
            else:
                self._apply_clear(s, entry)
        self._s = s

    def _apply_move(self, s: _State, move: Move, flagged: Illegal | None) -> PlayedMove:
        ply = len(s.moves) + 1
        if isinstance(move, Swap):
            s.swapped = True
            played = PlayedMove(ply, None, None, move)
            s.moves.append(played)
            return played
        colour = Colour.LIGHT if s.turns % 2 == 0 else Colour.DARK
        turn = s.turns + 1
        flag_id = None
        if flagged is not None:
            assert isinstance(move, Tiles | Bridge)
            obstructs: tuple[Cell, ...]
            if isinstance(move, Tiles):
                obstructs = move.cells
                s.position.tiles_left[colour.code] -= 2
            else:
                obstructs = tuple(
                    c for c in cells_under(move.a, move.b) if s.position.geo.contains(c)
                )
                s.position.bridges_left -= 1
            flag = Flag(
                s.next_flag_id,
                flagged,
                turn,
                2 * (round_of(turn) + 2),
                colour,
                move,
                obstructs,
            )
            s.flags[flag.id] = flag
            s.next_flag_id += 1
            s.position.obstruct(obstructs)
            flag_id = flag.id
        elif isinstance(move, Tiles):
            s.position.place_tiles(colour, move)
        elif isinstance(move, Bridge):
            s.position.build_bridge(colour, move)
        elif isinstance(move, Pass):
            if colour is Colour.LIGHT:
                s.light_passed = True
            else:
                s.ended = True
        if colour is Colour.DARK and s.light_passed:
            s.ended = True
        played = PlayedMove(ply, turn, colour, move, flag_id)
        s.moves.append(played)
        s.turns = turn
        self._check_window(s)
        return played

    def _apply_flag(self, s: _State, entry: _FlagEntry) -> Flag:
        turn = s.turns + 1
        flag = Flag(s.next_flag_id, entry.verdict, turn, 2 * (round_of(turn) + 2),
                    obstructs=entry.obstructs)
        s.flags[flag.id] = flag
        s.next_flag_id += 1
        s.position.obstruct(entry.obstructs)
        return flag

    def _apply_clear(self, s: _State, entry: _ClearEntry) -> None:
        flag = s.flags.pop(entry.flag_id, None)
        if flag is None:
            return
        s.position.obstruct(flag.obstructs, -1)
        if isinstance(flag.move, Tiles) and flag.colour is not None:
            s.position.tiles_left[flag.colour.code] += 2
        elif isinstance(flag.move, Bridge):
            s.position.bridges_left += 1
        for k, played in enumerate(s.moves):
            if played.flag == flag.id:
                s.moves[k] = PlayedMove(
                    played.ply, played.turn, played.colour, played.move, played.flag, True
                )

    def _apply_end(self, s: _State) -> None:
        s.ended = True
        s.agreed = True
        self._check_window(s)

    @staticmethod
    def _check_window(s: _State) -> None:
        if any(flag.deadline <= s.turns for flag in s.flags.values()):
            s.void = True
        elif s.ended and s.flags:
            s.void = True

