"""`ponte demo`: the README's main job on a machine with no camera.

Plays the bundled game video (`examples/demo/game.mp4`, drawn with the synthetic scene
generator: a short game with one illegal placement that the player takes back) through the
live loop in real time — camera reader, settle, referee, database — with the web page, and
prints the page's address. The games database goes to a fresh temporary folder unless
`--data` is given.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from ponte.cli import CommandError

DEMO_VIDEO = Path(__file__).resolve().parents[2] / "examples" / "demo" / "game.mp4"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="watch a bundled game video through the live loop, with the web page",
        description="Play the bundled game video through the live loop in real time, as a "
        "camera would show it: the board is read, every move refereed and recorded in a "
        "games database (a new temporary folder unless --data), and the web page shows "
        "the game. No camera needed.",
    )
    parser.add_argument("--video", default=str(DEMO_VIDEO), help=argparse.SUPPRESS)
    parser.add_argument("--headless", action="store_true", help="no web page")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument("--host", default="127.0.0.1", help="web page address")
    parser.add_argument("--port", type=int, default=8000, help="web page port (0: any free)")
    parser.add_argument("--data", help="data folder (default: a new temporary folder)")
    parser.add_argument("--once", action="store_true",
                        help="exit when the video ends (default: keep the page up until Ctrl-C)")
    parser.add_argument("--duration", type=float,
                        help="stop after this many seconds (implies --once)")
    parser.add_argument("--speed", type=float, default=1.0,
                        help="play faster (2 = twice real time) or slower; the settle window "
                        "is scaled with it")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ponte.commands.live import attach_web
    from ponte.live.camera import CameraReader
    from ponte.live.loop import run_live
    from ponte.live.session import LiveSession
    from ponte.live.settle import DEFAULT_WINDOW
    from ponte.live.sources import SourceError, open_source
    from ponte.live.store import Store, StoreError

    if not 0.1 <= args.speed <= 20:
        raise CommandError("--speed must be between 0.1 and 20")
    video = Path(args.video)
    if not video.is_file():
        raise CommandError(f"the demo video is missing: {video}")
    data = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="ponte-demo-"))
    try:
        store = Store(data)
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    # faster playback runs the video's clock faster; the settle window follows it, so the
    # loop sees the same still stretches whatever the speed
    session = LiveSession(store, resume=False, settle_window=DEFAULT_WINDOW / args.speed,
                          tags={"Event": "Ponte demo", "Light": "Lucia", "Dark": "Dario"})
    try:
        source = open_source(str(video))
    except SourceError as exc:
        raise CommandError(str(exc)) from None
    if args.speed != 1.0:
        source = _Faster(source, args.speed)
    camera = CameraReader()
    session.attach_camera(camera, data / "calibration.json")
    server = None if args.headless else attach_web(session, args.host, args.port)
    if server is not None:
        print(f"demo: open {server.url} to watch the game", file=sys.stderr, flush=True)
        if not args.no_browser:
            _open_browser(server.url)
    elif not args.headless:
        print("demo: the web page is not available in this installation; running headless",
              file=sys.stderr)
    print(f"demo: playing {video.name} in real time; games database in {data}",
          file=sys.stderr, flush=True)
    stop = threading.Event()
    try:
        stats = run_live(source, camera, session, realtime=True, stop=stop,
                         duration=args.duration)
        state = session.state()
        moves = [m["move"] for m in state["moves"]]
        print(f"demo: {stats.frames} frames, {len(moves)} moves read: {' '.join(moves)}",
              file=sys.stderr, flush=True)
        print(f"demo: game {session.game_id}, result {state['game']['result']}; "
              f"`ponte export {session.game_id} --data {data}` writes it out", file=sys.stderr)
        if server is not None and not args.once and args.duration is None:
            print("demo: the video has ended; the page stays up until Ctrl-C", file=sys.stderr)
            while not stop.wait(0.5):
                pass
    except KeyboardInterrupt:
        pass
    finally:
        source.close()
        if server is not None:
            server.shutdown()
        store.close()
    return 0


class _Faster:
    """A file source whose clock runs `speed` times faster (frames keep their order)."""

    def __init__(self, source: Any, speed: float) -> None:
        self.source = source
        self.speed = speed
        self.live = source.live
        self.description = source.description

    def read(self) -> Any:
        from ponte.live.sources import Frame

        frame = self.source.read()
        if frame is None:
            return None
        return Frame(frame.image, frame.t / self.speed, frame.index)

    def close(self) -> None:
        self.source.close()


def _open_browser(url: str) -> None:
    import webbrowser

    try:
        webbrowser.open(url)
    except Exception:  # noqa: BLE001 - no browser is fine; the address was printed
        pass
