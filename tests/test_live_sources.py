"""Frame sources: folders, files, cameras and streams by what the user typed; retrying."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from ponte.live.sources import (
    FolderSource,
    Frame,
    RetryingSource,
    SourceError,
    is_live,
    open_source,
)


def test_a_folder_of_images_is_read_in_name_order(tmp_path: Path) -> None:
    for k in (2, 0, 1):
        cv2.imwrite(str(tmp_path / f"frame{k:03d}.png"), np.full((8, 8, 3), 10 * k, np.uint8))
    (tmp_path / "notes.txt").write_text("not an image")
    source = open_source(str(tmp_path), fps=5)
    assert isinstance(source, FolderSource) and not source.live
    frames = []
    while (frame := source.read()) is not None:
        frames.append(frame)
    assert [int(f.image[0, 0, 0]) for f in frames] == [0, 10, 20]
    assert [f.t for f in frames] == [0.0, 0.2, 0.4]


def test_sources_that_cannot_be_opened_say_why(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such camera, file or folder"):
        open_source(str(tmp_path / "missing.mp4"))
    with pytest.raises(SourceError, match="holds no images"):
        open_source(str(tmp_path))
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"\0" * 100)
    with pytest.raises(SourceError, match="not a video OpenCV can read"):
        open_source(str(junk))


class _Flaky:
    live = True
    description = "flaky"

    def __init__(self, frames: int) -> None:
        self.left = frames

    def read(self) -> Frame | None:
        if self.left == 0:
            return None
        self.left -= 1
        return Frame(np.zeros((4, 4, 3), np.uint8), 0.1 * (3 - self.left), 0)

    def close(self) -> None:
        pass


def test_a_lost_source_is_retried_with_growing_delays_and_time_runs_on() -> None:
    attempts = iter([_Flaky(3), SourceError("gone"), SourceError("gone"),
                     SourceError("gone"), _Flaky(2)])

    def opener() -> _Flaky:
        item = next(attempts)
        if isinstance(item, Exception):
            raise item
        return item

    delays: list[float] = []
    said: list[str] = []
    source = RetryingSource(opener, listener=lambda s, m: said.append(s),
                            first_delay=0.5, max_delay=1.5, sleep=delays.append,
                            should_stop=lambda: len(said) >= 3)
    times = []
    while (frame := source.read()) is not None:
        times.append(frame.t)
    assert said == ["no-signal", "ok", "no-signal"]
    assert delays[:4] == [0.5, 1.0, 1.5, 1.5]
    assert times == sorted(times) and len(times) == 5


def test_a_live_source_that_is_not_there_at_the_start_is_waited_for() -> None:
    attempts = iter([SourceError("cannot open camera 0"), SourceError("cannot open camera 0"),
                     _Flaky(2)])

    def opener() -> _Flaky:
        item = next(attempts)
        if isinstance(item, Exception):
            raise item
        return item

    said: list[tuple[str, str]] = []
    delays: list[float] = []
    source = RetryingSource(opener, listener=lambda s, m: said.append((s, m)),
                            sleep=delays.append, description="0",
                            should_stop=lambda: len(said) >= 3)
    assert source.read() is not None
    assert said == [("unavailable", "cannot open camera 0"), ("ok", "frames again from flaky")]
    assert delays == [0.5, 1.0] and source.reopened == 0


@pytest.mark.parametrize(("spec", "live"), [
    ("0", True), ("rtsp://phone.local/live", True), ("HTTP://10.0.0.2:8080/video", True),
    ("/dev/video7", True), ("game.mp4", False), ("frames/", False),
])
def test_cameras_and_streams_are_live_files_and_folders_are_not(spec: str, live: bool) -> None:
    assert is_live(spec) is live


def test_a_missing_camera_device_says_so() -> None:
    with pytest.raises(SourceError, match="no such device"):
        open_source("/dev/video-not-there")


def test_a_network_stream_that_stalls_counts_as_lost_within_the_read_timeout() -> None:
    """A phone camera that stops sending but keeps the connection open (it went to sleep,
    the Wi-Fi dropped) must not freeze the reader for FFmpeg's default 30 s: after
    `STREAM_READ_TIMEOUT_MS` the read fails, so the game reports no signal and Ctrl-C
    is not held up."""
    import threading
    import time

    from ponte.live.sources import STREAM_READ_TIMEOUT_MS
    from tests.live_scenes import MjpegCamera

    jpeg = cv2.imencode(".jpg", np.full((48, 64, 3), 90, np.uint8))[1].tobytes()
    release = threading.Event()
    camera = MjpegCamera(0, [jpeg] * 3, fps=20, hold_open=release)
    try:
        source = open_source(f"http://127.0.0.1:{camera.port}/video.mjpg")
        assert source.live
        first = source.read()
        assert first is not None and first.image.shape[:2] == (48, 64)
        start = time.monotonic()
        while source.read() is not None:
            assert time.monotonic() - start < 30, "the stalled stream kept giving frames"
        waited = time.monotonic() - start
        source.close()
        assert waited < STREAM_READ_TIMEOUT_MS / 1000 + 10, f"read blocked {waited:.1f} s"
    finally:
        release.set()
        camera.close()


def _numbered(k: int) -> np.ndarray:
    """A frame whose grey level says its number (to within JPEG's error)."""
    return np.full((48, 64, 3), 4 * k, np.uint8)


def _number(frame: Frame) -> int:
    return round(float(frame.image.mean()) / 4)


class _Camera:
    """A live source handing out `count` numbered frames `gap` seconds apart."""

    live = True
    description = "camera"

    def __init__(self, count: int, gap: float) -> None:
        self.count, self.gap, self.sent = count, gap, 0
        self.closed = False

    def read(self) -> Frame | None:
        import time

        if self.sent == self.count:
            return None
        time.sleep(self.gap)
        self.sent += 1
        return Frame(_numbered(self.sent - 1), time.monotonic(), self.sent - 1)

    def close(self) -> None:
        self.closed = True


def test_a_slow_loop_reads_the_newest_frame_of_a_camera_and_never_a_stale_one() -> None:
    import time

    from ponte.live.sources import NewestFrame

    camera = _Camera(40, 0.01)
    source = NewestFrame(camera)
    numbers, lags = [], []
    while (frame := source.read()) is not None:
        lags.append(camera.sent - 1 - _number(frame))
        numbers.append(_number(frame))
        time.sleep(0.05)  # a loop five times slower than the camera
    source.close()
    assert numbers == sorted(set(numbers)) and len(numbers) < 20
    assert max(lags) <= 1, f"frames read behind the camera: {lags}"
    assert source.passed_over + len(numbers) == 40 and camera.closed


def test_a_slow_loop_keeps_up_with_a_network_stream() -> None:
    """Through cv2.VideoCapture on an MJPEG stream: a loop that takes five frames' time
    over each frame ends when the camera stops sending, not long after it, and reads each
    frame only once, in order."""
    import time

    from ponte.live.sources import NewestFrame
    from tests.live_scenes import MjpegCamera

    jpegs = [cv2.imencode(".jpg", _numbered(k))[1].tobytes() for k in range(60)]
    camera = MjpegCamera(0, jpegs, fps=30)
    try:
        source = NewestFrame(open_source(f"http://127.0.0.1:{camera.port}/video.mjpg"))
        start = time.monotonic()
        numbers = []
        while (frame := source.read()) is not None:
            numbers.append(_number(frame))
            time.sleep(5 / 30)
        took = time.monotonic() - start
        source.close()
    finally:
        camera.close()
    assert numbers == sorted(set(numbers)) and numbers[-1] >= 55
    assert took < 2.0 + 2.0, f"the loop ended {took:.1f} s after a 2 s stream began"
    assert source.passed_over >= 60 - 2 * len(numbers)


@pytest.mark.parametrize("kind", ["folder", "video"])
def test_a_file_played_in_real_time_is_read_whole_and_slows_down_rather_than_race(
        tmp_path: Path, kind: str) -> None:
    """A loop held up for half a second on the first frame (a camera calibrating) reads
    every frame after it, each at its own pace from there, not all at once to catch up."""
    import time

    from ponte.live.sources import Paced

    if kind == "folder":
        for k in range(30):
            cv2.imwrite(str(tmp_path / f"{k:03d}.png"), _numbered(k))
        spec = str(tmp_path)
    else:
        spec = str(tmp_path / "game.avi")
        writer = cv2.VideoWriter(spec, cv2.VideoWriter_fourcc(*"MJPG"), 30, (64, 48))
        for k in range(30):
            writer.write(_numbered(k))
        writer.release()
    source = Paced(open_source(spec, fps=30), speed=2.0)
    numbers, times = [], []
    while (frame := source.read()) is not None:
        times.append(time.monotonic())
        numbers.append(_number(frame))
        if frame.index == 0:
            time.sleep(0.5)
    source.close()
    assert numbers == list(range(30))
    gaps = np.diff(times[1:])
    assert gaps.min() >= 1 / 60 - 0.005, "frames raced to catch up with the clock"
    assert 0.5 + 28 / 60 - 0.01 <= times[-1] - times[0] < 0.5 + 28 / 60 + 0.5


def test_closing_while_a_read_hangs_does_not_hang_and_the_camera_is_released_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A pulled cable can leave the camera's read hanging: closing waits a little, then
    returns, and the camera is released as soon as the read comes back, not under it."""
    import threading
    import time

    import ponte.live.sources as sources

    monkeypatch.setattr(sources, "STREAM_READ_TIMEOUT_MS", 200)
    back = threading.Event()

    class _Hanging(_Camera):
        def read(self) -> Frame | None:
            if self.sent == 1:
                back.wait(10)
            return super().read()

    camera = _Hanging(5, 0.0)
    source = sources.NewestFrame(camera)
    assert source.read() is not None
    start = time.monotonic()
    source.close()
    assert time.monotonic() - start < 3 and not camera.closed
    back.set()
    for _ in range(100):
        if camera.closed:
            break
        time.sleep(0.02)
    assert camera.closed and source.read() is None
