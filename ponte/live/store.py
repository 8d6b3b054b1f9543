"""The games database: every game, op, move, event and board snapshot, in SQLite.

One file `ponte.sqlite3` in the data folder, in WAL mode. Each committed step of a game
(its ops, the events they caused, the moves as they now stand, a JPEG of the board) is
written in one transaction, so killing the process at any moment loses at most the step
in flight and never leaves half of one. A game is rebuilt by replaying its ops
(`ponte.live.table.replay`), which is how a restarted assistant resumes.

One process owns a data folder at a time: `ponte watch` opens it with `exclusive=True`,
which holds an fcntl lock on `ponte.lock` (a second one is told who holds it). Readers
(`ponte games`, `ponte export`) open it with `readonly=True`, which never writes and also
works on an archive that cannot be written. A write that fails (a full disk) raises
`StoreWriteError` and leaves the database as it was.

An edge adapter: the only module of the live loop that touches the file system.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import io
import json
import os
import socket
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from contracts.standings import standings
from ponte.live.table import Op, OpError, Table, replay
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
LOCK_NAME = "ponte.lock"
MAX_GAME_ID = 2**63 - 1
"""SQLite's largest integer: a larger id names no game."""


class StoreError(ValueError):
    """A database that cannot be used, or a game that is not in it; `status` as in HTTP."""

    def __init__(self, message: str, status: int = 404) -> None:
        super().__init__(message)
        self.status = status


class FolderLocked(StoreError):
    """The data folder is held by another process (the message says which)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 409)


class StoreWriteError(StoreError):
    """A write the database refused (a full disk, a folder turned read-only); nothing of
    it was written, and the same write may be tried again."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 507)


class DataLock:
    """An exclusive fcntl lock on `ponte.lock` in a data folder, held until `release()`.

    The file says who holds it (pid, host, since when), for the message a second process
    gets. The lock goes with the process, so a killed holder leaves no stale lock."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOCK_NAME
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot use the data folder {data_dir}: {exc.strerror}",
                             500) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _holder(fd)
            os.close(fd)
            raise FolderLocked(
                f"the data folder {data_dir} is in use by another ponte watch ({holder}); "
                "stop that one first, or give this one another --data folder") from None
        self._fd: int | None = fd
        since = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
        note = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": since})
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (note + "\n").encode(), 0)
        except OSError:
            pass  # the lock holds without the note (a full disk)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the lock
            self._fd = None


def _holder(fd: int) -> str:
    try:
        note = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        return f"pid {int(note['pid'])} on {note['host']}, since {note['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that did not say which"


def default_data_dir() -> Path:
    """$XDG_DATA_HOME/ponte, or ~/.local/share/ponte."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "ponte"


class Store:
    """The games database in `data_dir`; safe to share between threads.

    `exclusive`: hold the folder's lock (one `ponte watch` per folder). `readonly`: only
    read, also from a folder or medium that cannot be written; a folder with no database
    then holds no games."""

    def __init__(self, data_dir: str | Path, *, exclusive: bool = False,
                 readonly: bool = False) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / DB_NAME
        self._hold: DataLock | None = None
        try:
            if readonly:
                self._db = _open_readonly(self.path)
            else:
                self.data_dir.mkdir(parents=True, exist_ok=True)
                if exclusive:
                    self._hold = DataLock(self.data_dir)
                self._db = sqlite3.connect(self.path, check_same_thread=False,
                                           isolation_level=None)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            if self._hold is not None:
                self._hold.release()
            raise StoreError(f"cannot use the data folder {self.data_dir}: {exc}", 500) from None
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()
        if self._hold is not None:
            self._hold.release()
            self._hold = None

    # ----------------------------------------------------------------- writing

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; a refused write (full disk) is rolled back entirely and
        raised as StoreWriteError."""
        with self._lock:
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                yield db
                db.execute("COMMIT")
            except BaseException as exc:
                if db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error | OSError):
                    raise StoreWriteError(f"cannot save to {self.path}: {exc}") from None
                raise

    def new_game(self, tags: Mapping[str, str], size: int = 10,
                 supply: Supply = Supply.PHYSICAL) -> int:
        with self._transaction() as db:
            cur = db.execute(
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
        with self._transaction() as db:
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
        if not 0 <= game_id <= MAX_GAME_ID:
            raise StoreError(f"no game {game_id} in {self.path}")
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
        return [(_json_or_text(op), float(t)) for op, t in rows]

    def table(self, game_id: int) -> Table:
        """The game rebuilt from its ops; ops that cannot apply are left out and listed in
        its `rejected`."""
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
        with self._transaction() as db:
            db.execute("UPDATE games SET status=?, result=?, finished=? WHERE id=?",
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
        info["rejected_ops"] = [{"index": i, "reason": why} for i, why in table.rejected]
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
    for index, (op, t) in enumerate(ops):
        if not isinstance(op, dict):
            table.rejected.append((index, f"not an op: {op!r}"))
            continue
        game = table.game
        if op.get("op") == "clear" and game.moves and game.moves[-1].flag == op.get("flag"):
            flag = next(f for f in game.flags if f.id == op["flag"])
            corrections.append(Correction(len(game.moves) - 1, game.moves[-1].move,
                                          placed.get(flag.id, t), flag.verdict.message))
        try:
            table.apply(op, t)
        except OpError as exc:  # left out, as `replay` leaves it out
            table.rejected.append((index, str(exc)))
            continue
        game = table.game
        if op.get("op") == "flag_move" and game.moves and game.moves[-1].flag is not None:
            placed[game.moves[-1].flag] = t
        if op.get("op") == "pop":
            corrections = [c for c in corrections if c.before <= len(game.moves)]
    return table, corrections, placed


def _open_readonly(path: Path) -> sqlite3.Connection:
    """The database at `path` for reading only; an empty one when there is none. A folder
    that cannot be written holds no WAL index to share, so the file is then read as it is
    (no process can be writing it)."""
    if not path.is_file():
        db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        db.executescript(SCHEMA)
        return db
    uri = "file:" + urllib.parse.quote(str(path.resolve()))
    db = sqlite3.connect(uri + "?mode=ro", uri=True, check_same_thread=False,
                         isolation_level=None)
    try:
        db.execute("SELECT COUNT(*) FROM games").fetchone()
        return db
    except sqlite3.OperationalError:
        db.close()
    db = sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True, check_same_thread=False,
                         isolation_level=None)
    db.execute("SELECT COUNT(*) FROM games").fetchone()
    return db


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text  # replay leaves it out and says so


def _score_tags(table: Table) -> dict[str, str]:
    """The final score and how the game ended, as extra tags of a finished game's record."""
    score = table.game.score()
    tags = {"Score": f"{score.light.points}-{score.dark.points}"}
    termination = table.termination()
    if termination is not None:
        tags["Termination"] = termination
    return tags
