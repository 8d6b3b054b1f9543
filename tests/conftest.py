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


# --- training from a still set (tests/test_vision_learned.py, _patches.py, _decks.py) ----

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="session")
def synth_still_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A still set of nine `lab.synth` frames of a training seed, one of each setup, each
    with its empty photo (the format `lab.sets` reads; read-only)."""
    from lab.sets import write_synth_set

    out = tmp_path_factory.mktemp("still-set")
    write_synth_set(out, per_setup=1, seed=1001)
    return out
