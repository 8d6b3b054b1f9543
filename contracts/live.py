"""The contract between the live loop and what watches it (web page, LEDs, recorder).

The live loop publishes `Event`s on an `EventBus`; each watcher holds a `Subscription`, a
bounded queue that is dropped (closed) when its watcher is too slow, so a stalled browser
never holds up the loop. Late joiners and reconnecting browsers catch up from a short
history by event id (server-sent events' Last-Event-ID).

`LiveApi` is what the web page is given: the whole state, the event stream, the controls,
the camera picture and the recorded games. Controls raise `ControlError` with a message a
person can act on and an HTTP status.
"""

from __future__ import annotations

import collections
import enum
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class EventType(enum.Enum):
    """Every kind of event the live loop publishes."""

    STATE = "state"
    """The whole state changed in a way not covered below (data: the state)."""
    MOVE = "move"
    """A legal move was committed (data: ply, move, colour, t)."""
    ILLEGAL = "illegal"
    """An illegal placement or unexplained change was flagged (data: ply, reason, cells...)."""
    CORRECTED = "corrected"
    """A flag went down: the pieces were taken back or the change undone (data: flag id)."""
    VOID = "void"
    """A flag outlived its two-round window: the game is void."""
    END = "end"
    """The game ended (data: score with breakdown, winner, result)."""
    CONTROL = "control"
    """A player used a control (data: action, params, by)."""
    CAMERA = "camera"
    """Camera or board status changed (data: status such as ok, occluded, no-signal, bumped)."""
    NOTICE = "notice"
    """Something players should know that is not a flag (data: message), e.g. one tile and
    a pause, or "light cannot place two tiles: build a bridge or pass"."""


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened, numbered in order within a session."""

    id: int
    type: EventType
    t: float
    """Seconds since the session started."""
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type.value, "t": round(self.t, 3), **self.data}

    def to_sse(self) -> str:
        """The event as a server-sent-events message."""
        payload = json.dumps(self.to_dict(), separators=(",", ":"))
        return f"id: {self.id}\nevent: {self.type.value}\ndata: {payload}\n\n"


class ControlError(ValueError):
    """A control that cannot be carried out; `status` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


class Subscription:
    """A watcher's bounded queue of events; closed when the watcher falls too far behind."""

    def __init__(self, bus: EventBus, maxsize: int) -> None:
        self._bus = bus
        self._queue: collections.deque[Event] = collections.deque()
        self._maxsize = maxsize
        self._ready = threading.Condition()
        self.closed = False
        self.dropped = False
        """True if the bus closed this subscription because its queue overflowed."""

    def _offer(self, event: Event) -> bool:
        with self._ready:
            if self.closed:
                return False
            if len(self._queue) >= self._maxsize:
                self.closed = self.dropped = True
                self._ready.notify_all()
                return False
            self._queue.append(event)
            self._ready.notify_all()
            return True

    def get(self, timeout: float | None = None) -> Event | None:
        """The next event, or None after `timeout` seconds or once closed and drained."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._ready:
            while not self._queue:
                if self.closed:
                    return None
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._ready.wait(remaining)
            return self._queue.popleft()

    def close(self) -> None:
        with self._ready:
            self.closed = True
            self._ready.notify_all()
        self._bus._forget(self)


class EventBus:
    """Publishes events to every subscription; keeps a short history for catching up."""

    def __init__(self, history: int = 512, queue_size: int = 256) -> None:
        self._lock = threading.Lock()
        self._subscribers: list[Subscription] = []
        self._history: collections.deque[Event] = collections.deque(maxlen=history)
        self._queue_size = queue_size
        self._next_id = 1
        self._started = time.monotonic()

    def publish(self, type: EventType, data: Mapping[str, Any] | None = None) -> Event:
        with self._lock:
            event = Event(self._next_id, type, time.monotonic() - self._started, dict(data or {}))
            self._next_id += 1
            self._history.append(event)
            subscribers = list(self._subscribers)
        for sub in subscribers:
            if not sub._offer(event):
                self._forget(sub)
        return event

    def subscribe(self, last_event_id: int | None = None) -> Subscription:
        """A new subscription; with `last_event_id`, first the events after that id that are
        still in the history."""
        sub = Subscription(self, self._queue_size)
        with self._lock:
            if last_event_id is not None:
                for event in self._history:
                    if event.id > last_event_id:
                        sub._offer(event)
            self._subscribers.append(sub)
        return sub

    def _forget(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._subscribers:
                self._subscribers.remove(sub)

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subscribers)


class LiveApi(Protocol):
    """What the web page (and other watchers) may ask of the live loop."""

    bus: EventBus

    def state(self) -> dict[str, Any]:
        """The whole current state, JSON-ready: `referee.view.game_state` plus
        "game" (id, light, dark, started, status) and "camera" (status, fps, last frame age)."""
        ...

    def control(self, action: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Carry out a player's control and return the new state. Actions: "swap", "pass",
        "confirm", "override" (params: cell and value "light"/"dark"/"empty", or bridge
        ["a1","c1"] and present true/false), "drop_override" (params: key, as in the
        state's "overrides"), "undo", "new_game" (params: light, dark names, optional
        board, supply), "end_game". Raises ControlError."""
        ...

    def camera_jpeg(self) -> bytes | None:
        """The latest camera frame with the board outline, grid and readings drawn on it."""
        ...

    def games(self) -> list[dict[str, Any]]:
        """The recorded games, newest first: id, tags, started, result, moves."""
        ...

    def game(self, game_id: int) -> dict[str, Any]:
        """One recorded game: tags, moves with timestamps, events; raises ControlError(404)."""
        ...

    def export(self, game_id: int, fmt: str) -> str:
        """A recorded game as `.pdd` text or JSON text; raises ControlError(404/400)."""
        ...

    def snapshot(self, game_id: int, ply: int) -> bytes | None:
        """The JPEG of the warped board taken when that move was committed, if any."""
        ...
