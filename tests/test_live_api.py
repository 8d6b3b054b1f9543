"""The event bus: ordered events, bounded queues that drop slow watchers, catching up."""

from __future__ import annotations

import json
import threading

from contracts.live import ControlError, EventBus, EventType


def test_events_arrive_in_order_with_increasing_ids() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    bus.publish(EventType.MOVE, {"move": "c1,c2"})
    bus.publish(EventType.END, {"winner": "light"})
    first, second = sub.get(timeout=1), sub.get(timeout=1)
    assert first is not None and second is not None
    assert (first.type, second.type) == (EventType.MOVE, EventType.END)
    assert second.id == first.id + 1
    assert sub.get(timeout=0.01) is None


def test_a_slow_subscriber_is_dropped_and_others_go_on() -> None:
    bus = EventBus(queue_size=3)
    slow, fast = bus.subscribe(), bus.subscribe()
    for k in range(5):
        bus.publish(EventType.NOTICE, {"k": k})
        assert fast.get(timeout=1) is not None
    assert slow.dropped and slow.closed
    assert bus.subscriber_count == 1
    drained = [slow.get(timeout=0) for _ in range(4)]
    assert [e.data["k"] for e in drained if e] == [0, 1, 2]


def test_catching_up_from_last_event_id() -> None:
    bus = EventBus(history=10)
    ids = [bus.publish(EventType.NOTICE, {"k": k}).id for k in range(5)]
    sub = bus.subscribe(last_event_id=ids[2])
    assert [sub.get(timeout=0).id for _ in range(2)] == ids[3:]  # type: ignore[union-attr]


def test_get_wakes_up_when_an_event_is_published() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    got = []
    thread = threading.Thread(target=lambda: got.append(sub.get(timeout=5)))
    thread.start()
    bus.publish(EventType.MOVE, {"move": "a1,b1"})
    thread.join(5)
    assert got and got[0] is not None and got[0].data["move"] == "a1,b1"
    sub.close()
    assert sub.get(timeout=0) is None and bus.subscriber_count == 0


def test_sse_form() -> None:
    event = EventBus().publish(EventType.MOVE, {"move": "a1,b1"})
    text = event.to_sse()
    assert text.startswith(f"id: {event.id}\nevent: move\ndata: ") and text.endswith("\n\n")
    assert json.loads(text.split("data: ", 1)[1])["move"] == "a1,b1"


def test_control_error_carries_a_status() -> None:
    assert ControlError("no such cell", 400).status == 400
    assert ControlError("not now").status == 409
