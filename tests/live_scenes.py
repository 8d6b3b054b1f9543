"""The live loop's end-to-end test helpers: game videos — the synth helper's
`render_sequence` (`synth_video`) and the simpler scripts of `lab.scenes` — and
`GroundTruthReader`, a CLEARLY NAMED STAND-IN for the vision pipeline: it answers each frame
with the renderer's ground truth (board, bridges, occlusion) instead of reading the pixels.
The end-to-end tests use it while the vision pipeline cannot yet read these frames;
`ponte.live.camera.CameraReader` (the real pipeline) takes the same `read(image, t)` call.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import cv2
import numpy as np

from lab.scenes import (
    Beat,
    Truth,
    boards_of_moves,
    position_of,
    render_script,
    truths_from_json,
    truths_to_json,
    write_video,
)
from ponte.live.settle import BoardView, Reading

__all__ = [
    "Beat",
    "GroundTruthReader",
    "MjpegCamera",
    "boards_of_moves",
    "render_script",
    "truths_from_json",
    "truths_to_json",
    "write_video",
]


class GroundTruthReader:
    """STAND-IN FOR THE VISION PIPELINE: answers each frame with the renderer's ground truth.

    Built from the video file itself: every decoded frame's pixels are hashed and mapped to
    the truth of the frame written there, so frames are recognised however they arrive (a
    file read at any pace, or a source that failed and came back). Same call as CameraReader.
    """

    calibrated = True
    bumps = 0
    last_observation = None

    def __init__(self, video: Path, truths: Sequence[Truth]) -> None:
        self.by_pixels: dict[str, Truth] = {}
        self._images: list[np.ndarray] = []
        capture = cv2.VideoCapture(str(video))
        try:
            for truth in truths:
                ok, image = capture.read()
                assert ok, f"{video} has fewer frames than its truths"
                digest = _digest(image)
                if digest not in self.by_pixels:
                    self.by_pixels[digest] = truth
                    self._images.append(image)
        finally:
            capture.release()

        self._thumbs = np.stack([_thumb(image) for image in self._images]) if self._images \
            else np.zeros((0, 36, 64), np.float32)
        self._thumb_truths = list(self.by_pixels.values())

    def merge(self, other: GroundTruthReader) -> None:
        """Also know the frames of another video."""
        for digest, truth in other.by_pixels.items():
            if digest not in self.by_pixels:
                self.by_pixels[digest] = truth
        self._thumbs = np.concatenate([self._thumbs, other._thumbs])
        self._thumb_truths += other._thumb_truths

    def read(self, image: np.ndarray, t: float) -> Reading:
        """The truth of the frame with these pixels; a frame decoded another way (a network
        stream's decoder) is matched to the nearest frame by a small thumbnail."""
        truth = self.by_pixels.get(_digest(image))
        if truth is None:
            distance = np.abs(self._thumbs - _thumb(image)).mean(axis=(1, 2))
            truth = self._thumb_truths[int(distance.argmin())]
        return Reading(t, truth.board, truth.occluded, truth.occluded_cells)


def _thumb(image: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return cv2.resize(grey, (64, 36), interpolation=cv2.INTER_AREA).astype(np.float32)


def _digest(image: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(image).tobytes()).hexdigest()




def synth_video(
    path: Path, boards: Sequence[BoardView], *, fps: float = 10.0, bump_at: float | None = None,
    size: tuple[int, int] = (640, 360),
) -> GroundTruthReader:
    """A game video made with the synth helper's own `render_sequence` (a hand carries each
    tile in from the mover's side), stored as a file; returns its ground-truth reader."""
    import dataclasses as dc

    from lab.synth import (
        CameraBump,
        CameraSpec,
        SceneSpec,
        SequenceTiming,
        render_sequence,
    )
    from lab.synth import write_video as synth_write

    positions = [position_of(b) for b in boards]
    camera = CameraSpec(width=size[0], height=size[1], focal_px=size[0] * 0.75)
    spec = SceneSpec(board=positions[0][0], camera=camera)
    timing = SequenceTiming(
        fps=fps, still_s=1.0, reach_s=0.4, hover_s=0.2, place_s=0.3, leave_s=0.4,
        bump=CameraBump(at_s=bump_at) if bump_at is not None else None,
    )
    seq = synth_write(path, render_sequence(positions, dc.replace(spec), timing), fps)
    truths = [_sequence_truth(k, fps, s.frame) for k, s in enumerate(seq)]
    return GroundTruthReader(path, truths)


def _sequence_truth(index: int, fps: float, frame: object) -> Truth:
    from lab.scenes import frame_truth

    return frame_truth(index, fps, frame)


class MjpegCamera:
    """A network camera as phone apps serve it: HTTP multipart MJPEG, at `fps`."""

    def __init__(self, port: int, jpegs: list[bytes], fps: float,
                 hold_open: threading.Event | None = None) -> None:
        """With `hold_open`, the stream stalls after its frames with the connection open
        (a phone camera gone to sleep) until the event is set."""
        frames, pause = jpegs, 1 / fps

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
                self.end_headers()
                try:
                    for data in frames:
                        self.wfile.write(b"--frame\r\nContent-Type: image/jpeg\r\n"
                                         b"Content-Length: %d\r\n\r\n" % len(data))
                        self.wfile.write(data + b"\r\n")
                        time.sleep(pause)  # paced as a camera at `fps`
                    if hold_open is not None:
                        self.wfile.flush()
                        hold_open.wait(60)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
