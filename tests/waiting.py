"""Waiting on a condition with a deadline, instead of sleeping a fixed time and hoping."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(condition: Callable[[], object], timeout: float, interval: float = 0.01) -> bool:
    """True as soon as `condition()` is true; False if it is still false after `timeout`
    seconds (checked once more at the deadline)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return bool(condition())
        time.sleep(interval)
    return True


def wait_for(check: Callable[[], T], timeout: float, what: str = "",
             interval: float = 0.01) -> T:
    """The first true value `check()` returns within `timeout` seconds (as `wait_until`
    waits); AssertionError naming `what` if it returns none."""
    seen: list[T] = []

    def true() -> bool:
        seen[:] = [check()]
        return bool(seen[0])

    if not wait_until(true, timeout, interval):
        raise AssertionError(f"timed out waiting for {what or check}")
    return seen[0]
