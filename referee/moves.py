"""Moves: small frozen values with one text form that round-trips.

========  ==========  ===========================================
text      value       meaning
========  ==========  ===========================================
``c1,c2`` `Tiles`     two tiles of the mover's colour
``a1-c1`` `Bridge`    one bridge between two tiles of the mover's
``pass``  `Pass`      the mover cannot place two tiles and stops
``swap``  `Swap`      the pie rule: the second player takes light
========  ==========  ===========================================

>>> parse_move("C2, c1")
Tiles(a=Cell(file=2, rank=0), b=Cell(file=2, rank=1))
>>> str(parse_move("c1-a1"))
'a1-c1'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from referee.cells import Cell

if TYPE_CHECKING:
    from referee.verdicts import Illegal


class InvalidMoveError(ValueError):
    """The text is not a move at all (a parse error)."""


class IllegalMoveError(ValueError):
    """The move is well formed but the rules forbid it here; `verdict` says why."""

    def __init__(self, verdict: Illegal) -> None:
        super().__init__(verdict.message)
        self.verdict = verdict


@dataclass(frozen=True, slots=True)
class _CellPair:
    """Two cells kept sorted by (file, rank), so the order they were given never matters."""

    a: Cell
    b: Cell

    def __post_init__(self) -> None:
        if self.b < self.a:
            a, b = self.b, self.a
            object.__setattr__(self, "a", a)
            object.__setattr__(self, "b", b)

    @property
    def cells(self) -> tuple[Cell, Cell]:
        return (self.a, self.b)


@dataclass(frozen=True, slots=True)
class Tiles(_CellPair):
    """Two tiles of the mover's colour."""

    def __str__(self) -> str:
        return f"{self.a.name},{self.b.name}"


@dataclass(frozen=True, slots=True)
class Bridge(_CellPair):
    """A bridge between two tiles of the mover's colour."""

    def __str__(self) -> str:
        return f"{self.a.name}-{self.b.name}"


@dataclass(frozen=True, slots=True)
class Pass:
    """The mover cannot place two tiles and builds no bridge."""

    @property
    def cells(self) -> tuple[Cell, ...]:
        return ()

    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Swap:
    """The pie rule: right after the first move, the second player takes the light tiles."""

    @property
    def cells(self) -> tuple[Cell, ...]:
        return ()

    def __str__(self) -> str:
        return "swap"


Move = Union[Tiles, Bridge, Pass, Swap]  # noqa: UP007 - a runtime alias used in isinstance


def parse_move(text: str) -> Move:
    """Parse one move in its text form (case-insensitive, spaces around `,`/`-` allowed)."""
    word = text.strip().lower()
    if word == "pass":
        return Pass()
    if word == "swap":
        return Swap()
    if not word:
        raise InvalidMoveError("empty move")
    for sep, kind in ((",", Tiles), ("-", Bridge)):
        if sep in word:
            parts = [p.strip() for p in word.split(sep)]
            if len(parts) != 2:
                what = "two tiles" if kind is Tiles else "a bridge between two tiles"
                raise InvalidMoveError(
                    f"{text.strip()!r}: a turn is {what}, not {len(parts)} cells"
                )
            try:
                a, b = Cell.parse(parts[0]), Cell.parse(parts[1])
            except ValueError as exc:
                raise InvalidMoveError(f"{text.strip()!r}: {exc}") from None
            return kind(a, b)
    try:
        Cell.parse(word)
    except ValueError:
        pass
    else:
        raise InvalidMoveError(
            f"{text.strip()!r}: one tile alone is not a turn; a turn places two tiles (e.g. c1,c2)"
        )
    raise InvalidMoveError(
        f"not a move: {_shorten(text.strip())} (expected e.g. 'c1,c2', 'a1-c1', 'pass' or 'swap')"
    )


def _shorten(text: str, limit: int = 40) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"
