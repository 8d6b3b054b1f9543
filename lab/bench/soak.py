"""Soak run of the live loop (not part of CI): `python -m lab.bench.soak --seconds 3600`.

Loops the bundled demo video in real time through the whole live loop (vision reader,
settle, session, SQLite store, camera picture) for the given time and prints the process's
resident memory once a minute, so a flat line can be checked. Each pass of the video
starts a new game, as players would.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path


def rss_mib() -> float:
    """Resident memory of this process in MiB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    from ponte.commands.demo import DEMO_VIDEO
    from ponte.live.camera import CameraReader
    from ponte.live.loop import run_live
    from ponte.live.session import LiveSession
    from ponte.live.sources import open_source
    from ponte.live.store import Store

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3600.0)
    parser.add_argument("--every", type=float, default=60.0, help="seconds between reports")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ponte-soak-") as tmp:
        store = Store(Path(tmp))
        session = LiveSession(store)
        sub = session.bus.subscribe()  # a watcher that never reads: dropped when it fills
        camera = CameraReader()
        start = time.monotonic()
        stop = threading.Event()

        def report() -> None:
            while not stop.wait(args.every):
                print(f"{time.monotonic() - start:8.0f} s  rss {rss_mib():7.1f} MiB  "
                      f"games {len(store.games())}", flush=True)

        threading.Thread(target=report, daemon=True).start()
        print(f"       0 s  rss {rss_mib():7.1f} MiB", flush=True)
        frames = 0
        while time.monotonic() - start < args.seconds:
            source = open_source(str(DEMO_VIDEO))
            left = args.seconds - (time.monotonic() - start)
            stats = run_live(source, camera, session, realtime=True, duration=left)
            source.close()
            frames += stats.frames
            session.control("new_game", {"light": "Lucia", "dark": "Dario"})
        stop.set()
        print(f"done: {frames} frames, rss {rss_mib():.1f} MiB, slow watcher dropped: "
              f"{sub.dropped}", flush=True)
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
