"""`ponte bench web`: the web page's speed, in the system's headless Chromium.

Serves the page for a real `LiveSession` (SQLite store in a temporary folder) on
127.0.0.1 and plays a whole example game into it the way the camera loop does
(`session.feed` of settled board readings). Measures:

- event -> drawn: from just before the move is fed to the session (which records it and
  publishes the event) to the browser's next animation frame after redrawing the board
  (both clocks are this machine's wall clock). Target <= 100 ms.
- game page load: from navigation start to the first board drawn. Target <= 300 ms.
- publisher with 20 SSE spectators: how long `session.feed` takes per move with no
  spectators and with 20 real HTTP event-stream clients reading, and whether every
  spectator got every event.

These three (`--part browser`) run without the per-client rate and stream limits.
- verdict latency under a crowd (`--part crowd`): a frame loop feeds the session a reading
  every 1/10 s on the camera's clock, a move on the board every half second; latency is
  from when the frame showing a move was due to `session.feed` returning with its verdict
  (a loop that falls behind accumulates it). Measured with no web clients, then with 50
  pollers hammering `/api/state` and 50 Game pages (event stream, state refetched after
  every event), all from their own loopback addresses in another process
  (`lab.bench.crowd`). Target <= 300 ms; also how soon each page held the new state.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from contracts.live import EventType
from ponte.cli import CommandError
from ponte.live.feeder import PieceFeeder
from ponte.live.session import LiveSession
from ponte.live.store import Store
from referee import Move
from referee.playout import heuristic_game

EVENT_TARGET_MS = 100.0
LOAD_TARGET_MS = 300.0
SPECTATORS = 20
VERDICT_TARGET_MS = 300.0
POLLERS = 50
PAGES = 50
CROWD_FPS = 10.0
FRAMES_PER_MOVE = 5


class _Table(PieceFeeder):
    """A feeder that times each move and can start a new game."""

    def reset(self) -> None:
        self.session.control("new_game", {"light": "Ann", "dark": "Bob"})
        self.clear()

    def make_timed(self, move: Move) -> float:
        """Make the move; returns the seconds `session.feed`/`control` took."""
        start = time.perf_counter()
        self.make(move)
        return time.perf_counter() - start


def _driver() -> Any:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        raise CommandError("needs selenium (pip install -e '.[dev]')") from None
    for path in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
        if not Path(path).exists():
            raise CommandError(f"needs {path} (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,1000"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"),
                            options=options)


_DRAWN = """
return window.ponteDrawn ? [window.ponteDrawn.moves, window.ponteDrawn.painted || 0] : null;
"""


def _wait(driver: Any, check: str, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(check)
        if value:
            return value
        time.sleep(0.002)
    raise CommandError(f"the browser did not answer in {timeout:.0f} s ({check.strip()[:60]})")


def _event_to_drawn(driver: Any, url: str, table: _Table, moves: list[Move]) -> list[float]:
    table.reset()
    driver.get(url)
    _wait(driver, "return document.getElementById('link-status').dataset.status === 'live'")
    _wait(driver, "return window.ponteDrawn && window.ponteDrawn.painted")
    latencies = []
    for move in moves:
        count = len(table.session.table.game.moves)
        sent = time.time() * 1000.0
        table.make_timed(move)
        if len(table.session.table.game.moves) == count:
            continue
        drawn = _wait(driver, f"const d = window.ponteDrawn; return d && d.painted && "
                              f"d.moves === {count + 1} ? d.painted : 0")
        latencies.append(float(drawn) - sent)
    return latencies


def _page_loads(driver: Any, url: str, count: int) -> list[float]:
    loads = []
    for _ in range(count):
        driver.get("about:blank")
        driver.get(url)
        painted = _wait(driver, "return window.ponteDrawn && window.ponteDrawn.painted")
        start = driver.execute_script("return performance.timeOrigin")
        loads.append(float(painted) - float(start))
    return loads


def _spectate(url: str, received: list[int], stop: threading.Event) -> None:
    with urllib.request.urlopen(url, timeout=30) as stream:
        for line in stream:
            if line.startswith(b"event: move"):
                received.append(1)
            if stop.is_set():
                return


class _Crowd:
    """SPECTATORS real HTTP clients reading the event stream, counting move events."""

    def __init__(self, url: str, session: LiveSession) -> None:
        self.stop = threading.Event()
        self.counts: list[list[int]] = [[] for _ in range(SPECTATORS)]
        self._session = session
        for got in self.counts:
            threading.Thread(target=_spectate, args=(url, got, self.stop), daemon=True).start()
        deadline = time.monotonic() + 10
        while session.bus.subscriber_count < SPECTATORS and time.monotonic() < deadline:
            time.sleep(0.01)
        self.connected = session.bus.subscriber_count

    def close(self) -> None:
        self.stop.set()
        self._session.bus.publish(EventType.NOTICE, {"message": "bench over"})


class _TimedPublish:
    """Times every `bus.publish` of the session (the publisher's own cost)."""

    def __init__(self, session: LiveSession) -> None:
        self.times: list[float] = []
        bus = session.bus
        original = bus.publish

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.times.append(time.perf_counter() - start)

        bus.publish = timed  # type: ignore[method-assign]


def _summary(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (f"median {statistics.median(ordered):6.1f}  p95 {p95:6.1f}  "
            f"max {ordered[-1]:6.1f}  (n={len(ordered)})")


class FrameLoop:
    """The camera loop's side: a reading every 1/CROWD_FPS s on the camera's clock, a move
    made every FRAMES_PER_MOVE frames (pieces on the board, or the button for pass/swap)."""

    def __init__(self, session: LiveSession, moves: list[Move]) -> None:
        self.session = session
        self.moves = moves
        self.latencies: list[float] = []
        self.verdicts: dict[int, float] = {}
        """ply -> wall time its verdict was out."""

    def run(self) -> None:
        from ponte.live.settle import BoardView, Reading
        from referee import Bridge, Pass, Swap, Tiles

        self.session.control("new_game", {"light": "Ann", "dark": "Bob"})
        tiles: dict[str, str] = {}
        bridges: list[tuple[str, str]] = []
        start = time.perf_counter()
        frame = 0
        for move in self.moves:
            for _ in range(FRAMES_PER_MOVE - 1):
                self._at(start, frame)
                self.session.feed(Reading(frame / CROWD_FPS, BoardView.of(tiles, bridges)))
                frame += 1
            due = self._at(start, frame)
            before = len(self.session.table.game.moves)
            if isinstance(move, Swap | Pass):
                self.session.control("swap" if isinstance(move, Swap) else "pass", {})
            else:
                colour = self.session.table.game.turn
                assert colour is not None
                if isinstance(move, Tiles):
                    tiles.update({c.name: colour.value for c in move.cells})
                elif isinstance(move, Bridge):
                    bridges.append((move.a.name, move.b.name))
                self.session.feed(Reading(frame / CROWD_FPS, BoardView.of(tiles, bridges)))
            frame += 1
            after = len(self.session.table.game.moves)
            if after > before:
                self.latencies.append(time.perf_counter() - due)
                self.verdicts[after] = time.time()

    @staticmethod
    def _at(start: float, frame: int) -> float:
        """Wait until the frame is due (not at all if the loop is behind); its due time."""
        due = start + frame / CROWD_FPS
        wait = due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        return due


def crowd_trial(session: LiveSession, port: int, moves: list[Move], pollers: int,
                pages: int) -> tuple[FrameLoop, dict[str, Any], float]:
    """Play `moves` through a frame loop while `pollers` and `pages` web clients (another
    process, `lab.bench.crowd`) use the server on `port`; the loop, the clients' results
    and the seconds the game took."""
    import multiprocessing

    from lab.bench.crowd import run_crowd

    context = multiprocessing.get_context("spawn")
    ready, stop, out = context.Event(), context.Event(), context.Queue()
    clients = context.Process(target=run_crowd, daemon=True,
                              args=(port, pollers, pages, ready, stop, out))
    clients.start()
    try:
        if not ready.wait(60):
            raise CommandError("the crowd of web clients did not start in 60 s")
        loop = FrameLoop(session, moves)
        began = time.monotonic()
        loop.run()
        seconds = time.monotonic() - began
        time.sleep(1.0)  # let the pages catch up with the last move
        stop.set()
        result: dict[str, Any] = out.get(timeout=60)
        clients.join(10)
    finally:
        stop.set()
        if clients.is_alive():
            clients.terminate()
            clients.join(5)
    return loop, result, seconds


def _crowd(quick: bool) -> bool:
    """Verdict latency with no web clients, then with POLLERS + PAGES; prints, returns ok."""
    from web import serve

    moves = [m.move for m in heuristic_game(3).moves][: 16 if quick else None]
    with tempfile.TemporaryDirectory(prefix="ponte-bench-crowd-") as folder:
        store = Store(folder)
        session = LiveSession(store, settle_window=0.0)
        web = serve(session, "127.0.0.1", 0, announce=lambda text: None)
        try:
            alone = FrameLoop(session, moves)
            alone.run()
            crowded, result, seconds = crowd_trial(session, web.port, moves, POLLERS, PAGES)
        finally:
            web.shutdown()
            store.close()
    made = len(crowded.verdicts)
    pages = result["pages"]
    fresh = [1000.0 * (page["fresh"][ply] - crowded.verdicts[ply])
             for page in pages for ply in crowded.verdicts if ply in page["fresh"]]
    complete = sum(1 for page in pages if page["moves_seen"] >= made
                   and all(ply in page["fresh"] for ply in crowded.verdicts))
    polled = result["polled"]
    answered = sum(polled.values())
    errors = sum(n for status, n in polled.items() if status >= 500 or status == 0)
    errors += sum(n for page in pages for status, n in page["statuses"].items()
                  if status >= 500)
    print(f"verdict latency, no web clients (ms):            "
          f"{_summary([1000.0 * v for v in alone.latencies])}")
    print(f"verdict latency, {POLLERS} pollers + {PAGES} Game pages (ms): "
          f"{_summary([1000.0 * v for v in crowded.latencies])}   "
          f"target <= {VERDICT_TARGET_MS:.0f}")
    print(f"  pollers: {answered} answers in {seconds:.0f} s ({answered / seconds:.0f}/s), "
          + ", ".join(f"{status}: {n}" for status, n in sorted(polled.items())))
    print(f"  Game pages: {sum(1 for p in pages if p['connected'])}/{PAGES} connected, "
          f"{complete}/{PAGES} held every one of the {made} moves; "
          f"from verdict to the page holding it (ms): {_summary(fresh) if fresh else '-'}")
    print(f"  server errors (5xx or dropped connections): {errors}")
    return (max(crowded.latencies) * 1000.0 <= VERDICT_TARGET_MS and complete == PAGES
            and errors == 0)


_UNLIMITED = {"RATE_LIMIT": None, "MAX_STREAMS_PER_CLIENT": SPECTATORS + 4}
"""The browser part plays a move as soon as the last is drawn (tens a second) and its
spectators share 127.0.0.1: the per-client limits are off there; it measures drawing."""


def run(args: argparse.Namespace) -> int:
    from web import serve

    quick = bool(getattr(args, "quick", False))
    part = getattr(args, "part", None)
    if part not in (None, "crowd", "browser"):
        raise CommandError(f"no part {part!r} of the web benchmark: choose crowd or browser")
    crowd_ok = _crowd(quick) if part in (None, "crowd") else True
    if part == "crowd":
        return 0 if crowd_ok else 1
    game = heuristic_game(3)
    moves = [m.move for m in game.moves]
    if quick:
        moves = moves[:12]
    with tempfile.TemporaryDirectory(prefix="ponte-bench-web-") as folder:
        store = Store(folder)
        session = LiveSession(store, settle_window=0.0)
        table = _Table(session)
        web = serve(session, "127.0.0.1", 0, announce=lambda text: None, config=_UNLIMITED)
        timer = _TimedPublish(session)
        driver = _driver()
        try:
            latencies = _event_to_drawn(driver, web.url, table, moves)
            loads = _page_loads(driver, web.url, 3 if quick else 15)
            driver.get("about:blank")
            table.reset()
            timer.times.clear()
            alone = [table.make_timed(move) for move in moves]
            publish_alone = list(timer.times)
            crowd = _Crowd(web.url + "events", session)
            table.reset()
            timer.times.clear()
            crowded = [table.make_timed(move) for move in moves]
            publish_crowd = list(timer.times)
            moves_made = len(session.table.game.moves)
            time.sleep(0.5)
            counts = [len(c) for c in crowd.counts]
            with_crowd = _event_to_drawn(driver, web.url, table, moves)
            crowd.close()
        finally:
            driver.quit()
            web.shutdown()
            store.close()

    def ms(values: list[float]) -> list[float]:
        return [1000.0 * v for v in values]

    print(f"event -> drawn in Chromium (ms):            {_summary(latencies)}   "
          f"target <= {EVENT_TARGET_MS:.0f}")
    print(f"  ... while {crowd.connected} SSE spectators follow (ms): {_summary(with_crowd)}")
    print(f"game page load to board drawn (ms):         {_summary(loads)}   "
          f"target <= {LOAD_TARGET_MS:.0f}")
    def us(values: list[float]) -> list[float]:
        return [1e6 * v for v in values]

    print(f"bus.publish, no spectators (us):             {_summary(us(publish_alone))}")
    print(f"bus.publish, {crowd.connected} spectators (us):             "
          f"{_summary(us(publish_crowd))}")
    print(f"session.feed per move incl. SQLite, no spectators (ms): {_summary(ms(alone))}")
    print(f"session.feed per move incl. SQLite, {crowd.connected} spectators (ms): "
          f"{_summary(ms(crowded))}")
    print(f"spectators that got all {moves_made} move events: "
          f"{sum(1 for c in counts if c >= moves_made)}/{SPECTATORS} "
          f"(each got {min(counts)}-{max(counts)})")
    ok = (statistics.median(latencies) <= EVENT_TARGET_MS
          and statistics.median(loads) <= LOAD_TARGET_MS and crowd_ok)
    return 0 if ok else 1
