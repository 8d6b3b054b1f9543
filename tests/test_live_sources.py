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
