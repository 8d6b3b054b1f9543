"""The session and its store: readings in; events, controls, records and resuming out."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from contracts.live import ControlError, Event, EventBus, EventType
from ponte.live.session import LiveSession
from ponte.live.settle import BoardView, Reading
from ponte.live.store import Store
from referee import read_record


def still(session: LiveSession, board: BoardView, t0: float, seconds: float = 0.6,
          fps: float = 30, snapshot: Callable[[], bytes] = lambda: b"\xff\xd8jpeg") -> list:
    events = []
    for k in range(int(seconds * fps)):
        events += session.feed(Reading(t0 + k / fps, board), snapshot=snapshot)
    return events


def hands(session: LiveSession, t0: float, seconds: float = 1.0) -> None:
    for k in range(int(seconds * 30)):
        session.feed(Reading(t0 + k / 30, BoardView.of({"j10": "dark"}), occluded=True))


B1 = BoardView.of({"e5": "light", "f6": "light"})
B2 = BoardView.of({"e5": "light", "f6": "light", "c3": "dark", "c4": "dark"})


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "data")


def test_a_settled_board_becomes_a_recorded_move_with_a_snapshot(store: Store) -> None:
    session = LiveSession(store)
    sub = session.bus.subscribe()
    still(session, BoardView(), 0.0)
    hands(session, 1.0)
    events = still(session, B1, 2.0)
    assert [e[0].value for e in events] == ["move"]
    types = []
    while (event := sub.get(timeout=0)) is not None:
        types.append(event.type.value)
    assert "move" in types and "camera" in types
    game = session.game(session.game_id)
    assert [m["move"] for m in game["moves"]] == ["e5,f6"]
    assert game["moves"][0]["t"] == pytest.approx(2.4, abs=0.05)
    assert session.snapshot(session.game_id, 1) == b"\xff\xd8jpeg"
    assert session.state()["game"]["status"] == "playing"


def test_a_piece_held_back_by_the_camera_shows_as_settling_and_then_is_recorded(
        store: Store) -> None:
    session = LiveSession(store)
    still(session, BoardView(), 0.0)
    hands(session, 1.0)
    assert session.state()["camera"]["status"] == "occluded"
    for k in range(12):  # the tiles read, held back while the picture near them rests
        assert session.feed(Reading(2.0 + k / 30, B1, occluded=True, pending=True,
                                    occluded_cells=frozenset({"e5", "f6"}))) == []
    assert session.state()["camera"]["status"] == "settling"
    events = still(session, B1, 2.4, seconds=0.2)  # trusted: the window ran meanwhile
    assert [e[0].value for e in events] == ["move"]
    assert session.state()["camera"]["status"] == "ok"


def test_controls_are_recorded_and_bad_ones_refused(store: Store) -> None:
    session = LiveSession(store)
    still(session, B1, 0.0)
    state = session.control("swap", {})
    assert state["swapped"] is True
    with pytest.raises(ControlError) as err:
        session.control("pass", {})
    assert err.value.status == 409
    with pytest.raises(ControlError) as err:
        session.control("override", {"cell": "z9", "value": "light"})
    assert err.value.status == 400
    with pytest.raises(ControlError):
        session.control("new_game", {"light": 5})
    kinds = [e["type"] for e in session.game(session.game_id)["events"]]
    assert kinds.count("control") == 1


def test_undo_takes_back_the_move_and_waits_for_the_board_to_change(store: Store) -> None:
    session = LiveSession(store)
    still(session, B1, 0.0)
    still(session, B2, 1.0)
    session.control("undo", {})
    assert [m["move"] for m in session.state()["moves"]] == ["e5,f6"]
    assert still(session, B2, 2.0) == []
    events = still(session, B1, 3.0)
    assert events == []
    events = still(session, BoardView.of({**B1.tiles, "h8": "dark", "h9": "dark"}), 4.0)
    assert [e[0].value for e in events] == ["move"]
    assert [m["move"] for m in store.game(session.game_id)["moves"]] == ["e5,f6", "h8,h9"]


def test_end_game_gives_the_score_and_the_winner(store: Store) -> None:
    session = LiveSession(store)
    sub = session.bus.subscribe()
    tiles = {"a1": "light", "a2": "light"}
    still(session, BoardView.of(tiles), 0.0)
    tiles.update(j9="dark", j10="dark")
    still(session, BoardView.of(tiles), 1.0)
    tiles.update(a3="light", a4="light")
    still(session, BoardView.of(tiles), 2.0)
    session.control("end_game", {})
    ends = []
    while (event := sub.get(timeout=0)) is not None:
        if event.type.value == "end":
            ends.append(event.to_dict())
    assert len(ends) == 1
    assert ends[0]["score"]["light"]["points"] == 1 and ends[0]["winner"] == "light"
    assert session.state()["game"]["status"] == "over"
    with pytest.raises(ControlError):
        session.control("pass", {})
    assert session.state()["game"]["result"] == "light"
    assert session.state()["outcome"] == {"termination": "ended", "result": "light",
                                          "winner": "light"}
    record = read_record(session.export(session.game_id, "pdd").splitlines())
    assert record.tags["Result"] == "light" and record.tags["Score"] == "1-0"
    assert record.tags["Termination"] == "ended"
    data = json.loads(session.export(session.game_id, "json"))
    assert data["result"] == "light" and data["winner"] == "light"
    assert data["score"]["light"]["groups"][0]["islands"] == [["a1", "a2", "a3", "a4"]]
    assert store.games()[0]["result"] == "light"


def test_the_result_of_an_ended_game_survives_a_restart(store: Store, tmp_path: Path) -> None:
    session = LiveSession(store)
    tiles = {"a1": "light", "a2": "light"}
    still(session, BoardView.of(tiles), 0.0)
    tiles.update(j1="dark", j2="dark")
    still(session, BoardView.of(tiles), 1.0)
    session.control("end_game", {})  # equal in points, islands and bridges: a draw
    assert session.state()["game"]["result"] == "draw"
    store.close()
    again = LiveSession(Store(tmp_path / "data"))
    assert again.game_id != session.game_id  # the ended game is not resumed
    assert again.game(session.game_id)["result"] == "draw"
    assert again.store.table(session.game_id).result() == "draw"


def test_restart_resumes_the_same_game_from_the_database(store: Store, tmp_path: Path) -> None:
    session = LiveSession(store)
    still(session, B1, 0.0)
    still(session, BoardView.of({**B1.tiles, "j1": "light"}), 1.0)  # wrong colour: flagged
    game_id = session.game_id
    before = session.state()
    store.close()
    again = LiveSession(Store(tmp_path / "data"))
    assert again.game_id == game_id and again.resumed
    notice = again.bus.subscribe(last_event_id=0).get(timeout=0)
    assert notice is not None and notice.data["kind"] == "resumed"
    after = again.state()
    for key in ("board", "moves", "flags", "turn", "score"):
        assert after[key] == before[key]
    events = still(again, B2, 5.0)  # j1 taken away, dark moved
    assert [e[0].value for e in events] == ["corrected", "move"]


def test_new_game_finishes_the_old_one_and_exports_both(store: Store) -> None:
    session = LiveSession(store)
    still(session, B1, 0.0)
    first = session.game_id
    session.control("new_game", {"light": "Ann", "dark": "Bob"})
    assert session.game_id != first and session.state()["game"]["light"] == "Ann"
    listed = session.games()
    assert [g["id"] for g in listed] == [session.game_id, first]
    assert listed[1]["status"] == "ended" and listed[1]["moves"] == 1
    record = read_record(session.export(first, "pdd").splitlines())
    assert [str(m) for m in record.moves] == ["e5,f6"] and record.tags["Result"] == "*"
    data = json.loads(session.export(first, "json"))
    assert data["moves"][0]["move"] == "e5,f6"
    with pytest.raises(ControlError) as err:
        session.export(first, "pgn")
    assert err.value.status == 400
    with pytest.raises(ControlError) as err:
        session.game(999)
    assert err.value.status == 404


def test_controls_from_other_threads_while_frames_arrive(store: Store) -> None:
    session = LiveSession(store)
    errors: list[Exception] = []

    def poke() -> None:
        for _ in range(50):
            try:
                session.state()
                session.control("override", {"cell": "a1", "value": "empty"})
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)

    worker = threading.Thread(target=poke)
    worker.start()
    still(session, B1, 0.0, seconds=2.0)
    worker.join()
    assert errors == []
    assert [m["move"] for m in session.state()["moves"]] == ["e5,f6"]


def test_the_calibration_page_reads_and_moves_the_corners(store: Store, tmp_path: Path) -> None:
    from contracts.calibration import load_calibration
    from ponte.commands.demo import DEMO_VIDEO
    from ponte.live.camera import CameraReader
    from ponte.live.sources import open_source

    session = LiveSession(store)
    with pytest.raises(ControlError):
        session.calibration()
    camera = CameraReader()
    saved = tmp_path / "calibration.json"
    session.attach_camera(camera, saved)
    source = open_source(str(DEMO_VIDEO))
    frame = source.read()
    source.close()
    assert frame is not None
    camera.read(frame.image, frame.t)  # the real pipeline finds the empty board ...
    assert not camera.calibrated
    camera.read(frame.image, frame.t)  # ... in the same place again: calibrated
    assert camera.calibrated
    view = session.calibration()
    assert view["image_size"] == [640, 360] and len(view["corners"]) == 4
    assert len(view["readings"]) == 100
    moved = [[x + 2, y] for x, y in view["corners"]]
    answer = session.set_calibration({"corners": moved, "a1": 1})
    assert answer["corners"][0] == pytest.approx(moved[1], abs=0.5)
    assert load_calibration(saved).corners[0] == pytest.approx(tuple(moved[1]), abs=0.5)
    with pytest.raises(ControlError) as err:
        session.set_calibration({"corners": [[0, 0]], "a1": 0})
    assert err.value.status == 400


def test_event_ids_are_the_bus_numbers_not_flag_ids(store: Store) -> None:
    session = LiveSession(store)
    sub = session.bus.subscribe()
    still(session, BoardView.of({"e5": "dark", "f6": "dark"}), 0.0)  # wrong colour: 1 flag
    still(session, BoardView.of({"e5": "dark", "f6": "dark", "a1": "dark"}), 1.0)  # 3 pieces
    events = []
    while (event := sub.get(timeout=0)) is not None:
        events.append(event)
    illegal = [e for e in events if e.type.value == "illegal"]
    assert [e.to_dict()["flag"] for e in illegal] == [1, 2]
    assert all(e.to_dict()["id"] == e.id for e in events)


def test_a_glare_spot_flickering_on_one_cell_does_not_hold_up_the_game(store: Store) -> None:
    session = LiveSession(store)
    glare = {"h8": "light"}  # every other frame the camera sees a light tile on h8
    events = []
    for k in range(90):
        view = BoardView.of({**B1.tiles, **glare}) if k % 2 else B1
        events += session.feed(Reading(k / 30, view))
    hands(session, 3.0)
    for k in range(90):
        view = BoardView.of({**B2.tiles, **glare}) if k % 2 else B2
        events += session.feed(Reading(4.0 + k / 30, view))
    assert [e[0].value for e in events] == ["move", "move"]
    assert [m["move"] for m in store.game(session.game_id)["moves"]] == ["e5,f6", "c3,c4"]
    assert events[1][1]["t"] <= 4.5 and session.state()["flags"] == []


def test_a_game_that_ends_by_passing_on_the_board_is_recorded_with_its_result(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    from lab.scenes import boards_of_moves
    from ponte.cli import main
    from referee.playout import heuristic_game

    game = heuristic_game(8)  # light cannot place two and passes; dark's last turn ends it
    moves = [str(m.move) for m in game.moves]
    outcome = game.outcome()
    assert outcome is not None and moves[-2] == "pass"
    session = LiveSession(store)
    boards = boards_of_moves(moves)
    for k, view in enumerate(boards):
        still(session, view, 2.0 * k)  # the pass leaves the board as it was: nothing new
    state = session.state()
    assert [m["move"] for m in state["moves"]] == moves
    assert state["game"]["status"] == "over" and state["game"]["result"] == outcome.result
    record = read_record(session.export(session.game_id, "pdd").splitlines())
    assert record.tags["Result"] == outcome.result and record.tags["Termination"] == "passed"
    assert record.tags["Score"] == f"{outcome.score.light.points}-{outcome.score.dark.points}"
    assert main(["games", "--data", str(store.data_dir)]) == 0
    assert f"over  result {outcome.result}" in capsys.readouterr().out


def test_the_camera_expects_an_empty_board_until_something_is_on_it(store: Store) -> None:
    from ponte.live.camera import CameraReader

    session = LiveSession(store)
    camera = CameraReader()
    assert not camera.expect_empty()  # on its own it cannot know
    session.attach_camera(camera)
    assert camera.expect_empty()  # a new game
    still(session, BoardView.of({"e5": "dark"}), 0.0)  # a wrong tile: flagged
    assert not session.state()["moves"] and not camera.expect_empty()
    session.control("new_game", {})
    assert camera.expect_empty()
    still(session, B1, 10.0)  # a move
    assert session.state()["moves"] and not camera.expect_empty()


def test_the_camera_status_says_frames_stopped_and_claims_no_rate(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ponte.live.session as session_module

    session = LiveSession(store)
    still(session, B1, 0.0)
    camera = session.state()["camera"]
    assert camera["status"] == "ok" and camera["fps"] == 30.0
    monkeypatch.setattr(session_module, "STALE_S", 0.0)
    camera = session.state()["camera"]
    assert camera["status"] == "no-frames" and camera["fps"] is None
    assert camera["message"].startswith("no frames for ")


def test_the_camera_status_says_the_video_ended(store: Store, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import cv2
    import numpy as np

    import ponte.live.session as session_module
    from ponte.live.camera import CameraReader
    from ponte.live.loop import run_live
    from ponte.live.sources import open_source

    video = tmp_path / "short.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (160, 120))
    for _ in range(5):
        writer.write(np.full((120, 160, 3), 128, np.uint8))
    writer.release()
    session = LiveSession(store)
    source = open_source(str(video))
    stats = run_live(source, CameraReader(), session)
    source.close()
    assert stats.frames == 5
    camera = session.state()["camera"]
    assert camera["status"] == "ended" and camera["fps"] is None
    assert camera["message"] == f"{video} has ended"
    monkeypatch.setattr(session_module, "STALE_S", 0.0)
    assert session.state()["camera"]["message"].startswith(f"{video} has ended; no frames for ")


def test_the_state_is_built_once_per_change_not_per_reader(store: Store) -> None:
    session = LiveSession(store)
    built = []
    table_state = session.table.state

    def counted() -> dict:
        built.append(1)
        return table_state()

    session.table.state = counted  # type: ignore[method-assign]
    for _ in range(20):
        assert session.state()["turn"] == "light"
    assert len(built) == 1
    still(session, B1, 0.0)
    for _ in range(20):
        assert session.state()["board"]["tiles"] == {"e5": "light", "f6": "light"}
    assert len(built) == 2


def test_a_reader_does_not_wait_for_the_frame_loop(store: Store) -> None:
    busy, done = threading.Event(), threading.Event()

    class SlowBus(EventBus):
        """Watchers slow to take the camera's news, which the frame loop tells them holding
        its lock (as it might be busy judging a board)."""

        def publish(self, type: EventType, data: Mapping[str, Any] | None = None) -> Event:
            if type is EventType.CAMERA:
                busy.set()
                done.wait(5)
            return super().publish(type, data)

    session = LiveSession(store, bus=SlowBus())
    session.state()
    loop = threading.Thread(target=session.feed, args=(Reading(0.0, B1),))
    loop.start()
    try:
        assert busy.wait(5)
        answered: list[dict] = []
        reader = threading.Thread(target=lambda: answered.append(session.state()))
        reader.start()
        reader.join(1.0)
        assert answered and answered[0]["game"]["id"] == session.game_id
        assert answered[0]["camera"]["status"] == "ok"  # made per call: as the frame left it
    finally:
        done.set()
        loop.join()


def test_a_watcher_that_asks_on_an_event_sees_what_the_event_says(store: Store) -> None:
    session = LiveSession(store)
    session.state()
    sub = session.bus.subscribe()
    seen: list[tuple[int, int]] = []

    def watch() -> None:
        while (event := sub.get(timeout=5)) is not None:
            if event.type.value == "move":
                seen.append((int(event.data["ply"]), len(session.state()["moves"])))

    watcher = threading.Thread(target=watch)
    watcher.start()
    still(session, B1, 0.0)
    session.control("swap", {})
    still(session, B2, 1.0)
    sub.close()
    watcher.join(5)
    assert [ply for ply, _ in seen] == [1, 2, 3]
    assert all(moves >= ply for ply, moves in seen)


def test_the_camera_picture_is_served_while_the_frame_loop_is_busy(store: Store) -> None:
    session = LiveSession(store)
    session.set_camera_picture(b"\xff\xd8 picture")
    busy, done = threading.Event(), threading.Event()

    def slow_snapshot() -> bytes:  # made while the frame loop holds its lock for a move
        busy.set()
        done.wait(5)
        return b"\xff\xd8jpeg"

    loop = threading.Thread(target=still, args=(session, B1, 0.0),
                            kwargs={"snapshot": slow_snapshot})
    loop.start()
    try:
        assert busy.wait(5)
        got: list[bytes | None] = []
        viewer = threading.Thread(target=lambda: got.append(session.camera_jpeg()))
        viewer.start()
        viewer.join(1.0)
        assert got == [b"\xff\xd8 picture"]
    finally:
        done.set()
        loop.join()
