"""Edge of the pipeline: bytes or a file path in, a BGR image out, or a typed error."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import simplejpeg

from vision.errors import ImageTooSmall, ImageUnreadable

#: The smallest side (pixels) an image may have and still hold a readable board.
MIN_SIDE = 64


def decode_image(data: bytes, *, reduce: int = 1, source: str = "image") -> np.ndarray:
    """Decode JPEG/PNG/... bytes to a BGR uint8 image, at 1/`reduce` size (1, 2, 4 or 8).

    Decoding at a reduced size is much faster for JPEG (the DCT is scaled, not resampled).
    """
    if not data:
        raise ImageUnreadable(f"{source}: empty file")
    flags = {
        1: cv2.IMREAD_COLOR,
        2: cv2.IMREAD_REDUCED_COLOR_2,
        4: cv2.IMREAD_REDUCED_COLOR_4,
        8: cv2.IMREAD_REDUCED_COLOR_8,
    }
    if reduce not in flags:
        raise ValueError(f"reduce must be 1, 2, 4 or 8, not {reduce}")
    image = _turbo_decoded(data, reduce)
    if image is None:
        image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), flags[reduce])
    if image is None:
        raise ImageUnreadable(f"{source}: not an image OpenCV can decode")
    check_image(image, source=source, reduce=reduce)
    return image


def _turbo_decoded(data: bytes, reduce: int) -> np.ndarray | None:
    """A baseline or progressive JPEG decoded by libjpeg-turbo through `simplejpeg`, at
    1/`reduce` size; None for anything else, or where OpenCV must decide.

    The pixels are OpenCV's to the last bit (the same library, the same DCT and
    upsampling: `tests/test_vision_stages.py` checks each sampling, size and reduction),
    but a camera's 1280 x 720 frame at half size takes about two thirds of the time
    (1.67 against 2.49 ms on this machine): OpenCV spends the rest around the library.
    A file whose Exif block may turn the picture is left to OpenCV, which turns it as
    the Exif says; so is a file the library only half reads (OpenCV keeps what it can).
    """
    if not data.startswith(b"\xff\xd8") or _has_exif(data):
        return None
    try:
        height, width, _, _ = simplejpeg.decode_jpeg_header(data)
        size = (-(-int(height) // reduce), -(-int(width) // reduce))
        image = simplejpeg.decode_jpeg(data, colorspace="BGR", min_height=size[0],
                                       min_width=size[1])
    except ValueError:
        return None
    if image.shape != (*size, 3) or image.dtype != np.uint8:
        return None
    return image


def _has_exif(data: bytes) -> bool:
    """Whether a JPEG's header segments (before its first scan) hold an Exif block."""
    at = 2
    while at + 4 <= len(data) and data[at] == 0xFF:
        marker = data[at + 1]
        if marker == 0xDA:  # start of scan: no more header segments
            return False
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        length = int.from_bytes(data[at + 2:at + 4], "big")
        if marker == 0xE1 and data[at + 4:at + 10] == b"Exif\x00\x00":
            return True
        at += 2 + length
    return False


def read_image(path: str | Path, *, reduce: int = 1) -> np.ndarray:
    """Read an image file (see `decode_image`); missing or unreadable files raise typed errors."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ImageUnreadable(f"{path}: cannot read file ({exc.strerror or exc})") from exc
    return decode_image(data, reduce=reduce, source=str(path))


def check_image(image: np.ndarray, *, source: str = "image", reduce: int = 1) -> None:
    """Raise unless `image` is a BGR uint8 array large enough to hold a board."""
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ImageUnreadable(f"{source}: expected a colour image, got shape {image.shape}")
    h, w = image.shape[:2]
    if min(h, w) * reduce < MIN_SIDE:
        raise ImageTooSmall(
            f"{source}: {w * reduce} x {h * reduce} pixels is too small to hold a board "
            f"(need at least {MIN_SIDE} pixels a side)"
        )
