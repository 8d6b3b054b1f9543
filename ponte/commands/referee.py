"""`ponte referee FILE...`: check game records move by move, score them, name the winner."""

from __future__ import annotations

import argparse
import io
import json
import sys
from dataclasses import dataclass, field
from typing import Any

from referee import (
    Game,
    IllegalMoveError,
    Record,
    RecordError,
    Supply,
    read_record,
)
from referee.view import board_text

MAX_RECORD_BYTES = 16 * 1024 * 1024
"""A record larger than this is refused unread: a real game is a few hundred bytes."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "referee",
        help="check .pdd game records against the rules",
        description=(
            "Check each record move by move and stop it at its first illegal move. "
            "Exit status: 0 all legal, 1 an illegal move, 2 a file that cannot be read."
        ),
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help=".pdd record(s)")
    parser.add_argument("--json", action="store_true", help="one JSON object per file")
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

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "moves": self.moves,
            "legal": self.legal,
            "over": self.over,
            "score": self.score,
            "winner": self.winner,
            "error": self.error,
        }


def load_record(path: str) -> Record:
    """Read a record file; every failure is a RecordError with a message a person can act on."""
    try:
        with open(path, "rb") as raw:
            head = raw.read(MAX_RECORD_BYTES + 1)
    except FileNotFoundError:
        raise RecordError(0, "no such file") from None
    except IsADirectoryError:
        raise RecordError(0, "is a directory, not a record") from None
    except OSError as exc:
        raise RecordError(0, f"cannot read: {exc.strerror or exc}") from None
    if len(head) > MAX_RECORD_BYTES:
        limit = MAX_RECORD_BYTES // (1024 * 1024)
        raise RecordError(0, f"larger than {limit} MB: not a game record")
    if not head.strip():
        raise RecordError(0, "empty file: a record needs at least one move")
    if b"\0" in head:
        raise RecordError(0, "binary data (NUL bytes): not a text record")
    text = io.TextIOWrapper(io.BytesIO(head), encoding="utf-8", errors="strict")
    record = read_record(text)
    if not record.moves:
        raise RecordError(0, "no moves in the record")
    return record


def check_record(
    path: str, supply: str | None = None, board: int | None = None
) -> Report:
    report = Report(file=path)
    try:
        record = load_record(path)
    except RecordError as exc:
        report.error = str(exc)
        return report
    report.result_tag = record.tags.get("Result")
    game = Game(board or record.board_size, Supply(supply) if supply else record.supply)
    report.game = game
    report.legal = True
    for ply, (move, line) in enumerate(zip(record.moves, record.lines, strict=True), start=1):
        try:
            game.push(move)
        except IllegalMoveError as exc:
            verdict = exc.verdict
            report.moves.append(
                {
                    "ply": ply,
                    "move": str(move),
                    "legal": False,
                    "reason": verdict.message,
                    "cells": list(verdict.cells),
                }
            )
            report.legal = False
            report.illegal_line = line
            break
        report.moves.append(
            {"ply": ply, "move": str(move), "legal": True, "reason": None, "cells": []}
        )
    report.over = game.is_over()
    report.score = game.score().to_dict()
    outcome = game.outcome()
    if outcome is not None:
        report.winner = outcome.winner.value if outcome.winner else "draw"
    return report


def _human(report: Report) -> str:
    if report.error is not None:
        return f"{report.file}: error: {report.error}"
    lines = []
    if not report.legal:
        bad = report.moves[-1]
        lines.append(
            f"{report.file}: illegal move {bad['move']} at ply {bad['ply']} "
            f"(line {report.illegal_line}): {bad['reason']}"
        )
    else:
        state = "game over" if report.over else "game not finished"
        lines.append(f"{report.file}: {len(report.moves)} moves, all legal, {state}")
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
    if report.winner is not None:
        lines.append("  result: draw" if report.winner == "draw" else f"  winner: {report.winner}")
    if report.result_tag not in (None, "*") and report.legal:
        found = report.winner if report.winner is not None else "*"
        if report.result_tag != found:
            lines.append(
                f"  note: the record's Result tag says {report.result_tag!r}, "
                f"the moves give {found!r}"
            )
    return "\n".join(lines)


def check_files(
    paths: list[str], as_json: bool, supply: str | None = None, board: int | None = None
) -> int:
    status = 0
    for path in paths:
        report = check_record(path, supply=supply, board=board)
        if report.error is not None:
            status = 2
            if not as_json:
                print(f"ponte referee: {path}: {report.error}", file=sys.stderr)
        elif not report.legal:
            status = max(status, 1)
        if as_json:
            print(json.dumps(report.to_json()), flush=True)
        elif report.error is None:
            print(_human(report), flush=True)
    return status
