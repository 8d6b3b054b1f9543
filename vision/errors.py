"""Typed errors of the camera pipeline: each stage raises one of these, never returns junk."""

from __future__ import annotations


class VisionError(ValueError):
    """Base of every error the pipeline raises for a frame it cannot read."""


class ImageUnreadable(VisionError):
    """The input is not a decodable image (missing file, empty file, not an image)."""


class ImageTooSmall(VisionError):
    """The image decodes but is too small to hold a readable board."""


class ImageTooLarge(VisionError):
    """The image has more pixels than the pipeline reads (refused before decoding)."""


class BoardNotFound(VisionError):
    """No 10 x 10 board outline and grid could be found in the image."""


class CalibrationMismatch(VisionError):
    """A calibration does not fit the frame (other image size, or the board has moved)."""
