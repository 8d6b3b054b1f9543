"""The games database: every game, op, move, event and board snapshot, in SQLite.

One file `ponte.sqlite3` in the data folder, in WAL mode. Each committed step of a game
(its ops, the events they caused, the moves as they now stand, a JPEG of the board) is
written in one transaction, so killing the process at any moment loses at most the step
in flight and never leaves half of one. A game is rebuilt by replaying its ops
(`ponte.live.table.replay`), which is how a restarted assistant resumes.

An edge adapter: the only module of the live loop that touches the file system.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from contracts.standings import standings
from ponte.live.table import Op, Table, replay
from referee import Correction, Record, Supply, record_of, write_record, write_records

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started REAL NOT NULL,
    size INTEGER NOT NULL,
    supply TEXT NOT NULL,
    tags TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'playing',
    result TEXT NOT NULL DEFAULT '*',
    finished REAL
);
CREATE TABLE IF NOT EXISTS ops (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    at REAL NOT NULL,
    t REAL NOT NULL,
    op TEXT NOT NULL,
    PRIMARY KEY (game_id, seq)
);
CREATE TABLE IF NOT EXISTS moves (
    game_id INTEGER NOT NULL REFERENCES games(id),
    ply INTEGER NOT NULL,
    turn INTEGER,
    colour TEXT,
    move TEXT NOT NULL,
    flag INTEGER,
    withdrawn INTEGER NOT NULL DEFAULT 0,
    at REAL NOT NULL,
    t REAL NOT NULL,
    PRIMARY KEY (game_id, ply)
);
CREATE TABLE IF NOT EXISTS events (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    at REAL NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (game_id, seq)
);
CREATE TABLE IF NOT EXISTS snapshots (
    game_id INTEGER NOT NULL REFERENCES games(id),
    ply INTEGER NOT NULL,
    jpeg BLOB NOT NULL,
    PRIMARY KEY (game_id, ply)
);
"""

DB_NAME = "ponte.sqlite3"


class StoreError(ValueError):
    """A database that cannot be used, or a game that is not in it; `status` as in HTTP."""

    def __init__(self, message: str, status: int = 404) -> None:
        super().__init__(message)
        self.status = status


def default_data_dir() -> Path:
    """$XDG_DATA_HOME/ponte, or ~/.local/share/ponte."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "ponte"


class Store:
    """The games database in `data_dir`; safe to share between threads."""

    def __init__(self, data_dir: str | Path) -> None:
        self.data_dir = Path(data_dir)
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self.path = self.data_dir / DB_NAME
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot use the data folder {self.data_dir}: {exc}", 500) from None
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ----------------------------------------------------------------- writing

    def new_game(self, tags: Mapping[str, str], size: int = 10,
                 supply: Supply = Supply.PHYSICAL) -> int:
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            cur = self._db.execute(
                "INSERT INTO games (started, size, supply, tags) VALUES (?, ?, ?, ?)",
                (time.time(), size, supply.value, json.dumps(dict(tags))),
            )
            game_id = cur.lastrowid
        assert game_id is not None
        return game_id

    def commit_step(
        self,
        game_id: int,
        table: Table,
        ops: Sequence[tuple[Op, float]],
        events: Iterable[tuple[str, Mapping[str, Any]]],
        move_times: Mapping[int, float],
        snapshot: bytes | None = None,
    ) -> None:
        """Write one step in one transaction: new ops, events, the moves as they now stand
        (with their times), the game's status and result, and the board's JPEG."""
        now = time.time()
        status = "playing" if not table.over else "over"
        with self._lock, self._db:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            seq = db.execute("SELECT COALESCE(MAX(seq), 0) FROM ops WHERE game_id=?",
                             (game_id,)).fetchone()[0]
            for op, t in ops:
                seq += 1
                db.execute("INSERT INTO ops VALUES (?, ?, ?, ?, ?)",
                           (game_id, seq, now, t, json.dumps(op)))
            eseq = db.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE game_id=?",
                              (game_id,)).fetchone()[0]
            for kind, data in events:
                eseq += 1
                db.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?)",
                           (game_id, eseq, kind, now, json.dumps(dict(data))))
            moves = table.game.moves
            db.execute("DELETE FROM moves WHERE game_id=? AND ply>?", (game_id, len(moves)))
            for played in moves:
                db.execute(
                    "INSERT INTO moves VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (game_id, ply) DO UPDATE SET move=excluded.move, "
                    "turn=excluded.turn, colour=excluded.colour, flag=excluded.flag, "
                    "withdrawn=excluded.withdrawn, t=excluded.t",
                    (game_id, played.ply, played.turn,
                     played.colour.value if played.colour else None, str(played.move),
                     played.flag, int(played.withdrawn), now,
                     move_times.get(played.ply, 0.0)),
                )
            db.execute("DELETE FROM snapshots WHERE game_id=? AND ply>?", (game_id, len(moves)))
            if snapshot is not None and moves:
                db.execute("INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?)",
                           (game_id, len(moves), snapshot))
            db.execute(
                "UPDATE games SET status=?, result=?, finished=? WHERE id=?",
                (status, table.result(), now if table.over else None, game_id),
            )

    # ----------------------------------------------------------------- reading

    def current_game(self) -> int | None:
        """The newest game still being played, if any."""
        with self._lock:
            row = self._db.execute(
                "SELECT id FROM games WHERE status='playing' ORDER BY id DESC LIMIT 1"
            ).fetchone()
        return None if row is None else int(row[0])

    def _game_row(self, game_id: int) -> tuple[Any, ...]:
        row = self._db.execute(
            "SELECT id, started, size, supply, tags, status, result, finished "
            "FROM games WHERE id=?", (game_id,)
        ).fetchone()
        if row is None:
            raise StoreError(f"no game {game_id} in {self.path}")
        return tuple(row)

    def ops(self, game_id: int) -> list[tuple[Op, float]]:
        with self._lock:
            self._game_row(game_id)
            rows = self._db.execute(
                "SELECT op, t FROM ops WHERE game_id=? ORDER BY seq", (game_id,)
            ).fetchall()
        return [(json.loads(op), float(t)) for op, t in rows]

    def table(self, game_id: int) -> Table:
        """The game rebuilt from its ops."""
        info = self.summary(game_id)
        return replay([op for op, _ in self.ops(game_id)], info["size"], Supply(info["supply"]))

    def summary(self, game_id: int) -> dict[str, Any]:
        with self._lock:
            row = self._game_row(game_id)
            count = self._db.execute("SELECT COUNT(*) FROM moves WHERE game_id=?",
                                     (game_id,)).fetchone()[0]
        gid, started, size, supply, tags, status, result, finished = row
        return {
            "id": gid,
            "started": started,
            "size": size,
            "supply": supply,
            "tags": json.loads(tags),
            "status": status,
            "result": result,
            "finished": finished,
            "moves": count,
        }

    def games(self) -> list[dict[str, Any]]:
        with self._lock:
            ids = [r[0] for r in self._db.execute("SELECT id FROM games ORDER BY id DESC")]
        return [self.summary(i) for i in ids]

    def game(self, game_id: int) -> dict[str, Any]:
        info = self.summary(game_id)
        with self._lock:
            moves = self._db.execute(
                "SELECT ply, turn, colour, move, flag, withdrawn, at, t FROM moves "
                "WHERE game_id=? ORDER BY ply", (game_id,)
            ).fetchall()
            events = self._db.execute(
                "SELECT seq, type, at, data FROM events WHERE game_id=? ORDER BY seq",
                (game_id,),
            ).fetchall()
            shots = {r[0] for r in self._db.execute(
                "SELECT ply FROM snapshots WHERE game_id=?", (game_id,))}
        info["moves"] = [
            {"ply": p, "turn": tu, "colour": c, "move": m, "flag": f, "withdrawn": bool(w),
             "at": at, "t": t, "snapshot": p in shots}
            for p, tu, c, m, f, w, at, t in moves
        ]
        info["events"] = [
            {"seq": s, "type": ty, "at": at, **json.loads(d)} for s, ty, at, d in events
        ]
        return info

    def snapshot(self, game_id: int, ply: int) -> bytes | None:
        with self._lock:
            self._game_row(game_id)
            row = self._db.execute("SELECT jpeg FROM snapshots WHERE game_id=? AND ply=?",
                                   (game_id, ply)).fetchone()
        return None if row is None else bytes(row[0])

    def finish(self, game_id: int, result: str, status: str = "ended") -> None:
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("UPDATE games SET status=?, result=?, finished=? WHERE id=?",
                             (status, result, time.time(), game_id))

    # ----------------------------------------------------------------- export

    def export(self, game_id: int, fmt: str) -> str:
        """The game as `.pdd` text or as JSON text."""
        _check_format(fmt)
        if fmt == "pdd":
            out = io.StringIO()
            write_record(self.record(game_id), out)
            return out.getvalue()
        return json.dumps(self._json(game_id), indent=2) + "\n"

    def export_all(self, fmt: str) -> str:
        """Every game, oldest first: one `.pdd` file of records, or a JSON list."""
        _check_format(fmt)
        ids = sorted(g["id"] for g in self.games())
        if fmt == "pdd":
            out = io.StringIO()
            write_records((self.record(i) for i in ids), out)
            return out.getvalue()
        return json.dumps([self._json(i) for i in ids], indent=2) + "\n"

    def record(self, game_id: int) -> Record:
        """The game's record: tags, moves with their times, and the moves flagged and
        taken back (corrected) where they were made."""
        info = self.game(game_id)
        ops = self.ops(game_id)
        table, corrections, placed = _replay_with_corrections(
            ops, info["size"], Supply(info["supply"]))
        tags = {str(k): str(v) for k, v in info["tags"].items()}
        record = record_of(table.game, tags)
        record.tags["Result"] = info["result"]
        if table.over:
            record.tags.update(_score_tags(table))
        record.times = {int(m["ply"]) - 1: float(m["t"]) for m in info["moves"]}
        for k, played in enumerate(table.game.moves):
            if played.flag in placed:  # a flagged move: when it was placed
                record.times[k] = placed[played.flag]
        record.corrections = corrections
        return record

    def _json(self, game_id: int) -> dict[str, Any]:
        info = self.game(game_id)
        table, corrections, _ = _replay_with_corrections(
            self.ops(game_id), info["size"], Supply(info["supply"]))
        info["score"] = table.game.score().to_dict(breakdown=True)
        leader = table.game.score().leader()
        info["leader"] = leader.value if leader else None
        info["winner"] = info["result"] if info["result"] in ("light", "dark") else None
        info["corrected"] = [
            {"ply": c.before + 1, "move": str(c.move), "t": c.t, "reason": c.note}
            for c in corrections
        ]
        return info

    def standings(self) -> list[dict[str, Any]]:
        """The standings over the finished games (see `standings`)."""
        return standings(self.games())


def _check_format(fmt: str) -> None:
    if fmt not in ("pdd", "json"):
        raise StoreError(f'unknown format "{fmt}": use pdd or json', 400)


def _replay_with_corrections(
    ops: Sequence[tuple[Op, float]], size: int, supply: Supply
) -> tuple[Table, list[Correction], dict[int, float]]:
    """The game rebuilt from its ops; the moves that were flagged and then taken back
    before the next move (each placed before the move made instead); and when each
    flagged move was placed, by its flag's id."""
    table = Table(size, supply)
    placed: dict[int, float] = {}  # flag id -> when its flagged move was placed
    corrections: list[Correction] = []
    for op, t in ops:
        game = table.game
        if op.get("op") == "clear" and game.moves and game.moves[-1].flag == op.get("flag"):
            flag = next(f for f in game.flags if f.id == op["flag"])
            corrections.append(Correction(len(game.moves) - 1, game.moves[-1].move,
                                          placed.get(flag.id, t), flag.verdict.message))
        table.apply(op, t)
        game = table.game
        if op.get("op") == "flag_move" and game.moves and game.moves[-1].flag is not None:
            placed[game.moves[-1].flag] = t
        if op.get("op") == "pop":
            corrections = [c for c in corrections if c.before <= len(game.moves)]
    return table, corrections, placed


def _score_tags(table: Table) -> dict[str, str]:
    """The final score and how the game ended, as extra tags of a finished game's record."""
    score = table.game.score()
    tags = {"Score": f"{score.light.points}-{score.dark.points}"}
    termination = table.termination()
    if termination is not None:
        tags["Termination"] = termination
    return tags
