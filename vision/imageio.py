"""Edge of the pipeline: bytes or a file path in, a BGR image out, or a typed error."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

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
