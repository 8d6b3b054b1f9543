"""End to end: rendered game videos -> cv2.VideoCapture -> reader -> settle -> referee -> record.

The frames are drawn by the synthetic scene renderer and stored as real video files. The
reader is the real vision pipeline where it reads these videos (the tests parametrized
with READERS run with it and with the ground truth); the others use only
`tests.live_scenes.GroundTruthReader`, a stand-in that answers with the renderer's ground
truth. Everything after the reader is the real live loop.
"""

from __future__ import annotations

import threading
from pathlib import Path

import cv2
import pytest

from contracts.live import EventType
from ponte.live.camera import CameraReader
from ponte.live.loop import run_live, transcribe
from ponte.live.session import LiveSession
from ponte.live.settle import BoardView
from ponte.live.sources import (
    FrameSource,
    NewestFrame,
    RetryingSource,
    SourceError,
    open_source,
)
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
from tests.waiting import wait_until

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
    # (a few tries of 0.25-0.5 s each), and the frames that come meanwhile go by unread,
    # as in `ponte watch`: the loop reads the stream's newest frame (`NewestFrame`).
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

    tries: list[None] = []  # each time the source opens the stream, or tries to

    def opener() -> FrameSource:
        tries.append(None)
        return NewestFrame(open_source(url))

    def restart() -> None:
        back.wait(30)
        camera.close()
        away = len(tries)
        wait_until(lambda: len(tries) >= away + 2, 10)  # the camera is away: two tries fail
        camera.__init__(camera.port, jpegs[1], fps=10)  # type: ignore[misc]

    helper = threading.Thread(target=restart)
    helper.start()
    source = RetryingSource(opener, listener=listener, first_delay=0.1,
                            max_delay=0.4, should_stop=lambda: statuses.count("no-signal") >= 2)
    run_live(source, reader_for(reader_kind, reader), session, duration=60)  # type: ignore[arg-type]
    helper.join(10)
    camera.close()
    assert statuses[:3] == ["no-signal", "ok", "no-signal"]
    assert [m["move"] for m in session.state()["moves"]] == OPENING
    assert session.state()["flags"] == []


def test_the_bundled_demo_video_holds_the_game_it_claims(tmp_path: Path) -> None:
    from lab.scenes import demo_game, write_demo_video
    from ponte.commands.demo import DEMO_VIDEO

    truths = write_demo_video(tmp_path / "again.mp4")  # rendered afresh: same frames, truth
    seen, events, result = run(DEMO_VIDEO, GroundTruthReader(DEMO_VIDEO, truths))
    moves, _, illegal = demo_game()
    assert seen == moves and result != "*"
    flags = (EventType.ILLEGAL, EventType.CORRECTED)
    assert [d.get("move") for k, d in events if k in flags] == [illegal, illegal]


# ----------------------------------------------------------------- camera misses

QUICK = ["a1,a2", "j9,j10", "c2,e5", "h2,h3", "a2-c2", "c7,c8", "e7,f9", "h6,h8"]
"""A short legal game with light's bridge a2-c2 as its fifth move."""


class Misreading:
    """A reader (the vision pipeline or the ground truth) with mistakes laid over it:
    `edit(board)` is what it returns for a frame it read as `board` (called for every
    frame, in order)."""

    def __init__(self, reader, edit) -> None:  # type: ignore[no-untyped-def]
        self.reader = reader
        self.edit = edit

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.reader, name)  # calibrated, bumps, last_observation

    def __setattr__(self, name: str, value: object) -> None:
        if name == "expect_empty":
            setattr(self.reader, name, value)  # the loop tells the camera when to calibrate
        else:
            super().__setattr__(name, value)

    def read(self, image, t: float):  # type: ignore[no-untyped-def]
        import dataclasses

        reading = self.reader.read(image, t)
        return dataclasses.replace(reading, board=self.edit(reading.board))


def dropping(piece: str, since: BoardView, until: BoardView):  # type: ignore[no-untyped-def]
    """An edit that leaves `piece` ("e5" or "a2-c2") out of every reading until a frame
    shows a tile of `until` that `since` (the board before that turn) did not have."""
    state = {"dropping": True}

    def pieces(board: BoardView) -> set[str]:
        return set(board.tiles) | {f"{a}-{b}" for a, b in board.bridges}

    later = pieces(until) - pieces(since)

    def edit(board: BoardView) -> BoardView:
        if state["dropping"] and later & pieces(board):
            state["dropping"] = False
        if not state["dropping"]:
            return board
        if "-" in piece:
            a, b = piece.split("-")
            return BoardView(board.tiles, board.bridges - {(a, b)})
        return BoardView({c: v for c, v in board.tiles.items() if c != piece}, board.bridges)

    return edit


def run_misread(tmp_path: Path, beats: list[Beat], edit=None,  # type: ignore[no-untyped-def]
                reader_kind: str = "ground-truth"):
    path, truth = make_video(tmp_path, beats)
    reader = reader_for(reader_kind, truth)
    return run(path, reader if edit is None else Misreading(reader, edit))  # type: ignore[arg-type]


def counts(events: Events) -> tuple[int, int]:
    """Flags raised and catch-up notices raised."""
    return (sum(1 for k, _ in events if k is EventType.ILLEGAL),
            sum(1 for k, d in events if k is EventType.NOTICE and d.get("kind") == "catch_up"))


@pytest.mark.parametrize("reader_kind", READERS)
def test_fast_play_the_next_hand_03_s_after_the_last_leaves(
    tmp_path: Path, reader_kind: str
) -> None:
    boards = boards_of_moves(QUICK)
    beats = [Beat(boards[0], hand_frames=0, still_frames=40 if reader_kind == "vision" else 8)]
    for k, view in enumerate(boards[1:]):  # each dark reply comes 0.3 s after light's hand
        beats.append(Beat(view, hand_frames=6, still_frames=3 if k % 2 == 0 else 10))
    path, truth = make_video(tmp_path, beats)
    seen, events, result = run(path, reader_for(reader_kind, truth))
    assert seen == QUICK and result == "*"
    assert counts(events) == (0, 0)
    committed = [d["t"] for k, d in events if k is EventType.MOVE]
    assert [committed[k] == committed[k + 1] for k in range(0, len(QUICK), 2)] == [True] * 4


@pytest.mark.parametrize("reader_kind", READERS)
@pytest.mark.parametrize("turns_late", [1, 2])
def test_a_bridge_the_reader_drops_until_a_later_turn(
    tmp_path: Path, turns_late: int, reader_kind: str
) -> None:
    boards = boards_of_moves(QUICK)  # boards[5]: the bridge a2-c2 is down
    edit = dropping("a2-c2", boards[4 + turns_late], boards[5 + turns_late])
    seen, events, result = run_misread(tmp_path, [Beat(b) for b in boards], edit, reader_kind)
    assert seen == QUICK and result == "*"
    # Until the next turn: read with it, no flag. Until the one after: dark's tiles on
    # light's turn are flagged once, and the flag goes down when the bridge is read.
    flags, notices = counts(events)
    assert (flags, notices) == (turns_late - 1, 0)
    assert [k.value for k, _ in events].count("corrected") == flags


@pytest.mark.parametrize("reader_kind", READERS)
@pytest.mark.parametrize("turns_late", [1, 2])
def test_a_tile_read_late(tmp_path: Path, turns_late: int, reader_kind: str) -> None:
    boards = boards_of_moves(QUICK)  # boards[3]: light's c2,e5
    edit = dropping("e5", boards[2 + turns_late], boards[3 + turns_late])
    seen, events, result = run_misread(tmp_path, [Beat(b) for b in boards], edit, reader_kind)
    assert seen == QUICK and result == "*"
    flags, notices = counts(events)
    assert (flags, notices) == (turns_late - 1, 0)
    waiting = [d for k, d in events if k is EventType.NOTICE and d.get("kind") == "one_tile"]
    assert waiting and waiting[0]["cells"] == ["c2"]


@pytest.mark.parametrize("frames", [1, 3, 12])
def test_a_spurious_tile_for_some_frames(tmp_path: Path, frames: int) -> None:
    boards = boards_of_moves(QUICK)
    glare = BoardView({**boards[4].tiles, "f2": "dark"}, boards[4].bridges)  # light's turn
    beats = [Beat(b) for b in boards[:5]]
    beats += [Beat(glare, hand_frames=0, still_frames=frames), Beat(boards[4], hand_frames=0)]
    beats += [Beat(b) for b in boards[5:]]
    seen, events, result = run_misread(tmp_path, beats)
    assert seen == QUICK and result == "*"
    # A few frames never settle; long enough to settle, it is flagged once until it goes.
    assert counts(events) == ((0, 0) if frames < 4 else (1, 0))
    assert [k.value for k, _ in events].count("corrected") == counts(events)[0]


@pytest.mark.parametrize("reader_kind", READERS)
def test_two_turns_while_an_arm_covers_the_board(tmp_path: Path, reader_kind: str) -> None:
    boards = boards_of_moves(QUICK)
    beats = [Beat(b) for b in boards[:5]]
    beats += [Beat(boards[5], hand_frames=8, still_frames=0),  # the arm stays over the board
              Beat(boards[6], hand_frames=8), Beat(boards[7]), Beat(boards[8])]
    path, truth = make_video(tmp_path, beats)
    seen, events, result = run(path, reader_for(reader_kind, truth))
    assert seen == QUICK and result == "*"
    assert counts(events) == (0, 0)
    committed = [d["t"] for k, d in events if k is EventType.MOVE]
    assert committed[4] == committed[5]  # the bridge and dark's tiles from one settled board
