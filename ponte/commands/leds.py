"""`ponte leds`: the optional LED controller at the table.

    ponte leds test --port URL [--layout edges|matrix] [--board-size 10|12]
    ponte leds find
    ponte leds sim [--link PATH] [--seconds N]

`test` runs a visible self-test pattern (turn colours, a blinking flag, a chase along every
LED, void, game over, idle), prints each step's frame-to-ACK time, any button presses made
meanwhile and the controller's error counters, and checks the firmware's read-back of the
last frame. `--port auto` looks for the
controller among the system's serial ports. `find` prints the port the controller is on.
`sim` builds the firmware and runs it in simavr (no hardware needed) until interrupted,
printing the pseudo-terminal to give to `--port` or to `LedBridge`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from firmware_bridge.bridge import find_controller
from firmware_bridge.controller import Controller, ControllerError, open_controller
from firmware_bridge.protocol import Colour, LedFrame
from firmware_bridge.sim import Emulator, SimulatorError, build
from firmware_bridge.view import (
    LayoutError,
    LedView,
    Status,
    Turn,
    layout_names,
    load_layout,
    render_view,
)
from ponte.cli import CommandError

#: Where `ponte leds sim` builds (git ignores build/).
BUILD_DIR = Path(__file__).resolve().parents[2] / "build" / "leds"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "leds", help="the LED controller: self-test, find its port, or sim (the firmware in "
        "simavr, no hardware needed)")
    actions = parser.add_subparsers(dest="leds_action", metavar="ACTION", required=True)
    test = actions.add_parser("test", help="run a visible self-test pattern on the LEDs")
    test.add_argument(
        "--port",
        required=True,
        help="pyserial URL: /dev/ttyUSB0, a pty path, socket://HOST:PORT, or 'auto'",
    )
    test.add_argument("--layout", default="edges", choices=layout_names())
    test.add_argument("--board-size", type=int, default=10, choices=(10, 12))
    test.add_argument("--step", type=float, default=0.8, help="seconds per step (default 0.8)")
    test.set_defaults(handler=run_test)
    find = actions.add_parser("find", help="print the serial port the controller is on")
    find.set_defaults(handler=run_find)
    sim = actions.add_parser("sim", help="run the real firmware in simavr on a pseudo-terminal")
    sim.add_argument("--link", type=Path, help="also make PATH a symlink to the terminal")
    sim.add_argument("--seconds", type=float, help="stop after this long (default: Ctrl-C)")
    sim.add_argument(
        "--build-dir", type=Path, default=BUILD_DIR, help=f"where to build (default {BUILD_DIR})"
    )
    sim.add_argument("--press", type=int, metavar="MS", help="hold the button for MS after 1 s")
    sim.set_defaults(handler=run_sim)


def self_test_steps(layout_name: str, board_size: int) -> list[tuple[str, LedFrame]]:
    """The self-test's frames, in order, each with a name for the person watching."""
    layout = load_layout(layout_name)
    size = board_size

    def show(view: LedView) -> LedFrame:
        return render_view(view, layout)

    steps = [
        (
            "light player's turn (warm white)",
            show(LedView(Turn.LIGHT, status=Status.PLAYING, board_size=size)),
        ),
        (
            "dark player's turn (red-orange)",
            show(LedView(Turn.DARK, status=Status.PLAYING, board_size=size)),
        ),
        (
            "flag on c3 (magenta, blinking)",
            show(LedView(Turn.LIGHT, frozenset({(2, 2)}), Status.FLAGGED, board_size=size)),
        ),
    ]
    count = layout.led_count(size)
    white = Colour(120, 120, 120)
    off = Colour(0, 0, 0)
    for led in range(count):
        colours = [white if i == led else off for i in range(count)]
        steps.append((f"chase: LED {led}", LedFrame.from_colours(colours)))
    steps += [
        ("void (all red, slow blink)", show(LedView(status=Status.VOID, board_size=size))),
        (
            "game over, light wins (green)",
            show(LedView(status=Status.OVER, winner=Turn.LIGHT, board_size=size)),
        ),
        ("idle (calm breathing)", show(LedView(board_size=size))),
    ]
    return steps


def _open(port: str) -> Controller:
    url = port
    if port == "auto":
        found = find_controller()
        if found is None:
            raise CommandError("no LED controller answered on any serial port")
        url = found
    try:
        return open_controller(url)
    except ControllerError as exc:
        raise CommandError(f"no LED controller at {url}: {exc}") from exc


def run_test(args: argparse.Namespace) -> int:
    try:
        steps = self_test_steps(args.layout, args.board_size)
    except LayoutError as exc:
        raise CommandError(str(exc)) from exc
    controller = _open(args.port)
    try:
        info = controller.info
        assert info is not None
        needed = len(steps[0][1].indices)
        version = ".".join(map(str, info.firmware_version))
        print(
            f"controller: firmware {version}, protocol {info.protocol_version}, "
            f"{info.led_count} LEDs; layout {args.layout} uses {needed}"
        )
        if needed > info.led_count:
            raise CommandError(
                f"layout {args.layout} needs {needed} LEDs, the firmware drives {info.led_count}"
            )
        chase_step = min(args.step, 0.05)
        for name, frame in steps:
            started = time.perf_counter()
            controller.show(frame)
            elapsed_ms = (time.perf_counter() - started) * 1000
            chase = name.startswith("chase")
            if not chase or name.endswith(" 0"):
                print(f"  {name:<36} ack in {elapsed_ms:5.1f} ms")
            time.sleep(chase_step if chase else args.step)
        readback = controller.readback()
        stats = controller.stats()
        while not controller.buttons.empty():
            event = controller.buttons.get_nowait()
            print(f"button: {event.kind.name.lower()} press, {event.duration_ms} ms")
    except ControllerError as exc:
        raise CommandError(f"the controller stopped answering: {exc}") from exc
    finally:
        controller.close()
    matches = readback.frame == steps[-1][1]
    counters = ", ".join(f"{k} {v}" for k, v in stats.counters.items())
    print(f"counters: {counters}; host resends {controller.resends}")
    print(f"read-back of the last frame: {'matches' if matches else 'DIFFERS'}")
    return 0 if matches else 1


def run_find(args: argparse.Namespace) -> int:
    url = find_controller()
    if url is None:
        raise CommandError("no LED controller answered on any serial port")
    print(url)
    return 0


def run_sim(args: argparse.Namespace) -> int:
    try:
        built = build(args.build_dir)
        emulator = Emulator(built, args.link).start()
    except SimulatorError as exc:
        raise CommandError(str(exc)) from exc
    with emulator:
        print(f"emulated LED controller on {emulator.url}", flush=True)
        print(f"try: ponte leds test --port {emulator.url}", flush=True)
        started = time.monotonic()
        pressed = args.press is None
        while args.seconds is None or time.monotonic() - started < args.seconds:
            if not emulator.running:
                raise CommandError("the emulator stopped")
            if not pressed and time.monotonic() - started >= 1.0:
                emulator.press(args.press)
                pressed = True
            time.sleep(0.1)
    return 0
