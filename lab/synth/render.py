"""Render a SceneSpec into a photo-like frame with ground truth.

How it draws (2.5D, numpy + OpenCV only): the table and the printed board are textures
warped by the board-plane homographies; soft shadows and contact shadows are blurred masks
multiplied in; tiles (bevelled boxes), bridges (arched bands cut into segments) and hands
(capsules) are projected 3D polygons drawn back to front with anti-aliasing, each face
shaded by its normal against the lamp; then lamp falloff, tint, vignette and glare, lens
distortion, blur, sensor noise and JPEG.

Orientation rule (binding for the truth): a1 is the board corner nearest the bottom-left of
the image, files run left to right and ranks bottom to top as the image shows them. The
renderer keeps the board contents in that labelling and turns the camera about the board
centre by a multiple of 90 degrees (a relabelling of the physical square board) so that the
rule holds for any azimuth; `Frame.a1_margin_px` says how clear-cut the choice was (near
45 degrees of in-image rotation two corners are almost equally near; the named setups keep
the board within about 35 degrees of upright so the margin stays large).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from lab.synth.camera import Camera, distortion_maps, intrinsics, look_at
from lab.synth.lens import distort_normalised
from lab.synth.position import Bridge, Cell, cell_name, parse_cell
from lab.synth.spec import CameraSpec, Effects, HandSpec, Lighting, SceneSpec, TileLook
from lab.synth.textures import (
    BOARD_PX_PER_CELL,
    GRAIN_TEXELS_PER_CELL,
    TABLE_TEXEL_CELLS,
    TABLE_TEXELS,
    board_texture,
    skin_pattern,
    table_texture,
    tile_grain,
)

Array = npt.NDArray[Any]

SHIFT = 4
SCALE = 1 << SHIFT
OCCLUSION_COVER = 0.1
"""A pixel counts as hidden when a hand covers more than this fraction of it (motion blur
and anti-aliasing make partial cover)."""


@dataclass(frozen=True, eq=False)
class Frame:
    """A rendered image and what is really in it.

    `corners` (4 x 2, image pixels) are the outer corners of the cell grid in the order
    a1, j1 (end of rank 1), j10, a10. `homography` maps board coordinates (x along files,
    y along ranks, cells, origin at the a1 corner; cell centre of (file f, rank r) 0-based is
    (f + 0.5, r + 0.5)) to image pixels on the printed surface; None when the lens distorts.
    `camera_matrix` and `dist_coeffs` (k1, k2, p1, p2) describe the lens as OpenCV does.
    `occlusion_mask` is 255 where a hand, arm or held tile covers the image.
    `encoded` holds the JPEG bytes when the spec asks for JPEG (`image` is their decoding).
    """

    image: Array
    board: tuple[str, ...]
    bridges: tuple[Bridge, ...]
    occluded_cells: frozenset[str]
    occluded: bool
    corners: Array
    homography: Array | None
    camera_matrix: Array
    dist_coeffs: tuple[float, float, float, float]
    a1_margin_px: float
    occlusion_mask: Array
    encoded: bytes | None
    markers: dict[int, Array] = field(default_factory=dict)
    """ArUco id -> its 4 corners in image pixels (OpenCV's order), when the spec has markers."""


# ---------------------------------------------------------------------------- camera set-up


@dataclass(frozen=True, eq=False)
class _Setup:
    cam: Camera
    light: Array
    a1_margin: float
    margin: tuple[int, int]


def _pose_for_rule(spec: SceneSpec) -> tuple[float, tuple[float, float], float]:
    """(azimuth, target) turned by a multiple of 90 degrees so a1 lands bottom-left."""
    cam_spec = spec.camera
    n = spec.size
    centre = np.array([n / 2.0, n / 2.0])
    corners = np.array([[0, 0, 0], [n, 0, 0], [n, n, 0], [0, n, 0]], np.float64)
    k = intrinsics(cam_spec)
    bottom_left = np.array([0.0, float(cam_spec.height)])
    for quarter in range(4):
        az = cam_spec.azimuth_deg - 90.0 * quarter
        ang = math.radians(-90.0 * quarter)
        rel = np.array(cam_spec.target) - centre
        rot = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]])
        target = centre + rot @ rel
        r, c = look_at(replace(cam_spec, target=(float(target[0]), float(target[1]))), az)
        px, _ = Camera(k, r, c, cam_spec.width, cam_spec.height).project(corners)
        if cam_spec.distorted:
            middle = np.array([cam_spec.width / 2.0, cam_spec.height / 2.0])
            norm = (px - middle) / cam_spec.focal_px
            px = distort_normalised(norm, cam_spec.k1, cam_spec.k2) * cam_spec.focal_px + middle
        dist = np.linalg.norm(px - bottom_left, axis=1)
        order = np.argsort(dist)
        if order[0] == 0:
            return az, (float(target[0]), float(target[1])), float(dist[order[1]] - dist[order[0]])
    raise AssertionError("no quarter turn puts a1 nearest the bottom-left")


def a1_margin_px(camera: CameraSpec, size: int = 10) -> float:
    """How much nearer the bottom-left image corner a1 is than the next board corner (px).

    Small values mean the board is turned near 45 degrees in the image, where the
    a1-bottom-left rule becomes ambiguous.
    """
    empty = tuple("." * size for _ in range(size))
    return _pose_for_rule(SceneSpec(board=empty, size=size, camera=camera))[2]


@lru_cache(maxsize=32)
def _setup(spec_key: SceneSpec) -> _Setup:
    cam_spec = spec_key.camera
    az, target, margin_px = _pose_for_rule(spec_key)
    posed = replace(cam_spec, target=target)
    r, c = look_at(posed, az)
    if cam_spec.distorted:
        _, _, canvas, margin = distortion_maps(
            cam_spec.width, cam_spec.height, cam_spec.focal_px, cam_spec.k1, cam_spec.k2
        )
    else:
        canvas, margin = (cam_spec.width, cam_spec.height), (0, 0)
    cam = Camera(intrinsics(cam_spec, margin), r, c, canvas[0], canvas[1], margin)
    n = spec_key.size
    lamp = np.array(spec_key.lighting.lamp, np.float64)
    light = lamp - np.array([n / 2.0, n / 2.0, 0.0])
    light /= np.linalg.norm(light)
    if light[2] < 0.15:
        light[2] = 0.15
        light /= np.linalg.norm(light)
    return _Setup(cam, light, margin_px, margin)


# ---------------------------------------------------------------------------- drawing helpers


def _poly(img: Array, pts: Array, color: tuple[float, ...]) -> None:
    cv2.fillConvexPoly(img, np.round(pts * SCALE).astype(np.int32), color, cv2.LINE_AA, SHIFT)


def _hull(img: Array, pts: Array, color: tuple[float, ...], aa: bool = True) -> None:
    hull = cv2.convexHull(np.round(pts * SCALE).astype(np.int32))
    cv2.fillConvexPoly(img, hull, color, cv2.LINE_AA if aa else cv2.LINE_8, SHIFT)


def _shade(normal: Array, light: Array, ambient: float, diffuse: float) -> float:
    flat = ambient + diffuse * max(0.0, float(light[2]))
    return (ambient + diffuse * max(0.0, float(normal @ light))) / flat


def _color(albedo: Array, shade: float, spec: float) -> tuple[float, float, float]:
    c = albedo * shade + 255.0 * spec
    return (float(c[0]), float(c[1]), float(c[2]))


def _to_plane(points: Array, light: Array, z: float = 0.0) -> Array:
    """Points (n, 3) pushed along the light onto the plane at height z -> (n, 2)."""
    t = (points[:, 2] - z) / light[2]
    return np.asarray(points[:, :2] - light[None, :2] * t[:, None])


def _apply_h(h: Array, xy: Array) -> Array:
    p = np.column_stack([xy, np.ones(len(xy))]) @ h.T
    return np.asarray(p[:, :2] / p[:, 2:3])


# ---------------------------------------------------------------------------- scene objects


@dataclass(frozen=True)
class _Tile:
    cell: Cell
    colour: str
    centre: tuple[float, float]
    angle: float


def _tile_jitter(spec: SceneSpec) -> tuple[Array, Array, Array]:
    rng = np.random.default_rng([spec.seed, 3])
    n = spec.size
    look = spec.tiles
    offset = rng.uniform(-1.0, 1.0, (n, n, 2)) * look.jitter_offset
    angle = rng.uniform(-1.0, 1.0, (n, n)) * math.radians(look.jitter_rotation_deg)
    tint = (
        1.0
        + rng.normal(0.0, 0.3, (n, n, 3)) * look.color_variation
        + rng.normal(0.0, 1.0, (n, n, 1)) * look.color_variation
    )
    return offset, angle, tint


def _tiles(spec: SceneSpec) -> list[_Tile]:
    """Tiles with their jitter, limited so that neighbouring tiles never overlap."""
    offset, angle, _ = _tile_jitter(spec)
    half = spec.tiles.size / 2.0
    tiles = []
    n = spec.size
    for row_index, row in enumerate(spec.board):
        rank = n - 1 - row_index
        for f, ch in enumerate(row):
            if ch == ".":
                continue
            a = float(angle[f, rank])
            # the turned tile's half extent along the grid axes must stay within its cell
            while half * (abs(math.cos(a)) + abs(math.sin(a))) > 0.495 and abs(a) > 1e-4:
                a *= 0.8
            room = max(0.0, 0.495 - half * (abs(math.cos(a)) + abs(math.sin(a))))
            ox = float(np.clip(offset[f, rank, 0], -room, room))
            oy = float(np.clip(offset[f, rank, 1], -room, room))
            tiles.append(_Tile((f, rank), ch, (f + 0.5 + ox, rank + 0.5 + oy), a))
    return tiles


def _box_vertices(
    centre: tuple[float, float, float],
    angle: float,
    half: float,
    height: float,
    bevel: float,
    half_y: float | None = None,
) -> Array:
    """12 vertices: bottom rectangle, bevel-bottom one (z = h - bevel), inset top one.

    The box is `2 half` by `2 half_y` (square unless half_y is given), turned by `angle`.
    """
    ca, sa = math.cos(angle), math.sin(angle)
    hy = half if half_y is None else half_y
    square = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float64)
    rot = np.array([[ca, -sa], [sa, ca]])
    out = []
    for inset, z in ((0.0, 0.0), (0.0, height - bevel), (bevel, height)):
        xy = square * np.array([half - inset, hy - inset]) @ rot.T + np.array(centre[:2])
        out.append(np.column_stack([xy, np.full(4, centre[2] + z)]))
    return np.vstack(out)


_BOX_FACES: list[tuple[list[int], str]] = (
    [([i, (i + 1) % 4, 4 + (i + 1) % 4, 4 + i], "side") for i in range(4)]
    + [([4 + i, 4 + (i + 1) % 4, 8 + (i + 1) % 4, 8 + i], "bevel") for i in range(4)]
    + [([8, 9, 10, 11], "top")]
)


_BOX_INDEX = np.array([idx for idx, _ in _BOX_FACES])
_TOP_ONLY = np.array([1.0 if kind == "top" else 0.0 for _, kind in _BOX_FACES])


def _draw_faces(
    img: Array,
    cam: Camera,
    verts: Array,
    faces: Array,
    albedo: Array,
    light: Array,
    spec: SceneSpec,
    gloss: float,
    power: float,
    mask: Array | None = None,
    material: Array | None = None,
    material_values: Array | None = None,
) -> None:
    """Draw the camera-facing quads `faces` (k, 4 vertex indices) of a convex solid.

    `mask` gets 1 under every drawn face; `material` gets `material_values[k]` under face k
    (it marks which pixels show a tile top, for the grain texture).
    """
    px, _ = cam.project(verts)
    ipx = np.round(px * SCALE).astype(np.int32)
    quads = verts[faces]
    fc = quads.mean(axis=1)
    e1 = quads[:, 1] - quads[:, 0]
    e2 = quads[:, 3] - quads[:, 0]
    normal = np.cross(e1, e2)
    norm = np.linalg.norm(normal, axis=1, keepdims=True)
    normal = normal / np.maximum(norm, 1e-12)
    outward = np.sign(np.sum(normal * (fc - verts.mean(axis=0)), axis=1, keepdims=True))
    normal *= np.where(outward == 0, 1.0, outward)
    view = cam.C[None, :] - fc
    facing = (np.sum(normal * view, axis=1) > 0) & (norm[:, 0] > 1e-12)
    view /= np.linalg.norm(view, axis=1, keepdims=True)
    lit = spec.lighting
    flat = lit.ambient + lit.diffuse * max(0.0, float(light[2]))
    shade = (lit.ambient + lit.diffuse * np.maximum(0.0, normal @ light)) / flat
    half = view + light[None, :]
    half /= np.linalg.norm(half, axis=1, keepdims=True)
    spec_term = gloss * 255.0 * np.maximum(0.0, np.sum(normal * half, axis=1)) ** power
    colours = albedo[None, :] * shade[:, None] + spec_term[:, None]
    for k in np.flatnonzero(facing):
        c = colours[k]
        quad = ipx[faces[k]]
        cv2.fillConvexPoly(img, quad, (float(c[0]), float(c[1]), float(c[2])), cv2.LINE_AA, SHIFT)
        if mask is not None:
            cv2.fillConvexPoly(mask, quad, (1.0,), cv2.LINE_AA, SHIFT)
        if material is not None:
            value = 0.0 if material_values is None else float(material_values[k])
            cv2.fillConvexPoly(material, quad, (value,), cv2.LINE_AA, SHIFT)


def _draw_box(
    img: Array,
    cam: Camera,
    verts: Array,
    albedo: Array,
    light: Array,
    spec: SceneSpec,
    gloss: float,
    mask: Array | None = None,
    material: Array | None = None,
) -> None:
    _draw_faces(
        img, cam, verts, _BOX_INDEX, albedo, light, spec, gloss, 30.0, mask, material, _TOP_ONLY
    )


def _bridge_segments(
    spec: SceneSpec, tiles_at: dict[Cell, _Tile], bridge: Bridge, segments: int = 14
) -> list[Array]:
    """Each segment of a bridge as 8 vertices (4 at its start, 4 at its end).

    The bridge is a solid arch: its feet stand on the two end tiles (overhanging their
    centres by `overhang`), the deck rises towards the middle, and the underside is cut
    into an arch `arch_height` above the tile tops, open between the feet.
    """
    t_a = tiles_at[parse_cell(bridge[0], spec.size)]
    t_b = tiles_at[parse_cell(bridge[1], spec.size)]
    return _arch_segments(
        np.array(t_a.centre), np.array(t_b.centre), spec.tiles.height, spec, segments
    )


def _arch_segments(a: Array, b: Array, base: float, spec: SceneSpec, segments: int) -> list[Array]:
    """A bridge's solid arch between points a and b (x, y) with its feet at height base."""
    look = spec.bridge_look
    length = float(np.linalg.norm(b - a))
    u = (b - a) / length
    v = np.array([-u[1], u[0]])
    start = a - u * look.overhang
    total = length + 2 * look.overhang
    halfw = look.width / 2.0
    foot = min(0.45, (look.overhang + 0.22) / total)
    drop = 0.35 * look.arch_height
    rings = []
    for i in range(segments + 1):
        t = i / segments
        p = start + u * total * t
        top = base + look.arch_height + look.thickness - drop * (1.0 - math.sin(math.pi * t))
        inner = (t - foot) / (1.0 - 2.0 * foot)
        zb = base + (look.arch_height * math.sin(math.pi * inner) ** 0.7 if 0 < inner < 1 else 0.0)
        zb = min(zb, top - look.thickness)
        rings.append(
            np.array(
                [
                    [*(p - v * halfw), zb],
                    [*(p + v * halfw), zb],
                    [*(p + v * halfw), top],
                    [*(p - v * halfw), top],
                ]
            )
        )
    return [np.vstack([rings[i], rings[i + 1]]) for i in range(segments)]


_SEG_FACES = np.array(
    [[0, 1, 5, 4], [3, 2, 6, 7], [0, 3, 7, 4], [1, 2, 6, 5], [0, 1, 2, 3], [4, 5, 6, 7]]
)


def _draw_segment(
    img: Array,
    cam: Camera,
    verts: Array,
    albedo: Array,
    light: Array,
    spec: SceneSpec,
    first: bool,
    last: bool,
    material: Array | None = None,
) -> None:
    faces = _SEG_FACES[[True, True, True, True, first, last]]
    _draw_faces(img, cam, verts, faces, albedo, light, spec, 0.12, 20.0, None, material)


# ---------------------------------------------------------------------------- static layer


def _static_key(spec: SceneSpec) -> SceneSpec:
    """What the static layer depends on: no hands, no sensor, no overall light levels."""
    lit = replace(
        spec.lighting,
        exposure=1.0,
        tint=(1.0, 1.0, 1.0),
        falloff=0.0,
        gradient=0.0,
        gradient_deg=0.0,
        glare=0.0,
        glare_radius=1.0,
        glare_spots=(),
        vignette=0.0,
    )
    return replace(spec, hands=(), effects=Effects(), lighting=lit)


def _light_key(spec: SceneSpec) -> SceneSpec:
    """What the light maps depend on: camera and lighting only."""
    return SceneSpec(
        board=tuple("." * spec.size for _ in range(spec.size)),
        size=spec.size,
        camera=spec.camera,
        lighting=spec.lighting,
    )


def _board_layers(spec: SceneSpec, setup: _Setup) -> Array:
    cam = setup.cam
    size = (cam.width, cam.height)
    look = spec.board_look
    t = look.thickness
    # table, world-anchored periodic texture
    tex = table_texture(spec.table, spec.seed)
    s = TABLE_TEXEL_CELLS / max(spec.table.scale, 1e-3)
    a_table = np.array([[s, 0, -TABLE_TEXELS * s / 3], [0, -s, TABLE_TEXELS * s / 2], [0, 0, 1]])
    # the table is background: warp it at half resolution and scale up
    half_size = ((size[0] + 1) // 2, (size[1] + 1) // 2)
    to_half = np.array([[0.5, 0, -0.25], [0, 0.5, -0.25], [0, 0, 1.0]])
    h_table = to_half @ cam.plane_homography(-t) @ a_table
    small = cv2.warpPerspective(
        tex, h_table, half_size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP
    )
    img = cv2.resize(small, size, interpolation=cv2.INTER_LINEAR).astype(np.float32)
    if spec.table.extent is not None:
        _apply_table_edge(img, spec, cam, -t)
    # board edge (cardboard thickness), drawn where it shows beyond the printed top
    btex, border = board_texture(look, spec.size, spec.seed)  # BGRA, alpha 255 on the board
    n = spec.size
    lo, hi = -border, n + border
    outline = np.array([[lo, lo], [hi, lo], [hi, hi], [lo, hi]], np.float64)
    edge_albedo = np.array(look.border_color, np.float64) * 0.55
    for i in range(4):
        a, b = outline[i], outline[(i + 1) % 4]
        quad = np.array([[*a, 0.0], [*b, 0.0], [*b, -t], [*a, -t]])
        out = np.array([(b - a)[1], -(b - a)[0], 0.0])
        out /= np.linalg.norm(out)
        fc = quad.mean(axis=0)
        if out @ (cam.C - fc) <= 0:
            continue
        px, _ = cam.project(quad)
        lit = spec.lighting
        _poly(img, px, _color(edge_albedo, _shade(out, setup.light, lit.ambient, lit.diffuse), 0.0))
    if spec.markers is not None:
        _draw_markers(img, spec, setup, -t)
    # printed board
    p = BOARD_PX_PER_CELL
    side = btex.shape[0]
    a_board = np.array(
        [[1 / p, 0, 0.5 / p - border], [0, -1 / p, (side - 0.5) / p - border], [0, 0, 1]]
    )
    h_board = cam.plane_homography(0.0) @ a_board
    roi = _roi(cam, outline)
    if roi is None:
        return np.asarray(img, np.float32)
    x0, y0, x1, y1 = roi
    shift = np.array([[1.0, 0, -x0], [0, 1.0, -y0], [0, 0, 1.0]])
    warped = cv2.warpPerspective(btex, shift @ h_board, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
    alpha = warped[..., 3].astype(np.float32) * np.float32(1.0 / 255.0)
    region = img[y0:y1, x0:x1]
    img[y0:y1, x0:x1] = cv2.blendLinear(
        warped[..., :3].astype(np.float32), region, alpha, 1.0 - alpha
    )
    return np.asarray(img, np.float32)


def _apply_table_edge(img: Array, spec: SceneSpec, cam: Camera, z: float) -> None:
    """Show the floor beyond the table's edge (a dim, blurred, far surface)."""
    table = spec.table
    assert table.extent is not None
    xx, yy, gw, gh = _coarse_grid(cam.width, cam.height, 4)
    pts = np.stack([xx, yy, np.ones(xx.size)], axis=1) @ np.linalg.inv(cam.plane_homography(z)).T
    w = pts[:, 2]
    valid = w > 1e-9
    safe = np.where(valid, w, 1.0)
    cx = spec.size / 2.0 + table.offset[0]
    cy = spec.size / 2.0 + table.offset[1]
    # signed distance to the edge on the table plane (cells, positive on the table)
    dist = np.minimum(
        table.extent[0] - np.abs(pts[:, 0] / safe - cx),
        table.extent[1] - np.abs(pts[:, 1] / safe - cy),
    )
    dist = np.where(valid, np.clip(dist, -50.0, 50.0), -50.0)
    if dist.min() > 0.5:
        return
    fine = cv2.resize(
        dist.reshape(gh, gw).astype(np.float32),
        (cam.width, cam.height),
        interpolation=cv2.INTER_LINEAR,
    )
    # distance in pixels = distance in cells / its change per pixel: a one-pixel soft edge
    gy, gx = np.gradient(fine)
    slope = np.maximum(np.sqrt(gx * gx + gy * gy), 1e-4)
    on_table = np.clip(0.5 + fine / slope, 0.0, 1.0).astype(np.float32)
    rng = np.random.default_rng([spec.seed, 37])
    blotch = cv2.resize(
        rng.normal(0.0, 1.0, (9, 16)).astype(np.float32),
        (cam.width, cam.height),
        interpolation=cv2.INTER_CUBIC,
    )
    floor = (
        np.array(table.floor_color, np.float32)[None, None, :] * (1.0 + 0.08 * blotch)[..., None]
    )
    img[:] = cv2.blendLinear(img, floor, on_table, 1.0 - on_table)


def _marker_squares(spec: SceneSpec) -> list[tuple[int, Array]]:
    """(id, 4 board-plane corners of the black square, OpenCV order) for each marker."""
    m = spec.markers
    if m is None:
        return []
    n = spec.size
    out = []
    lo, hi = -spec.board_look.border_width, n + spec.board_look.border_width
    for marker_id, (cx, cy, sx, sy) in zip(
        m.ids,
        ((lo, lo, -1, -1), (hi, lo, 1, -1), (hi, hi, 1, 1), (lo, hi, -1, 1)),
        strict=True,
    ):
        x_in, y_in = cx + sx * m.gap, cy + sy * m.gap
        x_out, y_out = x_in + sx * m.size, y_in + sy * m.size
        left, right = min(x_in, x_out), max(x_in, x_out)
        bottom, top = min(y_in, y_out), max(y_in, y_out)
        # the marker is printed upright: its image's top edge faces +y (away from rank 1)
        square = np.array([[left, top], [right, top], [right, bottom], [left, bottom]])
        out.append((marker_id, square))
    return out


def _draw_markers(img: Array, spec: SceneSpec, setup: _Setup, z: float) -> None:
    m = spec.markers
    assert m is not None
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, m.dictionary))
    cam = setup.cam
    px_per = 24
    for marker_id, square in _marker_squares(spec):
        side = int(round(m.size * px_per))
        pad = int(round(m.paper * px_per))
        marker = cv2.aruco.generateImageMarker(dictionary, marker_id, side, borderBits=1)
        sheet = np.full((side + 2 * pad, side + 2 * pad), 255, np.uint8)
        sheet[pad : pad + side, pad : pad + side] = marker
        ink = np.where(sheet > 127, 238.0, 28.0).astype(np.float32)
        left, top = square[0]
        # sheet texel (u, v) centre -> board point
        a = np.array(
            [
                [m.size / side, 0, left - m.paper + 0.5 * m.size / side],
                [0, -m.size / side, top + m.paper - 0.5 * m.size / side],
                [0, 0, 1.0],
            ]
        )
        h = cam.plane_homography(z) @ a
        outline = np.array(
            [
                [left - m.paper, top + m.paper],
                [left + m.size + m.paper, top + m.paper],
                [left + m.size + m.paper, top - m.size - m.paper],
                [left - m.paper, top - m.size - m.paper],
            ]
        )
        roi = _roi(cam, outline, z)
        if roi is None:
            continue
        x0, y0, x1, y1 = roi
        shift = np.array([[1.0, 0, -x0], [0, 1.0, -y0], [0, 0, 1.0]])
        size = (x1 - x0, y1 - y0)
        warped = cv2.warpPerspective(ink, shift @ h, size, flags=cv2.INTER_LINEAR)
        alpha = cv2.warpPerspective(np.ones_like(ink), shift @ h, size, flags=cv2.INTER_LINEAR)
        region = img[y0:y1, x0:x1]
        region *= (1.0 - alpha)[..., None]
        region += (warped * alpha)[..., None]


def _marker_corners(spec: SceneSpec, setup: _Setup) -> dict[int, Array]:
    z = -spec.board_look.thickness
    out = {}
    for marker_id, square in _marker_squares(spec):
        px, _ = setup.cam.project(np.column_stack([square, np.full(4, z)]))
        out[marker_id] = _canvas_to_image(px, spec, setup)
    return out


def _roi(cam: Camera, outline: Array, z: float = 0.0) -> tuple[int, int, int, int] | None:
    """Canvas bounding box (x0, y0, x1, y1) of a board-plane outline at height z, clipped."""
    pts = np.column_stack([outline, np.full(len(outline), z)])
    px, depth = cam.project(pts)
    if (depth <= 0).any():
        return 0, 0, cam.width, cam.height
    x0, y0 = np.floor(px.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(px.max(axis=0)).astype(int) + 3
    x0, y0 = max(int(x0), 0), max(int(y0), 0)
    x1, y1 = min(int(x1), cam.width), min(int(y1), cam.height)
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1, y1


def _grid_outline(size: int, margin: float) -> Array:
    lo, hi = -margin, size + margin
    return np.array([[lo, lo], [hi, lo], [hi, hi], [lo, hi]], np.float64)


def _pixels_per_cell(spec: SceneSpec, cam: Camera) -> float:
    n = spec.size
    px, _ = cam.project(
        np.array([[n / 2, n / 2, 0.0], [n / 2 + 1, n / 2, 0.0], [n / 2, n / 2 + 1, 0.0]])
    )
    return float(max(np.linalg.norm(px[1] - px[0]), np.linalg.norm(px[2] - px[0])))


def _apply_shadows(
    img: Array,
    spec: SceneSpec,
    setup: _Setup,
    casters: list[Array],
    footprints: list[Array],
    softness: float,
    strength: float,
    contact: float,
    contact_softness: float = 0.07,
    plane_z: float = 0.0,
    only: Array | None = None,
) -> None:
    """Darken img under the casters' soft shadows and the footprints' contact shadows.

    Shadows fall on the plane at height `plane_z`; `only` (0..1 per canvas pixel) limits
    where they darken (e.g. tile tops).

    Casters are world point sets pushed along the light onto the board plane; footprints
    are board-plane polygons darkened straight below (ambient occlusion). The masks are
    drawn at half resolution inside the bounding box of what they cover, then blurred.
    """
    cam = setup.cam
    h_half = np.diag([0.5, 0.5, 1.0]) @ cam.plane_homography(plane_z)
    ppc = _pixels_per_cell(spec, cam) / 2.0
    layers = []
    if casters and strength > 0:
        polys = [_apply_h(h_half, _to_plane(pts, setup.light, plane_z)) for pts in casters]
        layers.append((polys, max(0.8, softness * ppc), strength, False))
    if footprints and contact > 0:
        polys = [_apply_h(h_half, xy) for xy in footprints]
        layers.append((polys, max(0.6, contact_softness * ppc), contact, True))
    if not layers:
        return
    allpts = np.vstack([p for polys, *_ in layers for p in polys])
    pad = 3.0 * max(sigma for _, sigma, _, _ in layers) + 2.0
    hw, hh = cam.width // 2 + 1, cam.height // 2 + 1
    x0 = int(max(0, np.floor(allpts[:, 0].min() - pad)))
    y0 = int(max(0, np.floor(allpts[:, 1].min() - pad)))
    x1 = int(min(hw, np.ceil(allpts[:, 0].max() + pad)))
    y1 = int(min(hh, np.ceil(allpts[:, 1].max() + pad)))
    if x1 <= x0 or y1 <= y0:
        return
    factor = np.ones((y1 - y0, x1 - x0), np.float32)
    offset = np.array([x0, y0], np.float64)
    for polys, sigma, amount, multiply in layers:
        mask: Array = np.zeros_like(factor)
        for poly in polys:
            _hull(mask, poly - offset, (1.0,), aa=False)
        mask = cv2.GaussianBlur(mask, (0, 0), sigma)
        if multiply:
            factor *= 1.0 - amount * mask
        else:
            factor -= amount * mask
    fx0, fy0 = 2 * x0, 2 * y0
    fx1, fy1 = min(2 * x1, cam.width), min(2 * y1, cam.height)
    full = cv2.resize(factor, (2 * (x1 - x0), 2 * (y1 - y0)), interpolation=cv2.INTER_LINEAR)
    full = full[: fy1 - fy0, : fx1 - fx0]
    if only is not None:
        full = 1.0 - (1.0 - full) * only[fy0:fy1, fx0:fx1]
    img[fy0:fy1, fx0:fx1] *= full[..., None]


@lru_cache(maxsize=6)
def _static_layer(spec: SceneSpec) -> Array:
    """Table, board, shadows, tiles and bridges (before lamp falloff and camera effects)."""
    setup = _setup(spec)
    cam = setup.cam
    img = _board_layers(spec, setup)
    tiles = _tiles(spec)
    tiles_at = {t.cell: t for t in tiles}
    look: TileLook = spec.tiles
    half = look.size / 2.0
    bevel = min(look.bevel, half * 0.5, look.height * 0.5)
    boxes = [
        _box_vertices((t.centre[0], t.centre[1], 0.0), t.angle, half, look.height, bevel)
        for t in tiles
    ]
    _, _, tint = _tile_jitter(spec)
    albedos = [
        np.array(look.light_color if t.colour == "L" else look.dark_color, np.float64)
        * tint[t.cell[0], t.cell[1]]
        for t in tiles
    ]
    loose_rng = np.random.default_rng([spec.seed, 23])
    for piece in spec.loose_tiles:
        z0 = -spec.board_look.thickness
        angle = math.radians(piece.angle_deg)
        boxes.append(_box_vertices((piece.x, piece.y, z0), angle, half, look.height, bevel))
        base = look.light_color if piece.colour == "L" else look.dark_color
        albedos.append(np.array(base, np.float64) * loose_rng.normal(1.0, look.color_variation))
    for prop in spec.props:
        z0 = -spec.board_look.thickness
        boxes.append(
            _box_vertices(
                (prop.x, prop.y, z0),
                math.radians(prop.angle_deg),
                prop.width / 2.0,
                prop.height,
                min(0.08, prop.height / 3.0),
                prop.depth / 2.0,
            )
        )
        albedos.append(np.array(prop.color, np.float64))
    segments = [_bridge_segments(spec, tiles_at, br) for br in spec.bridges]
    casters = list(boxes) + [seg for segs in segments for seg in segs]
    footprints = [b[:4, :2] * 1.0 + (b[:4, :2] - b[:4, :2].mean(axis=0)) * 0.12 for b in boxes]
    lit = spec.lighting
    _apply_shadows(
        img, spec, setup, casters, footprints, lit.shadow_softness, lit.shadow_strength, 0.35
    )

    items: list[tuple[float, int, int, int]] = []
    for i, box in enumerate(boxes):
        depth = float(np.linalg.norm(box.mean(axis=0) - cam.C))
        items.append((depth, 0, i, 0))
    for bi, segs in enumerate(segments):
        for si, seg in enumerate(segs):
            items.append((float(np.linalg.norm(seg.mean(axis=0) - cam.C)), 1, bi, si))
    items.sort(key=lambda it: -it[0])
    light = setup.light
    material = np.zeros((cam.height, cam.width), np.float32)
    bridge_rng = np.random.default_rng([spec.seed, 5])
    bridge_albedo = [
        np.array(spec.bridge_look.color, np.float64) * bridge_rng.uniform(0.95, 1.05)
        for _ in spec.bridges
    ]
    for _, kind, i, j in items:
        if kind == 0:
            _draw_box(img, cam, boxes[i], albedos[i], light, spec, look.gloss, None, material)
        else:
            segs = segments[i]
            first, last = j == 0, j == len(segs) - 1
            _draw_segment(img, cam, segs[j], bridge_albedo[i], light, spec, first, last, material)
    bridge_parts = [seg for segs in segments for seg in segs]
    if bridge_parts and tiles:
        # bridges also shade the tile tops they stand on and pass beside
        _apply_shadows(
            img,
            spec,
            setup,
            bridge_parts,
            [],
            lit.shadow_softness * 0.6,
            lit.shadow_strength,
            0.0,
            plane_z=look.height,
            only=np.clip(material, 0.0, 1.0),
        )
    grain_roi = _roi(cam, _grid_outline(spec.size, 0.6), look.height)
    if look.grain > 0 and tiles and grain_roi is not None:
        x0, y0, x1, y1 = grain_roi
        grain = tile_grain(spec.seed)
        g = GRAIN_TEXELS_PER_CELL
        h_top = cam.plane_homography(look.height) @ np.array(
            [[1 / g, 0, 0], [0, 1 / g, 0], [0, 0, 1.0]]
        )
        shift = np.array([[1.0, 0, -x0], [0, 1.0, -y0], [0, 0, 1.0]])
        warped = cv2.warpPerspective(
            grain,
            shift @ h_top,
            (x1 - x0, y1 - y0),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_WRAP,
        )
        gain = 1.0 + look.grain * warped * material[y0:y1, x0:x1]
        img[y0:y1, x0:x1] *= gain[..., None]
    img.setflags(write=False)
    return img


# ---------------------------------------------------------------------------- hands


@dataclass(frozen=True)
class _Limb:
    a: Array
    b: Array
    ra: float
    rb: float
    color: Array
    shade: float
    cloth: bool = False


def _hand_parts(hand: HandSpec) -> list[_Limb]:
    """Capsules of arm, sleeve, palm, fingers and thumb, drawn in this order."""
    s = hand.scale
    ang = math.radians(hand.from_deg)
    d = np.array([math.cos(ang), math.sin(ang), 0.0])
    side = np.array([-d[1], d[0], 0.0])
    z = np.array([0.0, 0.0, 1.0])
    tip = np.array([hand.target[0], hand.target[1], hand.height])
    knuckle = tip + d * 2.4 * s + z * 0.8 * s
    wrist = knuckle + d * 2.8 * s + z * 0.7 * s
    elbow = wrist + d * 8.0 * s + z * 2.5 * s
    shoulder = elbow + d * 8.0 * s + z * 7.0 * s
    skin = np.array(hand.skin, np.float64)
    sleeve = np.array(hand.sleeve, np.float64)
    cuff = elbow + (wrist - elbow) * hand.sleeve_reach
    parts = [
        _Limb(shoulder, elbow, 1.7 * s, 1.45 * s, sleeve, 0.95, True),
        _Limb(elbow, wrist, 1.25 * s, 0.9 * s, skin, 1.0),
    ]
    if hand.sleeve_reach > 0.02:
        parts.append(
            _Limb(elbow - (wrist - elbow) * 0.05, cuff, 1.5 * s, 1.35 * s, sleeve, 0.95, True)
        )
    for offset in (-0.62, 0.0, 0.62):
        parts.append(
            _Limb(
                wrist + side * offset * 0.55 * s + d * 0.4 * s,
                knuckle + side * offset * 1.05 * s,
                0.66 * s,
                0.55 * s,
                skin,
                1.0,
            )
        )
    spread = math.radians(hand.spread_deg)
    pinch = bool(hand.holding)
    index_end = tip
    # index finger next to the thumb (on the -side), then middle, ring, little
    for k, (offset, length) in enumerate(((-1.0, 2.4), (-0.35, 2.65), (0.35, 2.5), (1.0, 2.0))):
        base = knuckle + side * offset * 0.62 * s
        if pinch and k >= 2:
            # ring and little fingers curl under the palm while the others pinch the piece
            middle = base - d * 1.0 * s - z * 0.7 * s
            curled = middle + d * 0.7 * s - z * 0.5 * s
            parts.append(_Limb(base, middle, 0.33 * s, 0.3 * s, skin, 1.0 - 0.02 * k))
            parts.append(_Limb(middle, curled, 0.3 * s, 0.27 * s, skin, 0.98 - 0.02 * k))
            continue
        direction = -d * math.cos(spread * offset) + side * math.sin(spread * offset) * 0.5
        if pinch:
            direction = -d + side * (0.25 if k == 0 else -0.1)
            direction /= np.linalg.norm(direction)
        end = base + direction * length * s - z * (0.8 * s)
        if k == 0:
            index_end = end
        parts.append(_Limb(base, end, 0.33 * s, 0.27 * s, skin, 1.02 - 0.02 * k))
    thumb_base = wrist - side * 0.9 * s - d * 0.8 * s
    thumb_tip = tip - side * 1.3 * s + d * 0.6 * s
    if pinch:
        thumb_tip = index_end - side * 0.55 * s + d * 0.2 * s
    parts.append(_Limb(thumb_base, thumb_tip, 0.45 * s, 0.33 * s, skin, 0.97))
    return parts


def _draw_hands(img: Array, spec: SceneSpec, setup: _Setup, hands: tuple[HandSpec, ...]) -> Array:
    """Draw hands (with their shadows) onto img; return their coverage mask (float 0..1)."""
    cam = setup.cam
    mask = np.zeros((cam.height, cam.width), np.float32)
    if not hands:
        return mask
    near = 0.25 * spec.camera.distance
    all_parts = [_hand_parts(h) for h in hands]
    # shadows: soft, from the lamp, plus a broad darkening straight below
    casters = []
    below = []
    for parts in all_parts:
        for limb in parts:
            ring = _ring_points(limb)
            casters.append(ring)
            below.append(ring[:, :2])
    lit = spec.lighting
    mean_h = float(np.mean([h.height for h in hands]))
    _apply_shadows(
        img,
        spec,
        setup,
        casters,
        below,
        lit.shadow_softness + 0.12 * mean_h,
        lit.shadow_strength * 0.8,
        0.25,
        0.25 + 0.15 * mean_h,
    )
    f_light = setup.light
    for hand, parts in zip(hands, all_parts, strict=True):
        if hand.holding:
            _draw_held_piece(img, mask, cam, hand, spec, f_light)
        blur = None
        if any(hand.motion):
            tip = np.array([hand.target[0], hand.target[1], hand.height])
            ends, _ = cam.project(np.array([tip, tip + np.array(hand.motion)]))
            blur = ends[1] - ends[0]
        _draw_limbs(img, mask, cam, parts, f_light, lit.ambient, lit.diffuse, near, blur)
    return mask


def _draw_held_piece(
    img: Array,
    mask: Array,
    cam: Camera,
    hand: HandSpec,
    spec: SceneSpec,
    light: Array,
) -> None:
    """The tile or bridge pinched under the fingertips."""
    tile_look = spec.tiles
    tip = np.array([hand.target[0], hand.target[1], hand.height])
    ang = math.radians(hand.from_deg)
    d = np.array([math.cos(ang), math.sin(ang), 0.0])
    centre = tip + d * 0.5 * hand.scale - np.array([0, 0, 0.35 * hand.scale])
    if hand.holding == "B":
        side = np.array([-d[1], d[0]])
        span = 1.2
        a = centre[:2] - side * span
        b = centre[:2] + side * span
        albedo = np.array(spec.bridge_look.color, np.float64)
        segs = _arch_segments(a, b, centre[2] - spec.bridge_look.arch_height, spec, 10)
        segs.sort(key=lambda seg: -float(np.linalg.norm(seg.mean(axis=0) - cam.C)))
        for k, seg in enumerate(segs):
            faces = _SEG_FACES[[True, True, True, True, k == 0, k == len(segs) - 1]]
            _draw_faces(img, cam, seg, faces, albedo, light, spec, 0.12, 20.0, mask)
        return
    verts = _box_vertices(
        (centre[0], centre[1], centre[2]),
        ang,
        tile_look.size / 2,
        tile_look.height,
        min(tile_look.bevel, tile_look.height / 2),
    )
    base = tile_look.light_color if hand.holding == "L" else tile_look.dark_color
    _draw_box(img, cam, verts, np.array(base, np.float64), light, spec, tile_look.gloss, mask)


def _clip_near(limb: _Limb, cam: Camera, near: float) -> _Limb | None:
    da, db = cam.to_camera(np.array([limb.a, limb.b]))[:, 2]
    if da < near and db < near:
        return None
    if da < near:
        u = (near - da) / (db - da)
        return replace(limb, a=limb.a + (limb.b - limb.a) * u, ra=limb.ra + (limb.rb - limb.ra) * u)
    if db < near:
        u = (near - db) / (da - db)
        return replace(limb, b=limb.b + (limb.a - limb.b) * u, rb=limb.rb + (limb.ra - limb.rb) * u)
    return limb


def _draw_limbs(
    img: Array,
    mask: Array,
    cam: Camera,
    parts: list[_Limb],
    light: Array,
    ambient: float,
    diffuse: float,
    near: float,
    blur: Array | None = None,
) -> None:
    """Ray-cast tapered capsules into a local z-buffer, shade each pixel, composite onto img.

    `blur` (dx, dy pixels) smears the drawn hand along its motion during the exposure.

    Each pixel's normal comes from the capsule's round cross-section, so arms, palms and
    fingers get smooth cylinder shading and overlapping parts meet where their surfaces do.
    """
    clipped = [c for c in (_clip_near(limb, cam, near) for limb in parts) if c is not None]
    if not clipped:
        return
    f = cam.K[0, 0]
    geo = []
    for limb in clipped:
        px, depth = cam.project(np.array([limb.a, limb.b]))
        ra, rb = limb.ra * f / depth[0], limb.rb * f / depth[1]
        geo.append((px, depth, ra, rb))
    smear = 0.0 if blur is None else float(np.abs(blur).max())
    lo = np.min([g[0].min(axis=0) - max(g[2], g[3]) - 2 - smear for g in geo], axis=0)
    hi = np.max([g[0].max(axis=0) + max(g[2], g[3]) + 2 + smear for g in geo], axis=0)
    x0, y0 = max(int(lo[0]), 0), max(int(lo[1]), 0)
    x1, y1 = min(int(hi[0]) + 1, cam.width), min(int(hi[1]) + 1, cam.height)
    if x1 <= x0 or y1 <= y0:
        return
    h, w = y1 - y0, x1 - x0
    zbuf = np.full((h, w), np.inf, np.float32)
    colour: Array = np.zeros((h, w, 3), np.float32)
    cover: Array = np.zeros((h, w), np.float32)
    light_cam = cam.R @ light
    flat = ambient + diffuse * max(0.0, float(light[2]))
    half_vec = light_cam + np.array([0.0, 0.0, -1.0])
    half_vec /= np.linalg.norm(half_vec)
    for limb, (px, depth, ra, rb) in zip(clipped, geo, strict=True):
        bx0 = max(int(min(px[0, 0] - ra, px[1, 0] - rb)) - 1, x0)
        by0 = max(int(min(px[0, 1] - ra, px[1, 1] - rb)) - 1, y0)
        bx1 = min(int(max(px[0, 0] + ra, px[1, 0] + rb)) + 2, x1)
        by1 = min(int(max(px[0, 1] + ra, px[1, 1] + rb)) + 2, y1)
        if bx1 <= bx0 or by1 <= by0:
            continue
        yy, xx = np.mgrid[by0:by1, bx0:bx1].astype(np.float32)
        axis = (px[1] - px[0]).astype(np.float32)
        len2 = float(axis @ axis)
        rel_x, rel_y = xx - np.float32(px[0, 0]), yy - np.float32(px[0, 1])
        t = np.clip((rel_x * axis[0] + rel_y * axis[1]) / max(len2, 1e-6), 0.0, 1.0)
        dx, dy = rel_x - t * axis[0], rel_y - t * axis[1]
        dist = np.sqrt(dx * dx + dy * dy)
        radius = np.float32(ra) + t * np.float32(rb - ra)
        inside = dist < radius + 0.5
        if not inside.any():
            continue
        s_ = np.clip(dist / np.maximum(radius, 1e-3), 0.0, 1.0)
        nz = np.sqrt(1.0 - s_ * s_)
        r_world = np.float32(limb.ra) + t * np.float32(limb.rb - limb.ra)
        z = np.float32(depth[0]) + t * np.float32(depth[1] - depth[0]) - r_world * nz
        inv = 1.0 / np.maximum(dist, 1e-3)
        nx, ny = dx * inv * s_, dy * inv * s_
        lambert = np.maximum(0.0, nx * light_cam[0] + ny * light_cam[1] - nz * light_cam[2])
        shade = (ambient + diffuse * lambert) / flat * limb.shade
        texture = skin_pattern()
        tex = texture[
            yy.astype(np.int32) % texture.shape[0], xx.astype(np.int32) % texture.shape[1]
        ]
        if limb.cloth:
            along = t * np.float32(np.linalg.norm(limb.b - limb.a))
            phase = float(limb.a[0] * 3.1 + limb.a[1] * 1.7)
            folds = np.sin(along * 4.1 + phase + 2.0 * s_) + 0.6 * np.sin(along * 9.3 - phase)
            shade = shade * (1.0 + 0.07 * folds + 0.05 * tex) * (1.0 - 0.25 * s_**4)
        else:
            shade = shade * (1.0 - 0.18 * s_**6) * (1.0 + 0.035 * tex)
        shine = (
            0.05
            * 255.0
            * np.maximum(0.0, nx * half_vec[0] + ny * half_vec[1] - nz * half_vec[2]) ** 16
        )
        sub = (slice(by0 - y0, by1 - y0), slice(bx0 - x0, bx1 - x0))
        win = inside & (z < zbuf[sub])
        cov = np.clip(radius - dist + 0.5, 0.0, 1.0)
        col = limb.color.astype(np.float32)[None, None, :] * shade[..., None] + shine[..., None]
        zb = zbuf[sub]
        zb[win] = z[win]
        colour[sub][win] = col[win]
        cv_ = cover[sub]
        cover[sub] = np.maximum(cv_, np.where(inside, cov, 0.0))
    if blur is not None and smear >= 1.0:
        kernel = _motion_kernel(blur)
        colour = cv2.filter2D(colour * cover[..., None], -1, kernel)
        cover = cv2.filter2D(cover, -1, kernel)
        colour = colour / np.maximum(cover, 1e-4)[..., None]
    region = img[y0:y1, x0:x1]
    a = cover[..., None]
    region *= 1.0 - a
    region += colour * a
    mregion = mask[y0:y1, x0:x1]
    np.maximum(mregion, cover, out=mregion)


def _motion_kernel(blur: Array) -> Array:
    """A normalised line kernel along the blur vector (centred: the exposure's middle)."""
    half = int(np.ceil(np.abs(blur).max() / 2.0)) + 1
    kernel = np.zeros((2 * half + 1, 2 * half + 1), np.float32)
    start = np.array([half, half]) - blur / 2.0
    end = np.array([half, half]) + blur / 2.0
    cv2.line(
        kernel,
        tuple(int(v) for v in np.round(start * SCALE)),
        tuple(int(v) for v in np.round(end * SCALE)),
        (1.0,),
        1,
        cv2.LINE_AA,
        SHIFT,
    )
    total = float(kernel.sum())
    if total <= 0:
        kernel[half, half] = 1.0
        total = 1.0
    return np.asarray(kernel / total, np.float32)


def _ring_points(limb: _Limb) -> Array:
    axis = limb.b - limb.a
    axis = axis / max(float(np.linalg.norm(axis)), 1e-9)
    e1 = np.cross(axis, [0.0, 0.0, 1.0])
    if np.linalg.norm(e1) < 1e-6:
        e1 = np.array([1.0, 0.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(axis, e1)
    ang = np.linspace(0, 2 * np.pi, 8, endpoint=False)
    ring = np.column_stack([np.cos(ang), np.sin(ang)])
    pts = [
        c + (ring[:, :1] * e1 + ring[:, 1:] * e2) * r
        for c, r in ((limb.a, limb.ra), (limb.b, limb.rb))
    ]
    return np.vstack(pts)


# ---------------------------------------------------------------------------- light and lens


def _has_glare(lit: Lighting) -> bool:
    return lit.glare > 0 or any(spot[3] > 0 for spot in lit.glare_spots)


def _coarse_grid(width: int, height: int, step: int = 16) -> tuple[Array, Array, int, int]:
    """Pixel positions (flattened x, y) of a coarse grid that cv2.resize maps exactly onto
    a (width, height) image, and the grid's size (gw, gh)."""
    gw, gh = -(-width // step), -(-height // step)
    xs = (np.arange(gw) + 0.5) * (width / gw) - 0.5
    ys = (np.arange(gh) + 0.5) * (height / gh) - 0.5
    xx, yy = np.meshgrid(xs, ys)
    return xx.ravel(), yy.ravel(), gw, gh


@lru_cache(maxsize=4)
def _light_maps(spec_key: SceneSpec) -> tuple[Array, Array]:
    """(illumination (h, w, 3) multiplier, glare (h, w, 3) additive 0..255) on the canvas."""
    setup = _setup(spec_key)
    cam = setup.cam
    lit = spec_key.lighting
    n = spec_key.size
    xx, yy, gw, gh = _coarse_grid(cam.width, cam.height)
    h_inv = np.linalg.inv(cam.plane_homography(0.0))
    pts = np.stack([xx, yy, np.ones(xx.size)], axis=1) @ h_inv.T
    w = pts[:, 2]
    valid = w > 1e-9
    wx = np.where(valid, pts[:, 0] / np.where(valid, w, 1.0), 1e3)
    wy = np.where(valid, pts[:, 1] / np.where(valid, w, 1.0), 1e3)
    lamp = np.array(lit.lamp)
    lz = max(lamp[2], 1.0)
    d2 = (wx - lamp[0]) ** 2 + (wy - lamp[1]) ** 2
    c2 = (n / 2 - lamp[0]) ** 2 + (n / 2 - lamp[1]) ** 2
    irr = (lz**2 + c2) ** 1.5 / (lz**2 + d2) ** 1.5
    lamp_term = (1.0 - lit.falloff) + lit.falloff * np.clip(irr, 0.0, 1.6)
    g = math.radians(lit.gradient_deg)
    ramp = ((wx - n / 2) * math.cos(g) + (wy - n / 2) * math.sin(g)) / n
    grad = 1.0 + lit.gradient * np.clip(ramp, -1.0, 1.0)
    cx, cy = cam.K[0, 2], cam.K[1, 2]
    r2 = ((xx - cx) ** 2 + (yy - cy) ** 2) / (cx**2 + cy**2)
    vig = 1.0 - lit.vignette * r2
    total = (lit.exposure * lamp_term * grad * vig).reshape(gh, gw, 1)
    coarse = (total * np.array(lit.tint)[None, None, :]).astype(np.float32)
    illum = cv2.resize(coarse, (cam.width, cam.height), interpolation=cv2.INTER_LINEAR)
    glare = np.zeros((1, 1, 1), np.float32)
    if _has_glare(lit):
        mirror = np.array([lamp[0], lamp[1], -lamp[2]])
        c = cam.C
        spot = c + (mirror - c) * (c[2] / (c[2] + lamp[2]))
        spots = [(spot[0], spot[1], lit.glare_radius, lit.glare), *lit.glare_spots]
        total_glare = np.zeros_like(wx)
        for sx, sy, radius, strength in spots:
            g2 = ((wx - sx) ** 2 + (wy - sy) ** 2) / (2 * max(radius, 1e-3) ** 2)
            total_glare += 255.0 * strength * np.exp(-g2)
        gl = total_glare.reshape(gh, gw, 1)
        gl = (gl * np.array(lit.tint)[None, None, :]).astype(np.float32)
        glare = cv2.resize(gl, (cam.width, cam.height), interpolation=cv2.INTER_LINEAR)
    illum.setflags(write=False)
    glare.setflags(write=False)
    return np.asarray(illum, np.float32), np.asarray(glare, np.float32)


@lru_cache(maxsize=8)
def _defocus_weight(spec_key: SceneSpec) -> Array:
    """0..1 per canvas pixel: how far the board plane there is from the focus distance."""
    cam = _setup(spec_key).cam
    xx, yy, _, _ = _coarse_grid(cam.width, cam.height)
    xx, yy = xx.reshape(-1), yy.reshape(-1)
    rays = np.stack(
        [(xx - cam.K[0, 2]) / cam.K[0, 0], (yy - cam.K[1, 2]) / cam.K[1, 1], np.ones(xx.shape)],
        axis=-1,
    )
    world = rays @ cam.R  # camera -> world directions
    dz = world[..., 2]
    depth = np.where(dz < -1e-6, cam.C[2] / np.maximum(-dz, 1e-6), 1e6)
    focus = spec_key.camera.distance
    w = np.clip(np.abs(depth - focus) / (0.3 * focus), 0.0, 1.0).astype(np.float32)
    gw, gh = _coarse_grid(cam.width, cam.height)[2:]
    out = cv2.resize(w.reshape(gh, gw), (cam.width, cam.height), interpolation=cv2.INTER_LINEAR)
    out.setflags(write=False)
    return out


def _chromatic_aberration(img: Array, corner_px: float) -> Array:
    """Lateral colour: red scaled out and blue scaled in about the image centre, so the
    channels part by `corner_px` at the image corners (cheap lenses)."""
    h, w = img.shape[:2]
    cx, cy = (w - 1) / 2.0, (h - 1) / 2.0
    eps = corner_px / math.hypot(cx, cy)
    out = img.copy()
    for channel, scale in ((0, 1.0 - eps / 2.0), (2, 1.0 + eps / 2.0)):
        # sample the source at the centre-scaled position: a larger scale shrinks the channel
        m = np.array([[scale, 0, cx * (1 - scale)], [0, scale, cy * (1 - scale)]], np.float64)
        out[..., channel] = cv2.warpAffine(
            np.ascontiguousarray(img[..., channel]),
            m,
            (w, h),
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_REPLICATE,
        )
    return out


NOISE_PAD = 64
NOISE_VARIANTS = 3


@lru_cache(maxsize=NOISE_VARIANTS)
def _noise_bank(height: int, width: int, variant: int) -> Array:
    """Unit sensor noise (luminance plus coarser chroma), a little larger than the image."""
    rng = np.random.default_rng([variant, 17])
    h, w = height + NOISE_PAD, width + NOISE_PAD
    lum = rng.standard_normal((h, w), dtype=np.float32)
    chroma: Array = rng.standard_normal((h // 2 + 1, w // 2 + 1, 3), dtype=np.float32)
    chroma = cv2.resize(chroma, (w, h), interpolation=cv2.INTER_LINEAR)
    bank = lum[..., None] + 0.6 * chroma
    bank.setflags(write=False)
    return np.asarray(bank, np.float32)


def _finish(canvas: Array, hand_mask: Array, spec: SceneSpec) -> tuple[Array, Array, bytes | None]:
    """Light, lens, blur, noise, JPEG: canvas (float) -> (image uint8, mask uint8, jpeg)."""
    illum, glare = _light_maps(_light_key(spec))
    img = canvas
    img *= illum
    if _has_glare(spec.lighting):
        img += glare * (1.0 - hand_mask[..., None])
    cam_spec = spec.camera
    mask = hand_mask
    if cam_spec.distorted:
        map_x, map_y, _, _ = distortion_maps(
            cam_spec.width, cam_spec.height, cam_spec.focal_px, cam_spec.k1, cam_spec.k2
        )
        img = cv2.remap(img, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        mask = cv2.remap(mask, map_x, map_y, cv2.INTER_LINEAR)
    fx = spec.effects
    if fx.chromatic > 0.05:
        img = _chromatic_aberration(img, fx.chromatic)
    if fx.depth_blur > 0.05:
        weight = _defocus_weight(_light_key(spec))
        if cam_spec.distorted:
            weight = cv2.remap(weight, map_x, map_y, cv2.INTER_LINEAR)
        far = cv2.GaussianBlur(img, (0, 0), fx.depth_blur)
        img = cv2.blendLinear(far, img, weight, 1.0 - weight)
    if fx.blur_sigma > 0.05:
        img = cv2.GaussianBlur(img, (0, 0), fx.blur_sigma)
    if fx.sharpen > 0:
        soft = cv2.GaussianBlur(img, (0, 0), 1.6)
        img = cv2.addWeighted(img, 1.0 + fx.sharpen, soft, -fx.sharpen, 0.0)
    if fx.noise_sigma > 0:
        rng = np.random.default_rng([spec.seed, fx.noise_seed, 9])
        h, w = img.shape[:2]
        bank = _noise_bank(h, w, int(rng.integers(NOISE_VARIANTS)))
        dy, dx = (int(v) for v in rng.integers(0, NOISE_PAD, 2))
        level = img * np.float32(fx.noise_sigma * 0.45 / 128.0)
        level += np.float32(fx.noise_sigma * 0.55)
        level *= bank[dy : dy + h, dx : dx + w]
        img += level
    out: Array = np.clip(img, 0.0, 255.0, out=img).astype(np.uint8)
    encoded = None
    if fx.jpeg_quality is not None:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(fx.jpeg_quality)])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        encoded = buf.tobytes()
        decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        if decoded is None:
            raise RuntimeError("JPEG decoding failed")
        out = decoded
    mask_u8 = (mask > OCCLUSION_COVER).astype(np.uint8) * 255
    return out, mask_u8, encoded


# ---------------------------------------------------------------------------- truth


def _grid_corners(spec: SceneSpec, setup: _Setup) -> Array:
    n = spec.size
    world = np.array([[0, 0, 0], [n, 0, 0], [n, n, 0], [0, n, 0]], np.float64)
    px, _ = setup.cam.project(world)
    return _canvas_to_image(px, spec, setup)


def _canvas_to_image(px: Array, spec: SceneSpec, setup: _Setup) -> Array:
    out = px - np.array(setup.margin, np.float64)
    cam_spec = spec.camera
    if cam_spec.distorted:
        c = np.array([cam_spec.width / 2.0, cam_spec.height / 2.0])
        norm = (out - c) / cam_spec.focal_px
        out = distort_normalised(norm, cam_spec.k1, cam_spec.k2) * cam_spec.focal_px + c
    return np.asarray(out)


def _occluded_cells(spec: SceneSpec, setup: _Setup, mask: Array) -> frozenset[str]:
    """Cells whose column (floor up to tile / bridge top) the hand mask touches."""
    if not mask.any():
        return frozenset()
    cam = setup.cam
    n = spec.size
    top = spec.tiles.height + spec.bridge_look.arch_height + spec.bridge_look.thickness
    out = set()
    for f in range(n):
        for r in range(n):
            pts = np.array(
                [
                    [f + dx, r + dy, z]
                    for z in (0.0, top)
                    for dx, dy in ((0, 0), (1, 0), (1, 1), (0, 1))
                ],
                np.float64,
            )
            px, _ = cam.project(pts)
            x0, y0 = np.floor(px.min(axis=0)).astype(int)
            x1, y1 = np.ceil(px.max(axis=0)).astype(int) + 1
            x0, y0 = max(x0, 0), max(y0, 0)
            x1, y1 = min(x1, cam.width), min(y1, cam.height)
            if x1 <= x0 or y1 <= y0:
                continue
            crop = mask[y0:y1, x0:x1]
            if not (crop > OCCLUSION_COVER).any():
                continue
            poly = np.zeros_like(crop)
            _hull(poly, px - np.array([x0, y0]), (1.0,), aa=False)
            if ((poly > 0.5) & (crop > OCCLUSION_COVER)).any():
                out.add(cell_name((f, r)))
    return frozenset(out)


def render(spec: SceneSpec) -> Frame:
    """Draw the scene and return the image with its ground truth (see `Frame`)."""
    key = _static_key(spec)
    setup = _setup(key)
    canvas = np.array(_static_layer(key), np.float32)
    hand_mask = _draw_hands(canvas, spec, setup, spec.hands)
    occluded = _occluded_cells(spec, setup, hand_mask)
    image, mask_u8, encoded = _finish(canvas, hand_mask, spec)
    cam_spec = spec.camera
    homography = None
    if not cam_spec.distorted:
        homography = setup.cam.plane_homography(0.0)
        shift = np.array([[1, 0, -setup.margin[0]], [0, 1, -setup.margin[1]], [0, 0, 1.0]])
        homography = shift @ homography
        homography = homography / homography[2, 2]
    return Frame(
        image=image,
        board=spec.board,
        bridges=spec.bridges,
        occluded_cells=occluded,
        occluded=bool(occluded),
        corners=_grid_corners(spec, setup),
        homography=homography,
        camera_matrix=intrinsics(cam_spec),
        dist_coeffs=(cam_spec.k1, cam_spec.k2, 0.0, 0.0),
        a1_margin_px=setup.a1_margin,
        occlusion_mask=mask_u8,
        encoded=encoded,
        markers=_marker_corners(spec, setup),
    )
