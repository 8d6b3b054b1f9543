"""The border against its reference: what changed there, and what is only a shadow.

The border's samples are compared with those the calibration (or the bare board since)
showed: `border_changes` splits the change into what a shadow explains and what it does
not; `border_unmoved` tells whether anything on the border has moved since a change began.
"""

from __future__ import annotations

import numpy as np

from contracts.calibration import Thresholds
from vision.classify import median_along


def border_unmoved(settings: Thresholds, seen: np.ndarray, before: np.ndarray) -> bool:
    """Whether the border's (n, 3) samples are where they were `before`, up to the
    camera's noise and its exposure (the median change of every channel is taken out):
    an arm or a hand moves, a lamp turned on and left on does not (`still_share`,
    `still_levels`)."""
    expected, diff = _off_exposure(seen, before)
    least = np.maximum(settings.still_share * expected.mean(axis=1), settings.still_levels)
    return bool((diff <= least).all())


def _off_exposure(seen: np.ndarray, before: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, 3) border samples `before`, as the camera's exposure now shows them (the median
    change of every channel), and (n,) how far `seen` is from them (the largest channel)."""
    gain = median_along(np.maximum(seen, 1.0) / np.maximum(before, 1.0), 0)
    expected = before * gain
    return expected, np.abs(seen - expected).max(axis=1)


def border_changes(
    settings: Thresholds, ring: np.ndarray, reference: np.ndarray, limit: float,
    levels: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(n,) border samples unlike the bare border behind them, as (outliers, shadows).

    The overall change of exposure (the median ratio) is taken out first; a sample has
    changed when it then differs by more than `limit` (relative) and by `levels` (grey;
    default `odd_levels`).
    A changed sample is a shadow when every channel is darker by about the same factor (a
    tile's or a bridge's shadow under a low lamp falls across the border, and so does a
    hand's); otherwise it is an outlier (a hand, an arm, a sleeve changes the colour).
    """
    least = settings.odd_levels if levels is None else levels
    return split_changes(*border_change_levels(settings, ring, reference, limit), least)


def border_change_levels(
    settings: Thresholds, ring: np.ndarray, reference: np.ndarray, limit: float
) -> tuple[np.ndarray, np.ndarray]:
    """(n,) the grey levels by which each border sample differs from the bare border behind
    it where it differs by more than `limit` (relative), else 0; and (n,) whether its
    change is a shadow's (see `border_changes`, which counts the levels; and
    `Thresholds.shadow_tint`)."""
    expected, diff = _off_exposure(ring, reference)
    change = np.where(diff > limit * np.maximum(expected.mean(axis=1), 1.0), diff, 0.0)
    ratio = np.maximum(ring, 1.0) / np.maximum(expected, 1.0)
    top, bottom = ratio.max(axis=1), ratio.min(axis=1)
    noise = settings.shadow_noise_levels / np.maximum(expected.min(axis=1), 1.0)
    shadow = (top < 1.0) & (bottom > settings.shadow_deepest) & (
        top - bottom < settings.shadow_tint * ratio.mean(axis=1) + noise)
    return change, shadow


def split_changes(
    change: np.ndarray, shadow: np.ndarray, levels: float
) -> tuple[np.ndarray, np.ndarray]:
    """`border_change_levels`' samples changed by more than `levels` grey levels, as
    (outliers, shadows)."""
    odd = change > levels
    return odd & ~shadow, odd & shadow


def strip_correlation(ref: np.ndarray, now: np.ndarray) -> np.ndarray:
    a = ref.reshape(len(ref), -1)
    b = now.reshape(len(now), -1)
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    den = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1)) + 1e-6
    result: np.ndarray = (a * b).sum(axis=1) / den
    return result
