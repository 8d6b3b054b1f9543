"""A live loop in its own process, for the kill -9 test: `python -m tests.live_worker VIDEO
TRUTHS DATA`. Plays the video in real time through the session and prints each committed
move as it is published. The reader is the real vision pipeline when TRUTHS is "vision",
else the ground-truth stand-in built from that truth file (see tests/live_scenes.py)."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

from contracts.live import EventType
from ponte.live.camera import CameraReader
from ponte.live.loop import run_live
from ponte.live.session import LiveSession
from ponte.live.sources import open_source
from ponte.live.store import Store
from tests.live_scenes import GroundTruthReader, truths_from_json


def main(video: str, truths_path: str, data: str) -> int:
    reader: CameraReader | GroundTruthReader
    if truths_path == "vision":
        reader = CameraReader()
    else:
        truths = truths_from_json(json.loads(Path(truths_path).read_text()))
        reader = GroundTruthReader(Path(video), truths)
    session = LiveSession(Store(data), settle_window=0.3)
    print(f"game {session.game_id} resumed={session.resumed}", flush=True)
    sub = session.bus.subscribe()

    def announce() -> None:
        while (event := sub.get()) is not None:
            if event.type is EventType.MOVE:
                print(f"move {event.data['ply']} {event.data['move']}", flush=True)

    announcer = threading.Thread(target=announce, daemon=True)
    announcer.start()
    source = open_source(video)
    run_live(source, reader, session, realtime=True)  # type: ignore[arg-type]
    sub.close()
    # The moves still queued are printed before "done", and no thread writes to stdout
    # while the interpreter shuts down (which aborts it).
    announcer.join(timeout=10)
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
