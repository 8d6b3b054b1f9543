"""The LEDs follow the session; the button's presses become pass and confirm."""

from __future__ import annotations

from pathlib import Path

from firmware_bridge.protocol import ButtonEvent, ButtonKind
from firmware_bridge.view import LedView, Status, Turn
from ponte.live.leds import LedLink, led_view
from ponte.live.session import LiveSession
from ponte.live.settle import BoardView, Reading
from ponte.live.store import Store
from tests.waiting import wait_until


class RecordingBridge:
    """Fake of LedBridge for this unit test (the real one is tested against the firmware)."""

    def __init__(self) -> None:
        self.views: list[LedView] = []
        self.closed = False

    def show(self, view: LedView) -> None:
        self.views.append(view)

    def close(self) -> None:
        self.closed = True


def settle(session: LiveSession, board: BoardView, t0: float) -> None:
    for k in range(20):
        session.feed(Reading(t0 + k / 30, board))


def test_led_view_of_states() -> None:
    assert led_view({"turn": "light", "flags": [], "board": {"size": 10}}) == LedView(
        Turn.LIGHT, frozenset(), Status.PLAYING)
    flagged = led_view({"turn": "dark", "flags": [{"cells": ["c3", "b4"]}]})
    assert flagged.status is Status.FLAGGED and flagged.flagged == {(2, 2), (1, 3)}
    assert led_view({"outcome": {"result": "void"}}).status is Status.VOID
    over = led_view({"outcome": {"result": "dark", "winner": "dark"}})
    assert over.status is Status.OVER and over.winner is Turn.DARK


def test_the_leds_follow_the_game_and_the_button_passes_and_confirms(tmp_path: Path) -> None:
    session = LiveSession(Store(tmp_path))
    bridge = RecordingBridge()
    link = LedLink(session, bridge)
    assert bridge.views[-1].turn is Turn.LIGHT
    settle(session, BoardView.of({"e5": "light", "f6": "light"}), 0.0)
    assert wait_until(lambda: bridge.views[-1].turn is Turn.DARK, 3)
    settle(session, BoardView.of({"e5": "light", "f6": "light", "a1": "light"}), 1.0)
    assert wait_until(lambda: bridge.views[-1].status is Status.FLAGGED, 3)
    assert bridge.views[-1].flagged == {(0, 0)}
    link.press(ButtonEvent(1, ButtonKind.SHORT, 100))  # pass: not allowed, said as a notice
    assert [m["move"] for m in session.state()["moves"]] == ["e5,f6"]
    link.press(ButtonEvent(2, ButtonKind.LONG, 1200))  # confirm: judge the board now
    control = [e for e in session.game(session.game_id)["events"] if e["type"] == "control"]
    assert control[-1]["action"] == "confirm"
    link.close()
    assert bridge.closed


def test_turns_seen_at_once_show_on_the_leds_until_the_long_press_confirms_them(
    tmp_path: Path,
) -> None:
    session = LiveSession(Store(tmp_path))
    bridge = RecordingBridge()
    link = LedLink(session, bridge)
    opening = {"a1": "light", "a2": "light", "j9": "dark", "j10": "dark"}
    settle(session, BoardView.of({"a1": "light", "a2": "light"}), 0.0)
    settle(session, BoardView.of(opening), 1.0)
    three = {**opening, "e5": "light", "f6": "light", "g8": "light", "i6": "light",
             "c7": "dark", "c8": "dark"}  # light, dark, light: which light pair first?
    settle(session, BoardView.of(three), 2.0)
    unsure = session.state()["unsure"]
    assert unsure is not None and unsure["message"].startswith("three turns seen at once")
    assert wait_until(lambda: bridge.views[-1].status is Status.FLAGGED, 3)
    assert bridge.views[-1].flagged == {(4, 4), (5, 5), (6, 7), (8, 5), (2, 6), (2, 7)}
    assert len(session.state()["moves"]) == 2
    link.press(ButtonEvent(1, ButtonKind.LONG, 1200))  # confirm: record the proposal
    moves = [m["move"] for m in session.state()["moves"]]
    assert moves == ["a1,a2", "j9,j10", *unsure["proposal"]]
    assert wait_until(lambda: bridge.views[-1].status is Status.PLAYING, 3)
    assert session.state()["unsure"] is None
    link.close()
