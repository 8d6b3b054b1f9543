"""A `Scene` as POV-Ray scene text: the printed board, tiles, bridges, hands, table, light.

Everything is modelled as solid geometry and lit by area lights, so shadows, shading,
highlights and what hides what come from the ray tracer, not from drawing rules.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from lab.raytrace.camera import Camera
from lab.raytrace.model import RGB, BridgePiece, Edition, Hand, Prop, Scene, TilePiece
from lab.raytrace.povray import camera_block, vec

Array = np.ndarray
PRINT_PX_PER_CELL = 64
PRINT_NAME = "print.png"
BOARD_THICKNESS = 0.07


def rgb(c: RGB) -> str:
    return f"rgb <{c[0]:.5f}, {c[1]:.5f}, {c[2]:.5f}>"


def _to_srgb8(linear: Array) -> Array:
    c = np.clip(linear, 0.0, 1.0)
    s = np.where(c <= 0.0031308, 12.92 * c, 1.055 * np.power(c, 1 / 2.4) - 0.055)
    return np.asarray(np.round(s * 255.0), dtype=np.uint8)


def board_print(edition: Edition, rng: np.random.Generator) -> bytes:
    """The board's printed face as PNG bytes: water, grid, border and wear, in sRGB."""
    p = PRINT_PX_PER_CELL
    b = edition.border_width
    side = int(round((10 + 2 * b) * p))
    yy, xx = np.mgrid[0:side, 0:side].astype(np.float32) / p - b
    # Water: two blended blues, slow cloudy variation and faint ripple bands.
    noise = cv2.resize(rng.random((12, 12)).astype(np.float32), (side, side),
                       interpolation=cv2.INTER_CUBIC)
    ripple = 0.5 + 0.5 * np.sin(xx * rng.uniform(2.0, 4.0) + np.sin(yy * 1.7) * 1.5)
    mix = np.clip(0.55 * noise + 0.25 * ripple, 0, 1)[..., None]
    water = np.asarray(edition.water)[None, None, :] * (1 - mix) + \
        np.asarray(edition.water_dark)[None, None, :] * mix
    img = water.astype(np.float32)
    inside = (xx >= 0) & (xx <= 10) & (yy >= 0) & (yy <= 10)
    img[~inside] = np.asarray(edition.border)
    # Grid lines: ten inner lines each way and a heavier outer line.
    w = edition.grid_width
    for k in range(11):
        half = w * (1.6 if k in (0, 10) else 1.0) / 2
        on = ((np.abs(xx - k) <= half) & (yy >= -half) & (yy <= 10 + half)) | \
             ((np.abs(yy - k) <= half) & (xx >= -half) & (xx <= 10 + half))
        img[on] = np.asarray(edition.grid)
    if rng.random() < 0.5:
        d = b * rng.uniform(0.35, 0.6)
        frame = (np.abs(np.maximum(np.abs(xx - 5), np.abs(yy - 5)) - (5 + d)) <= w / 2)
        img[frame] = np.asarray(edition.grid)
    # Wear: scuffs that lighten the print a little, more along the border.
    if edition.wear > 0:
        scuff = cv2.GaussianBlur((rng.random((side, side)) < 0.002 * edition.wear)
                                 .astype(np.float32), (0, 0), p * 0.08)
        img = img + (scuff / max(float(scuff.max()), 1e-6) * 0.08 * edition.wear)[..., None]
    ok, png = cv2.imencode(".png", cv2.cvtColor(_to_srgb8(img), cv2.COLOR_RGB2BGR))
    assert ok
    return bytes(png.tobytes())


def _rotated(label_x: float, label_y: float, turns: int) -> tuple[float, float]:
    """A point in the labels' frame -> the physical board frame (quarter turns about the
    centre, counter-clockwise seen from above)."""
    x, y = label_x - 5.0, label_y - 5.0
    for _ in range(turns % 4):
        x, y = -y, x
    return x + 5.0, y + 5.0


def _board(scene: Scene) -> str:
    e = scene.edition
    b = e.border_width
    size = 10 + 2 * b
    return (
        f"box {{ <{-b:.4f}, {-BOARD_THICKNESS}, {-b:.4f}>, <{10 + b:.4f}, 0, {10 + b:.4f}>\n"
        f"  texture {{ pigment {{ image_map {{ png \"{PRINT_NAME}\" gamma srgb map_type 0 "
        "interpolate 2 } rotate x*90 "
        f"scale <{size:.4f}, 1, {size:.4f}> translate <{-b:.4f}, 0, {-b:.4f}> }}\n"
        f"  finish {{ diffuse 0.82 specular {0.05 + e.gloss:.3f} roughness "
        f"{0.004 + 0.02 * (1 - e.gloss):.4f} reflection {{ {0.01 + 0.05 * e.gloss:.3f} }} }} }}\n"
        "  texture { pigment { rgbt 1 } }\n}\n"
        f"box {{ <{-b - 0.001:.4f}, {-BOARD_THICKNESS}, {-b - 0.001:.4f}>, "
        f"<{10 + b + 0.001:.4f}, -0.002, {10 + b + 0.001:.4f}> "
        "pigment { rgb <0.55, 0.52, 0.48> } }\n"
    )


def _tile(t: TilePiece, e: Edition, turns: int) -> str:
    x, y = _rotated(t.file + 0.5 + t.dx, t.rank + 0.5 + t.dy, turns)
    base = e.light_wood if t.colour == "light" else e.dark_wood
    c = tuple(min(1.0, v * (1 + t.tint)) for v in base)
    darker = tuple(v * 0.78 for v in c)
    s, h = t.size / 2, e.tile_height / 2
    r = np.random.default_rng(t.grain_seed)
    grain = (f"wood turbulence {r.uniform(0.03, 0.12):.3f} scale {r.uniform(0.04, 0.09):.3f} "
             f"rotate <90, {r.uniform(-20, 20):.1f}, 0> translate <{r.uniform(-9, 9):.2f}, "
             f"{r.uniform(-9, 9):.2f}, {r.uniform(-9, 9):.2f}>")
    return (
        f"superellipsoid {{ <{e.tile_bevel:.3f}, {e.tile_bevel:.3f}> scale <{s:.4f}, {h:.4f}, "
        f"{s:.4f}> translate <0, {h:.4f}, 0>\n"
        f"  texture {{ pigment {{ {grain} color_map {{ [0 {rgb(c)}] [0.6 {rgb(c)}] "
        f"[1 {rgb(darker)}] }} }}\n"
        "  finish { diffuse 0.78 specular 0.08 roughness 0.04 } }\n"
        f"  rotate y*{t.turn_deg:.2f} translate <{x:.4f}, 0, {y:.4f}> }}\n"
    )


def bridge_object(e: Edition, colour: str) -> str:
    """The single arched bridge piece along local x, centred, standing on y = 0."""
    length, width, height = e.bridge_length, e.bridge_width, e.bridge_height
    foot = 0.3
    a = length / 2 - foot
    rise = height - 0.13
    radius = (a * a + rise * rise) / (2 * rise)
    top_r = ((length / 2) ** 2 + (0.3 * height) ** 2) / (2 * 0.3 * height)
    return (
        "intersection {\n"
        f"  box {{ <{-length / 2:.4f}, 0, {-width / 2:.4f}>, <{length / 2:.4f}, {height:.4f}, "
        f"{width / 2:.4f}> }}\n"
        f"  cylinder {{ <0, {height - top_r:.4f}, {-width:.4f}>, <0, {height - top_r:.4f}, "
        f"{width:.4f}>, {top_r:.4f} }}\n"
        f"  cylinder {{ <0, {rise - radius:.4f}, {-width:.4f}>, <0, {rise - radius:.4f}, "
        f"{width:.4f}>, {radius:.4f} inverse }}\n"
        f"  texture {{ pigment {{ {colour} }} normal {{ bumps 0.05 scale 0.02 }}\n"
        "    finish { diffuse 0.75 specular 0.25 roughness 0.02 } }\n}\n"
    )


def _bridge(bp: BridgePiece, e: Edition, turns: int) -> str:
    ax, ay = _rotated(bp.a[0] + 0.5, bp.a[1] + 0.5, turns)
    bx, by = _rotated(bp.b[0] + 0.5, bp.b[1] + 0.5, turns)
    mx, my = (ax + bx) / 2, (ay + by) / 2
    angle = math.degrees(math.atan2(by - ay, bx - ax))
    nx, ny = -(by - ay), bx - ax
    n = math.hypot(nx, ny)
    mx, my = mx + bp.shift * nx / n, my + bp.shift * ny / n
    # POV-Ray turns about y clockwise seen from above (left-handed): the board's angle negated.
    return (f"object {{ {bridge_object(e, rgb(e.bridge_grey))} rotate y*{-angle - bp.turn_deg:.3f} "
            f"translate <{mx:.4f}, {e.tile_height:.4f}, {my:.4f}> }}\n")


def _arm(hand: Hand) -> tuple[Array, Array, Array, Array, Array, Array, Array, Array]:
    """The arm's directions (along, across, up) and joints (tip, wrist, palm, elbow,
    shoulder) in the board frame."""
    sx, sy, sz = hand.shoulder
    tx, ty = hand.reach
    d = np.array([tx - sx, ty - sy, 0.0])
    d /= np.linalg.norm(d)
    up = np.array([0.0, 0.0, 1.0])
    t = math.radians(hand.turn_deg)
    side = np.cross(up, d)
    side = math.cos(t) * side + math.sin(t) * d
    side[2] = 0
    side /= np.linalg.norm(side)
    tip = np.array([tx, ty, hand.height])
    wrist = tip - d * 2.4 + up * 1.1
    palm = wrist + d * 1.1 - up * 0.25
    elbow = wrist - d * 7.0 + up * 1.4
    shoulder = np.array([sx, sy, sz])
    return d, side, up, tip, wrist, palm, elbow, shoulder


def hand_balls(hand: Hand) -> Array:
    """Balls (N x 4: x, y, z, radius) that hold the whole arm, hand and held piece."""
    d, _, _, tip, wrist, palm, elbow, shoulder = _arm(hand)
    balls = []
    for a, b, ra, rb in ((shoulder, elbow, 1.35, 1.05), (elbow, wrist, 1.05, 0.62)):
        for s in np.linspace(0.0, 1.0, 12):
            balls.append([*(a + (b - a) * s), ra + (rb - ra) * s])
    balls.append([*palm, 1.4])
    balls.append([*(tip - d * 0.6), 1.6])
    return np.asarray(balls)


def hand_parts(hand: Hand) -> dict[str, list[str]]:
    """An arm and hand as POV-Ray objects, by material: skin, sleeve, held piece."""
    d, side, up, tip, wrist, palm, elbow, shoulder = _arm(hand)
    skin: list[str] = []
    sleeve: list[str] = []
    cut = hand.sleeve_to
    sleeve_end = elbow + (wrist - elbow) * cut
    sleeve.append(f"sphere_sweep {{ linear_spline 3, {vec(shoulder)}, 1.35, {vec(elbow)}, 1.05, "
                  f"{vec(sleeve_end)}, {1.05 - 0.3 * cut:.3f} }}")
    skin.append(f"sphere_sweep {{ linear_spline 2, {vec(elbow)}, 0.9, {vec(wrist)}, 0.62 }}")
    axis_angle = math.degrees(math.atan2(d[1], d[0]))
    skin.append(f"sphere {{ 0, 1 scale <1.35, 0.5, 1.15> rotate y*{-axis_angle:.2f} "
                f"translate {vec(palm)} }}")
    for i in range(4):
        k = palm + d * 1.0 + side * (i - 1.5) * 0.5
        end = tip + side * (i - 1.5) * 0.38 - d * (0.25 if i in (0, 3) else 0.0)
        mid = (k + end) / 2 + up * 0.35 + d * 0.2
        skin.append(f"sphere_sweep {{ linear_spline 3, {vec(k)}, 0.24, {vec(mid)}, 0.22, "
                    f"{vec(end)}, 0.19 }}")
    thumb_base = palm + side * 1.0 - d * 0.2
    thumb_tip = tip + side * 0.9 - d * 0.4 + up * 0.1
    skin.append(f"sphere_sweep {{ linear_spline 2, {vec(thumb_base)}, 0.3, {vec(thumb_tip)}, "
                "0.2 }")
    held: list[str] = []
    if hand.holds in ("light", "dark"):
        held.append(f"box {{ <-0.43, -0.13, -0.43>, <0.43, 0.13, 0.43> rotate z*25 "
                    f"translate {vec(tip + side * 0.45 - up * 0.3)} }}")
    elif hand.holds == "bridge":
        held.append(f"box {{ <-1.25, -0.2, -0.2>, <1.25, 0.2, 0.2> rotate y*{-axis_angle + 90:.1f} "
                    f"translate {vec(tip + side * 0.45 - up * 0.3)} }}")
    return {"skin": skin, "sleeve": sleeve, "held": held}


def _hand(hand: Hand, e: Edition) -> str:
    parts = hand_parts(hand)
    out = "".join(f"object {{ {p} texture {{ pigment {{ {rgb(hand.skin)} }} "
                  "finish { diffuse 0.8 specular 0.12 roughness 0.06 } } }\n"
                  for p in parts["skin"])
    out += "".join(f"object {{ {p} texture {{ pigment {{ {rgb(hand.sleeve)} }} "
                   "normal { wrinkles 0.35 scale 0.4 } finish { diffuse 0.85 } } }\n"
                   for p in parts["sleeve"])
    held_colour = {"light": e.light_wood, "dark": e.dark_wood}.get(hand.holds, e.bridge_grey)
    out += "".join(f"object {{ {p} texture {{ pigment {{ {rgb(held_colour)} }} }} }}\n"
                   for p in parts["held"])
    return out


def _prop(p: Prop, e: Edition) -> str:
    place = f"rotate y*{p.turn_deg:.1f} translate <{p.x:.3f}, {-BOARD_THICKNESS:.3f}, {p.y:.3f}>"
    if p.kind == "box":
        return (f"box {{ <-4, 0, -2.5>, <4, 1.6, 2.5> pigment {{ {rgb(p.colour)} }} "
                f"finish {{ specular 0.1 }} {place} }}\n")
    if p.kind == "phone":
        return (f"superellipsoid {{ <0.1, 0.3> scale <1.25, 0.15, 2.6> translate y*0.15 "
                f"pigment {{ {rgb(p.colour)} }} finish {{ specular 0.6 roughness 0.005 "
                f"reflection 0.1 }} {place} }}\n")
    if p.kind == "notepad":
        return (f"box {{ <-2.5, 0, -3.5>, <2.5, 0.15, 3.5> pigment {{ {rgb(p.colour)} }} "
                f"{place} }}\n")
    if p.kind == "mug":
        return (f"difference {{ cylinder {{ 0, y*3, 1.3 }} cylinder {{ y*0.3, y*3.1, 1.15 }} "
                f"pigment {{ {rgb(p.colour)} }} finish {{ specular 0.4 }} {place} }}\n")
    tiles = []
    r = np.random.default_rng(int(abs(p.x * 1000 + p.y * 7)))
    for _ in range(int(r.integers(3, 9))):
        tiles.append(f"superellipsoid {{ <0.15, 0.15> scale <0.43, 0.13, 0.43> translate "
                     f"<{r.uniform(-1.5, 1.5):.2f}, 0.13, {r.uniform(-1.5, 1.5):.2f}> }}")
    return (f"union {{ {' '.join(tiles)} pigment {{ {rgb(p.colour)} }} "
            f"finish {{ diffuse 0.8 }} {place} }}\n")


def _table(scene: Scene) -> str:
    c = scene.table_colour
    darker = tuple(v * 0.7 for v in c)
    if scene.table == "wood":
        pigment = (f"wood turbulence 0.08 scale 0.6 rotate <0, 90, 0> color_map {{ "
                   f"[0 {rgb(c)}] [0.7 {rgb(c)}] [1 {rgb(darker)}] }}")
        finish = "diffuse 0.8 specular 0.15 roughness 0.03"
    elif scene.table == "cloth":
        pigment = (f"gradient x triangle_wave frequency 18 color_map {{ [0 {rgb(c)}] "
                   f"[1 {rgb(darker)}] }}")
        finish = "diffuse 0.9"
    else:
        pigment = (f"granite scale 2 color_map {{ [0 {rgb(c)}] [1 "
                   f"{rgb(tuple(v * 0.92 for v in c))}] }}")
        finish = "diffuse 0.85 specular 0.05"
    return (f"plane {{ y, {-BOARD_THICKNESS} texture {{ pigment {{ {pigment} }} "
            f"finish {{ {finish} }} }} }}\n")


def _lights(scene: Scene) -> str:
    out = []
    for light in scene.lights:
        s, n = light.size, light.samples
        col = tuple(v * light.power for v in light.colour)
        out.append(
            f"light_source {{ {vec(light.position)} {rgb(col)}\n"
            f"  area_light <{s:.3f}, 0, 0>, <0, 0, {s:.3f}>, {n}, {n} adaptive 1 jitter "
            "circular orient\n  fade_distance 30 fade_power 1 }\n")
    return "".join(out)


def scene_text(scene: Scene, camera: Camera, width: int, height: int) -> str:
    """The full POV-Ray scene for `scene` seen through `camera` on a `width` x `height`
    canvas (larger than the output when the lens distorts)."""
    e = scene.edition
    parts = [
        "#version 3.7;\n",
        f"global_settings {{ assumed_gamma 1.0 max_trace_level 5 ambient_light "
        f"rgb {scene.ambient * 4:.3f} }}\n",
        "#default { finish { ambient 0.25 diffuse 0.8 } }\n",
        camera_block(camera, width, height),
        "background { rgb <0.3, 0.3, 0.32> }\n",
        _lights(scene), _table(scene), _board(scene),
    ]
    parts += [_tile(t, e, scene.board_turns) for t in scene.tiles]
    parts += [_bridge(b, e, scene.board_turns) for b in scene.bridges]
    parts += [_prop(p, e) for p in scene.props]
    parts += [_hand(h, e) for h in scene.hands]
    return "".join(parts)


def mask_text(scene: Scene, camera: Camera, width: int, height: int) -> str:
    """A scene that shows only the hands, arms and what they hold, in white on black."""
    white = "texture { pigment { rgb 1 } finish { ambient 1 diffuse 0 } }"
    objects = []
    for hand in scene.hands:
        for group in hand_parts(hand).values():
            objects += [f"object {{ {p} {white} no_shadow }}\n" for p in group]
    return ("#version 3.7;\nglobal_settings { assumed_gamma 1.0 }\n"
            + camera_block(camera, width, height) + "background { rgb 0 }\n"
            + "".join(objects))
