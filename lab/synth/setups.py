"""Named families of random scenes ("setups") and `random_spec` to sample one.

Every setup gives ranges for camera, board look, editions, lighting, sensor and hands; the
board contents are always a random plausible position (`position.random_position`). The
camera is placed far enough that the whole board and its border are in view; the board's
in-image rotation stays within `azimuth_spread` degrees of upright (any of the four sides
may face the camera), so the a1-bottom-left rule is never ambiguous.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from lab.synth.camera import Camera, intrinsics, look_at
from lab.synth.lens import distort_normalised, lens_is_invertible
from lab.synth.position import random_position
from lab.synth.render import a1_margin_px
from lab.synth.spec import (
    BGR,
    BoardLook,
    BridgeLook,
    CameraSpec,
    Effects,
    HandSpec,
    Lighting,
    LooseTile,
    MarkerSpec,
    Prop,
    SceneSpec,
    TableKind,
    TableLook,
    TileLook,
)

Range = tuple[float, float]

LIGHT_EDITIONS: dict[str, BGR] = {
    "cream": (178.0, 218.0, 238.0),
    "white": (232.0, 236.0, 238.0),
    "ivory": (200.0, 232.0, 244.0),
    "natural": (130.0, 180.0, 215.0),
}
"""The light tiles' editions: painted (cream, white, ivory) and bare natural wood, a mid
brown only a little lighter than some boards and near the brown edition's tiles in hue."""
DARK_EDITIONS: dict[str, BGR] = {
    "red": (38.0, 38.0, 165.0),
    "brown": (38.0, 68.0, 112.0),
    "black": (34.0, 32.0, 30.0),
}
BOARD_COLOURS: tuple[BGR, ...] = (
    (150.0, 140.0, 90.0),
    (175.0, 125.0, 70.0),
    (125.0, 150.0, 125.0),
    (120.0, 100.0, 60.0),
    (135.0, 115.0, 85.0),
    (150.0, 196.0, 212.0),
    (178.0, 186.0, 176.0),
)
GRID_COLOURS: tuple[BGR, ...] = ((50.0, 50.0, 40.0), (30.0, 30.0, 30.0), (225.0, 230.0, 230.0))
BORDER_COLOURS: tuple[BGR, ...] = (
    (90.0, 120.0, 150.0),
    (90.0, 60.0, 30.0),
    (45.0, 45.0, 45.0),
    (150.0, 185.0, 205.0),
    (60.0, 90.0, 60.0),
)
TABLES: tuple[tuple[TableKind, BGR], ...] = (
    (TableKind.WOOD, (40.0, 62.0, 92.0)),
    (TableKind.WOOD, (88.0, 138.0, 180.0)),
    (TableKind.WOOD, (118.0, 168.0, 208.0)),
    (TableKind.CLOTH, (60.0, 105.0, 60.0)),
    (TableKind.CLOTH, (118.0, 118.0, 120.0)),
    (TableKind.CLOTH, (120.0, 80.0, 50.0)),
    (TableKind.PLAIN, (200.0, 204.0, 208.0)),
    (TableKind.PLAIN, (96.0, 98.0, 100.0)),
)
FLOORS: tuple[BGR, ...] = (
    (45.0, 50.0, 55.0),
    (70.0, 95.0, 120.0),
    (110.0, 110.0, 105.0),
    (30.0, 35.0, 45.0),
)
SKIN_TONES: tuple[BGR, ...] = (
    (165.0, 190.0, 230.0),
    (135.0, 165.0, 215.0),
    (105.0, 140.0, 190.0),
    (75.0, 105.0, 155.0),
    (52.0, 72.0, 112.0),
)
SLEEVES: tuple[BGR, ...] = (
    (110.0, 60.0, 30.0),
    (60.0, 60.0, 60.0),
    (40.0, 40.0, 150.0),
    (60.0, 120.0, 60.0),
    (30.0, 30.0, 30.0),
    (200.0, 200.0, 200.0),
    (140.0, 110.0, 90.0),
)
TINTS: dict[str, BGR] = {
    "neutral": (1.0, 1.0, 1.0),
    "warm": (0.78, 0.93, 1.08),
    "cool": (1.1, 1.0, 0.9),
}


@dataclass(frozen=True)
class Setup:
    """Ranges for one family of scenes; `random_spec` samples uniformly inside them."""

    name: str
    description: str
    elevation: Range = (80.0, 90.0)
    azimuth_spread: float = 8.0
    roll: Range = (-3.0, 3.0)
    focal: Range = (850.0, 1100.0)
    fill: Range = (0.75, 1.0)
    """Board size as a fraction of the largest that fits in the image."""
    k1: Range = (0.0, 0.0)
    k2: Range = (0.0, 0.0)
    light_editions: tuple[str, ...] = ("cream", "white", "ivory")
    dark_editions: tuple[str, ...] = ("red", "brown", "black")
    tiles_per_colour: tuple[int, int] = (2, 36)
    bridges: tuple[int, int] = (0, 8)
    jitter_offset: Range = (0.02, 0.07)
    jitter_rotation: Range = (2.0, 8.0)
    tints: tuple[str, ...] = ("neutral", "warm", "cool")
    exposure: Range = (0.9, 1.05)
    falloff: Range = (0.05, 0.25)
    gradient: Range = (0.0, 0.15)
    lamp_height: Range = (18.0, 40.0)
    lamp_reach: Range = (0.0, 12.0)
    """Horizontal distance of the lamp from the board centre (cells)."""
    shadow_strength: Range = (0.25, 0.5)
    shadow_softness: Range = (0.08, 0.2)
    glare: Range = (0.0, 0.15)
    glare_spots: tuple[int, int] = (0, 0)
    noise: Range = (0.5, 2.5)
    blur: Range = (0.3, 0.8)
    jpeg: tuple[int, int] = (80, 95)
    sharpen: Range = (0.0, 0.0)
    chromatic: Range = (0.0, 0.0)
    depth_blur: Range = (0.0, 0.0)
    hands: tuple[int, int] = (0, 0)
    supply: float = 0.5
    markers: float = 0.0
    """Chance that printed ArUco markers lie at the board's corners (see MarkerSpec)."""
    props: float = 0.35
    """Chance of other objects on the table (game box, phone, score pad)."""
    table_edge: float = 0.35
    """Chance that the table's edge (and the floor beyond) is in view in angled shots."""
    """Chance that the players' supply of tiles lies on the table beside the board."""


SETUPS: dict[str, Setup] = {
    s.name: s
    for s in (
        Setup(
            "overhead-cream-red",
            "webcam straight above, cream and red edition, even room light",
            light_editions=("cream",),
            dark_editions=("red",),
        ),
        Setup(
            "angled45-white-black",
            "camera at 45-55 degrees from the table, white and black edition",
            elevation=(45.0, 55.0),
            azimuth_spread=20.0,
            focal=(900.0, 1200.0),
            light_editions=("white",),
            dark_editions=("black",),
            depth_blur=(0.0, 2.0),
        ),
        Setup(
            "phone-rotated-brown",
            "hand-held phone, board turned up to 35 degrees, ivory/cream and brown",
            elevation=(55.0, 88.0),
            azimuth_spread=35.0,
            roll=(-6.0, 6.0),
            focal=(950.0, 1300.0),
            light_editions=("ivory", "cream"),
            dark_editions=("brown",),
            noise=(0.5, 1.5),
            blur=(0.2, 0.5),
            sharpen=(0.2, 0.7),
            depth_blur=(0.0, 1.5),
        ),
        Setup(
            "warm-lamp-shadows",
            "low warm desk lamp: strong falloff, hard long shadows, glare on the board",
            elevation=(60.0, 90.0),
            azimuth_spread=20.0,
            tints=("warm",),
            lamp_height=(7.0, 14.0),
            falloff=(0.3, 0.55),
            gradient=(0.1, 0.3),
            shadow_strength=(0.5, 0.75),
            shadow_softness=(0.03, 0.1),
            glare=(0.2, 0.55),
            glare_spots=(0, 2),
        ),
        Setup(
            "window-daylight",
            "daylight from a window low on one side: long hard shadows, bright to dark",
            elevation=(55.0, 90.0),
            azimuth_spread=25.0,
            tints=("cool", "neutral"),
            lamp_height=(15.0, 30.0),
            lamp_reach=(40.0, 70.0),
            falloff=(0.0, 0.1),
            gradient=(0.25, 0.45),
            shadow_strength=(0.45, 0.7),
            shadow_softness=(0.02, 0.06),
            exposure=(0.9, 1.15),
            glare=(0.0, 0.1),
            glare_spots=(0, 2),
        ),
        Setup(
            "wide-angle-distorted",
            "wide-angle webcam close to the board: barrel distortion bends the grid",
            elevation=(60.0, 90.0),
            azimuth_spread=20.0,
            focal=(620.0, 760.0),
            k1=(-0.25, -0.08),
            k2=(0.0, 0.06),
            chromatic=(0.5, 2.5),
            fill=(0.85, 1.0),
        ),
        Setup(
            "dim-noisy-jpeg",
            "dim room, cheap webcam: heavy noise, blur and JPEG artefacts, cool light",
            elevation=(55.0, 90.0),
            azimuth_spread=25.0,
            tints=("cool", "neutral"),
            exposure=(0.45, 0.7),
            fill=(0.6, 0.95),
            noise=(4.0, 9.0),
            chromatic=(0.0, 1.5),
            blur=(0.8, 1.6),
            jpeg=(35, 65),
        ),
        Setup(
            "markers",
            "printed ArUco markers (4x4, ids 0-3 in any order) at the board's corners",
            elevation=(50.0, 90.0),
            azimuth_spread=30.0,
            markers=1.0,
        ),
        Setup(
            "hands",
            "players' hands and arms reaching over part of the board",
            elevation=(50.0, 90.0),
            azimuth_spread=25.0,
            fill=(0.6, 1.0),
            hands=(1, 2),
        ),
        Setup(
            "natural-wood",
            "bare natural-wood light tiles (a mid brown) beside any dark edition, room or lamp",
            elevation=(50.0, 90.0),
            azimuth_spread=25.0,
            fill=(0.7, 1.0),
            light_editions=("natural",),
            lamp_height=(10.0, 40.0),
            falloff=(0.05, 0.4),
            glare=(0.0, 0.3),
        ),
    )
}
"""The named setups, by name (`ponte eval` and the frozen sets draw each one's scenes from a
generator keyed by its place here: a setup added at the end leaves the others' as they were)."""


def _u(rng: np.random.Generator, r: Range) -> float:
    return float(rng.uniform(r[0], r[1])) if r[1] > r[0] else float(r[0])


def _pick(rng: np.random.Generator, options: tuple[BGR, ...]) -> BGR:
    return options[int(rng.integers(len(options)))]


def _vary(rng: np.random.Generator, colour: BGR, spread: float) -> BGR:
    """An edition's colour as one particular print run / wood batch made it."""
    gain = rng.uniform(1.0 - spread, 1.0 + spread, 3) * rng.uniform(1.0 - spread, 1.0 + spread)
    b, g, r = (float(min(255.0, c * k)) for c, k in zip(colour, gain, strict=True))
    return (b, g, r)


def _fits(cam_spec: CameraSpec, size: int, border: float, margin: float) -> bool:
    r, c = look_at(cam_spec, cam_spec.azimuth_deg)
    cam = Camera(intrinsics(cam_spec), r, c, cam_spec.width, cam_spec.height)
    lo, hi = -border, size + border
    corners = np.array([[lo, lo, 0], [hi, lo, 0], [hi, hi, 0], [lo, hi, 0]], np.float64)
    px, depth = cam.project(corners)
    if (depth <= 0).any():
        return False
    if cam_spec.distorted:
        centre = np.array([cam_spec.width / 2.0, cam_spec.height / 2.0])
        norm = (px - centre) / cam_spec.focal_px
        px = distort_normalised(norm, cam_spec.k1, cam_spec.k2) * cam_spec.focal_px + centre
    m = margin * cam_spec.height
    return bool(
        (px[:, 0] >= m).all()
        and (px[:, 0] <= cam_spec.width - m).all()
        and (px[:, 1] >= m).all()
        and (px[:, 1] <= cam_spec.height - m).all()
    )


MIN_A1_MARGIN = 0.1
"""Cameras are re-drawn until a1 is nearer the bottom-left image corner than any other
board corner by at least this fraction of the image height (an unambiguous orientation)."""


def _camera(rng: np.random.Generator, setup: Setup, size: int, border: float) -> CameraSpec:
    for _ in range(200):
        cam = _camera_once(rng, setup, size, border)
        if a1_margin_px(cam, size) >= MIN_A1_MARGIN * cam.height:
            return cam
    raise AssertionError(f"setup {setup.name}: no camera with an unambiguous orientation")


def _camera_once(rng: np.random.Generator, setup: Setup, size: int, border: float) -> CameraSpec:
    quarter = 90.0 * int(rng.integers(4))
    cam = CameraSpec(
        elevation_deg=_u(rng, setup.elevation),
        azimuth_deg=quarter + _u(rng, (-setup.azimuth_spread, setup.azimuth_spread)),
        roll_deg=_u(rng, setup.roll),
        focal_px=_u(rng, setup.focal),
        target=(size / 2 + _u(rng, (-0.6, 0.6)), size / 2 + _u(rng, (-0.6, 0.6))),
    )
    for _ in range(100):
        k1, k2 = _u(rng, setup.k1), _u(rng, setup.k2)
        if k1 == 0.0 and k2 == 0.0:
            break
        if lens_is_invertible(cam.width, cam.height, cam.focal_px, k1, k2):
            break
    else:
        k1, k2 = 0.0, 0.0
    cam = replace(cam, k1=k1, k2=k2)
    lo_d, hi_d = 1.0, 400.0
    for _ in range(40):
        mid = (lo_d + hi_d) / 2
        if _fits(replace(cam, distance=mid), size, border, 0.03):
            hi_d = mid
        else:
            lo_d = mid
    return replace(cam, distance=hi_d / _u(rng, setup.fill))


def _hand(rng: np.random.Generator, size: int, border: float) -> HandSpec:
    """A hand over the board, or (one time in five) reaching beside it on its own side."""
    side = 90.0 * int(rng.integers(4)) + _u(rng, (-35.0, 35.0))
    target = (_u(rng, (0.5, size - 0.5)), _u(rng, (0.5, size - 0.5)))
    if rng.random() < 0.2:
        ang = math.radians(side)
        reach = size / 2.0 + border + _u(rng, (2.5, 4.0))
        # fingertips stop short of the board on the arm's side, so only the table is hidden
        target = (size / 2.0 + reach * math.cos(ang), size / 2.0 + reach * math.sin(ang))
    return HandSpec(
        target=target,
        from_deg=side,
        height=_u(rng, (0.8, 4.0)),
        skin=_pick(rng, SKIN_TONES),
        sleeve=_pick(rng, SLEEVES),
        sleeve_reach=_u(rng, (0.0, 1.0)) if rng.random() < 0.7 else 0.0,
        scale=_u(rng, (0.85, 1.15)),
        spread_deg=_u(rng, (0.0, 25.0)),
        holding=str(rng.choice(["", "", "L", "D", "B"])),
    )


def _supply(
    rng: np.random.Generator, size: int, border: float, setup: Setup
) -> tuple[LooseTile, ...]:
    if rng.random() >= setup.supply:
        return ()
    pieces: list[LooseTile] = []
    reach = size / 2.0 + border + 1.0
    for colour in ("L", "D"):
        side = int(rng.integers(4))
        along = _u(rng, (-size / 2.0, size / 2.0))
        out = reach + _u(rng, (0.2, 2.5))
        for _ in range(int(rng.integers(1, 9))):
            a = along + _u(rng, (-1.8, 1.8))
            o = out + _u(rng, (0.0, 1.8))
            x, y = [(o, a), (a, o), (-o, a), (a, -o)][side]
            x, y = size / 2.0 + x, size / 2.0 + y
            if all(math.hypot(p.x - x, p.y - y) >= 1.32 for p in pieces):
                pieces.append(LooseTile(x, y, colour, _u(rng, (0, 90))))
    return tuple(pieces)


PROP_KINDS: tuple[tuple[str, Range, Range, Range, tuple[BGR, ...]], ...] = (
    ("game box", (9.0, 12.0), (9.0, 12.0), (1.5, 2.5), ((40.0, 60.0, 150.0), (120.0, 90.0, 40.0))),
    ("phone", (2.3, 2.7), (4.8, 5.4), (0.2, 0.3), ((25.0, 25.0, 25.0), (200.0, 200.0, 205.0))),
    (
        "score pad",
        (4.5, 6.0),
        (6.5, 8.0),
        (0.05, 0.15),
        ((235.0, 240.0, 240.0), (180.0, 230.0, 240.0)),
    ),
)


def _props(rng: np.random.Generator, size: int, reach: float, setup: Setup) -> tuple[Prop, ...]:
    if rng.random() >= setup.props:
        return ()
    out = []
    sides = rng.permutation(4)
    for k in range(int(rng.integers(1, 3))):
        _, w_range, d_range, h_range, colours = PROP_KINDS[int(rng.integers(len(PROP_KINDS)))]
        width, depth = _u(rng, w_range), _u(rng, d_range)
        clear = size / 2.0 + reach + math.hypot(width, depth) / 2.0 + 0.3
        along = _u(rng, (-size / 2.0, size / 2.0))
        x, y = [(clear, along), (along, clear), (-clear, along), (along, -clear)][int(sides[k])]
        out.append(
            Prop(
                size / 2.0 + x,
                size / 2.0 + y,
                width,
                depth,
                _u(rng, h_range),
                _u(rng, (0.0, 90.0)),
                _pick(rng, colours),
            )
        )
    return tuple(out)


def random_spec(rng: np.random.Generator, setup: str | Setup, size: int = 10) -> SceneSpec:
    """A random scene from a named setup (see SETUPS) or a Setup value."""
    if isinstance(setup, str):
        if setup not in SETUPS:
            raise ValueError(f"unknown setup {setup!r}; known: {', '.join(SETUPS)}")
        setup = SETUPS[setup]
    lo, hi = setup.tiles_per_colour
    board, bridges = random_position(
        rng,
        size,
        light_tiles=int(rng.integers(lo, hi + 1)),
        dark_tiles=int(rng.integers(lo, hi + 1)),
        bridges=int(rng.integers(setup.bridges[0], setup.bridges[1] + 1)),
    )
    board_look = BoardLook(
        board_color=_pick(rng, BOARD_COLOURS),
        grid_color=_pick(rng, GRID_COLOURS),
        border_color=_pick(rng, BORDER_COLOURS),
        line_width=_u(rng, (0.025, 0.06)),
        border_width=_u(rng, (0.4, 1.2)),
        thickness=_u(rng, (0.04, 0.12)),
        mottling=_u(rng, (0.02, 0.1)),
        frame_lines=int(rng.choice([0, 0, 1, 2])),
        frame_color=_pick(rng, GRID_COLOURS),
    )
    kind, table_colour = TABLES[int(rng.integers(len(TABLES)))]
    table = TableLook(
        color=table_colour, kind=kind, contrast=_u(rng, (0.15, 0.4)), scale=_u(rng, (0.7, 1.4))
    )
    light = setup.light_editions[int(rng.integers(len(setup.light_editions)))]
    dark = setup.dark_editions[int(rng.integers(len(setup.dark_editions)))]
    tiles = TileLook(
        light_color=_vary(rng, LIGHT_EDITIONS[light], 0.05),
        dark_color=_vary(rng, DARK_EDITIONS[dark], 0.12),
        size=_u(rng, (0.84, 0.92)),
        height=_u(rng, (0.2, 0.34)),
        bevel=_u(rng, (0.03, 0.07)),
        jitter_offset=_u(rng, setup.jitter_offset),
        jitter_rotation_deg=_u(rng, setup.jitter_rotation),
        color_variation=_u(rng, (0.01, 0.03)),
        gloss=_u(rng, (0.05, 0.25)),
        grain=_u(rng, (0.015, 0.06)),
    )
    grey = _u(rng, (120.0, 185.0))
    bridge_look = BridgeLook(
        color=(grey, grey * _u(rng, (0.97, 1.02)), grey * _u(rng, (0.95, 1.0))),
        width=_u(rng, (0.28, 0.4)),
        thickness=_u(rng, (0.08, 0.14)),
        arch_height=_u(rng, (0.25, 0.5)),
        overhang=_u(rng, (0.1, 0.25)),
    )
    lamp_angle = _u(rng, (0.0, 2 * math.pi))
    lamp_reach = _u(rng, setup.lamp_reach)
    tint_name = setup.tints[int(rng.integers(len(setup.tints)))]
    lighting = Lighting(
        lamp=(
            size / 2 + lamp_reach * math.cos(lamp_angle),
            size / 2 + lamp_reach * math.sin(lamp_angle),
            _u(rng, setup.lamp_height),
        ),
        ambient=_u(rng, (0.45, 0.65)),
        diffuse=_u(rng, (0.35, 0.55)),
        falloff=_u(rng, setup.falloff),
        gradient=_u(rng, setup.gradient),
        gradient_deg=_u(rng, (0.0, 360.0)),
        tint=TINTS[tint_name],
        exposure=_u(rng, setup.exposure),
        shadow_strength=_u(rng, setup.shadow_strength),
        shadow_softness=_u(rng, setup.shadow_softness),
        glare=_u(rng, setup.glare),
        glare_radius=_u(rng, (0.8, 2.5)),
        glare_spots=tuple(
            (
                _u(rng, (-2.0, size + 2.0)),
                _u(rng, (-2.0, size + 2.0)),
                _u(rng, (0.4, 2.0)),
                _u(rng, (0.1, 0.4)),
            )
            for _ in range(int(rng.integers(setup.glare_spots[0], setup.glare_spots[1] + 1)))
        ),
        vignette=_u(rng, (0.05, 0.3)),
    )
    effects = Effects(
        noise_sigma=_u(rng, setup.noise),
        blur_sigma=_u(rng, setup.blur),
        jpeg_quality=int(rng.integers(setup.jpeg[0], setup.jpeg[1] + 1)),
        sharpen=_u(rng, setup.sharpen),
        chromatic=_u(rng, setup.chromatic),
        depth_blur=_u(rng, setup.depth_blur),
    )
    markers = None
    reach = 0.0
    if rng.random() < setup.markers:
        markers = MarkerSpec(
            ids=tuple(int(i) for i in rng.permutation(4)),  # type: ignore[arg-type]
            size=_u(rng, (1.2, 2.0)),
            gap=_u(rng, (0.1, 0.6)),
            paper=_u(rng, (0.15, 0.35)),
        )
        reach = markers.gap + markers.size + markers.paper
    hand_count = int(rng.integers(setup.hands[0], setup.hands[1] + 1))
    hands = tuple(_hand(rng, size, board_look.border_width) for _ in range(hand_count))
    loose = _supply(rng, size, board_look.border_width + reach, setup)
    props = _props(rng, size, board_look.border_width + reach + 1.0, setup)
    if rng.random() < setup.table_edge:
        centre = size / 2.0
        need = [size / 2.0 + board_look.border_width + reach + 0.5]
        need += [max(abs(p.x - centre), abs(p.y - centre)) + 1.0 for p in loose]
        need += [
            max(abs(p.x - centre), abs(p.y - centre)) + math.hypot(p.width, p.depth) / 2 + 0.3
            for p in props
        ]
        offset = (_u(rng, (-2.0, 2.0)), _u(rng, (-2.0, 2.0)))
        grow = max(need) + max(abs(offset[0]), abs(offset[1]))
        table = replace(
            table,
            extent=(grow + _u(rng, (0.5, 6.0)), grow + _u(rng, (0.5, 6.0))),
            offset=offset,
            floor_color=_pick(rng, FLOORS),
        )
    return SceneSpec(
        board=board,
        bridges=bridges,
        size=size,
        camera=_camera(rng, setup, size, board_look.border_width + reach),
        board_look=board_look,
        table=table,
        tiles=tiles,
        bridge_look=bridge_look,
        lighting=lighting,
        effects=effects,
        hands=hands,
        loose_tiles=loose,
        markers=markers,
        props=props,
        seed=int(rng.integers(2**31)),
    )
