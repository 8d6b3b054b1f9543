"""The description of one synthetic frame: frozen values, no drawing.

Units: lengths on and above the board are in *cells* (one cell of the printed grid = 1.0);
the board coordinate frame has its origin at the outer corner of cell a1, x along the files
(a -> j), y along the ranks (1 -> 10), z up from the printed surface. Colours are BGR tuples
on the 0-255 scale (OpenCV order). Angles are in degrees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

import cv2

from lab.synth.lens import lens_is_invertible
from lab.synth.position import Bridge, validate_position

BGR = tuple[float, float, float]


class InvalidScene(ValueError):
    """A scene that cannot be rendered (bad board shape, a bridge with nothing to stand on...)."""


@dataclass(frozen=True)
class CameraSpec:
    """A pinhole camera looking at the board, with optional radial lens distortion.

    `elevation_deg` 90 looks straight down, 45 looks at the board from 45 degrees above the
    table. `azimuth_deg` is the direction the camera stands in, seen from the board centre:
    0 stands beyond rank 1 looking towards rank 10; any angle is accepted (the renderer
    relabels the board so a1 is the corner nearest the bottom-left of the image, see
    `lab.synth.render`). `roll_deg` turns the camera about its optical axis. `distance`
    is from the camera to `target` (a point on the board plane, board coordinates), in cells.
    `focal_px` is the focal length in pixels; `k1`, `k2` are radial distortion coefficients
    (OpenCV's model on normalised coordinates; negative k1 = barrel, as wide-angle webcams).
    """

    elevation_deg: float = 90.0
    azimuth_deg: float = 0.0
    roll_deg: float = 0.0
    distance: float = 20.0
    focal_px: float = 1000.0
    target: tuple[float, float] = (5.0, 5.0)
    width: int = 1280
    height: int = 720
    k1: float = 0.0
    k2: float = 0.0

    @property
    def distorted(self) -> bool:
        """True when the lens bends straight lines (no homography describes the board)."""
        return self.k1 != 0.0 or self.k2 != 0.0


@dataclass(frozen=True)
class BoardLook:
    """The printed board: surface colour, grid lines, border and cardboard thickness."""

    board_color: BGR = (150.0, 140.0, 90.0)
    grid_color: BGR = (60.0, 55.0, 40.0)
    border_color: BGR = (90.0, 120.0, 150.0)
    line_width: float = 0.04
    border_width: float = 0.8
    thickness: float = 0.08
    mottling: float = 0.06
    frame_lines: int = 0
    """Decorative lines printed in the border around the grid (0-2)."""
    frame_color: BGR = (60.0, 55.0, 40.0)


class TableKind(StrEnum):
    """The table surface textures."""

    WOOD = "wood"
    """Wood grain running along the table."""
    CLOTH = "cloth"
    """A woven table cloth: fine cross-hatched weave."""
    PLAIN = "plain"
    """A painted or laminated top with faint blotches."""


@dataclass(frozen=True)
class TableLook:
    """The table under the board: a base colour and a procedural texture."""

    color: BGR = (70.0, 100.0, 140.0)
    kind: TableKind = TableKind.WOOD
    contrast: float = 0.25
    scale: float = 1.0
    extent: tuple[float, float] | None = None
    """Half width and half depth of the table top (cells, around the board centre plus
    `offset`); None for a table wider than the view. Beyond its edge is the floor."""
    offset: tuple[float, float] = (0.0, 0.0)
    floor_color: BGR = (55.0, 60.0, 65.0)


@dataclass(frozen=True)
class TileLook:
    """The tiles of one edition and how carefully they were put down.

    `size` is the side of a tile as a fraction of a cell, `height` its thickness in cells,
    `bevel` the width of the rounded top edge. `jitter_offset` (cells) and `jitter_rotation_deg`
    bound how far off-centre and how turned each tile lies (drawn per cell from the scene
    seed, so a tile stays put across a sequence). `color_variation` is the relative spread
    of colour from tile to tile.
    """

    light_color: BGR = (190.0, 225.0, 240.0)
    dark_color: BGR = (40.0, 40.0, 170.0)
    size: float = 0.88
    height: float = 0.28
    bevel: float = 0.05
    jitter_offset: float = 0.04
    jitter_rotation_deg: float = 5.0
    color_variation: float = 0.04
    gloss: float = 0.15
    grain: float = 0.04
    """Strength of the wood/paint grain on tile tops (relative brightness)."""


@dataclass(frozen=True)
class BridgeLook:
    """Grey bridges: deck width and thickness, arch height above the tile tops (cells)."""

    color: BGR = (150.0, 150.0, 150.0)
    width: float = 0.34
    thickness: float = 0.12
    arch_height: float = 0.35
    overhang: float = 0.18


@dataclass(frozen=True)
class Lighting:
    """A room lamp or window: direction, falloff, colour tint, shadows and glare.

    `lamp` is the light's position in board coordinates (cells; z above the board). Shading
    and shadow direction come from it; `falloff` darkens the scene with distance from the
    lamp's foot, `gradient` adds a linear brightness ramp along `gradient_deg`. `tint` are
    per-channel (B, G, R) gains: warm lamps lift red, daylight lifts blue. `exposure` scales
    everything (dim rooms < 1). `glare` is the strength of the lamp's mirror reflection on the
    glossy board, `glare_radius` its size in cells.
    """

    lamp: tuple[float, float, float] = (2.0, -6.0, 25.0)
    ambient: float = 0.55
    diffuse: float = 0.45
    falloff: float = 0.15
    gradient: float = 0.1
    gradient_deg: float = 30.0
    tint: BGR = (1.0, 1.0, 1.0)
    exposure: float = 1.0
    shadow_strength: float = 0.45
    shadow_softness: float = 0.12
    glare: float = 0.0
    glare_radius: float = 1.5
    glare_spots: tuple[tuple[float, float, float, float], ...] = ()
    """Further reflections (other lights, a window): (x, y, radius in cells, strength)."""
    vignette: float = 0.15


@dataclass(frozen=True)
class Effects:
    """What the camera's sensor and encoder add: noise, blur, JPEG."""

    noise_sigma: float = 2.0
    blur_sigma: float = 0.6
    chromatic: float = 0.0
    """Lateral chromatic aberration: red and blue part by this many pixels at the corners."""
    sharpen: float = 0.0
    """Unsharp-mask strength (phones sharpen their pictures; 0.5 is strong)."""
    depth_blur: float = 0.0
    """Extra defocus blur (sigma, px) reached where the board plane is 30% nearer or farther
    than the focused target (shallow depth of field in angled views)."""
    jpeg_quality: int | None = 90
    noise_seed: int = 0
    """Varies the noise alone (successive video frames of one scene)."""


@dataclass(frozen=True)
class HandSpec:
    """A hand and arm reaching over the board.

    The hand's fingertips point at `target` (board coordinates, cells) from `height` cells
    above the printed surface; the arm comes from direction `from_deg` (board frame: 0 from
    the j side (+x), 90 from the rank-10 side, 270 from the rank-1 side). `holding` is '',
    'L'/'D' for a tile pinched between the fingers, or 'B' for a bridge. `sleeve_reach` is
    the fraction of the forearm covered by the sleeve, from the elbow (0 = bare forearm,
    1 = sleeve to the wrist).
    """

    target: tuple[float, float] = (5.0, 5.0)
    from_deg: float = 270.0
    height: float = 2.0
    skin: BGR = (120.0, 160.0, 210.0)
    sleeve: BGR = (90.0, 60.0, 40.0)
    sleeve_reach: float = 0.4
    scale: float = 1.0
    spread_deg: float = 0.0
    holding: str = ""
    motion: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """How far the hand moves during the exposure (cells): blurs the hand along it."""


@dataclass(frozen=True)
class LooseTile:
    """A tile lying on the table beside the board (the players' supply): not on the board."""

    x: float
    y: float
    colour: str = "L"
    angle_deg: float = 0.0


@dataclass(frozen=True)
class Prop:
    """A box-shaped object on the table beside the board (game box, phone, score pad...).

    Centre (x, y) and sizes in cells, board frame; `width` along x before turning by
    `angle_deg`. Props are distractors: they are not part of the truth.
    """

    x: float
    y: float
    width: float
    depth: float
    height: float
    angle_deg: float = 0.0
    color: BGR = (60.0, 60.0, 60.0)


@dataclass(frozen=True)
class MarkerSpec:
    """Printed ArUco markers lying on the table just outside the board's four corners.

    `ids` are given for the corners a1, j1, j10, a10 in that order (as the image shows
    them, see the orientation rule). `size` is the side of the black marker square and
    `gap` the distance from the board's outer corner to the marker's inner corner, along
    both axes, in cells; `paper` is the white margin around the marker.
    """

    dictionary: str = "DICT_4X4_50"
    ids: tuple[int, int, int, int] = (0, 1, 2, 3)
    size: float = 1.6
    gap: float = 0.3
    paper: float = 0.25


@dataclass(frozen=True)
class SceneSpec:
    """One frame: what is on the board, how it looks, how it is lit and photographed.

    `board` holds `size` strings, top rank first ('.', 'L', 'D'), the format of
    `ponte read --json`; `bridges` are pairs of cell names, each pair sorted by (file, rank)
    and the tuple sorted. `loose_tiles` lie on the table beside the board (distractors).
    `seed` drives every random detail the spec leaves open (tile jitter, textures, noise),
    so the same spec always renders the same image.
    """

    board: tuple[str, ...]
    bridges: tuple[Bridge, ...] = ()
    size: int = 10
    camera: CameraSpec = field(default_factory=CameraSpec)
    board_look: BoardLook = field(default_factory=BoardLook)
    table: TableLook = field(default_factory=TableLook)
    tiles: TileLook = field(default_factory=TileLook)
    bridge_look: BridgeLook = field(default_factory=BridgeLook)
    lighting: Lighting = field(default_factory=Lighting)
    effects: Effects = field(default_factory=Effects)
    hands: tuple[HandSpec, ...] = ()
    loose_tiles: tuple[LooseTile, ...] = ()
    markers: MarkerSpec | None = None
    props: tuple[Prop, ...] = ()
    seed: int = 0

    def __post_init__(self) -> None:
        try:
            validate_position(self.board, self.bridges, self.size)
        except ValueError as exc:
            raise InvalidScene(str(exc)) from exc
        cam = self.camera
        if not 10.0 <= cam.elevation_deg <= 90.0:
            raise InvalidScene(f"camera elevation {cam.elevation_deg} outside 10..90 degrees")
        if cam.width < 16 or cam.height < 16:
            raise InvalidScene(f"image size {cam.width}x{cam.height} too small")
        if cam.distance <= 0 or cam.focal_px <= 0:
            raise InvalidScene("camera distance and focal length must be positive")
        if cam.distorted and not lens_is_invertible(
            cam.width, cam.height, cam.focal_px, cam.k1, cam.k2
        ):
            raise InvalidScene(
                f"lens distortion k1={cam.k1}, k2={cam.k2} folds over before the image corners"
                f" at focal length {cam.focal_px}px"
            )
        reach = self.size / 2.0 + self.board_look.border_width + 0.75
        for piece in self.loose_tiles:
            if piece.colour not in ("L", "D"):
                raise InvalidScene(f"loose tile colour {piece.colour!r}: expected 'L' or 'D'")
            if max(abs(piece.x - self.size / 2.0), abs(piece.y - self.size / 2.0)) < reach:
                raise InvalidScene(f"loose tile at ({piece.x}, {piece.y}) lies on the board")
        if self.table.extent is not None:
            half = self.size / 2.0 + self.board_look.border_width + 0.5
            for axis in (0, 1):
                if self.table.extent[axis] < half + abs(self.table.offset[axis]):
                    raise InvalidScene("the table must be larger than the board it carries")
        for prop in self.props:
            if min(prop.width, prop.depth, prop.height) <= 0:
                raise InvalidScene("prop sizes must be positive")
            gap = max(abs(prop.x - self.size / 2.0), abs(prop.y - self.size / 2.0))
            if gap < reach - 0.75 + math.hypot(prop.width, prop.depth) / 2.0:
                raise InvalidScene(f"prop at ({prop.x}, {prop.y}) overlaps the board")
        if self.markers is not None:
            name = self.markers.dictionary
            if not name.startswith("DICT_") or not hasattr(cv2.aruco, name):
                raise InvalidScene(f"unknown ArUco dictionary {name!r}")
            if self.markers.size <= 0 or self.markers.gap < 0 or self.markers.paper < 0:
                raise InvalidScene("marker size must be positive, gap and paper not negative")
        for hand in self.hands:
            if hand.holding not in ("", "L", "D", "B"):
                raise InvalidScene(f"hand holding {hand.holding!r}: expected '', 'L', 'D' or 'B'")
