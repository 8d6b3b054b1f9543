"""The fault suite: each trial makes a real fault happen (two processes on one data folder,
a disk that fills, a stream that changes size, a damaged video, malformed calibrations,
bad command lines, a noisy LED line) and checks that nothing crashes, no move is lost or
recorded twice, the message says what to do, and reading goes on once the fault ends.

Trials that need a tmpfs mount run as root (as the test machine does); where mounting is
not allowed they are skipped and the same fault is injected in the unit trial next to it.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import socket
import sqlite3
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from contracts.calibration import load_calibration, scaled_calibration
from contracts.live import ControlError
from ponte.live.camera import BLIND_S, CameraReader
from ponte.live.leds import led_view
from ponte.live.loop import run_live, transcribe
from ponte.live.session import LiveSession
from ponte.live.settle import BoardView, Reading
from ponte.live.sources import CaptureSource, RetryingSource, SourceError, open_source
from ponte.live.store import Store, StoreWriteError
from tests.live_scenes import Beat, GroundTruthReader, boards_of_moves, render_script, write_video
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_IMAGE = ROOT / "calibration" / "examples" / "empty-board.jpg"
EXAMPLE_CALIBRATION = ROOT / "calibration" / "examples" / "empty-board.json"
B1 = BoardView.of({"e5": "light", "f6": "light"})
B2 = BoardView.of({"e5": "light", "f6": "light", "c3": "dark", "c4": "dark"})
B3 = BoardView.of({"e5": "light", "f6": "light", "c3": "dark", "c4": "dark",
                   "h8": "light", "h9": "light"})


def ponte(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "ponte", *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A small tmpfs at `path`; skips the trial where mounting is not allowed."""
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root); the injected fault trial covers it")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def moves_in(data: Path, game: int = 1) -> list[str]:
    db = sqlite3.connect(f"file:{data / 'ponte.sqlite3'}?mode=ro", uri=True)
    try:
        return [m for (m,) in db.execute(
            "SELECT move FROM moves WHERE game_id=? ORDER BY ply", (game,))]
    finally:
        db.close()


def feed(session: LiveSession, board: BoardView, t: float) -> list[object]:
    return list(session.feed(Reading(t, board), snapshot=lambda: b"\xff\xd8" + bytes(20_000)))


# ----------------------------------------------------------------- one data folder, one owner


def test_a_second_watch_on_a_data_folder_is_told_who_holds_it_and_exits_2(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    first = subprocess.Popen(
        [sys.executable, "-m", "ponte", "watch", "--source", "/dev/ponte-no-such-camera",
         "--no-web", "--data", str(data), "--duration", "20"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        lock = data / "ponte.lock"
        assert wait_until(lambda: lock.is_file() and str(first.pid) in lock.read_text(), 20)
        second = ponte("watch", "--source", "/dev/ponte-no-such-camera", "--no-web",
                       "--data", str(data), "--duration", "1")
        no_traceback(second)
        assert second.returncode == 2
        assert "in use by another ponte watch" in second.stderr
        assert f"pid {first.pid} on {socket.gethostname()}, since " in second.stderr
        listed = ponte("games", "--data", str(data))  # a reader is never locked out
        no_traceback(listed)
        assert listed.returncode == 0 and "1 " in listed.stdout
    finally:
        first.terminate()
        first.communicate(timeout=20)
    Store(data, exclusive=True).close()  # the lock went with its process


def test_ops_two_writers_interleaved_are_left_out_and_the_folder_stays_readable(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    one, two = Store(data), Store(data)  # two processes without the lock, as before it
    a = LiveSession(one, settle_window=0.0)
    b = LiveSession(two, settle_window=0.0)
    assert a.game_id == b.game_id
    feed(a, B1, 1.0)
    feed(b, B1, 1.0)  # b never saw a's move: it pushes the same tiles again
    feed(a, B2, 2.0)
    one.close()
    two.close()
    for fmt in ("pdd", "json"):
        out = ponte("export", "1", "--data", str(data), "--format", fmt)
        no_traceback(out)
        assert out.returncode == 0
        assert "op 2 left out (cannot apply" in out.stderr
    record = json.loads(ponte("export", "1", "--data", str(data), "--format", "json").stdout)
    assert [m["move"] for m in record["moves"]] == ["e5,f6", "c3,c4"]
    assert record["rejected_ops"][0]["index"] == 1
    listed = ponte("games", "--data", str(data))
    no_traceback(listed)
    assert listed.returncode == 0
    said: list[str] = []
    store = Store(data)
    resumed = LiveSession(store, settle_window=0.0, say=said.append)
    assert [str(m.move) for m in resumed.table.game.moves] == ["e5,f6", "c3,c4"]
    assert said and "left out" in said[0]
    feed(resumed, B3, 3.0)  # the game goes on from the record's good part
    store.close()
    assert moves_in(data) == ["e5,f6", "c3,c4", "h8,h9"]


def test_games_and_export_read_an_archive_on_a_read_only_medium(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "archive", "4m") as archive:
        store = Store(archive)
        session = LiveSession(store, settle_window=0.0)
        feed(session, B1, 1.0)
        store.close()
        assert subprocess.run(["mount", "-o", "remount,ro", str(archive)]).returncode == 0
        listed = ponte("games", "--data", str(archive))
        no_traceback(listed)
        assert listed.returncode == 0 and "1 moves" in listed.stdout
        out = ponte("export", "1", "--data", str(archive))
        no_traceback(out)
        assert out.returncode == 0 and "e5,f6" in out.stdout


# ----------------------------------------------------------------- a full disk


def test_a_full_tmpfs_keeps_the_game_going_and_saves_every_move_once_space_is_back(
        tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "1m") as disk:
        data = disk / "data"
        said: list[str] = []
        store = Store(data)
        session = LiveSession(store, settle_window=0.0, say=said.append)
        sub = session.bus.subscribe()
        filler = disk / "filler"
        with filler.open("wb") as handle:  # fill the disk to the last block
            with contextlib.suppress(OSError):
                while True:
                    handle.write(bytes(16384))
                    handle.flush()
        with contextlib.suppress(OSError):
            with filler.open("ab") as handle:
                while True:
                    handle.write(bytes(512))
                    handle.flush()
        boards = [B1, B2, B3]
        for k, board in enumerate(boards):
            feed(session, board, 1.0 + k)
        state = session.state()
        assert state["storage"]["saving"] is False and state["storage"]["unsaved"] >= 1
        assert "NOT being saved" in state["storage"]["message"]
        assert "free some space" in said[0]
        assert [m["move"] for m in state["moves"]] == ["e5,f6", "c3,c4", "h8,h9"]
        filler.unlink()
        t = 10.0
        assert wait_until(lambda: (feed(session, B3, t), session.state())[1]["storage"]["saving"],
                          5, 0.2)
        assert "saving again" in said[-1]
        notices = []
        while (event := sub.get(timeout=0)) is not None:
            if event.type.value == "notice":
                notices.append(event.data["message"])
        assert any("NOT being saved" in n for n in notices)
        store.close()
        assert moves_in(data) == ["e5,f6", "c3,c4", "h8,h9"]
        reopened = Store(data)
        assert [str(m.move) for m in reopened.table(1).game.moves] == ["e5,f6", "c3,c4",
                                                                      "h8,h9"]
        assert not reopened.table(1).rejected  # no op written twice
        reopened.close()


class _FullDisk(Store):
    """A store whose writes fail while `full` is set, as SQLite's do on a full disk."""

    full = False

    def commit_step(self, *args: object, **kwargs: object) -> None:
        if self.full:
            raise StoreWriteError(f"cannot save to {self.path}: database or disk is full")
        super().commit_step(*args, **kwargs)  # type: ignore[arg-type]


def test_a_refused_write_is_kept_retried_and_written_once(tmp_path: Path) -> None:
    store = _FullDisk(tmp_path / "data")
    said: list[str] = []
    session = LiveSession(store, settle_window=0.0, say=said.append)
    store.full = True
    feed(session, B1, 1.0)
    feed(session, B2, 2.0)
    assert session.state()["storage"]["unsaved"] == 2
    with pytest.raises(ControlError, match="cannot start a new game") as refused:
        session.control("new_game", {})
    assert refused.value.status == 507
    store.full = False
    assert session.flush()
    assert session.state()["storage"] == {"saving": True, "unsaved": 0, "message": None}
    assert [m["move"] for m in store.game(session.game_id)["moves"]] == ["e5,f6", "c3,c4"]
    assert len(store.ops(session.game_id)) == len(session.table.ops)
    assert len(said) == 2 and "saving again: 2 waiting step(s)" in said[1]
    store.close()


# ----------------------------------------------------------------- blind without a word


class _Stream:
    """An MJPEG camera on 127.0.0.1 that serves each connection the next list of frames
    (a camera that comes back at another resolution)."""

    def __init__(self, phases: list[list[bytes]], fps: float = 8.0, port: int = 0) -> None:
        queue = list(phases)

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                frames = queue.pop(0) if queue else []
                self.send_response(200)
                self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    for data in frames:
                        self.wfile.write(b"--frame\r\nContent-Type: image/jpeg\r\n"
                                         b"Content-Length: %d\r\n\r\n" % len(data))
                        self.wfile.write(data + b"\r\n")
                        time.sleep(1 / fps)  # paced as a camera at `fps`

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/video"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _jpeg(image: np.ndarray) -> bytes:
    return cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()


def test_a_stream_that_comes_back_at_another_size_is_read_again_with_the_calibration_scaled(
        tmp_path: Path) -> None:
    photo = cv2.imread(str(EXAMPLE_IMAGE))
    small = cv2.resize(photo, (640, 360), interpolation=cv2.INTER_AREA)
    stream = _Stream([[_jpeg(small)] * 6, [_jpeg(photo)] * 10])
    store = Store(tmp_path / "data")
    said: list[str] = []
    session = LiveSession(store, settle_window=0.2, say=said.append)
    camera = CameraReader(scaled_calibration(load_calibration(EXAMPLE_CALIBRATION), (640, 360)))
    session.attach_camera(camera)
    sizes: list[tuple[int, int]] = []
    readable: list[bool] = []

    def seen(frame: object) -> None:
        sizes.append(frame.image.shape[1::-1])  # type: ignore[attr-defined]
        readable.append(session.state()["camera"]["status"] == "ok")

    stop = threading.Event()
    source = RetryingSource(lambda: open_source(stream.url), should_stop=stop.is_set)
    try:
        runner = threading.Thread(target=run_live, args=(source, camera, session),
                                  kwargs={"stop": stop, "on_frame": seen}, daemon=True)
        runner.start()
        assert wait_until(lambda: (1280, 720) in sizes and readable[-1], 30)
    finally:
        stop.set()
        runner.join(20)
        source.close()
        stream.close()
        store.close()
    assert (640, 360) in sizes and readable[sizes.index((640, 360))]
    assert any("now sends 1280 x 720 frames (calibrated at 640 x 360): the calibration was "
               "scaled" in text for text in said)


def test_a_board_unreadable_with_nothing_moving_is_said_on_page_console_and_leds(
        tmp_path: Path) -> None:
    photo = cv2.imread(str(EXAMPLE_IMAGE))
    cover = photo.copy()
    cover[:, 300:1000] = (40, 40, 40)  # a cloth over the board, lying still
    frames = tmp_path / "frames"
    frames.mkdir()
    covered = int((BLIND_S + 1.5) * 2)
    for k, image in enumerate([photo] * 2 + [cover] * covered + [photo] * 8):
        cv2.imwrite(str(frames / f"{k:03d}.png"), image)
    store = Store(tmp_path / "data")
    said: list[str] = []
    session = LiveSession(store, settle_window=0.2, say=said.append)
    camera = CameraReader(load_calibration(EXAMPLE_CALIBRATION))
    session.attach_camera(camera)
    states: list[dict[str, object]] = []
    run_live(open_source(str(frames), fps=2), camera, session,
             on_frame=lambda frame: states.append(session.state()))
    store.close()
    blind = [s for s in states if s["camera"]["status"] == "blind"]  # type: ignore[index]
    assert blind, [s["camera"] for s in states]  # type: ignore[index]
    assert "has not been readable" in blind[0]["camera"]["message"]  # type: ignore[index]
    assert led_view(blind[0]).status.value == "idle"
    assert any("has not been readable" in text for text in said)
    assert states[-1]["camera"]["status"] == "ok" and camera.blind is None  # type: ignore[index]
    assert led_view(states[-1]).status.value == "playing"


BAD_CORNERS = [
    ([[100, 100], [600, 100], [100, 400], [600, 400]], "cross over each other"),
    ([[100, 100], [300, 100], [500, 100], [500, 400]], "do not outline a convex board"),
    ([[200, 200]] * 4, "the same point"),
    ([[100, 100], [5000, 100], [5000, 400], [100, 400]], "lies outside the"),
    ([[100, 100], [600, 100], [300, 250], [100, 400]], "do not outline a convex board"),
    ([[100, 200], [600, 150], [620, 200], [600, 250]], "angle at corner 1"),
]


@pytest.mark.parametrize(("corners", "reason"), BAD_CORNERS)
def test_bad_corners_posted_to_the_calibration_page_get_400_with_the_reason(
        tmp_path: Path, corners: list[list[float]], reason: str) -> None:
    from web import create_app

    store = Store(tmp_path / "data")
    session = LiveSession(store, settle_window=0.0)
    session.attach_camera(CameraReader(load_calibration(EXAMPLE_CALIBRATION)))
    client = create_app(session, {"TESTING": True}).test_client()
    answer = client.post("/api/calibration", json={"corners": corners, "a1": 0})
    assert answer.status_code == 400 and reason in answer.get_json()["error"]
    store.close()


def test_good_corners_that_cannot_be_saved_are_used_and_say_so(tmp_path: Path) -> None:
    from web import create_app

    store = Store(tmp_path / "data")
    session = LiveSession(store, settle_window=0.0)
    calibration = load_calibration(EXAMPLE_CALIBRATION)
    session.attach_camera(CameraReader(calibration), Path("/proc/ponte/calibration.json"))
    client = create_app(session, {"TESTING": True}).test_client()
    corners = [[x + 2.0, y] for x, y in calibration.corners]
    answer = client.post("/api/calibration", json={"corners": corners, "a1": 0})
    assert answer.status_code == 507
    assert "in use but cannot be saved" in answer.get_json()["error"]
    assert session.calibration()["corners"][0][0] == round(corners[0][0], 1)
    store.close()


def _bad_calibration(tmp_path: Path, corners: list[list[float]]) -> Path:
    data = json.loads(EXAMPLE_CALIBRATION.read_text())
    data["corners"] = corners
    path = tmp_path / "bad-calibration.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(("corners", "reason"), BAD_CORNERS[:3])
def test_a_degenerate_calibration_file_is_refused_by_read_transcribe_and_watch(
        tmp_path: Path, corners: list[list[float]], reason: str) -> None:
    bad = str(_bad_calibration(tmp_path, corners))
    for args in (["read", str(EXAMPLE_IMAGE), "--calibration", bad],
                 ["transcribe", str(EXAMPLE_IMAGE.parent), "--calibration", bad,
                  "--out", str(tmp_path / "x.pdd")],
                 ["watch", "--source", str(EXAMPLE_IMAGE.parent), "--calibration", bad,
                  "--no-web", "--data", str(tmp_path / "data"), "--duration", "1"]):
        done = ponte(*args)
        no_traceback(done)
        assert done.returncode == 2 and reason in done.stderr, (args, done.stderr)


# ----------------------------------------------------------------- a damaged video


MOVES = ["a1,a2", "j9,j10", "a3,b3", "h2,h3"]


def test_a_corrupt_stretch_in_a_video_is_skipped_counted_and_the_game_read_on(
        tmp_path: Path) -> None:
    good = tmp_path / "game.mp4"
    truths = write_video(good, render_script([Beat(b) for b in boards_of_moves(MOVES)]))
    data = bytearray(good.read_bytes())
    start, length = int(len(data) * 0.45), int(len(data) * 0.05)
    data[start:start + length] = bytes(length)
    bad = tmp_path / "damaged.mp4"
    bad.write_bytes(bytes(data))
    source = open_source(str(bad))
    assert isinstance(source, CaptureSource)
    result = transcribe(source, GroundTruthReader(good, truths), settle_window=0.4)
    assert source.skipped > 0
    assert [str(m.move) for m in result.table.game.moves] == MOVES
    assert result.frames + source.skipped == len(truths)


def test_a_text_file_given_as_a_video_is_refused(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("a1,a2\nj9,j10\n")
    with pytest.raises(SourceError, match="is a text file, not a video"):
        open_source(str(notes))
    for args in (["transcribe", str(notes), "--out", str(tmp_path / "x.pdd")],
                 ["watch", "--source", str(notes), "--no-web", "--data", str(tmp_path / "d")]):
        done = ponte(*args)
        no_traceback(done)
        assert done.returncode == 2 and "is a text file, not a video" in done.stderr


# ----------------------------------------------------------------- the command line


def _huge_png(path: Path, side: int = 20000) -> None:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body)))

    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    rows = zlib.compress(bytes(side * 3 + 1) * 64)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows)
                     + chunk(b"IEND", b""))


def test_command_line_faults_give_one_line_not_a_traceback(tmp_path: Path) -> None:
    data = tmp_path / "data"
    Store(data).close()
    done = ponte("export", "99999999999999999999", "--data", str(data))
    no_traceback(done)
    assert done.returncode == 2 and "no game 99999999999999999999" in done.stderr
    folder = tmp_path / "a-folder"
    folder.mkdir()
    for out, reason in ((folder, "is a folder"), (Path("/proc/ponte/cal.json"), "cannot write")):
        done = ponte("calibrate", str(EXAMPLE_IMAGE), "--out", str(out))
        no_traceback(done)
        assert done.returncode == 2 and reason in done.stderr
    done = ponte("watch", "--source", "0", "--port", "99999", "--data", str(data))
    no_traceback(done)
    assert done.returncode == 2 and "99999 is not a port" in done.stderr
    done = ponte("watch", "--source", "/dev/ponte-none", "--leds", "nonsense://x",
                 "--no-web", "--data", str(data), "--duration", "1")
    no_traceback(done)
    assert done.returncode == 2 and "--leds nonsense://x" in done.stderr


def test_a_20000_pixel_square_png_is_refused_from_its_header(tmp_path: Path) -> None:
    big = tmp_path / "big.png"
    _huge_png(big)
    began = time.monotonic()
    for args in (["read", str(big)], ["calibrate", str(big), "--out", str(tmp_path / "c.json")]):
        done = ponte(*args)
        no_traceback(done)
        assert done.returncode in (1, 2) and "20000 x 20000 pixels is too large" in done.stderr
    assert time.monotonic() - began < 30
    frames = tmp_path / "frames"
    frames.mkdir()
    _huge_png(frames / "0.png")
    cv2.imwrite(str(frames / "1.png"), np.zeros((80, 80, 3), np.uint8))
    source = open_source(str(frames))
    frame = source.read()
    assert frame is not None and frame.image.shape == (80, 80, 3)  # the huge one passed over


# ----------------------------------------------------------------- reconnecting


@pytest.mark.slow
def test_a_stream_back_after_seconds_away_is_read_within_two_seconds() -> None:
    photo = _jpeg(cv2.resize(cv2.imread(str(EXAMPLE_IMAGE)), (320, 180)))
    stream = _Stream([[photo] * 3])
    port = stream.server.server_address[1]
    source = RetryingSource(lambda: open_source(stream.url))
    assert source.read() is not None
    stream.close()  # the camera goes away for five seconds
    back: list[float] = []
    again: list[_Stream] = []

    def restart() -> None:
        time.sleep(5.0)  # away this long is the case tested (the retries back off meanwhile)
        again.append(_Stream([[photo] * 40], port=port))
        back.append(time.monotonic())

    threading.Thread(target=restart, daemon=True).start()
    try:
        read_at = 0.0
        while not back or read_at < back[0]:
            assert source.read() is not None
            read_at = time.monotonic()
    finally:
        source.close()
        for server in again:
            server.close()
    assert source.reopened >= 1
    assert read_at - back[0] < 2.0


def test_camera_retries_print_no_opencv_or_ffmpeg_warnings() -> None:
    code = """
from ponte.live.sources import RetryingSource, open_source
said = []
for spec in ("http://127.0.0.1:9/video", "/dev/ponte-none", "7"):
    tries = []
    RetryingSource(lambda: open_source(spec), listener=lambda s, m: said.append(m),
                   should_stop=lambda: tries.append(1) or len(tries) > 3,
                   sleep=lambda s: None).read()
print(len(said))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "3", done.stderr
    assert "WARN" not in done.stderr and " @ 0x" not in done.stderr, done.stderr


# ----------------------------------------------------------------- the LED line


def test_a_noisy_led_line_keeps_its_port_and_a_vanished_controller_is_reported() -> None:
    from firmware_bridge.bridge import LedBridge
    from firmware_bridge.view import LedView, Status, Turn
    from tests.leds_fake_device import FakeDevice

    device = FakeDevice()
    told: list[tuple[bool, str]] = []
    bridge = LedBridge(device.url, keepalive=0.1, boot_wait=0.5, retry_delay=0.1,
                       on_status=lambda ok, text: told.append((ok, text)))
    try:
        assert wait_until(lambda: bridge.connected, 5)
        assert told and told[0][0] is True
        for k in range(5):  # every answer lost for a while, again and again
            device.drop_next = 6
            turn = Turn.LIGHT if k % 2 else Turn.DARK
            bridge.show(LedView(turn=turn, status=Status.PLAYING))
            assert bridge.wait_shown(5)
        assert bridge.connections == 1  # never reopened (opening resets an Arduino)
        device.unplug()
        assert wait_until(lambda: any(not ok for ok, _ in told), 5)
        assert any(device.url in text and "retrying" in text for ok, text in told if not ok)
    finally:
        bridge.close()


def test_the_led_controller_going_away_is_said_on_the_console_and_the_page(
        tmp_path: Path) -> None:
    from ponte.live.leds import LedLink
    from tests.leds_fake_device import FakeDevice

    device = FakeDevice()
    said: list[str] = []
    store = Store(tmp_path / "data")
    session = LiveSession(store, settle_window=0.0, say=said.append)
    sub = session.bus.subscribe()
    link = LedLink.start(session, device.url)
    try:
        assert wait_until(lambda: any("LED controller connected" in s for s in said), 10)
        device.unplug()
        assert wait_until(lambda: any("retrying" in s for s in said), 10)
    finally:
        link.close()
        store.close()
    notices = []
    while (event := sub.get(timeout=0)) is not None:
        if event.type.value == "notice" and event.data.get("kind") == "leds":
            notices.append(event.data)
    assert notices[0]["connected"] is True and notices[-1]["connected"] is False


def test_watch_says_when_its_led_port_cannot_be_opened(tmp_path: Path) -> None:
    done = ponte("watch", "--source", "/dev/ponte-none", "--leds", "/dev/ponte-no-leds",
                 "--no-web", "--data", str(tmp_path / "data"), "--duration", "2")
    no_traceback(done)
    assert done.returncode == 0
    assert "LED controller at /dev/ponte-no-leds: cannot open" in done.stderr
    assert "(retrying)" in done.stderr
