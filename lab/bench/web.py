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


def run(args: argparse.Namespace) -> int:
    from web import serve

    quick = bool(getattr(args, "quick", False))
    game = heuristic_game(3)
    moves = [m.move for m in game.moves]
    if quick:
        moves = moves[:12]
    with tempfile.TemporaryDirectory(prefix="ponte-bench-web-") as folder:
        store = Store(folder)
        session = LiveSession(store, settle_window=0.0)
        table = _Table(session)
        web = serve(session, "127.0.0.1", 0, announce=lambda text: None)
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
          and statistics.median(loads) <= LOAD_TARGET_MS)
    return 0 if ok else 1
