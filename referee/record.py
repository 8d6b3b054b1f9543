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
    2. d4,d5     # [%t 41.5]
    # [%corrected c2,c3] [%t 58.0] a group of 5 tiles
    3. c3-e3

Tag lines come first; then one move per line (`c1,c2`, `a1-c1`, `pass`, `swap`). Cell names
are case-insensitive, a move number like ``12.`` before a move is ignored, ``#`` starts a
comment, blank lines are ignored. A UTF-8 byte-order mark at the start is ignored.

Inside a comment, these annotations (PGN's ``[%command value]`` form) are read back:

- ``[%t SECONDS]``: when the move on that line was made, in seconds on the game's clock
  (the video's, or the live loop's since it started).
- ``[%corrected MOVE]`` on a line of its own: a move that was placed, flagged by the
  referee and taken back before the next move was made in its place; ``[%t]`` on that
  line says when it was placed, the rest of the comment why it was flagged.
- ``[%flagged]``: the move on that line was played over the referee's flag and stayed on
  the board; it counts for nothing, and the game is void if it is still there when the
  round after next ends (RULINGS.md).
- ``[%cleared PLY]`` on a line of its own: the flagged move at that ply was taken back
  here, after play had gone on.

Results (the `Result` tag) and how a game ended (the `Termination` tag) are closed sets,
`RESULTS` and `TERMINATIONS`. ``[Termination "ended"]`` says the players ended the game at
the table before its natural end; the referee then scores it as it stands.

A file may hold several records (an evening of games): each begins with its tag lines,
separated from the moves before it by a blank line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TextIO

from referee.cells import SIZES
from referee.game import Game, Termination
from referee.moves import InvalidMoveError, Move, parse_move
from referee.position import Supply

TAG_ORDER = ("Event", "Date", "Light", "Dark", "Board", "Supply", "Result")
"""The tags every written record carries, in this order (others follow, sorted)."""

RESULTS = ("light", "dark", "draw", "void", "*")
"""Values of the Result tag: the winner's colour, a draw, a void game, or `*` (unfinished)."""

TERMINATIONS = tuple(t.value for t in Termination)
"""Values of the Termination tag: passed, void, or ended (by the players, at the table)."""

_TAG_RE = re.compile(r'\[\s*([A-Za-z][A-Za-z0-9_]*)\s+"((?:[^"\\]|\\.)*)"\s*\]\Z')
_NUMBER_RE = re.compile(r"\d+\s*\.+\s*")
_ANNOTATION_RE = re.compile(r"\[%(t|corrected|flagged|cleared)(?:\s+([^\]]*))?\]\s*")
MAX_LINE = 10_000
"""Longer lines are not moves; reading stops there with an error rather than parse them."""


class RecordError(ValueError):
    """A record that cannot be read; `line` is the 1-based line number (0 if none)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line


@dataclass(frozen=True, slots=True)
class Correction:
    """A move placed, flagged and taken back: the move at index `before` was made instead."""

    before: int
    """The 0-based index of the move made in its place (the record's length if none was)."""
    move: Move
    t: float | None = None
    """When it was placed, in seconds since the game began (None if not known)."""
    note: str = ""
    """Why it was flagged, in words."""


@dataclass(frozen=True, slots=True)
class Note:
    """What a move line's comment says besides the move."""

    t: float | None = None
    """When the move was made (`[%t]`), None if not said."""
    flagged: bool = False
    """The move was played over the referee's flag (`[%flagged]`): it stays in the record
    but counts for nothing, and voids the game unless cleared within two rounds."""
    comment: str = ""
    """The comment's free text."""


@dataclass
class Record:
    """The tags and moves of one game, with the line each move came from."""

    tags: dict[str, str] = field(default_factory=dict)
    moves: list[Move] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    comments: dict[int, str] = field(default_factory=dict)
    """Comments to write after a move, by the move's 0-based index."""
    times: dict[int, float] = field(default_factory=dict)
    """When each move was made (seconds since the game began), by the move's 0-based index."""
    corrections: list[Correction] = field(default_factory=list)
    """Moves flagged and taken back, in the order they were placed."""
    flagged: set[int] = field(default_factory=set)
    """The 0-based indexes of moves played over the referee's flag."""
    cleared: list[tuple[int, int]] = field(default_factory=list)
    """Flags of moves taken back after play went on: (index of the next move, 0-based
    index of the flagged move), in order."""

    @property
    def board_size(self) -> int:
        return int(self.tags.get("Board", "10"))

    @property
    def supply(self) -> Supply:
        return Supply(self.tags.get("Supply", "physical"))


class RecordVisitor:
    """Receives the records of a handle as `visit_records` reads them, line by line (like
    python-chess's PGN visitors), so a caller can judge each move as it arrives and skip
    the rest of a record it has seen enough of. The methods here do nothing."""

    def begin_record(self, tags: dict[str, str], line: int) -> None:
        """A record begins (its tags are complete); `line` is its first line."""

    def visit_correction(self, correction: Correction) -> None:
        """A move that was flagged and taken back, read before the move made instead."""

    def visit_move(self, move: Move, line: int, note: Note) -> bool:
        """One move; return False to skip the rest of this record's moves unread."""
        return True

    def visit_cleared(self, index: int, line: int) -> None:
        """The flag of the move at 0-based `index` went down (its pieces were taken back)."""

    def end_record(self) -> None:
        """The record's last line has been read."""


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _check_tag(name: str, value: str, line: int) -> None:
    if name == "Board" and value not in {str(s) for s in SIZES}:
        raise RecordError(line, f'Board must be "10" or "12", not "{value}"')
    if name == "Supply" and value not in {s.value for s in Supply}:
        raise RecordError(line, f'Supply must be "physical" or "unlimited", not "{value}"')
    if name == "Result" and value not in RESULTS:
        raise RecordError(line, f'Result must be one of {", ".join(RESULTS)}, not "{value}"')
    if name == "Termination" and value not in TERMINATIONS:
        raise RecordError(
            line, f'Termination must be one of {", ".join(TERMINATIONS)}, not "{value}"'
        )


@dataclass
class _Annotations:
    t: float | None = None
    corrected: Move | None = None
    flagged: bool = False
    cleared: int | None = None
    text: str = ""


def _annotations(comment: str, line: int) -> _Annotations:
    """The annotations and the free text of one comment."""
    out = _Annotations(text=_ANNOTATION_RE.sub("", comment).strip())
    for key, value in _ANNOTATION_RE.findall(comment):
        value = value.strip()
        if key == "t":
            try:
                out.t = float(value)
            except ValueError:
                out.t = None
            if out.t is None or not 0.0 <= out.t < float("inf"):
                raise RecordError(line, f"[%t {value}]: a time is a number of seconds")
        elif key == "corrected":
            try:
                out.corrected = parse_move(value)
            except InvalidMoveError as exc:
                raise RecordError(line, f"[%corrected {value}]: {exc}") from None
        elif key == "cleared":
            if not value.isdigit() or int(value) < 1:
                raise RecordError(line, f"[%cleared {value}]: give the flagged move's ply")
            out.cleared = int(value)
        elif value:
            raise RecordError(line, f"[%flagged {value}]: [%flagged] takes no value")
        else:
            out.flagged = True
    return out


def visit_records(handle: Iterable[str], visitor: RecordVisitor) -> int:
    """Read every record of a text handle into `visitor`; returns how many there were.

    Raises RecordError with the line number at the first line that is not a record's.
    """
    count = 0
    number = 0
    first = 0  # the current record's first line
    tags: dict[str, str] = {}
    started = False  # begin_record called for the current record
    has_moves = False  # the current record has moves or corrections
    skipping = False
    blank_since_move = False
    moves = 0
    lines = iter(handle)

    def begin() -> None:
        nonlocal started, count
        if not started:
            visitor.begin_record(tags, first or number)
            started = True
            count += 1

    while True:
        try:
            raw = next(lines)
        except StopIteration:
            break
        except UnicodeDecodeError:
            raise RecordError(number + 1, "not text (the file is not UTF-8)") from None
        number += 1
        if number == 1 and raw.startswith("\ufeff"):
            raw = raw[1:]
        if len(raw) > MAX_LINE:
            raise RecordError(number, f"line is {len(raw)} characters long; not a record")
        if skipping:  # only a blank line and a tag line, the next record's start, matter
            head = raw.lstrip()[:1]
            if head not in ("", "[", "#"):
                blank_since_move = False
                continue
        text, _, comment = raw.partition("#")
        text = text.strip()
        if not text:
            if not comment.strip():
                blank_since_move = True
                continue
            if skipping:
                continue
        elif text.startswith("["):
            if has_moves:
                if not blank_since_move:
                    raise RecordError(number, "tags must come before the moves")
                begin()
                visitor.end_record()
                tags, started, has_moves, skipping, moves = {}, False, False, False, 0
                first = 0
            first = first or number
            match = _TAG_RE.match(text)
            if match is None:
                raise RecordError(
                    number, f'not a tag line: {_show(text)} (expected [Name "value"])'
                )
            name, value = match.group(1), _unescape(match.group(2))
            _check_tag(name, value, number)
            tags[name] = value
            continue
        elif skipping:
            blank_since_move = False
            continue
        notes = _annotations(comment, number) if comment else _Annotations()
        if not text:
            if notes.corrected is not None or notes.cleared is not None:
                begin()
                has_moves = True
                blank_since_move = False
            if notes.corrected is not None:
                visitor.visit_correction(Correction(moves, notes.corrected, notes.t,
                                                    notes.text))
            if notes.cleared is not None:
                if notes.cleared > moves:
                    raise RecordError(number, f"[%cleared {notes.cleared}]: there is no "
                                      f"move {notes.cleared} yet")
                visitor.visit_cleared(notes.cleared - 1, number)
            continue
        if notes.corrected is not None or notes.cleared is not None:
            raise RecordError(number, "[%corrected] and [%cleared] go on a comment line of "
                              "their own")
        blank_since_move = False
        if any(ord(ch) < 32 and ch not in "\t\r\n" for ch in text):
            raise RecordError(number, "control characters: this is not a text record")
        numbered = _NUMBER_RE.match(text)
        if numbered:
            text = text[numbered.end() :]
            if not text:
                continue
        try:
            move = parse_move(text)
        except InvalidMoveError as exc:
            raise RecordError(number, str(exc)) from None
        begin()
        has_moves = True
        moves += 1
        if not visitor.visit_move(move, number, Note(notes.t, notes.flagged, notes.text)):
            skipping = True
    if started or tags:
        begin()
        visitor.end_record()
    return count


class _Builder(RecordVisitor):
    """Collects records as `Record` values."""

    def __init__(self) -> None:
        self.records: list[Record] = []

    def begin_record(self, tags: dict[str, str], line: int) -> None:
        self.records.append(Record(tags=dict(tags)))

    def visit_correction(self, correction: Correction) -> None:
        self.records[-1].corrections.append(correction)

    def visit_move(self, move: Move, line: int, note: Note) -> bool:
        record = self.records[-1]
        k = len(record.moves)
        record.moves.append(move)
        record.lines.append(line)
        if note.t is not None:
            record.times[k] = note.t
        if note.flagged:
            record.flagged.add(k)
        if note.comment:
            record.comments[k] = note.comment
        return True

    def visit_cleared(self, index: int, line: int) -> None:
        record = self.records[-1]
        record.cleared.append((len(record.moves), index))


def read_records(handle: Iterable[str]) -> list[Record]:
    """Read every record of a text handle; raises RecordError with the line number."""
    builder = _Builder()
    visit_records(handle, builder)
    return builder.records


def read_record(handle: Iterable[str]) -> Record:
    """Read the one record of a text handle; raises RecordError with the line number."""

    class _One(_Builder):
        def begin_record(self, tags: dict[str, str], line: int) -> None:
            if self.records:
                raise RecordError(line, "a second game starts here: this reads one game")
            super().begin_record(tags, line)

    builder = _One()
    visit_records(handle, builder)
    return builder.records[0] if builder.records else Record()


def _show(text: str, limit: int = 40) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def _seconds(t: float) -> str:
    return f"{t:.1f}"


def write_record(record: Record, handle: TextIO) -> None:
    """Write a record; reading it back gives the same tags, moves, times and corrections."""
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
    corrections: dict[int, list[Correction]] = {}
    for correction in record.corrections:
        corrections.setdefault(correction.before, []).append(correction)
    cleared: dict[int, list[int]] = {}
    for before, index in record.cleared:
        cleared.setdefault(before, []).append(index)
    turn = 0
    for k in range(len(record.moves) + 1):
        for index in cleared.get(k, ()):
            handle.write(f"# [%cleared {index + 1}] taken back\n")
        for correction in corrections.get(k, ()):
            words = [f"[%corrected {correction.move}]"]
            if correction.t is not None:
                words.append(f"[%t {_seconds(correction.t)}]")
            if correction.note:
                words.append(_one_line(correction.note))
            handle.write(f"# {' '.join(words)}\n")
        if k == len(record.moves):
            break
        text = str(record.moves[k])
        if text != "swap":
            turn += 1
            text = f"{turn}. {text}"
        words = ["[%flagged]"] if k in record.flagged else []
        if k in record.times:
            words.append(f"[%t {_seconds(record.times[k])}]")
        comment = record.comments.get(k)
        if comment:
            words.append(_one_line(comment))
        if words:
            text = f"{text:<14} # {' '.join(words)}"
        handle.write(text + "\n")


def write_records(records: Iterable[Record], handle: TextIO) -> None:
    """Write several records, a blank line between them; `read_records` reads them back."""
    for k, record in enumerate(records):
        if k:
            handle.write("\n")
        write_record(record, handle)


def _one_line(text: str) -> str:
    """Comment text that reads back as itself: one line, no annotation brackets."""
    return _ANNOTATION_RE.sub("", text.replace("\r", " ").replace("\n", " ")).strip()


def record_of(game: Game, tags: dict[str, str] | None = None) -> Record:
    """The record of a game as played (flagged moves included, with a comment)."""
    out = Record(tags=dict(tags or {}))
    out.tags["Board"] = str(game.size)
    out.tags["Supply"] = game.supply.value
    outcome = game.outcome()
    out.tags["Result"] = outcome.result if outcome else "*"
    if outcome is not None and outcome.termination is Termination.ENDED:
        out.tags["Termination"] = outcome.termination.value
    flags = {f.id: f for f in game.flags}
    flagged_move = {played.flag: k for k, played in enumerate(game.moves) if played.flag}
    out.cleared = [(before, flagged_move[flag_id]) for before, flag_id in game.cleared_flags()
                   if flag_id in flagged_move]
    for k, played in enumerate(game.moves):
        out.moves.append(played.move)
        if played.flag is not None:
            out.flagged.add(k)
            note = "flagged"
            flag = flags.get(played.flag)
            if played.withdrawn:
                note = "flagged, taken back later"
            elif flag is not None:
                note = f"flagged: {flag.verdict.message}"
            out.comments[k] = note
    return out
