"""`ponte referee FILE...`: check game records move by move, score them, name the winner."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from referee import (
    Bridge,
    Correction,
    Game,
    IllegalMoveError,
    Move,
    Note,
    RecordError,
    RecordVisitor,
    Supply,
    Termination,
    Tiles,
    visit_records,
)
from referee.view import board_text

MAX_RECORD_BYTES = 16 * 1024 * 1024
"""A file larger than this is refused unread: a real game is a few hundred bytes."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "referee",
        help="check .pdd game records against the rules",
        description=(
            "Check each record move by move and stop it at its first illegal move; a file "
            "may hold several records. Exit status: 0 all legal, 1 an illegal move or a "
            "Result tag the moves do not give, 2 a file that cannot be read."
        ),
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help=".pdd record(s)")
    parser.add_argument("--json", action="store_true", help="one JSON object per record")
    parser.add_argument("--supply", choices=[s.value for s in Supply], help="override Supply")
    parser.add_argument("--board", type=int, choices=[10, 12], help="override Board size")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    return check_files(args.files, as_json=args.json, supply=args.supply, board=args.board)


@dataclass
class Report:
    """What checking one record found (the `--json` object)."""

    file: str
    moves: list[dict[str, Any]] = field(default_factory=list)
    legal: bool = False
    over: bool = False
    score: dict[str, Any] | None = None
    winner: str | None = None
    error: str | None = None
    game: Game | None = None
    illegal_line: int | None = None
    result_tag: str | None = None
    result: str = "*"
    """What the moves give: light, dark, draw, void, or `*` (unfinished or illegal)."""
    termination: str | None = None
    """The record's Termination tag."""
    ended_as: str | None = None
    """How the moves (and an ending at the table) end the game: passed, void, ended."""
    corrected: list[dict[str, Any]] = field(default_factory=list)
    index: int = 1
    """The record's place in its file, from 1."""
    count: int = 1
    """How many records its file holds."""

    @property
    def result_agrees(self) -> bool | None:
        """Whether the Result tag is what the moves give (None: no tag, `*`, or illegal)."""
        if self.result_tag in (None, "*") or not self.legal or self.error is not None:
            return None
        return self.result_tag == self.result

    @property
    def name(self) -> str:
        return self.file if self.count == 1 else f"{self.file} (game {self.index})"

    def to_json(self) -> dict[str, Any]:
        out = {
            "file": self.file,
            "moves": self.moves,
            "legal": self.legal,
            "over": self.over,
            "score": self.score,
            "winner": self.winner,
            "error": self.error,
            "result": self.result,
            "result_tag": self.result_tag,
            "result_agrees": self.result_agrees,
            "termination": self.ended_as,
            "corrected": self.corrected,
        }
        if self.count > 1:
            out["game"] = self.index
        return out


def _decoded_lines(raw: BinaryIO) -> Iterator[str]:
    """The lines of a UTF-8 file, decoded one at a time (a byte-order mark dropped), so a
    bad byte is reported on its own line and the file is never held in memory whole."""
    for number, line in enumerate(raw, start=1):
        if b"\0" in line:
            raise RecordError(number, "binary data (NUL bytes): not a text record")
        try:
            yield line.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError:
            raise RecordError(number, "not text (the file is not UTF-8)") from None


class _Checker(RecordVisitor):
    """Judges each record's moves as they are read: an illegal move skips the rest."""

    def __init__(self, path: str, supply: str | None, board: int | None) -> None:
        self.path = path
        self.supply = supply
        self.board = board
        self.reports: list[Report] = []

    def begin_record(self, tags: dict[str, str], line: int) -> None:
        report = Report(file=self.path, index=len(self.reports) + 1)
        report.result_tag = tags.get("Result")
        report.termination = tags.get("Termination")
        size = self.board or int(tags.get("Board", "10"))
        supply = Supply(self.supply or tags.get("Supply", "physical"))
        report.game = Game(size, supply)
        report.legal = True
        self.reports.append(report)

    def visit_correction(self, correction: Correction) -> None:
        report = self.reports[-1]
        assert report.game is not None
        if not report.legal:
            return
        verdict = report.game.verdict(correction.move)
        report.corrected.append({
            "ply": len(report.game.moves) + 1,
            "move": str(correction.move),
            "legal": verdict is None,
            "reason": verdict.message if verdict is not None else None,
            "cells": list(verdict.cells) if verdict is not None else [],
            "t": correction.t,
            "note": correction.note or None,
        })

    def visit_move(self, move: Move, line: int, note: Note) -> bool:
        report = self.reports[-1]
        game = report.game
        assert game is not None
        ply = len(report.moves) + 1
        entry: dict[str, Any] = {"ply": ply, "move": str(move), "legal": True, "reason": None,
                                 "cells": [], "t": note.t, "flagged": False}
        report.moves.append(entry)
        verdict = game.verdict(move)
        try:
            if verdict is not None and note.flagged and isinstance(move, Tiles | Bridge):
                game.push_flagged(move)  # played over the flag, as the record says
                entry.update(legal=False, reason=verdict.message, cells=list(verdict.cells),
                             flagged=True)
                return True
            game.push(move)
        except IllegalMoveError as exc:
            entry.update(legal=False, reason=exc.verdict.message,
                         cells=list(exc.verdict.cells))
            report.legal = False
            report.illegal_line = line
            return False
        return True

    def visit_cleared(self, index: int, line: int) -> None:
        report = self.reports[-1]
        game = report.game
        assert game is not None
        if not report.legal:
            return
        moves = game.moves
        flag = moves[index].flag if index < len(moves) else None
        if flag is None or flag not in {f.id for f in game.flags}:
            raise RecordError(line, f"[%cleared {index + 1}]: no flag is up for move "
                              f"{index + 1}")
        if index == len(moves) - 1:
            raise RecordError(line, f"[%cleared {index + 1}] right after the move: a move "
                              "taken back at once is written [%corrected MOVE] instead")
        game.clear_flag(flag)
        report.moves[index]["withdrawn"] = True

    def end_record(self) -> None:
        report = self.reports[-1]
        game = report.game
        assert game is not None
        if not report.moves:
            report.error = "no moves in the record"
            report.legal = False
            return
        if report.legal and report.termination == Termination.ENDED.value and (
            not game.is_over()
        ):
            game.end()  # ended by agreement at the table: scored as it stands
        report.over = game.is_over()
        report.score = game.score().to_dict()
        outcome = game.outcome()
        if outcome is not None:
            report.ended_as = outcome.termination.value
            report.winner = outcome.winner.value if outcome.winner else "draw"
            if report.legal:
                report.result = outcome.result


def _open(path: str) -> BinaryIO:
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed by the caller
    except FileNotFoundError:
        raise RecordError(0, "no such file") from None
    except IsADirectoryError:
        raise RecordError(0, "is a directory, not a record") from None
    except OSError as exc:
        raise RecordError(0, f"cannot read: {exc.strerror or exc}") from None
    try:
        size = os.fstat(raw.fileno()).st_size
    except OSError:
        size = 0
    if size > MAX_RECORD_BYTES:
        raw.close()
        limit = MAX_RECORD_BYTES // (1024 * 1024)
        raise RecordError(0, f"larger than {limit} MB: not a game record")
    return raw


def check_file(path: str, supply: str | None = None, board: int | None = None) -> list[Report]:
    """Every record in one file, judged; a file that cannot be read is one report with
    its `error`."""
    checker = _Checker(path, supply, board)
    try:
        with _open(path) as raw:
            count = visit_records(_decoded_lines(raw), checker)
    except RecordError as exc:
        return [Report(file=path, error=str(exc))]
    if count == 0:
        return [Report(file=path, error="empty file: a record needs at least one move")]
    for report in checker.reports:
        report.count = count
    return checker.reports


def _human(report: Report) -> str:
    if report.error is not None:
        return f"{report.name}: error: {report.error}"
    lines = []
    if not report.legal:
        bad = report.moves[-1]
        lines.append(
            f"{report.name}: illegal move {bad['move']} at ply {bad['ply']} "
            f"(line {report.illegal_line}): {bad['reason']}"
        )
    else:
        state = "game not finished"
        if report.termination == Termination.ENDED.value and report.over:
            state = "game ended at the table"
        elif report.over:
            state = "game over"
        lines.append(f"{report.name}: {len(report.moves)} moves, all legal, {state}")
    for played in report.moves:
        if played.get("flagged"):
            back = ", taken back later" if played.get("withdrawn") else ""
            lines.append(f"  flagged at ply {played['ply']}: {played['move']} "
                         f"({played['reason']}){back}")
    for fix in report.corrected:
        why = fix["reason"] or "legal here: the record says it was flagged"
        lines.append(f"  corrected before ply {fix['ply']}: {fix['move']} ({why})")
    assert report.score is not None
    for colour in ("light", "dark"):
        s = report.score[colour]
        lines.append(
            f"  {colour:<5}  {s['points']:>3} points  {s['islands']:>2} islands  "
            f"{s['bridges']:>2} bridges"
        )
    game = report.game
    if game is not None:
        lines.insert(1, board_text(game.position))
    if game is not None and report.legal:
        for colour_score in (game.score().light, game.score().dark):
            for group in colour_score.groups:
                if len(group.islands) > 1:
                    lines.append(
                        f"  {colour_score.colour.value}: {len(group.islands)} islands joined "
                        f"by {len(group.bridges)} bridge(s) = {group.points} points"
                    )
    if report.legal and report.result == "void":
        lines.append("  result: void")
    elif report.winner is not None:
        lines.append("  result: draw" if report.winner == "draw" else f"  winner: {report.winner}")
    if report.result_agrees is False:
        lines.append(
            f"  wrong Result: the record's Result tag says {report.result_tag!r}, "
            f"the moves give {report.result!r}"
        )
    return "\n".join(lines)


def check_files(
    paths: list[str], as_json: bool, supply: str | None = None, board: int | None = None
) -> int:
    status = 0
    for path in paths:
        for report in check_file(path, supply=supply, board=board):
            if report.error is not None:
                status = 2
                if not as_json:
                    print(f"ponte referee: {report.name}: {report.error}", file=sys.stderr)
            elif not report.legal or report.result_agrees is False:
                status = max(status, 1)
            if as_json:
                print(json.dumps(report.to_json()), flush=True)
            elif report.error is None:
                print(_human(report), flush=True)
    return status
