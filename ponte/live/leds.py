"""The LEDs at the table, driven by the live loop: state -> `LedView`, button -> control.

`led_view(state)` is pure: the session's state as what the LEDs should show (whose turn,
the flagged cells, playing / flagged / void / over, the winner). `LedLink` is the edge: it
follows the session's events in its own thread and hands each new view to a
`firmware_bridge.bridge.LedBridge` (which never blocks); the button's short press is
"pass" and its long press "confirm", sent to the session as controls.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from contracts.live import ControlError, EventType
from firmware_bridge.protocol import ButtonEvent, ButtonKind
from firmware_bridge.view import LedView, Status, Turn

log = logging.getLogger(__name__)

_TURNS = {"light": Turn.LIGHT, "dark": Turn.DARK}


def _cell(name: str) -> tuple[int, int] | None:
    try:
        return (ord(name[0]) - ord("a"), int(name[1:]) - 1)
    except (ValueError, IndexError):
        return None


def led_view(state: Mapping[str, Any]) -> LedView:
    """What the LEDs show for a session state (`LiveApi.state()`)."""
    size = int(state.get("board", {}).get("size", 10))
    outcome = state.get("outcome")
    game = state.get("game") or {}
    if outcome is not None or game.get("status") == "over":
        if outcome is not None and outcome.get("result") == "void":
            return LedView(status=Status.VOID, board_size=size)
        winner = (outcome or {}).get("winner") or game.get("winner")
        return LedView(status=Status.OVER, winner=_TURNS.get(str(winner), Turn.NONE),
                       board_size=size)
    turn = _TURNS.get(str(state.get("turn")), Turn.NONE)
    flagged = set()
    for flag in state.get("flags", []):
        for name in flag.get("cells", []):
            cell = _cell(str(name))
            if cell is not None and 0 <= cell[0] < size and 0 <= cell[1] < size:
                flagged.add(cell)
    status = Status.FLAGGED if state.get("flags") else Status.PLAYING
    return LedView(turn=turn, flagged=frozenset(flagged), status=status, board_size=size)


def button_control(event: ButtonEvent) -> str:
    """The control a button press stands for: short = pass, long = confirm."""
    return "confirm" if event.kind == ButtonKind.LONG else "pass"


class LedLink:
    """Keeps the LEDs in step with a session; presses of the button become controls."""

    def __init__(self, session: Any, bridge: Any) -> None:
        self.session = session
        self.bridge = bridge
        self.shown: LedView | None = None
        self._sub = session.bus.subscribe()
        self._thread = threading.Thread(target=self._follow, name="ponte-leds", daemon=True)
        self._thread.start()
        self._show()

    @staticmethod
    def start(session: Any, url: str, layout: str = "edges") -> LedLink:
        from firmware_bridge.bridge import LedBridge

        link: list[LedLink] = []
        bridge = LedBridge(url, layout, on_button=lambda e: link[0].press(e) if link else None)
        link.append(LedLink(session, bridge))
        return link[0]

    def press(self, event: ButtonEvent) -> None:
        action = button_control(event)
        try:
            self.session.control(action, {})
        except ControlError as exc:
            self.session.bus.publish(EventType.NOTICE, {"kind": "button", "message":
                                                        f"button ({action}): {exc}"})

    def _show(self) -> None:
        view = led_view(self.session.state())
        if view != self.shown:
            self.shown = view
            self.bridge.show(view)

    def _follow(self) -> None:
        while (event := self._sub.get()) is not None:
            if event.type is not EventType.CAMERA:
                try:
                    self._show()
                except Exception:  # the LEDs must never stop the live loop
                    log.exception("cannot update the LEDs")

    def close(self) -> None:
        self._sub.close()
        self._thread.join(2.0)
        self.bridge.close()
