"""Game records in the `.pdd` text format, read from and written to handles.

A record is PGN-like::

    [Event "Club night"]
    [Date "2026.11.22"]
    [Light "Ann"]
    [Dark "Bob"]
    [Board "10"]
    [Supply "physical"]
    [Result "light"]

    1. e5,f6     # a comment runs to the end of the line
    swap
    2. d4,d5
    c3-e3

Tag lines come first; then one move per line (`c1,c2`, `a1-c1`, `pass`, `swap`). Cell names
are case-insensitive, a move number like ``12.`` before a move is ignored, ``#`` starts a
comment, blank lines are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TextIO

from referee.cells import SIZES
from referee.game import Game
from referee.moves import InvalidMoveError, Move, parse_move
from referee.position import Supply

TAG_ORDER = ("Event", "Date", "Light", "Dark", "Board", "Supply", "Result")
"""The tags every written record carries, in this order (others follow, sorted)."""

_TAG_RE = re.compile(r'\[\s*([A-Za-z][A-Za-z0-9_]*)\s+"((?:[^"\\]|\\.)*)"\s*\]\Z')
_NUMBER_RE = re.compile(r"\d+\s*\.+\s*")
MAX_LINE = 10_000
"""Longer lines are not moves; reading stops there with an error rather than parse them."""


class RecordError(ValueError):
    """A record that cannot be read; `line` is the 1-based line number (0 if none)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line


@dataclass
class Record:
    """The tags and moves of one game, with the line each move came from."""

    tags: dict[str, str] = field(default_factory=dict)
    moves: list[Move] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    comments: dict[int, str] = field(default_factory=dict)
    """Comments to write after a move, by the move's 0-based index."""

    @property
    def board_size(self) -> int:
        return int(self.tags.get("Board", "10"))

    @property
    def supply(self) -> Supply:
        return Supply(self.tags.get("Supply", "physical"))


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _check_tag(name: str, value: str, line: int) -> None:
    if name == "Board" and value not in {str(s) for s in SIZES}:
        raise RecordError(line, f'Board must be "10" or "12", not "{value}"')
    if name == "Supply" and value not in {s.value for s in Supply}:
        raise RecordError(line, f'Supply must be "physical" or "unlimited", not "{value}"')


def read_record(handle: Iterable[str]) -> Record:
    """Read one record from a text handle; raises RecordError with the line number."""
    record = Record()
    number = 0
    lines = iter(handle)
    while True:
        try:
            raw = next(lines)
        except StopIteration:
            break
        except UnicodeDecodeError:
            raise RecordError(number + 1, "not text (the file is not UTF-8)") from None
        number += 1
        if len(raw) > MAX_LINE:
            raise RecordError(number, f"line is {len(raw)} characters long; not a record")
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        if text.startswith("["):
            match = _TAG_RE.match(text)
            if match is None:
                raise RecordError(
                    number, f'not a tag line: {_show(text)} (expected [Name "value"])'
                )
            if record.moves:
                raise RecordError(number, "tags must come before the moves")
            name, value = match.group(1), _unescape(match.group(2))
            _check_tag(name, value, number)
            record.tags[name] = value
            continue
        if any(ord(ch) < 32 and ch not in "\t\r\n" for ch in text):
            raise RecordError(number, "control characters: this is not a text record")
        numbered = _NUMBER_RE.match(text)
        if numbered:
            text = text[numbered.end() :]
            if not text:
                continue
        try:
            record.moves.append(parse_move(text))
        except InvalidMoveError as exc:
            raise RecordError(number, str(exc)) from None
        record.lines.append(number)
    return record


def _show(text: str, limit: int = 40) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def write_record(record: Record, handle: TextIO) -> None:
    """Write a record; reading it back gives the same tags and moves."""
    tags = dict(record.tags)
    tags.setdefault("Board", "10")
    tags.setdefault("Supply", "physical")
    tags.setdefault("Result", "*")
    for name in TAG_ORDER:
        if name in tags:
            handle.write(f'[{name} "{_escape(tags[name])}"]\n')
    for name in sorted(set(tags) - set(TAG_ORDER)):
        handle.write(f'[{name} "{_escape(tags[name])}"]\n')
    handle.write("\n")
    turn = 0
    for k, move in enumerate(record.moves):
        text = str(move)
        if text != "swap":
            turn += 1
            text = f"{turn}. {text}"
        comment = record.comments.get(k)
        if comment:
            text = f"{text:<14} # {comment.replace(chr(10), ' ')}"
        handle.write(text + "\n")


def record_of(game: Game, tags: dict[str, str] | None = None) -> Record:
    """The record of a game as played (flagged moves included, with a comment)."""
    out = Record(tags=dict(tags or {}))
    out.tags["Board"] = str(game.size)
    out.tags["Supply"] = game.supply.value
    outcome = game.outcome()
    out.tags["Result"] = outcome.result if outcome else "*"
    flags = {f.id: f for f in game.flags}
    for k, played in enumerate(game.moves):
        out.moves.append(played.move)
        if played.flag is not None:
            note = "flagged"
            flag = flags.get(played.flag)
            if played.withdrawn:
                note = "flagged, taken back later"
            elif flag is not None:
                note = f"flagged: {flag.verdict.message}"
            out.comments[k] = note
    return out
