"""`ponte demo`: the README's main job on a machine with no camera.

Plays the bundled game video (`examples/demo/game.mp4`, drawn with the synthetic scene
generator: a whole game with bridges of every shape, one illegal placement that the player
takes back, light's pass and the end) through the live loop in real time — camera reader,
settle, referee, database — with the web page, and prints the page's address (and opens it
in a browser where there is a display). Each move and flag is printed as it is read. The
games database goes to a fresh temporary folder unless `--data` is given. A demo that
reads no move exits with status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from ponte.cli import CommandError, port_number

DEMO_VIDEO = Path(__file__).resolve().parents[2] / "examples" / "demo" / "game.mp4"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="watch a bundled game video through the live loop, with the web page",
        description="Play the bundled game video (a whole generated game) through the live "
        "loop in real time: each move and flag is printed as it is read, the web page shows "
        "the game. Exits 1 when no move was read.",
    )
    parser.add_argument("--video", default=str(DEMO_VIDEO), help=argparse.SUPPRESS)
    parser.add_argument("--headless", action="store_true", help="no web page")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument("--host", default="127.0.0.1", help="web page address")
    parser.add_argument("--port", type=port_number, default=8000,
                        help="web page port (0: any free)")
    parser.add_argument("--data", help="data folder (default: a new temporary folder)")
    parser.add_argument("--once", action="store_true",
                        help="exit when the video ends (default: keep the page up until Ctrl-C)")
    parser.add_argument("--duration", type=float,
                        help="stop after this many seconds (implies --once)")
    parser.add_argument("--speed", type=float, default=1.0,
                        help="play faster (2 = twice real time) or slower (default 1); the "
                        "video's own clock still times the settling, so every speed reads "
                        "the same moves (as fast as the machine can read frames)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ponte.commands.live import ConsoleEvents, attach_web
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
    # faster playback paces the frames faster but keeps their times: the reader's rest
    # after a hand and the settle window are timed on the video's clock, as at speed 1
    session = LiveSession(store, resume=False, settle_window=DEFAULT_WINDOW,
                          tags={"Event": "Ponte demo", "Light": "Lucia", "Dark": "Dario"})
    try:
        source = open_source(str(video))
    except SourceError as exc:
        raise CommandError(str(exc)) from None
    camera = CameraReader()
    session.attach_camera(camera, data / "calibration.json")
    server = None if args.headless else attach_web(session, args.host, args.port)
    if server is not None:
        print(f"demo: open {server.url} to watch the game", file=sys.stderr, flush=True)
        if not args.no_browser:
            if not has_display():
                print(f"demo: no display here, so no browser is opened; open {server.url} "
                      "in a browser on this machine (or forward the port)", file=sys.stderr,
                      flush=True)
            elif not _open_browser(server.url):
                print(f"demo: no browser could be started; open {server.url} yourself",
                      file=sys.stderr, flush=True)
    elif not args.headless:
        print("demo: the web page is not available in this installation; running headless",
              file=sys.stderr)
    pace = "in real time" if args.speed == 1.0 else f"at {args.speed:g} times real time"
    print(f"demo: playing {video.name} {pace}; games database in {data}",
          file=sys.stderr, flush=True)
    stop = threading.Event()
    console = ConsoleEvents(session, "demo")
    moves: list[str] = []
    try:
        stats = run_live(source, camera, session, realtime=True, speed=args.speed, stop=stop,
                         duration=args.duration)
        console.close()
        state = session.state()
        moves = [m["move"] for m in state["moves"]]
        print(f"demo: {stats.frames} frames, {len(moves)} moves read: {' '.join(moves)}",
              file=sys.stderr, flush=True)
        if not moves:
            print(_NO_MOVES.format(window=DEFAULT_WINDOW), file=sys.stderr, flush=True)
        print(f"demo: game {session.game_id}, result {state['game']['result']}; "
              f"`ponte export {session.game_id} --data {data}` writes it out", file=sys.stderr)
        if server is not None and not args.once and args.duration is None:
            print("demo: the video has ended; the page stays up until Ctrl-C", file=sys.stderr)
            while not stop.wait(0.5):
                pass
    except KeyboardInterrupt:
        pass
    finally:
        console.close()
        source.close()
        if server is not None:
            server.shutdown()
        store.close()
    return 0 if moves else 1


_NO_MOVES = ("demo: no move was read, so the demo failed: a move is read once the board has "
             "stayed still for the settle window ({window:.2f} s of the video) with nothing "
             "over it; the video ended (or --duration passed) before that happened, or the "
             "camera reader never found the board in it")


def has_display() -> bool:
    """Whether a browser opened here could be seen: on Linux and the BSDs, an X or Wayland
    display is set; elsewhere (macOS, Windows) there is always a desktop."""
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def _open_browser(url: str) -> bool:
    import webbrowser

    try:
        return webbrowser.open(url)
    except Exception:  # noqa: BLE001 - no browser is fine; the address was printed
        return False
