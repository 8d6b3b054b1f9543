"""OpenCV's radial lens model on normalised coordinates (k1, k2), forwards and back."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]


def distort_normalised(xy: Array, k1: float, k2: float) -> Array:
    """OpenCV's radial model: ideal normalised coordinates -> distorted ones."""
    r2 = np.sum(xy * xy, axis=-1, keepdims=True)
    return np.asarray(xy * (1.0 + k1 * r2 + k2 * r2 * r2))


def undistort_normalised(xy: Array, k1: float, k2: float, iterations: int = 12) -> Array:
    """Inverse of `distort_normalised` (Newton on the radius; see `lens_is_invertible`)."""
    rd = np.sqrt(np.sum(xy * xy, axis=-1, keepdims=True))
    ru = rd.copy()
    for _ in range(iterations):
        r2 = ru * ru
        g = ru * (1.0 + k1 * r2 + k2 * r2 * r2) - rd
        dg = 1.0 + 3.0 * k1 * r2 + 5.0 * k2 * r2 * r2
        ru = ru - g / np.maximum(dg, 0.05)
    scale = np.where(rd > 1e-12, ru / np.maximum(rd, 1e-12), 1.0)
    return np.asarray(xy * scale)


def lens_is_invertible(width: int, height: int, focal: float, k1: float, k2: float) -> bool:
    """True when the radial model is one-to-one out to the image corners (no fold-over).

    Strong barrel coefficients with a short focal length make the polynomial turn back
    before the image corner, which no real lens does; such specs are refused.
    """
    r_corner = math.hypot(width / 2.0, height / 2.0) / focal
    r = np.linspace(0.0, 3.0 * r_corner, 600)
    g = r * (1.0 + k1 * r**2 + k2 * r**4)
    dg = 1.0 + 3.0 * k1 * r**2 + 5.0 * k2 * r**4
    reach = r[np.argmax(g >= r_corner)] if (g >= r_corner).any() else None
    return reach is not None and bool((dg[r <= reach] > 0.2).all()) and reach < 2.0 * r_corner
