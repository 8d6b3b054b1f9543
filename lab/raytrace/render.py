"""One ray-traced frame with its truth: render, bend through the lens, expose, add the
sensor's noise, compress.

The lens is applied after tracing: the scene is traced through an ideal pinhole on a
canvas large enough for the bent image, then resampled through OpenCV's radial model, so
the truth's corners (projected with the same model) and the image agree exactly.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from lab.raytrace.camera import Camera, undistort_pixels
from lab.raytrace.model import Scene
from lab.raytrace.povray import render_scene
from lab.raytrace.scene import (
    PRINT_NAME,
    _rotated,
    board_print,
    hand_balls,
    mask_text,
    scene_text,
)

Array = np.ndarray
LABEL_CORNERS = ((0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0))
"""a1, j1, j10, a10 in the labels' frame."""


@dataclass(frozen=True)
class Quality:
    """How carefully POV-Ray traces: antialiasing threshold (None: off) and threads."""

    antialias: float | None = 0.3
    threads: int = 1
    scale: float = 1.0
    """The image's size as a share of the camera's (tests render small)."""


DRAFT = Quality(antialias=None)


@dataclass(frozen=True)
class Rendered:
    """A frame as a camera delivers it (`image`, `encoded` JPEG bytes) and its truth."""

    image: Array
    encoded: bytes
    truth: dict[str, Any]
    canvas: Array | None = None
    """What POV-Ray traced (the ideal pinhole's canvas, before the lens and the camera's
    processing): a later frame that differs only inside a box is traced over it."""


Box = tuple[int, int, int, int]
"""A box of canvas pixels: x0, y0, x1, y1, the ends excluded."""


def changed_box(scene: Scene, balls: Array, canvas: tuple[int, int],
                margin_px: float = 6.0) -> Box | None:
    """The canvas box that holds every ball (N x 4: board-frame x, y, z and radius) and the
    shadow each casts on the table from each of the scene's lights (its penumbra
    included), as the camera sees them on a `canvas` (width, height) traced for it; None
    when nothing of it is in view.

    What changes between two frames of a game (the hand and the pieces put down since)
    is covered by such balls, so only this box needs tracing again."""
    cam = scene.camera
    cw, ch = canvas
    right, down, forward = cam.axes()
    rot = np.stack([right, down, forward])
    centre = cam.position()
    every = [np.asarray(balls, np.float64).reshape(-1, 4)]
    for light in scene.lights:
        lp = np.asarray(light.position, np.float64)
        b = every[0]
        up = b[:, 2] < lp[2] - 0.5
        b = b[up]
        rise = np.maximum(b[:, 2], 0.0) / (lp[2] - b[:, 2])
        shadow = b[:, :3] + (b[:, :3] - lp) * rise[:, None]
        shadow[:, 2] = 0.0
        radius = b[:, 3] * (1.0 + rise) + light.size * rise
        every.append(np.column_stack([shadow, radius]))
    allb = np.concatenate(every)
    local = (allb[:, :3] - centre) @ rot.T
    ahead = local[:, 2] > 0.5
    if not ahead.any():
        return None
    local, radius = local[ahead], allb[ahead, 3]
    f = cam.focal_px
    u = f * local[:, 0] / local[:, 2] + cw / 2 - 0.5
    v = f * local[:, 1] / local[:, 2] + ch / 2 - 0.5
    r = f * radius / local[:, 2] + margin_px
    x0, x1 = int(max(0, math.floor((u - r).min()))), int(min(cw, math.ceil((u + r).max()) + 1))
    y0, y1 = int(max(0, math.floor((v - r).min()))), int(min(ch, math.ceil((v + r).max()) + 1))
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    return x0, y0, x1, y1


def traced_canvas(camera: Camera) -> tuple[int, int, Array | None]:
    """The traced canvas and, with a bending lens, the output -> canvas pixel maps."""
    if not camera.distorted:
        return camera.width, camera.height, None
    w, h = camera.width, camera.height
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    ideal = undistort_pixels(camera, np.stack([xs.ravel(), ys.ravel()], axis=1))
    f = camera.focal_px
    half_w = float(np.abs(ideal[:, 0]).max()) * f + 2
    half_h = float(np.abs(ideal[:, 1]).max()) * f + 2
    cw, ch = 2 * int(math.ceil(half_w)), 2 * int(math.ceil(half_h))
    maps = np.empty((h, w, 2), np.float32)
    maps[..., 0] = (ideal[:, 0] * f + cw / 2 - 0.5).reshape(h, w)
    maps[..., 1] = (ideal[:, 1] * f + ch / 2 - 0.5).reshape(h, w)
    return cw, ch, maps


def _expose(image: Array, scene: Scene, rng: np.random.Generator) -> Array:
    """Auto-exposure, vignette, blur and sharpening, noise: the camera's own processing."""
    fx = scene.effects
    lin = np.power(image.astype(np.float32) / 255.0, 2.2)
    h, w = lin.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
    lin *= (1.0 - fx.vignette * r2)[..., None]
    luma = lin @ np.array([0.114, 0.587, 0.299], np.float32)
    centre = luma[h // 4: 3 * h // 4, w // 4: 3 * w // 4]
    level = float(np.percentile(centre, 55)) + 1e-4
    lin *= (fx.exposure_target ** 2.2) / level
    if fx.blur_px > 0.05:
        lin = cv2.GaussianBlur(lin, (0, 0), fx.blur_px)
    if fx.sharpen > 0:
        soft = cv2.GaussianBlur(lin, (0, 0), 1.2)
        lin = lin + fx.sharpen * (lin - soft)
    shot = np.sqrt(np.clip(lin, 0, None)) * fx.noise
    lin = lin + rng.normal(0.0, 1.0, lin.shape).astype(np.float32) * shot * fx.chroma_noise
    lin = lin + rng.normal(0.0, 1.0, lin.shape[:2]).astype(np.float32)[..., None] * shot
    out = np.power(np.clip(lin, 0.0, 1.0), 1 / 2.2) * 255.0
    return np.asarray(np.round(out), dtype=np.uint8)


def _label_corners(scene: Scene) -> Array:
    """The grid corners a1, j1, j10, a10 in the physical board frame (z = 0)."""
    pts = [(*_rotated(x, y, scene.board_turns), 0.0) for x, y in LABEL_CORNERS]
    return np.asarray(pts)


def occluded_cells(scene: Scene, mask: Array) -> list[str]:
    """Cells whose column (printed surface to the top of a bridge) the hand mask touches."""
    cam = scene.camera
    top = scene.edition.tile_height + scene.edition.bridge_height
    hidden = []
    for f in range(10):
        for r in range(10):
            corners = []
            for x, y in ((f, r), (f + 1, r), (f + 1, r + 1), (f, r + 1)):
                px, py = _rotated(x, y, scene.board_turns)
                corners += [(px, py, 0.0), (px, py, top)]
            img = cam.project(np.asarray(corners)).astype(np.float32)
            hull = cv2.convexHull(img).astype(np.int32)
            poly = np.zeros(mask.shape, np.uint8)
            cv2.fillConvexPoly(poly, hull, 1)
            if np.count_nonzero(mask[poly > 0]) >= 3:
                hidden.append(f"{chr(ord('a') + f)}{r + 1}")
    return sorted(hidden)


def _balls_mask(cam: Camera, balls: Array) -> Array:
    """The image's pixels inside the balls (N x 4: x, y, z, radius), as a 0/1 mask."""
    mask = np.zeros((cam.height, cam.width), np.uint8)
    right, down, forward = cam.axes()
    depth = (balls[:, :3] - cam.position()) @ forward
    centres = cam.project(balls[:, :3])
    for (u, v), r, z in zip(centres, balls[:, 3], depth, strict=True):
        if z > 0.5:
            cv2.circle(mask, (round(float(u)), round(float(v))),
                       max(1, round(cam.focal_px * float(r) / float(z))), 1, -1)
    return mask


def render(scene: Scene, quality: Quality = Quality(), *,
           board: tuple[int, ...], over: tuple[Array, Array] | None = None,
           traced_mask: bool = True) -> Rendered:
    """Trace `scene` and return the frame and its truth (the evaluation set's format).

    With `over` (a canvas traced at the same quality of a scene that differs from this one
    only by what some balls hold, and those balls: see `changed_box`), only the box around
    the balls and their shadows is traced again and the rest taken from the canvas; the
    lens, the camera's processing and the truth are as for a whole frame. The board's print
    (its water, frame line and wear) is drawn from `board`, the seed of the table it lies
    on: every photo of one table, the empty one calibration takes among them, shows one
    board, as a real table does. The
    hand's mask (which cells it hides, in the truth) is traced (`traced_mask`, a second
    run of POV-Ray), or else drawn from the balls that hold the arm (a little wider)."""
    if quality.scale != 1.0:
        cam = dataclasses.replace(scene.camera, width=round(scene.camera.width * quality.scale),
                                  height=round(scene.camera.height * quality.scale))
        scene = dataclasses.replace(scene, camera=cam)
    cam = scene.camera
    rng = np.random.default_rng([*scene.seed, 7])
    cw, ch, maps = traced_canvas(cam)
    assets = {PRINT_NAME: board_print(scene.edition, np.random.default_rng([*board, 3]))}
    if over is None:
        traced = render_scene(scene_text(scene, cam, cw, ch), cw, ch,
                              antialias=quality.antialias, threads=quality.threads,
                              assets=assets)
    else:
        base, balls = over
        if base.shape[:2] != (ch, cw):
            raise ValueError("the canvas traced over is not this scene's canvas")
        traced = base.copy()
        box = changed_box(scene, balls, (cw, ch))
        if box is not None:
            x0, y0, x1, y1 = box
            part = render_scene(scene_text(scene, cam, cw, ch), cw, ch,
                                antialias=quality.antialias, threads=quality.threads,
                                assets=assets, region=box)
            traced[y0:y1, x0:x1] = part[y0:y1, x0:x1]
    canvas = traced
    mask = np.zeros((cam.height, cam.width), np.uint8)
    if scene.hands and not traced_mask:
        mask = _balls_mask(cam, np.concatenate([hand_balls(h) for h in scene.hands]))
    elif scene.hands:
        m = render_scene(mask_text(scene, cam, cw, ch), cw, ch, antialias=None,
                         threads=quality.threads)[..., 1]
        mask = m if maps is None else cv2.remap(m, maps[..., 0], maps[..., 1],
                                                cv2.INTER_NEAREST)
        mask = (mask > 127).astype(np.uint8)
    if maps is not None:
        traced = cv2.remap(traced, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_REFLECT)
    image = _expose(traced, scene, rng)
    ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, scene.effects.jpeg_quality])
    assert ok
    encoded = bytes(jpeg.tobytes())
    image = cv2.imdecode(np.frombuffer(encoded, np.uint8), cv2.IMREAD_COLOR)
    corners = cam.project(_label_corners(scene))
    homography = None
    if not cam.distorted:
        homography = cv2.getPerspectiveTransform(np.asarray(LABEL_CORNERS, np.float32),
                                                 corners.astype(np.float32)).tolist()
    hidden = occluded_cells(scene, mask) if scene.hands else []
    d = np.hypot(corners[:, 0], corners[:, 1] - (cam.height - 1))
    others = np.delete(d, 0)
    truth = {
        "setup": scene.setup,
        "board": list(scene.board_rows()),
        "bridges": [list(b) for b in scene.bridge_names()],
        "occluded": bool(hidden),
        "occluded_cells": hidden,
        "corners": corners.round(3).tolist(),
        "homography": homography,
        "camera_matrix": cam.matrix.tolist(),
        "dist_coeffs": list(cam.dist_coeffs),
        "a1_margin_px": round(float(others.min() - d[0]), 2),
        "markers": {},
        "hand_pixels": int(mask.sum()),
        "source": "raytrace",
        "scene": _jsonable(scene),
    }
    return Rendered(image, encoded, truth, canvas)


def _jsonable(scene: Scene) -> dict[str, Any]:
    return dataclasses.asdict(scene)
