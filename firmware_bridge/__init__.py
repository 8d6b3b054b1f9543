"""LEDs at the table: the microcontroller firmware (`firmware/`) and the host's serial driver.

May import pyserial and the standard library. Must not import `vision`, `web` or `ponte`;
it receives plain values describing what the LEDs should show.

The live loop's API (all of it non-blocking):

    from firmware_bridge.bridge import LedBridge
    from firmware_bridge.view import LedView, Status, Turn

    bridge = LedBridge("/dev/ttyUSB0", "edges", on_button=handle_press)  # or "matrix"
    bridge.show(LedView(Turn.LIGHT, frozenset({(2, 2)}), Status.FLAGGED))  # c3 flagged
    bridge.buttons.get_nowait()   # ButtonEvent(seq, ButtonKind.SHORT | LONG, duration_ms)
    bridge.close()

Modules: `framing` (CRC-16, COBS, packets; pure), `protocol` (message types and payloads;
pure), `view` (LedView -> LedFrame per layout from `layouts.json`; pure), `controller`
(request/response client over one open port), `bridge` (LedBridge, find_controller), `sim`
(build the firmware and run it in simavr, for tests and `ponte bench leds`).
The wire protocol is documented in `firmware/README.md`.
"""
