"""Frame sources: a camera by index, a video file, a folder of images, a network stream.

`open_source(spec)` turns what the user typed into a `FrameSource`: digits are a camera
index, an existing folder is read image by image in name order, an existing file is a
video, and `rtsp://`, `http(s)://` URLs are network streams (phone camera apps serve MJPEG
over HTTP). Cameras, files and streams all go through cv2.VideoCapture.

`RetryingSource` wraps a live source: when it stops giving frames (unplugged, stream
dropped) it reopens it with back-off and tells its listener, so the game waits with its
state intact and goes on when frames return. A file or folder simply ends; frames of a
file that cannot be decoded (a damaged stretch) are skipped and counted in `skipped`, and
reading goes on after them.

The loop never falls behind a camera, however slowly it reads: `NewestFrame` takes a live
source's frames on a thread of their own as they come and hands the loop only the newest
(a camera's driver and a stream's buffer would otherwise queue the frames the loop had no
time for, and it would read ever older pictures). `Paced` plays a file or folder on the
wall clock, as the demo does; a recording is read whole, every frame.

OpenCV's and FFmpeg's own warnings are silenced (they would repeat on every retry of a
camera that is away); the listener gets one message of ours instead.

An edge adapter (I/O); frames are BGR numpy arrays stamped with seconds.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")  # AV_LOG_QUIET, read when FFmpeg starts

import cv2  # noqa: E402
import numpy as np  # noqa: E402
from numpy.typing import NDArray  # noqa: E402

cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)

Image = NDArray[np.uint8]
"""A BGR frame."""

STREAM_OPEN_TIMEOUT_MS = 10_000
"""How long opening a network stream may take before it counts as not there."""
STREAM_READ_TIMEOUT_MS = 5_000
"""How long a network stream may give no frame before it counts as lost (FFmpeg's own
default is 30 s: a stalled phone camera would freeze the game, and Ctrl-C, that long)."""

MAX_SKIPPED_RUN = 500
"""Frames running a file may fail to decode before it counts as ended there."""

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
URL_SCHEMES = ("rtsp://", "rtsps://", "http://", "https://", "udp://", "tcp://")


class SourceError(ValueError):
    """A source that cannot be opened or read (the message says which and why)."""


@dataclass(frozen=True, slots=True)
class Frame:
    image: Image
    t: float
    """Seconds: the position in a file, or since the source was opened for a live one."""
    index: int


class FrameSource(Protocol):
    live: bool
    """True for cameras and streams (retry when they fail), False for files and folders."""
    description: str

    def read(self) -> Frame | None:
        """The next frame, or None when the source ended or failed."""
        ...

    def close(self) -> None: ...


@contextmanager
def _opencv_quiet() -> Iterator[None]:
    """OpenCV's log silenced for a while (its warnings on a camera that is not there)."""
    logging = cv2.utils.logging
    before = logging.getLogLevel()
    logging.setLogLevel(logging.LOG_LEVEL_SILENT)
    try:
        yield
    finally:
        logging.setLogLevel(before)


class CaptureSource:
    """A cv2.VideoCapture: camera index, video file or stream URL."""

    def __init__(self, target: int | str, *, live: bool, fps: float | None = None) -> None:
        self.target = target
        self.live = live
        self.description = f"camera {target}" if isinstance(target, int) else str(target)
        with _opencv_quiet():  # its own warnings would say what the error below says
            if isinstance(target, str) and target.lower().startswith(URL_SCHEMES):
                self._capture = cv2.VideoCapture(target, cv2.CAP_FFMPEG, [
                    cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, STREAM_OPEN_TIMEOUT_MS,
                    cv2.CAP_PROP_READ_TIMEOUT_MSEC, STREAM_READ_TIMEOUT_MS])
            else:
                self._capture = cv2.VideoCapture(target)
            opened = self._capture.isOpened()
        if not opened:
            self._capture.release()
            device = Path(f"/dev/video{target}") if isinstance(target, int) else None
            if device is not None and Path("/dev").is_dir() and not device.exists():
                raise SourceError(f"cannot open {self.description}: there is no {device} "
                                  "(is the camera plugged in?)")
            if not live:
                raise SourceError(f"{target} is not a video OpenCV can read (give a video file "
                                  "such as .mp4 or .avi, or a folder of images)")
            raise SourceError(f"cannot open {self.description}")
        rate = fps or float(self._capture.get(cv2.CAP_PROP_FPS) or 0.0)
        self.fps = rate if 1.0 <= rate <= 240.0 else 30.0
        self.frame_count = int(self._capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        self._index = 0
        self.skipped = 0
        """Frames of a file that could not be decoded and were skipped."""
        self._opened = time.monotonic()

    def read(self) -> Frame | None:
        ok, image = self._capture.read()
        run = 0
        while not ok or image is None:
            if self.live or not self._more_to_come(run):
                return None
            run += 1
            self.skipped += 1
            self._index += 1  # the frame's time passes all the same
            ok, image = self._capture.read()
        index = self._index
        self._index += 1
        t = time.monotonic() - self._opened if self.live else index / self.fps
        return Frame(np.asarray(image, np.uint8), t, index)

    def _more_to_come(self, run: int) -> bool:
        """Whether a file whose frame just failed to decode may have frames after it."""
        if run >= MAX_SKIPPED_RUN:
            return False
        if self.frame_count > 0:
            return self._index + 1 < self.frame_count
        return run < 25

    def close(self) -> None:
        self._capture.release()


class FolderSource:
    """The images of a folder in name order, `fps` apart."""

    live = False

    def __init__(self, folder: Path, fps: float = 30.0) -> None:
        self.description = str(folder)
        self.paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self.paths:
            raise SourceError(f"{folder} holds no images ({', '.join(IMAGE_SUFFIXES)})")
        self.fps = fps
        self.frame_count = len(self.paths)
        self._index = 0

    def read(self) -> Frame | None:
        while self._index < len(self.paths):
            path = self.paths[self._index]
            index = self._index
            self._index += 1
            image = _read_image(path)
            if image is not None:
                return Frame(np.asarray(image, np.uint8), index / self.fps, index)
        return None

    def close(self) -> None:
        self._index = len(self.paths)


def _read_image(path: Path) -> Image | None:
    """An image of a folder, or None when it cannot be read or is too large to decode."""
    from vision.errors import VisionError
    from vision.imageio import check_pixel_count

    try:
        data = path.read_bytes()
        check_pixel_count(data, source=str(path))
    except (OSError, VisionError):
        return None
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    return None if image is None else np.asarray(image, np.uint8)


def is_live(spec: str) -> bool:
    """Whether `spec` names a camera or a stream (a camera index, a URL, a device under
    /dev), which may be away for a while and is waited for, rather than a file or folder."""
    text = spec.strip()
    return text.isdigit() or text.lower().startswith(URL_SCHEMES) or text.startswith("/dev/")


def open_source(spec: str, fps: float | None = None) -> FrameSource:
    """The source `spec` names (camera index, folder, video file, device or URL)."""
    text = spec.strip()
    if text.isdigit():
        return CaptureSource(int(text), live=True, fps=fps)
    if is_live(text):
        if text.startswith("/dev/") and not Path(text).exists():
            raise SourceError(f"cannot open {text}: no such device (is the camera plugged in?)")
        return CaptureSource(text, live=True, fps=fps)
    path = Path(text)
    if path.is_dir():
        return FolderSource(path, fps or 30.0)
    if path.is_file():
        if _looks_like_text(path):
            raise SourceError(f"{spec} is a text file, not a video (give a video file such as "
                              ".mp4 or .avi, a folder of images, or a camera)")
        return CaptureSource(str(path), live=False, fps=fps)
    raise SourceError(
        f"no such camera, file or folder: {spec} (give a camera index like 0, a video file, "
        "a folder of images, or an rtsp:// or http:// URL)"
    )


def _looks_like_text(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(512)
    except OSError:
        return False
    if not head:
        return False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(c.isprintable() or c in "\r\n\t" for c in text)


StatusListener = Callable[[str, str], None]
"""Called with (status, message): "unavailable" when the source cannot be opened at the
start, "no-signal" when frames stop later, "ok" when they come (back)."""


class RetryingSource:
    """A live source reopened with back-off whenever it stops giving frames — or opened
    with back-off in the first place, when it is not there yet at the start. The back-off
    stays short (at most `max_delay`): a camera plugged back in or a stream that answers
    again is read within a second or two, before players carry on unseen.

    Frame times run on across reopenings: the time lost waiting is added, so the loop's
    settle clock never runs backwards.
    """

    def __init__(
        self,
        opener: Callable[[], FrameSource],
        *,
        listener: StatusListener | None = None,
        first_delay: float = 0.5,
        max_delay: float = 1.5,
        sleep: Callable[[float], None] = time.sleep,
        should_stop: Callable[[], bool] = lambda: False,
        description: str = "retrying source",
    ) -> None:
        self._opener = opener
        self._listener = listener or (lambda status, message: None)
        self._first = first_delay
        self._max = max_delay
        self._sleep = sleep
        self._should_stop = should_stop
        self._source: FrameSource | None = None
        self.live = True
        self.description = description
        self.reopened = 0
        self._opened_once = False
        self._last_t = 0.0
        self._lost_at: float | None = None
        self._base = 0.0
        self._passed_before = 0
        """Frames passed over (`NewestFrame`) by the sources closed before the current."""

    @property
    def passed_over(self) -> int:
        """Frames the loop had no time for, over every opening of the source."""
        current = int(getattr(self._source, "passed_over", 0)) if self._source else 0
        return self._passed_before + current

    def read(self) -> Frame | None:
        delay = self._first
        lost = False
        while not self._should_stop():
            if self._source is None:
                try:
                    self._source = self._opener()
                    self.description = self._source.description
                    gap = 0.0 if self._lost_at is None else time.monotonic() - self._lost_at
                    self._base = self._last_t + gap
                    self._lost_at = None
                except SourceError as exc:
                    if not lost:
                        self._listener("no-signal" if self._opened_once else "unavailable",
                                       str(exc))
                        lost = True
                    self._sleep(delay)
                    delay = min(self._max, delay * 2)
                    continue
                if lost and self._opened_once:
                    self.reopened += 1
                self._opened_once = True
            frame = self._source.read()
            if frame is not None:
                if lost:
                    self._listener("ok", f"frames again from {self.description}")
                self._last_t = self._base + frame.t
                return Frame(frame.image, self._last_t, frame.index)
            self._passed_before += int(getattr(self._source, "passed_over", 0))
            self._source.close()
            self._source = None
            self._lost_at = time.monotonic()
            if not lost:
                self._listener("no-signal", f"{self.description} stopped giving frames")
                lost = True
            self._sleep(delay)
            delay = min(self._max, delay * 2)
        return None

    def close(self) -> None:
        if self._source is not None:
            self._source.close()
            self._source = None


class NewestFrame:
    """A live source read on a thread of its own, keeping only the newest frame.

    The thread takes every frame as it comes, stamped with its own time; `read` returns the
    newest frame it has not returned yet, waiting for one when there is none. However long
    the loop takes over a frame, the next it reads is the one the camera took last, and the
    frames it had no time for are counted in `passed_over`. When the source ends or fails,
    `read` returns None (after the newest frame, if that was not read yet).
    """

    def __init__(self, source: FrameSource) -> None:
        self._source = source
        self.live = source.live
        self.description = source.description
        self.passed_over = 0
        self._changed = threading.Condition()
        self._frame: Frame | None = None
        self._ended = False
        self._closing = False
        self._closed = False
        self._thread = threading.Thread(target=self._take, daemon=True,
                                        name=f"frames of {source.description}")
        self._thread.start()

    def _take(self) -> None:
        try:
            while not self._closing:
                frame = self._source.read()
                with self._changed:
                    if frame is None or self._closing:
                        break
                    self.passed_over += self._frame is not None
                    self._frame = frame
                    self._changed.notify_all()
        finally:
            with self._changed:
                self._ended = True
                if self._closing:  # close() could not wait for the read under way
                    self._release()
                self._changed.notify_all()

    def read(self) -> Frame | None:
        with self._changed:
            while self._frame is None and not self._ended:
                self._changed.wait(0.5)
            frame, self._frame = self._frame, None
            return frame

    def close(self) -> None:
        with self._changed:
            self._closing = True
        self._thread.join(timeout=STREAM_READ_TIMEOUT_MS / 1000 + 1.0)
        with self._changed:
            if self._ended:  # else the thread releases the source once its read returns
                self._release()

    def _release(self) -> None:
        if not self._closed:
            self._closed = True
            self._source.close()


class Paced:
    """A file or folder played on the wall clock, `speed` times as fast as its own.

    `read` waits until the next frame is due. A recording is read whole: when the loop is
    slower than that (the camera calibrating on the first frames, a slow machine), every
    frame is read all the same and the clock goes on from the late frame, so that the video
    slows down rather than racing to catch up. Frames keep their own times: the settle
    window runs on the video's clock at any speed.
    """

    def __init__(self, source: FrameSource, speed: float = 1.0) -> None:
        self._source = source
        self.live = source.live
        self.description = source.description
        self.speed = speed
        self._start: tuple[float, float] | None = None
        """(wall clock, frame time) the clock runs from."""

    def read(self) -> Frame | None:
        frame = self._source.read()
        if frame is None:
            return None
        now = time.monotonic()
        due = now if self._start is None else \
            self._start[0] + (frame.t - self._start[1]) / self.speed
        if due <= now:
            self._start = (now, frame.t)
        else:
            time.sleep(due - now)
        return frame

    def close(self) -> None:
        self._source.close()


def frames(source: FrameSource) -> Iterator[Frame]:
    """Iterate a source's frames until it ends."""
    while (frame := source.read()) is not None:
        yield frame
