"""The board locator (vision.locate) on generated photos that are hard for it: a dim, noisy,
blurred webcam frame of a small board, and a window bar's hard shadow across the board."""

from __future__ import annotations

import numpy as np

from calibration.format import default_thresholds
from vision.locate import locate_board, order_visually
from vision.synth import CameraSpec, Effects, Lighting, SceneSpec, render

EMPTY = tuple("." * 10 for _ in range(10))


def _located_within(spec: SceneSpec, image: np.ndarray | None = None) -> float:
    """The largest distance (px) between the located grid corners and the true ones."""
    frame = render(spec)
    found = locate_board(default_thresholds(), frame.image if image is None else image)
    return float(np.abs(order_visually(found) - order_visually(frame.corners)).max())


def test_a_small_board_in_a_dim_noisy_blurred_jpeg_frame_is_found() -> None:
    # A cheap webcam in a dim room: blur spreads each grid line over several pixels, which
    # must not make the grid look weaker than it is.
    spec = SceneSpec(
        board=EMPTY,
        camera=CameraSpec(elevation_deg=88.0, azimuth_deg=10.0, distance=28.0, focal_px=870.0),
        lighting=Lighting(exposure=0.66, tint=(1.1, 1.0, 0.9)),
        effects=Effects(noise_sigma=8.6, blur_sigma=1.5, jpeg_quality=64),
        seed=5,
    )
    assert _located_within(spec) < 3.0
