"""Frame sources: a camera by index, a video file, a folder of images, a network stream.

`open_source(spec)` turns what the user typed into a `FrameSource`: digits are a camera
index, an existing folder is read image by image in name order, an existing file is a
video, and `rtsp://`, `http(s)://` URLs are network streams (phone camera apps serve MJPEG
over HTTP). Cameras, files and streams all go through cv2.VideoCapture.

`RetryingSource` wraps a live source: when it stops giving frames (unplugged, stream
dropped) it reopens it with back-off and tells its listener, so the game waits with its
state intact and goes on when frames return. A file or folder simply ends.

An edge adapter (I/O); frames are BGR numpy arrays stamped with seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np
from numpy.typing import NDArray

Image = NDArray[np.uint8]
"""A BGR frame."""

STREAM_OPEN_TIMEOUT_MS = 10_000
"""How long opening a network stream may take before it counts as not there."""
STREAM_READ_TIMEOUT_MS = 5_000
"""How long a network stream may give no frame before it counts as lost (FFmpeg's own
default is 30 s: a stalled phone camera would freeze the game, and Ctrl-C, that long)."""

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
            raise SourceError(f"cannot open {self.description}")
        rate = fps or float(self._capture.get(cv2.CAP_PROP_FPS) or 0.0)
        self.fps = rate if 1.0 <= rate <= 240.0 else 30.0
        self.frame_count = int(self._capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        self._index = 0
        self._opened = time.monotonic()

    def read(self) -> Frame | None:
        ok, image = self._capture.read()
        if not ok or image is None:
            return None
        index = self._index
        self._index += 1
        t = time.monotonic() - self._opened if self.live else index / self.fps
        return Frame(np.asarray(image, np.uint8), t, index)

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
            image = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if image is not None:
                return Frame(np.asarray(image, np.uint8), index / self.fps, index)
        return None

    def close(self) -> None:
        self._index = len(self.paths)


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
        return CaptureSource(str(path), live=False, fps=fps)
    raise SourceError(
        f"no such camera, file or folder: {spec} (give a camera index like 0, a video file, "
        "a folder of images, or an rtsp:// or http:// URL)"
    )


StatusListener = Callable[[str, str], None]
"""Called with (status, message): "unavailable" when the source cannot be opened at the
start, "no-signal" when frames stop later, "ok" when they come (back)."""


class RetryingSource:
    """A live source reopened with back-off whenever it stops giving frames — or opened
    with back-off in the first place, when it is not there yet at the start.

    Frame times run on across reopenings: the time lost waiting is added, so the loop's
    settle clock never runs backwards.
    """

    def __init__(
        self,
        opener: Callable[[], FrameSource],
        *,
        listener: StatusListener | None = None,
        first_delay: float = 0.5,
        max_delay: float = 8.0,
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


def frames(source: FrameSource) -> Iterator[Frame]:
    """Iterate a source's frames until it ends."""
    while (frame := source.read()) is not None:
        yield frame
