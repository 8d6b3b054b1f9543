"""End to end: rendered game videos -> cv2.VideoCapture -> reader -> settle -> referee -> record.

The frames are drawn by the synthetic scene renderer and stored as real video files. The
reader is the real vision pipeline where it reads these videos (the tests parametrized
with READERS run with it and with the ground truth); the others use only
`tests.live_scenes.GroundTruthReader`, a stand-in that answers with the renderer's ground
truth. Everything after the reader is the real live loop.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import cv2
import pytest

from contracts.live import EventType
from ponte.live.camera import CameraReader
from ponte.live.loop import run_live, transcribe
from ponte.live.session import LiveSession
from ponte.live.settle import BoardView
from ponte.live.sources import RetryingSource, SourceError, open_source
from ponte.live.store import Store
from referee.playout import heuristic_game
from tests.live_scenes import (
    Beat,
    GroundTruthReader,
    MjpegCamera,
    boards_of_moves,
    render_script,
    synth_video,
    write_video,
)

pytestmark = pytest.mark.slow


def board_moves(seed: int) -> list[str]:
    """A plausible game's moves on the board, up to its first pass (passes are not seen)."""
    out = []
    for played in heuristic_game(seed).moves:
        text = str(played.move)
        if text == "pass":
            break
        if text != "swap":
            out.append(text)
    return out


def make_video(
    tmp_path: Path, beats: list[Beat], name: str = "game.avi"
) -> tuple[Path, GroundTruthReader]:
    path = tmp_path / name
    truths = write_video(path, render_script(beats))
    return path, GroundTruthReader(path, truths)


Events = list[tuple[EventType, dict]]


READERS = ["vision", "ground-truth"]
"""The reader of an end-to-end test: the real vision pipeline (`CameraReader`, calibrating
itself on the empty board at the start of the video) or the renderer's ground truth."""


def reader_for(kind: str, truth: GroundTruthReader) -> CameraReader | GroundTruthReader:
    return CameraReader() if kind == "vision" else truth


def run(path: Path, reader: CameraReader | GroundTruthReader) -> tuple[list[str], Events, str]:
    source = open_source(str(path))
    try:
        result = transcribe(source, reader)
    finally:
        source.close()
    moves = [str(m.move) for m in result.table.game.moves]
    return moves, result.events, result.table.result()


@pytest.mark.parametrize("reader_kind", READERS)
def test_a_whole_game_is_transcribed_exactly(tmp_path: Path, reader_kind: str) -> None:
    moves = board_moves(1)
    assert len(moves) > 30 and any("-" in m for m in moves)  # bridges among them
    path = tmp_path / "game.mp4"
    truth = synth_video(path, boards_of_moves(moves))  # the synth helper's game video
    seen, events, _ = run(path, reader_for(reader_kind, truth))
    assert seen == moves
    assert not [e for e in events if e[0] in (EventType.ILLEGAL, EventType.VOID)]
    times = [data["t"] for kind, data in events if kind is EventType.MOVE]
    assert times == sorted(times) and times[0] > 0


@pytest.mark.parametrize("reader_kind", READERS)
def test_hands_over_the_board_for_many_frames_create_nothing(
    tmp_path: Path, reader_kind: str
) -> None:
    boards = boards_of_moves(["e5,f6", "c3,c4"])
    beats = [Beat(boards[0]), Beat(boards[1]),
             Beat(boards[1], hand_frames=80, still_frames=6),  # hands linger, nothing placed
             Beat(boards[2])]
    path, reader = make_video(tmp_path, beats)
    seen, events, _ = run(path, reader_for(reader_kind, reader))
    assert seen == ["e5,f6", "c3,c4"]
    assert [k.value for k, _ in events] == ["move", "move"]


@pytest.mark.parametrize("reader_kind", READERS)
def test_a_single_tile_and_a_long_pause_waits_for_the_second(
    tmp_path: Path, reader_kind: str
) -> None:
    one = BoardView.of({"e5": "light"})
    two = BoardView.of({"e5": "light", "g7": "light"})
    beats = [Beat(BoardView()), Beat(one, still_frames=60), Beat(two)]
    path, reader = make_video(tmp_path, beats)
    seen, events, _ = run(path, reader_for(reader_kind, reader))
    assert [k.value for k, _ in events] == ["notice", "move"]
    assert events[0][1]["cells"] == ["e5"] and seen == ["e5,g7"]


OPENING = ["a1,a2", "j9,j10", "a3,b3", "h2,h3"]


@pytest.mark.parametrize("reader_kind", READERS)
def test_a_cell_flickering_for_ten_seconds_does_not_stop_a_move_settling(
    tmp_path: Path, reader_kind: str
) -> None:
    boards = boards_of_moves(["e5,f6", "c3,c4"])

    def flicker(view: BoardView, frames: int) -> list[Beat]:
        glare = BoardView({**view.tiles, "h8": "light"}, view.bridges)  # on every other frame
        return [Beat(glare if k % 2 else view, hand_frames=0, still_frames=1)
                for k in range(frames)]

    beats = [Beat(boards[0]), Beat(boards[1]), *flicker(boards[1], 40),
             Beat(boards[2], still_frames=0), *flicker(boards[2], 60)]  # 10 s at 10 fps
    path, reader = make_video(tmp_path, beats)
    seen, events, _ = run(path, reader_for(reader_kind, reader))
    assert seen == ["e5,f6", "c3,c4"]
    assert [k.value for k, _ in events] == ["move", "move"]  # no lone tile, no flag on h8
    flicker_ends = (8 + 14 + 40 + 6 + 60) / 10
    assert events[1][1]["t"] < flicker_ends - 4  # settled during the flicker, not after


@pytest.mark.parametrize("reader_kind", READERS)
def test_a_corrected_illegal_move(tmp_path: Path, reader_kind: str) -> None:
    boards = boards_of_moves(OPENING)
    bad = BoardView({**boards[-1].tiles, "b4": "light", "e6": "light"}, boards[-1].bridges)
    fixed = BoardView({**boards[-1].tiles, "e8": "light", "f2": "light"}, boards[-1].bridges)
    beats = [Beat(b) for b in boards] + [Beat(bad), Beat(fixed)]
    path, reader = make_video(tmp_path, beats)
    seen, events, result = run(path, reader_for(reader_kind, reader))
    kinds = [k.value for k, _ in events]
    assert kinds == ["move"] * 4 + ["illegal", "corrected", "move"]
    illegal = events[4][1]
    assert illegal["reason"] == "group_too_large" and "b4" in illegal["cells"]
    assert seen == OPENING + ["e8,f2"] and result == "*"


@pytest.mark.parametrize("reader_kind", READERS)
def test_an_uncorrected_illegal_move_voids_the_game_after_two_rounds(
    tmp_path: Path, reader_kind: str
) -> None:
    moves = OPENING + ["b4,e6", "c8,c9", "e8,f2", "g6,g7", "h9,i5", "e3,e4"]
    boards = boards_of_moves(moves)
    path, reader = make_video(tmp_path, [Beat(b) for b in boards])
    seen, events, result = run(path, reader_for(reader_kind, reader))
    kinds = [k.value for k, _ in events]
    assert kinds.count("illegal") == 1 and kinds[-2:] == ["void", "end"]
    assert result == "void"
    assert seen == moves  # the record keeps the flagged move as played


@pytest.mark.parametrize("reader_kind", READERS)
def test_a_camera_bump_mid_game(tmp_path: Path, reader_kind: str) -> None:
    moves = OPENING + ["e8,f2", "c8,c9"]
    path = tmp_path / "bumped.mp4"
    truth = synth_video(path, boards_of_moves(moves), bump_at=7.0)
    assert any(t.board.tiles for t in truth.by_pixels.values())
    reader = reader_for(reader_kind, truth)
    seen, events, _ = run(path, reader)
    if isinstance(reader, CameraReader):
        assert reader.bumps >= 1  # the pipeline noticed the camera move and re-located
    assert seen == moves and all(k is EventType.MOVE for k, _ in events)


def test_the_camera_source_failing_and_coming_back(tmp_path: Path) -> None:
    boards = boards_of_moves(OPENING)
    first, reader = make_video(tmp_path, [Beat(b) for b in boards[:3]], "first.avi")
    second, reader2 = make_video(tmp_path, [Beat(b) for b in boards[2:]], "second.avi")
    reader.merge(reader2)
    feed = tmp_path / "camera.avi"  # the "camera": a stream that ends, vanishes, comes back
    first.rename(feed)
    session = LiveSession(Store(tmp_path / "data"), settle_window=0.3)
    sub = session.bus.subscribe()
    seen: dict[str, list[str]] = {"statuses": [], "moves_when_lost": []}
    opened = {"count": 0, "sleeps": 0}

    def opener() -> object:
        if not feed.exists():
            raise SourceError("camera unplugged")
        opened["count"] += 1
        return open_source(str(feed))

    def listener(status: str, message: str) -> None:
        seen["statuses"].append(status)
        session.set_camera_status(status, message)
        if status == "no-signal" and opened["count"] == 1 and feed.exists():
            seen["moves_when_lost"] = [m["move"] for m in session.state()["moves"]]
            feed.unlink()

    def sleep(_seconds: float) -> None:
        opened["sleeps"] += 1
        if opened["sleeps"] == 3:
            second.rename(feed)

    def should_stop() -> bool:
        return opened["count"] >= 2 and seen["statuses"].count("no-signal") >= 2

    source = RetryingSource(opener, listener=listener, sleep=sleep, should_stop=should_stop)
    run_live(source, reader, session, duration=60)  # type: ignore[arg-type]
    assert seen["statuses"][:3] == ["no-signal", "ok", "no-signal"]
    assert seen["moves_when_lost"] == OPENING[:2]
    assert [m["move"] for m in session.state()["moves"]] == OPENING
    assert session.state()["flags"] == []
    cameras = []
    while (event := sub.get(timeout=0)) is not None:
        if event.type is EventType.CAMERA:
            cameras.append(event.data["status"])
    assert "no-signal" in cameras and cameras.index("no-signal") < len(cameras) - 1


@pytest.mark.parametrize("reader_kind", READERS)
def test_kill_9_and_resume_loses_nothing(tmp_path: Path, reader_kind: str) -> None:
    import json
    import signal
    import subprocess
    import sys

    from tests.live_scenes import truths_to_json

    moves = OPENING + ["e8,f2", "c8,c9", "f9,g4", "d1,d2"]
    boards = boards_of_moves(moves)
    data = tmp_path / "data"
    root = Path(__file__).resolve().parents[1]

    def worker(name: str, beats: list[Beat]) -> subprocess.Popen[str]:
        path = tmp_path / f"{name}.avi"
        truths = write_video(path, render_script(beats))
        truth_file = tmp_path / f"{name}.json"
        truth_file.write_text(json.dumps(truths_to_json(truths)))
        truth_arg = "vision" if reader_kind == "vision" else str(truth_file)
        return subprocess.Popen(
            [sys.executable, "-m", "tests.live_worker", str(path), truth_arg, str(data)],
            cwd=root, stdout=subprocess.PIPE, text=True,
        )

    beat = {"hand_frames": 3, "still_frames": 6}
    first = worker("first", [Beat(b, **beat) for b in boards])
    assert first.stdout is not None
    assert first.stdout.readline().startswith("game 1 resumed=False")
    for _ in range(3):
        assert first.stdout.readline().startswith("move")
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    first.stdout.close()
    assert first.returncode == -signal.SIGKILL
    store = Store(data)
    done = [m["move"] for m in store.game(1)["moves"]]
    assert len(done) >= 3 and done == moves[: len(done)]
    assert len(done) < len(moves), "killed too late to test anything"
    store.close()
    second = worker("second", [Beat(b, **beat) for b in boards[len(done):]])
    out, _ = second.communicate(timeout=60)
    assert second.returncode == 0
    assert out.startswith("game 1 resumed=True")
    store = Store(data)
    game = store.game(1)
    assert [m["move"] for m in game["moves"]] == moves
    assert not [e for e in game["events"] if e["type"] in ("illegal", "void")]
    assert [g["id"] for g in store.games()] == [1]
    store.close()


@pytest.mark.parametrize("reader_kind", READERS)
def test_a_network_camera_that_drops_out_and_comes_back(tmp_path: Path, reader_kind: str) -> None:
    boards = boards_of_moves(OPENING)
    # The stream opens on 4 s of the empty board: the vision reader calibrates itself then
    # (a few tries of 0.25-0.5 s each), and a live source's frames are timed as they are
    # read, so frames that queued up meanwhile would pass in a burst, shorter than the
    # settle window, if a move were among them.
    parts = [[Beat(boards[0], hand_frames=3, still_frames=40)]
             + [Beat(b, hand_frames=3, still_frames=10) for b in boards[1:3]],
             [Beat(b, hand_frames=3, still_frames=10) for b in boards[2:]]]
    jpegs: list[list[bytes]] = []
    reader: GroundTruthReader | None = None
    for k, beats in enumerate(parts):
        frames = list(render_script(beats))
        jpegs.append([cv2.imencode(".jpg", image)[1].tobytes() for image, _ in frames])
        path = tmp_path / f"part{k}.avi"
        part_reader = GroundTruthReader(path, write_video(path, frames))
        if reader is None:
            reader = part_reader
        else:
            reader.merge(part_reader)
    assert reader is not None
    camera = MjpegCamera(0, jpegs[0], fps=10)
    url = f"http://127.0.0.1:{camera.port}/video.mjpg"
    session = LiveSession(Store(tmp_path / "data"), settle_window=0.3)
    statuses: list[str] = []
    back = threading.Event()

    def listener(status: str, message: str) -> None:
        statuses.append(status)
        session.set_camera_status(status, message)
        if status == "no-signal" and len(statuses) == 1:
            assert [m["move"] for m in session.state()["moves"]] == OPENING[:2]
            back.set()

    def restart() -> None:
        back.wait(30)
        camera.close()
        time.sleep(0.5)  # the camera is away: reconnecting fails for a while
        camera.__init__(camera.port, jpegs[1], fps=10)  # type: ignore[misc]

    helper = threading.Thread(target=restart)
    helper.start()
    source = RetryingSource(lambda: open_source(url), listener=listener, first_delay=0.1,
                            max_delay=0.4, should_stop=lambda: statuses.count("no-signal") >= 2)
    run_live(source, reader_for(reader_kind, reader), session, duration=60)  # type: ignore[arg-type]
    helper.join(10)
    camera.close()
    assert statuses[:3] == ["no-signal", "ok", "no-signal"]
    assert [m["move"] for m in session.state()["moves"]] == OPENING
    assert session.state()["flags"] == []


def test_the_bundled_demo_video_holds_the_game_it_claims(tmp_path: Path) -> None:
    from lab.scenes import demo_moves, write_demo_video
    from ponte.commands.demo import DEMO_VIDEO

    truths = write_demo_video(tmp_path / "again.mp4")  # rendered afresh: same frames, truth
    seen, events, _ = run(DEMO_VIDEO, GroundTruthReader(DEMO_VIDEO, truths))
    moves, _, illegal = demo_moves()
    assert seen == moves
    assert [d.get("move") for k, d in events if k is not EventType.MOVE] == [illegal, illegal]
