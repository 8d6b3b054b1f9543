"""What one ray-traced scene holds: frozen values, drawn from a seed, no rendering.

Lengths are in cells (one printed grid cell = 1.0, about 3 cm), colours linear RGB in 0-1
(POV-Ray's `assumed_gamma 1.0`), angles in degrees. Positions are drawn by playing random
legal turns with the referee, so every scene's board is one a real game can reach.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from lab.raytrace.camera import Camera, a1_corner, corners_in_view, lens_folds
from referee import Bridge, Colour, Game, Pass, Tiles

RGB = tuple[float, float, float]


@dataclass(frozen=True)
class Edition:
    """One box of the game: its board print and its pieces."""

    water: RGB
    water_dark: RGB
    grid: RGB
    border: RGB
    grid_width: float
    border_width: float
    gloss: float
    wear: float
    light_wood: RGB
    dark_wood: RGB
    tile_size: float
    tile_height: float
    tile_bevel: float
    bridge_grey: RGB
    bridge_length: float
    bridge_width: float
    bridge_height: float


@dataclass(frozen=True)
class TilePiece:
    """A tile as it lies: its cell, colour, offset and turn, size and tint."""

    file: int
    rank: int
    colour: str
    dx: float
    dy: float
    turn_deg: float
    size: float
    tint: float
    grain_seed: int


@dataclass(frozen=True)
class BridgePiece:
    """A bridge from cell `a` to cell `b` (0-based file, rank), a little off its axis."""

    a: tuple[int, int]
    b: tuple[int, int]
    shift: float
    turn_deg: float


@dataclass(frozen=True)
class Light:
    """An area light: where it hangs, how big it is, its colour and strength."""

    position: tuple[float, float, float]
    size: float
    colour: RGB
    power: float
    samples: int


@dataclass(frozen=True)
class Hand:
    """An arm reaching in: from the shoulder point (outside the view) to the hand over
    `reach` at `height`, with its palm turned by `turn_deg`; `holds` a piece or nothing."""

    shoulder: tuple[float, float, float]
    reach: tuple[float, float]
    height: float
    turn_deg: float
    skin: RGB
    sleeve: RGB
    sleeve_to: float
    holds: str


@dataclass(frozen=True)
class Prop:
    """Something else on the table: a box, a phone, a notepad, a mug, loose tiles."""

    kind: str
    x: float
    y: float
    turn_deg: float
    colour: RGB


@dataclass(frozen=True)
class Effects:
    """What the camera does to the light: exposure, noise, blur, compression."""

    exposure_target: float
    noise: float
    chroma_noise: float
    blur_px: float
    sharpen: float
    jpeg_quality: int
    vignette: float


@dataclass(frozen=True)
class Scene:
    """Everything one rendered frame shows, and the truth it is rendered for."""

    setup: str
    seed: tuple[int, ...]
    camera: Camera
    board_turns: int
    """Quarter turns of the printed board under the labels (so a1 is nearest the
    image's bottom-left whatever side the camera stands on)."""
    edition: Edition
    tiles: tuple[TilePiece, ...]
    bridges: tuple[BridgePiece, ...]
    lights: tuple[Light, ...]
    ambient: float
    table: str
    table_colour: RGB
    hands: tuple[Hand, ...] = ()
    props: tuple[Prop, ...] = ()
    effects: Effects = field(default_factory=lambda: Effects(0.45, 0.01, 0.004, 0.0, 0.0,
                                                             92, 0.1))

    def board_rows(self) -> tuple[str, ...]:
        """The truth board: 10 strings, top rank first, '.' 'L' 'D'."""
        grid = [["."] * 10 for _ in range(10)]
        for t in self.tiles:
            grid[t.rank][t.file] = "L" if t.colour == "light" else "D"
        return tuple("".join(row) for row in reversed(grid))

    def bridge_names(self) -> tuple[tuple[str, str], ...]:
        def name(c: tuple[int, int]) -> str:
            return f"{chr(ord('a') + c[0])}{c[1] + 1}"
        pairs = [tuple(sorted((b.a, b.b))) for b in self.bridges]
        return tuple(sorted((name(p[0]), name(p[1])) for p in pairs))


# --- the editions -------------------------------------------------------------------

def _rgb(r: float, g: float, b: float) -> RGB:
    """An sRGB colour (0-255) as linear RGB."""
    def lin(c: float) -> float:
        c /= 255.0
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    return (lin(r), lin(g), lin(b))


def _jitter(rng: np.random.Generator, colour: RGB, amount: float) -> RGB:
    scale = 1.0 + rng.uniform(-amount, amount)
    return tuple(float(np.clip(c * scale * (1.0 + rng.uniform(-amount, amount) / 2), 0, 1))
                 for c in colour)  # type: ignore[return-value]


_WATERS = [(_rgb(58, 120, 170), _rgb(34, 84, 135)), (_rgb(70, 140, 160), _rgb(40, 100, 120)),
           (_rgb(90, 150, 190), _rgb(60, 110, 160)), (_rgb(50, 100, 140), _rgb(30, 70, 105))]
_GRIDS = [_rgb(235, 235, 220), _rgb(30, 45, 70), _rgb(200, 215, 225), _rgb(55, 60, 50)]
_BORDERS = [_rgb(40, 55, 95), _rgb(120, 90, 60), _rgb(150, 140, 120), _rgb(30, 35, 45),
            _rgb(60, 110, 150)]
_LIGHTS = [_rgb(232, 205, 160), _rgb(240, 225, 195), _rgb(215, 180, 130), _rgb(245, 240, 228)]
_DARKS = [_rgb(140, 40, 30), _rgb(95, 60, 40), _rgb(40, 35, 32), _rgb(120, 30, 45)]


def random_edition(rng: np.random.Generator) -> Edition:
    water, water_dark = _WATERS[rng.integers(len(_WATERS))]
    return Edition(
        water=_jitter(rng, water, 0.08), water_dark=_jitter(rng, water_dark, 0.08),
        grid=_GRIDS[rng.integers(len(_GRIDS))], border=_BORDERS[rng.integers(len(_BORDERS))],
        grid_width=float(rng.uniform(0.025, 0.06)), border_width=float(rng.uniform(0.45, 0.9)),
        gloss=float(rng.uniform(0.0, 0.35)), wear=float(rng.uniform(0.0, 0.5)),
        light_wood=_jitter(rng, _LIGHTS[rng.integers(len(_LIGHTS))], 0.05),
        dark_wood=_jitter(rng, _DARKS[rng.integers(len(_DARKS))], 0.08),
        tile_size=float(rng.uniform(0.82, 0.9)), tile_height=float(rng.uniform(0.22, 0.32)),
        tile_bevel=float(rng.uniform(0.08, 0.25)),
        bridge_grey=(g := float(rng.uniform(0.12, 0.3)), g, g * float(rng.uniform(0.95, 1.05))),
        bridge_length=float(rng.uniform(2.45, 2.7)), bridge_width=float(rng.uniform(0.36, 0.46)),
        bridge_height=float(rng.uniform(0.38, 0.5)),
    )


# --- positions -----------------------------------------------------------------------

def random_position(rng: np.random.Generator, turns: int, bridge_bias: float
                    ) -> tuple[list[tuple[int, int, str]], list[tuple[tuple[int, int],
                                                                       tuple[int, int]]]]:
    """Play `turns` random legal turns (bridges chosen with `bridge_bias`); return the tiles
    (file, rank, colour) and bridges ((file, rank), (file, rank))."""
    game = Game()
    for _ in range(turns):
        if game.is_over():
            break
        colour = game.turn
        assert colour is not None
        bridges = game.position.legal_bridges(colour)
        if bridges and rng.random() < bridge_bias:
            move: Tiles | Bridge | Pass = bridges[rng.integers(len(bridges))]
        else:
            pairs = game.position.legal_tile_pairs(colour)
            if not pairs:
                move = Pass() if game.pass_allowed else bridges[0]
            else:
                move = pairs[rng.integers(len(pairs))]
        game.push(move)
    tiles = [(c.file, c.rank, colour.value) for colour in (Colour.LIGHT, Colour.DARK)
             for c in game.position.tiles(colour)]
    placed = [((b.a.file, b.a.rank), (b.b.file, b.b.rank))
              for b in (p.move for p in game.position.bridges)]
    return tiles, placed


def _pieces(rng: np.random.Generator, edition: Edition, turns: int, bridge_bias: float
            ) -> tuple[tuple[TilePiece, ...], tuple[BridgePiece, ...]]:
    tiles, bridges = random_position(rng, turns, bridge_bias)
    pieces = tuple(
        TilePiece(f, r, colour, float(rng.normal(0, 0.03)), float(rng.normal(0, 0.03)),
                  float(rng.normal(0, 3.0)), edition.tile_size * float(rng.uniform(0.98, 1.02)),
                  float(rng.uniform(-0.08, 0.08)), int(rng.integers(1 << 30)))
        for f, r, colour in tiles)
    spans = tuple(BridgePiece(a, b, float(rng.normal(0, 0.03)), float(rng.normal(0, 2.0)))
                  for a, b in bridges)
    return pieces, spans


# --- the setups ----------------------------------------------------------------------

@dataclass(frozen=True)
class Setup:
    """A kind of table: the ranges a scene of it is drawn from."""

    name: str
    elevation: tuple[float, float]
    roll: tuple[float, float]
    hfov: tuple[float, float]
    sizes: tuple[tuple[int, int], ...]
    k1: tuple[float, float]
    lamp: str
    hands: tuple[int, int]
    noise: tuple[float, float]
    jpeg: tuple[int, int]
    describes: str


SETUPS: dict[str, Setup] = {s.name: s for s in (
    Setup("webcam-overhead", (78, 90), (0, 4), (55, 70), ((1280, 720), (1280, 960)),
          (0.0, 0.0), "ceiling", (0, 0), (0.004, 0.012), (85, 95),
          "a webcam on a stand above the board, room light from the ceiling"),
    Setup("oblique-daylight", (40, 55), (0, 8), (55, 68), ((1280, 720), (1920, 1080)),
          (0.0, 0.0), "window", (0, 0), (0.004, 0.01), (85, 95),
          "a camera low at the table's side, daylight from a window"),
    Setup("phone-handheld", (55, 80), (0, 10), (62, 74), ((1920, 1080), (1600, 1200)),
          (-0.06, 0.0), "room", (0, 0), (0.006, 0.016), (75, 92),
          "a hand-held phone: any turn of the board, roll, mild barrel, sharpening"),
    Setup("lamp-evening", (50, 72), (0, 6), (55, 70), ((1280, 720),),
          (0.0, 0.0), "lamp", (0, 0), (0.01, 0.025), (80, 92),
          "a low warm lamp beside the board: falloff, long hard shadows, glare"),
    Setup("wide-webcam", (60, 88), (0, 5), (88, 100), ((1280, 720), (1024, 768)),
          (-0.3, -0.18), "ceiling", (0, 0), (0.006, 0.016), (80, 92),
          "a wide-angle webcam with strong barrel distortion"),
    Setup("dim-noisy", (48, 85), (0, 8), (58, 72), ((960, 720), (1280, 720)),
          (-0.05, 0.0), "dim", (0, 0), (0.025, 0.05), (40, 70),
          "a dim room: heavy sensor noise and strong JPEG compression"),
    Setup("hands", (45, 88), (0, 10), (55, 74), ((1280, 720), (1920, 1080)),
          (-0.08, 0.0), "room", (1, 2), (0.006, 0.016), (80, 92),
          "one or two arms over or beside the board, some holding a piece"),
)}

_SKINS = [_rgb(241, 194, 167), _rgb(224, 172, 138), _rgb(198, 134, 96), _rgb(141, 85, 54),
          _rgb(92, 56, 36), _rgb(255, 219, 190)]
_SLEEVES = [_rgb(30, 60, 140), _rgb(150, 30, 30), _rgb(40, 40, 45), _rgb(210, 210, 205),
            _rgb(60, 110, 60), _rgb(90, 120, 170), _rgb(120, 90, 60)]
_TABLES = {"wood": [_rgb(150, 105, 65), _rgb(110, 75, 45), _rgb(185, 150, 110)],
           "cloth": [_rgb(60, 90, 60), _rgb(140, 30, 35), _rgb(200, 195, 185)],
           "plain": [_rgb(70, 70, 72), _rgb(215, 215, 210), _rgb(45, 45, 50)]}


def _camera(rng: np.random.Generator, setup: Setup, width: int, height: int) -> Camera:
    for _ in range(200):
        elevation = float(rng.uniform(*setup.elevation))
        hfov = float(rng.uniform(*setup.hfov))
        k1 = float(rng.uniform(*setup.k1))
        cam = Camera(
            elevation_deg=elevation, azimuth_deg=float(rng.uniform(0, 360)),
            roll_deg=float(rng.uniform(*setup.roll) * rng.choice([-1, 1])), distance=1.0,
            hfov_deg=hfov, width=width, height=height,
            target=(5.0 + float(rng.normal(0, 0.4)), 5.0 + float(rng.normal(0, 0.4)), 0.0),
            k1=k1, k2=float(k1 * k1 * rng.uniform(0.0, 0.6)))
        if lens_folds(cam):
            continue
        # Pull back until the grid fills 60-90% of the image with room to spare.
        fill = float(rng.uniform(0.7, 0.95))
        for distance in np.arange(8.0, 60.0, 0.25):
            trial = dataclasses.replace(cam, distance=float(distance))
            if corners_in_view(trial, margin_px=0.5 * (1 - fill) * min(width, height)):
                cam = trial
                break
        else:
            continue
        _, margin = a1_corner(cam)
        if margin >= 0.1 * height:
            return cam
    raise ValueError(f"no camera found for setup {setup.name}")


def _lights(rng: np.random.Generator, kind: str) -> tuple[tuple[Light, ...], float]:
    def at(azimuth: float, elevation: float, distance: float) -> tuple[float, float, float]:
        a, e = math.radians(azimuth), math.radians(elevation)
        return (5 + distance * math.cos(e) * math.sin(a), 5 - distance * math.cos(e)
                * math.cos(a), distance * math.sin(e))
    warm = (1.0, 0.86, 0.68)
    cool = (0.9, 0.95, 1.0)
    neutral = (1.0, 0.97, 0.92)
    az = float(rng.uniform(0, 360))
    if kind == "ceiling":
        lights = (Light(at(az, rng.uniform(65, 88), 45), 12.0, neutral, 1.0, 5),
                  Light(at(az + 140, 60, 45), 14.0, neutral, 0.35, 3))
        return lights, 0.12
    if kind == "window":
        lights = (Light(at(az, rng.uniform(18, 35), 60), 25.0, cool, 1.3, 5),
                  Light(at(az + 180, 50, 40), 20.0, neutral, 0.15, 3))
        return lights, 0.16
    if kind == "lamp":
        lights = (Light(at(az, rng.uniform(25, 45), rng.uniform(14, 22)), 2.0, warm, 1.1, 5),)
        return lights, 0.05
    if kind == "dim":
        lights = (Light(at(az, rng.uniform(45, 80), 40), 15.0, cool, 0.35, 4),)
        return lights, 0.05
    lights = (Light(at(az, rng.uniform(45, 80), 40), 10.0, neutral, 0.9, 5),
              Light(at(az + rng.uniform(90, 200), rng.uniform(30, 60), 35), 8.0,
                    warm if rng.random() < 0.5 else cool, 0.4, 3))
    return lights, 0.1


def _hands(rng: np.random.Generator, count: int, cam: Camera) -> tuple[Hand, ...]:
    hands = []
    for _ in range(count):
        side = float(rng.uniform(0, 360))
        a = math.radians(side)
        shoulder = (5 + 22 * math.sin(a), 5 - 22 * math.cos(a), float(rng.uniform(8, 12)))
        over = rng.random() < 0.8
        reach = ((float(rng.uniform(0.5, 9.5)), float(rng.uniform(0.5, 9.5))) if over else
                 (5 + 7.5 * math.sin(a), 5 - 7.5 * math.cos(a)))
        holds = str(rng.choice(["nothing", "light", "dark", "bridge"], p=[0.4, 0.2, 0.2, 0.2]))
        hands.append(Hand(shoulder, reach, float(rng.uniform(0.6, 3.5)),
                          float(rng.uniform(-40, 40)), _jitter(rng, _SKINS[rng.integers(6)], 0.06),
                          _SLEEVES[rng.integers(len(_SLEEVES))], float(rng.uniform(0.35, 0.8)),
                          holds))
    return tuple(hands)


_PROP_REACH = {"box": 4.8, "phone": 2.9, "notepad": 4.4, "mug": 1.4, "supply": 2.3}
"""How far each prop reaches from its centre (half its diagonal), in cells."""


def _props(rng: np.random.Generator, edition: Edition) -> tuple[Prop, ...]:
    props: list[Prop] = []
    edge = 5 + edition.border_width + 0.3
    for _ in range(int(rng.integers(0, 4))):
        kind = str(rng.choice(list(_PROP_REACH)))
        reach = _PROP_REACH[kind]
        for _ in range(50):
            a = math.radians(float(rng.uniform(0, 360)))
            r = float(rng.uniform(edge + reach, edge + reach + 4))
            x, y = 5 + r * math.sin(a), 5 - r * math.cos(a)
            clear = max(abs(x - 5), abs(y - 5)) - reach > edge
            apart = all(math.hypot(x - p.x, y - p.y) > reach + _PROP_REACH[p.kind] for p in props)
            if clear and apart:
                break
        else:
            continue
        colour = {"box": _rgb(200, 60, 40), "phone": _rgb(20, 20, 22),
                  "notepad": _rgb(240, 240, 232), "mug": _rgb(230, 225, 210),
                  "supply": edition.light_wood if rng.random() < 0.5 else edition.dark_wood}[kind]
        props.append(Prop(kind, x, y, float(rng.uniform(0, 360)), colour))
    return tuple(props)


@dataclass(frozen=True)
class Table:
    """One table for a run of scenes: camera, light, edition, the table and what is on it."""

    setup: str
    seed: tuple[int, ...]
    camera: Camera
    board_turns: int
    edition: Edition
    lights: tuple[Light, ...]
    ambient: float
    table: str
    table_colour: RGB
    props: tuple[Prop, ...]
    effects: Effects


def random_table(seed: tuple[int, ...], setup_name: str) -> Table:
    """Draw one table of `setup_name` from `seed` (the same seed, the same table)."""
    setup = SETUPS[setup_name]
    rng = np.random.default_rng(list(seed))
    edition = random_edition(rng)
    width, height = setup.sizes[rng.integers(len(setup.sizes))]
    cam = _camera(rng, setup, width, height)
    lights, ambient = _lights(rng, setup.lamp)
    table = str(rng.choice(list(_TABLES)))
    table_colour = _TABLES[table][rng.integers(len(_TABLES[table]))]
    effects = Effects(
        exposure_target=float(rng.uniform(0.38, 0.52)), noise=float(rng.uniform(*setup.noise)),
        chroma_noise=float(rng.uniform(0.2, 0.5)), blur_px=float(rng.uniform(0.0, 0.8)),
        sharpen=float(rng.uniform(0.3, 0.8)) if setup.name == "phone-handheld" else 0.0,
        jpeg_quality=int(rng.integers(setup.jpeg[0], setup.jpeg[1] + 1)),
        vignette=float(rng.uniform(0.0, 0.35)))
    corner, _ = a1_corner(cam)
    return Table(setup_name, tuple(seed), cam, corner, edition, lights, ambient, table,
                 table_colour, _props(rng, edition), effects)


def random_scene(table: Table, seed: tuple[int, ...], *, turns: int | None = None) -> Scene:
    """A position (and, where the setup has them, hands) on `table`, drawn from `seed`."""
    setup = SETUPS[table.setup]
    rng = np.random.default_rng(list(seed))
    played = int(rng.integers(1, 36)) if turns is None else turns
    tiles, bridges = _pieces(rng, table.edition, played, float(rng.uniform(0.15, 0.5)))
    hands = _hands(rng, int(rng.integers(setup.hands[0], setup.hands[1] + 1)), table.camera)
    return Scene(table.setup, tuple(seed), table.camera, table.board_turns, table.edition,
                 tiles, bridges, table.lights, table.ambient, table.table, table.table_colour,
                 hands, table.props, table.effects)


def empty_scene(table: Table) -> Scene:
    """The table with nothing on the board and no hands: the photo calibration takes."""
    return Scene(table.setup, table.seed, table.camera, table.board_turns, table.edition, (),
                 (), table.lights, table.ambient, table.table, table.table_colour, (),
                 table.props, table.effects)
