"""Shared fixtures for the tests."""

from __future__ import annotations

import pytest

from referee import Colour


@pytest.fixture
def light() -> Colour:
    return Colour.LIGHT


@pytest.fixture
def dark() -> Colour:
    return Colour.DARK
