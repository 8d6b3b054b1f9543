"""Waiting on a condition with a deadline, instead of sleeping a fixed time and hoping."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(condition: Callable[[], object], timeout: float, interval: float = 0.01) -> bool:
    """True as soon as `condition()` is true; False if it is still false after `timeout`
    seconds (checked once more at the deadline)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return bool(condition())
        time.sleep(interval)
    return True
