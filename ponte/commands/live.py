"""`ponte watch`, `ponte transcribe`, `ponte games`, `ponte export`: the live loop's commands."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ponte.cli import CommandError, port_number


def register(subparsers: Any) -> None:
    watch = subparsers.add_parser(
        "watch", help="watch a game through a camera: referee, record, web page, LEDs",
        description="Read the board from a camera (or a video file, a folder of images, a "
        "stream), referee each move when the board has settled, record the game in the "
        "games database, serve the web page and drive the LEDs. A game left unfinished is "
        "resumed the next time. Ctrl-C stops.",
    )
    watch.add_argument("--source", required=True,
                       help="camera index (0), video file, folder of images, or rtsp/http URL")
    _common(watch)
    watch.add_argument("--host", default="127.0.0.1", help="web page address (default 127.0.0.1)")
    watch.add_argument("--port", type=port_number, default=8000,
                       help="web page port (default 8000)")
    watch.add_argument("--no-web", action="store_true", help="run without the web page")
    watch.add_argument("--leds", metavar="URL", help="serial URL of the LED controller")
    watch.add_argument("--data", help="data folder for the games database "
                       "(default $XDG_DATA_HOME/ponte or ~/.local/share/ponte)")
    watch.add_argument("--duration", type=float, help="stop after this many seconds")
    watch.add_argument("--realtime", action="store_true",
                       help="pace a video file to its own clock (cameras always are)")
    watch.set_defaults(handler=run_watch)

    tr = subparsers.add_parser(
        "transcribe", help="transcribe a game video into a record, offline, as fast as possible"
    )
    tr.add_argument("video", help="video file or folder of images")
    _common(tr)
    tr.add_argument("--out", required=True, help="the .pdd record to write")
    tr.add_argument("--json", action="store_true", help="print one event per line on stdout")
    tr.add_argument("--quiet", action="store_true", help="no progress bar")
    tr.set_defaults(handler=run_transcribe)

    games = subparsers.add_parser("games", help="list the recorded games, or the standings")
    games.add_argument("--data", help="data folder (default as for watch)")
    games.add_argument("--json", action="store_true", help="print JSON")
    games.add_argument("--standings", action="store_true",
                       help="the standings over the finished games instead: each player's "
                       "wins, draws, losses and points (1 a win, 1/2 a draw)")
    games.set_defaults(handler=run_games)

    export = subparsers.add_parser("export", help="write out a recorded game, or all of them")
    export.add_argument("id", type=int, nargs="?", help="the game's id (see `ponte games`)")
    export.add_argument("--all", action="store_true",
                        help="every game, oldest first: one .pdd file of records, or a JSON list")
    export.add_argument("--format", choices=("pdd", "json"), default="pdd",
                        help="pdd (a game record, the default) or json")
    export.add_argument("--data", help="data folder (default as for watch)")
    export.add_argument("--out", help="file to write (default: stdout)")
    export.set_defaults(handler=run_export)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--calibration", metavar="FILE",
                        help="calibration file (default: calibrate on the first clear frame)")
    parser.add_argument("--settle", type=float, default=0.4, metavar="SECONDS",
                        help="how long the board must stay still to be judged (default 0.4)")
    parser.add_argument("--fps", type=float, help="frame rate of a folder of images (default 30)")


def camera_reader(args: argparse.Namespace) -> Any:
    """The camera reader `transcribe` and `watch` read frames with: one calibrated from
    `--calibration`, else one that calibrates itself on the first clear frame."""
    from ponte.live.camera import CameraError, CameraReader

    if not args.calibration:
        return CameraReader()
    if not Path(args.calibration).is_file():
        raise CommandError(f"no such calibration file: {args.calibration}")
    try:
        return CameraReader.from_file(args.calibration)
    except CameraError as exc:
        raise CommandError(str(exc)) from None


def _store(data: str | None, *, create: bool = True, exclusive: bool = False,
           readonly: bool = False) -> Any:
    """The games database in `data` (else the default folder): `exclusive` for the one
    process that writes it (`watch`, `demo`), `readonly` for those that only read. Unless
    `create`, a folder or database that is not there is an error, not a new empty one."""
    from ponte.live.store import DB_NAME, Store, StoreError, default_data_dir

    folder = Path(data) if data else default_data_dir()
    if not create:
        if not folder.is_dir():
            what = "is not a folder" if folder.exists() else "does not exist"
            raise CommandError(f"the data folder {folder} {what}; give --data the folder "
                               "`ponte watch` or `ponte demo` recorded into")
        if not (folder / DB_NAME).is_file():
            raise CommandError(f"no games recorded in {folder} (no {DB_NAME} there)")
    try:
        return Store(folder, exclusive=exclusive, readonly=readonly)
    except StoreError as exc:
        raise CommandError(str(exc)) from None


def _check_settle(value: float) -> None:
    if not 0.0 <= value <= 10.0:
        raise CommandError("--settle must be between 0 and 10 seconds")


# ----------------------------------------------------------------- transcribe


class _ProgressBar:
    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled
        self._last = 0.0

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        if not self.enabled or now - self._last < 0.2:
            return
        self._last = now
        self.show(done)

    def show(self, done: int) -> None:
        if not self.enabled:
            return
        if self.total > 0:
            part = min(1.0, done / self.total)
            bar = "#" * int(part * 30)
            text = f"\rtranscribe [{bar:<30}] {part * 100:5.1f}% {done}/{self.total} frames"
        else:
            text = f"\rtranscribe: {done} frames"
        sys.stderr.write(text)
        sys.stderr.flush()

    def end(self, done: int) -> None:
        if self.enabled:
            self.show(done)
            sys.stderr.write("\n")


class _Notes:
    """What the record keeps besides the moves, gathered from the loop's events: when each
    move was made and the moves flagged and taken back (corrected)."""

    def __init__(self) -> None:
        self.times: dict[int, float] = {}
        self.corrections: list[Any] = []
        self._flagged: dict[int, tuple[str, float, str]] = {}

    def __call__(self, events: list[Any]) -> None:
        from contracts.live import EventType
        from referee import Correction, parse_move

        for kind, data in events:
            t = float(data.get("t", 0.0))
            if kind is EventType.MOVE:
                self.times[int(data["ply"]) - 1] = t
            elif kind is EventType.ILLEGAL and data.get("move"):
                self._flagged[int(data["flag"])] = (str(data["move"]), t,
                                                     str(data.get("message", "")))
            elif kind is EventType.CORRECTED and data.get("undone"):
                move, placed, why = self._flagged.get(
                    int(data["flag"]), (str(data["move"]), t, ""))
                self.corrections.append(Correction(int(data["ply"]), parse_move(move),
                                                   placed, why))
            elif kind is EventType.STATE and "undone" in data:  # a move taken back
                plies = int(data["ply"]) - 1
                self.times = {k: v for k, v in self.times.items() if k < plies}
                self.corrections = [c for c in self.corrections if c.before <= plies]


def _check_out(path: Path) -> None:
    """A CommandError now, before reading a video, if the record cannot be written there."""
    if path.is_dir():
        raise CommandError(f"cannot write {path}: is a folder; give --out a .pdd file")
    folder = path.parent
    if not folder.is_dir():
        raise CommandError(f"cannot write {path}: no folder {folder}")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise CommandError(f"cannot write {path}: permission denied")


def run_transcribe(args: argparse.Namespace) -> int:
    from ponte.live.loop import event_line, transcribe
    from ponte.live.sources import SourceError, open_source
    from referee import record_of, write_record

    _check_settle(args.settle)
    if not Path(args.video).exists():
        raise CommandError(f"no such video file or folder: {args.video}")
    _check_out(Path(args.out))
    camera = camera_reader(args)
    try:
        source = open_source(args.video, args.fps)
    except SourceError as exc:
        raise CommandError(str(exc)) from None
    total = int(getattr(source, "frame_count", 0))
    bar = _ProgressBar(total, not args.quiet and sys.stderr.isatty())
    notes = _Notes()

    def print_events(events: list[Any]) -> None:
        notes(events)
        if args.json:
            for kind, data in events:
                print(json.dumps(event_line(kind, data)), flush=True)

    try:
        result = transcribe(source, camera, settle_window=args.settle, progress=bar,
                            on_events=print_events)
    finally:
        source.close()
    bar.end(result.frames)
    skipped = int(getattr(source, "skipped", 0))
    if skipped:
        print(f"transcribe: {skipped} frame(s) of {args.video} could not be decoded and were "
              "skipped; the moves around them are read from the frames that decode",
              file=sys.stderr)
    if not result.calibrated:
        problem = getattr(camera, "problem", None)
        raise CommandError(
            f"the board was never found clearly in {args.video}"
            + (f" (last try: {problem})" if problem else "")
            + "; give --calibration FILE (made with `ponte calibrate`)"
        )
    table = result.table
    record = record_of(table.game, {"Event": f"Transcribed from {Path(args.video).name}"})
    record.tags["Result"] = table.result()
    record.times = {k: t for k, t in notes.times.items() if k < len(record.moves)}
    record.corrections = notes.corrections
    try:
        with open(args.out, "w", encoding="utf-8") as handle:
            write_record(record, handle)
    except OSError as exc:
        raise CommandError(f"cannot write {args.out}: {exc.strerror}") from None
    moves = len(table.game.moves)
    print(f"transcribe: {moves} moves, result {table.result()}, written to {args.out}",
          file=sys.stderr)
    for fix in record.corrections:
        print(f"transcribe: flagged and corrected before move {fix.before + 1}: {fix.move}"
              + (f" ({fix.note})" if fix.note else ""), file=sys.stderr)
    return 0


# ----------------------------------------------------------------- watch


def attach_web(session: Any, host: str, port: int) -> Any | None:
    """Serve the web page for the session if the `web` package provides it."""
    try:
        import web
    except ImportError:
        return None
    serve = getattr(web, "serve", None)
    if serve is None:
        return None
    try:
        return serve(session, host, port)
    except OSError as exc:
        raise CommandError(str(exc)) from None


def attach_leds(session: Any, url: str) -> Any | None:
    """Drive the LED controller from the session's events, if `firmware_bridge` is there."""
    try:
        from ponte.live.leds import LedLink
    except ImportError:
        return None
    return LedLink.start(session, url)


def console_line(kind: str, data: dict[str, Any]) -> str | None:
    """The console's line for one live-loop event (`EventType` value and data): each move,
    pass, flag, correction, void game and end; None for the rest (camera status, state)."""
    if kind == "move":
        return f"{data.get('ply')}. {data.get('colour')} {data.get('move')}"
    if kind == "illegal":
        return (f"flag: {data.get('colour') or 'a'} {data.get('move') or 'change'} - "
                f"{data.get('message') or data.get('reason')}")
    if kind == "corrected":
        return f"corrected: {data.get('move') or 'the flagged change'} taken back"
    if kind == "void":
        return f"void: {data.get('message') or 'a flag outlived its two rounds'}"
    if kind == "end":
        score = data.get("score") or {}
        points = {c: (score.get(c) or {}).get("points") for c in ("light", "dark")}
        winner = data.get("winner")
        return (f"end: {winner + ' wins' if winner else 'a draw'}, light {points['light']} - "
                f"dark {points['dark']} ({data.get('termination')})")
    return None


class ConsoleEvents:
    """Prints `console_line` of each event the session publishes, on stderr after `prefix`,
    from a thread of its own (controls from the web page publish too); `close` prints
    what is left and stops it."""

    def __init__(self, session: Any, prefix: str) -> None:
        self.prefix = prefix
        self._sub = session.bus.subscribe()
        self._thread = threading.Thread(target=self._run, name="console-events", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            event = self._sub.get()
            if event is None:
                return
            self._print(event)

    def _print(self, event: Any) -> None:
        line = console_line(event.type.value, event.data)
        if line is not None:
            print(f"{self.prefix}: {line}", file=sys.stderr, flush=True)

    def close(self) -> None:
        self._sub.close()  # the thread prints what is queued, then ends
        self._thread.join(5)


class _CameraMessages:
    """Says on stderr, once each time, that the camera is awaited, lost or back; and tells
    the session (whose web page shows it)."""

    def __init__(self, spec: str, session: Any) -> None:
        self.spec = spec
        self.session = session

    def __call__(self, status: str, message: str) -> None:
        self.session.set_camera_status(status, message)
        if status == "unavailable":
            text = f"waiting for camera {self.spec}: {message} (retrying; Ctrl-C to stop)"
        elif status == "no-signal":
            text = f"camera {self.spec} lost: {message}; the game waits for it to come back"
        else:
            text = f"camera {self.spec}: frames arriving"
        print(f"watch: {text}", file=sys.stderr, flush=True)


def _check_leds_url(url: str) -> None:
    """A CommandError for a --leds URL pyserial cannot take (a port that is merely not
    there yet is waited for)."""
    if url == "auto":
        return
    try:
        import serial
    except ImportError:
        return
    try:
        serial.serial_for_url(url, do_not_open=True)
    except (ValueError, serial.SerialException) as exc:
        raise CommandError(f"--leds {url}: {exc} (give a serial port such as /dev/ttyUSB0, "
                           "a pyserial URL such as socket://127.0.0.1:7000, or auto)") from None


def _say(text: str) -> None:
    print(f"watch: {text}", file=sys.stderr, flush=True)


def run_watch(args: argparse.Namespace) -> int:
    from ponte.live.loop import run_live
    from ponte.live.session import LiveSession
    from ponte.live.sources import NewestFrame, RetryingSource, SourceError, is_live, open_source
    from ponte.live.store import StoreError

    _check_settle(args.settle)
    if args.leds:
        _check_leds_url(args.leds)
    camera = camera_reader(args)
    store = _store(args.data, exclusive=True)
    live = is_live(args.source)
    first = None
    if not live:  # a file or a folder: there now, or a mistake
        try:
            first = open_source(args.source, args.fps)
        except SourceError as exc:
            raise CommandError(str(exc)) from None
    try:
        session = LiveSession(store, settle_window=args.settle, say=_say)
    except StoreError as exc:
        store.close()
        raise CommandError(str(exc)) from None
    stop = threading.Event()
    source: Any = first
    if live:  # a camera or stream may be away at the start, as later: wait for it
        ends = None if args.duration is None else time.monotonic() + args.duration

        def should_stop() -> bool:
            return stop.is_set() or (ends is not None and time.monotonic() >= ends)

        source = RetryingSource(lambda: NewestFrame(open_source(args.source, args.fps)),
                                listener=_CameraMessages(args.source, session),
                                should_stop=should_stop, description=args.source)
    saved = Path(args.calibration) if args.calibration else store.data_dir / "calibration.json"
    session.attach_camera(camera, saved)
    server = None if args.no_web else attach_web(session, args.host, args.port)
    if server is None and not args.no_web:
        print("watch: the web page is not available in this installation; running without it",
              file=sys.stderr)
    leds = attach_leds(session, args.leds) if args.leds else None
    state = "resumed" if session.resumed else "started"
    print(f"watch: game {session.game_id} {state}; data in {store.path}", file=sys.stderr,
          flush=True)
    console = ConsoleEvents(session, "watch")
    try:
        stats = run_live(source, camera, session, realtime=args.realtime or not live,
                         stop=stop, duration=args.duration)
    except KeyboardInterrupt:
        stop.set()
        stats = None
        print("watch: stopped", file=sys.stderr)
    finally:
        console.close()
        source.close()
        if leds is not None:
            leds.close()
        if server is not None:
            server.shutdown()
        if not session.flush():
            _say(f"{session.state()['storage']['unsaved']} step(s) of game {session.game_id} "
                 f"could not be saved: {session.state()['storage']['message']}")
        store.close()
    skipped = int(getattr(source, "skipped", 0))
    if skipped:
        _say(f"{skipped} frame(s) of {args.source} could not be decoded and were skipped")
    if stats is not None:
        print(f"watch: {stats.frames} frames, {len(session.table.game.moves)} moves",
              file=sys.stderr)
        if stats.passed_over:
            _say(f"{stats.passed_over} frame(s) went by unread while the reader was busy "
                 "(calibrating, or slower than the camera); each frame read was the newest")
    return 0


# ----------------------------------------------------------------- games / export


def run_games(args: argparse.Namespace) -> int:
    from ponte.live.store import DB_NAME, default_data_dir

    if not args.data and not (default_data_dir() / DB_NAME).is_file():
        print(f"no games recorded yet (nothing in {default_data_dir()})")
        return 0
    store = _store(args.data, create=False, readonly=True)
    games = store.games()
    if args.standings:
        return _print_standings(store.standings(), args.json)
    if args.json:
        print(json.dumps(games, indent=2))
        return 0
    if not games:
        print(f"no games recorded in {store.path}")
        return 0
    for g in games:
        tags = g["tags"]
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(g["started"]))
        print(f"{g['id']:>4}  {when}  {tags.get('Light', '?')} - {tags.get('Dark', '?')}  "
              f"{g['moves']} moves  {g['status']}  result {g['result']}")
    return 0


def _print_standings(rows: list[dict[str, Any]], as_json: bool) -> int:
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no finished games yet: standings count games won, drawn or lost")
        return 0
    width = max(6, *(len(r["player"]) for r in rows))
    print(f"{'#':>2}  {'player':<{width}}  games  won  drawn  lost  points")
    for k, r in enumerate(rows, start=1):
        print(f"{k:>2}  {r['player']:<{width}}  {r['games']:>5}  {r['wins']:>3}  "
              f"{r['draws']:>5}  {r['losses']:>4}  {r['points']:>6g}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from ponte.live.store import StoreError

    if args.all == (args.id is not None):
        raise CommandError("give a game's id or --all (see `ponte games`)")
    store = _store(args.data, create=False, readonly=True)
    try:
        text = store.export_all(args.format) if args.all else store.export(args.id, args.format)
        ids = [g["id"] for g in store.games()] if args.all else [args.id]
        rejected = [(i, index, why) for i in ids for index, why in store.table(i).rejected]
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    for game_id, index, why in rejected:
        print(f"ponte export: game {game_id}: op {index + 1} left out ({why})",
              file=sys.stderr)
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot write {args.out}: {exc.strerror}") from None
    else:
        sys.stdout.write(text)
    return 0
