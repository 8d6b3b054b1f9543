"""Edge of the pipeline: bytes or a file path in, a BGR image out, or a typed error.

An image's size is read from its header before it is decoded: one of more than
`MAX_PIXELS` pixels is refused without spending the memory (a 20000 x 20000 PNG would take
over a gigabyte). OpenCV's own limit is set to the same for formats whose header is not
read here.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

#: The most pixels an image may have (a 48-megapixel photo; a camera frame is far less).
MAX_PIXELS = 50_000_000

os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", str(MAX_PIXELS))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from vision.errors import ImageTooLarge, ImageTooSmall, ImageUnreadable  # noqa: E402

#: The smallest side (pixels) an image may have and still hold a readable board.
MIN_SIDE = 64


def image_dimensions(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, JPEG, GIF, BMP or WebP header; None for anything else.

    >>> image_dimensions(cv2.imencode(".png", np.zeros((5, 7, 3), np.uint8))[1].tobytes())
    (7, 5)
    """
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        w, h = struct.unpack(">II", data[16:24])
        return w, h
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        w, h = struct.unpack("<HH", data[6:10])
        return w, h
    if data[:2] == b"BM" and len(data) >= 26:
        w, h = struct.unpack("<ii", data[18:26])
        return abs(w), abs(h)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        return _webp_dimensions(data)
    if data[:2] == b"\xff\xd8":
        return _jpeg_dimensions(data)
    return None


def _webp_dimensions(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X":
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return w, h
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(data) >= 30:
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    return None


def _jpeg_dimensions(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:
            at += 1
            continue
        if 0xD0 <= marker <= 0xD9 or marker == 0x01:
            at += 2
            continue
        length = int.from_bytes(data[at + 2:at + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[at + 5:at + 9])
            return w, h
        at += 2 + length
    return None


def check_pixel_count(data: bytes, *, source: str = "image") -> None:
    """Raise ImageTooLarge if the header says the image has more than `MAX_PIXELS`."""
    size = image_dimensions(data)
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise ImageTooLarge(
            f"{source}: {size[0]} x {size[1]} pixels is too large to read (at most "
            f"{MAX_PIXELS // 1_000_000} megapixels; scale the photo down)")


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
    check_pixel_count(data, source=source)
    buf = np.frombuffer(data, dtype=np.uint8)
    image = cv2.imdecode(buf, flags[reduce])
    if image is None:
        raise ImageUnreadable(f"{source}: not an image OpenCV can decode")
    check_image(image, source=source, reduce=reduce)
    return image


def read_image(path: str | Path, *, reduce: int = 1) -> np.ndarray:
    """Read an image file (see `decode_image`); missing or unreadable files raise typed errors."""
    return decode_image(read_file(path), reduce=reduce, source=str(path))


def read_file(path: str | Path) -> bytes:
    """An image file's bytes, undecoded; a missing or unreadable file raises ImageUnreadable."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ImageUnreadable(f"{path}: cannot read file ({exc.strerror or exc})") from exc


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
