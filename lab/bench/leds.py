"""`ponte bench leds`: frame-to-ACK round trip of the real firmware in simavr at 115200 baud.

Builds the firmware and the simavr harness into a temporary directory, starts the emulator
(paced to real time), and times `Controller.show()` — from writing a whole-state frame to
receiving its ACK — for each layout, alternating two different states so that every frame
is new. The target is <= 10 ms.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from firmware_bridge.controller import Controller, ControllerError, open_controller
from firmware_bridge.framing import Packet, encode_packet
from firmware_bridge.protocol import LedFrame, frame_message
from firmware_bridge.sim import Emulator, SimulatorError, build
from firmware_bridge.view import LedView, Status, Turn, load_layout, render_view

TARGET_MS = 10.0


HEADER = f"{'layout':<8} {'LEDs':>4} {'wire B':>6} {'n':>4} {'median':>7} {'p95':>7} {'max':>7}"
VIEWS = (
    LedView(Turn.LIGHT, frozenset({(2, 3), (7, 7)}), Status.FLAGGED),
    LedView(Turn.DARK, frozenset({(5, 1), (0, 9), (9, 0)}), Status.FLAGGED),
)


def wire_bytes(frame: LedFrame) -> int:
    """Bytes on the wire for `frame` as `Controller.show` sends it (shorter encoding)."""
    kind, payload = frame_message(frame)
    return len(encode_packet(Packet(kind, 1, payload)))


def measure(controller: Controller, layout_name: str, count: int) -> tuple[float, str]:
    """Times `count` frames on one layout; returns the p95 in ms and a table row."""
    layout = load_layout(layout_name)
    frames = [render_view(view, layout) for view in VIEWS]
    wire = max(wire_bytes(frame) for frame in frames)
    resends_before = controller.resends
    times = []
    for i in range(count):
        started = time.perf_counter()
        controller.show(frames[i % 2])
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    p95 = times[int(0.95 * (len(times) - 1))]
    row = (
        f"{layout_name:<8} {len(frames[0].indices):>4} {wire:>6} {len(times):>4} "
        f"{statistics.median(times):>6.2f}  {p95:>6.2f}  {times[-1]:>6.2f}  ms"
        f"  (resends {controller.resends - resends_before})"
    )
    return p95, row


def run(args: argparse.Namespace) -> int:
    from ponte.cli import CommandError

    count = 40 if args.quick else 400
    with tempfile.TemporaryDirectory(prefix="ponte-leds-") as tmp:
        try:
            built = build(Path(tmp))
        except SimulatorError as exc:
            raise CommandError(str(exc)) from exc
        emulator = Emulator(built).start()
        with emulator:
            try:
                controller = open_controller(emulator.url)
            except ControllerError as exc:
                raise CommandError(f"the emulated controller did not answer: {exc}") from exc
            with controller:
                print("frame-to-ACK, real firmware in simavr (ATmega328P, 16 MHz, 115200 baud)")
                print(HEADER)
                worst = 0.0
                for name in ("edges", "matrix"):
                    p95, row = measure(controller, name, count)
                    worst = max(worst, p95)
                    print(row)
    # the harness's own account of its pacing, e.g. "emulated 4.1 s in 4.1 s; ..."
    pacing = emulator.diagnostics().splitlines()
    if pacing:
        print(pacing[-1])
    verdict = "met" if worst <= TARGET_MS else "NOT met"
    print(f"target p95 <= {TARGET_MS:g} ms: {verdict}")
    return 0
