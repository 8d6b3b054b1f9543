"""Shared fixtures for the tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from referee import Colour


@pytest.fixture
def light() -> Colour:
    return Colour.LIGHT


@pytest.fixture
def dark() -> Colour:
    return Colour.DARK


# --- web page (tests/test_web_*.py) ---------------------------------------------------

if TYPE_CHECKING:
    from flask import Flask
    from flask.testing import FlaskClient

    from referee import Game
    from tests.live_double import FakeLive


@pytest.fixture(scope="session")
def web_example_game() -> Game:
    """A whole plausible game (read-only: do not push or pop)."""
    from referee.playout import heuristic_game

    return heuristic_game(3)


@pytest.fixture
def fake_live(web_example_game: Game) -> FakeLive:
    """The in-memory test double of the live loop, with one recorded game."""
    from tests.live_double import FakeLive

    live = FakeLive()
    live.record(web_example_game)
    return live


@pytest.fixture
def web_app(fake_live: FakeLive) -> Flask:
    from web import create_app

    return create_app(fake_live, {"TESTING": True, "SSE_HEARTBEAT": 0.2})


@pytest.fixture
def web_client(web_app: Flask) -> FlaskClient:
    return web_app.test_client()
