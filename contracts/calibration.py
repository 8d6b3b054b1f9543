"""The calibration file: a small versioned JSON document, and its load/save.

A calibration says where the board's grid lies in the camera image (its four outer corners,
a1's corner first, then j1's, j10's and a10's), the image size it was made for, the colour
models learned from the board (Lab centres of empty cells, light and dark tiles), the lens
parameters when a lens calibration exists, and the thresholds the pipeline uses.

>>> cal = Calibration(image_size=(640, 480), corners=((100, 400), (500, 400), (500, 60), (100, 60)))
>>> Calibration.from_json(cal.to_json()) == cal
True
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import asdict, dataclass, field, fields, replace
from enum import Enum
from pathlib import Path
from typing import Any, cast

FORMAT = "ponte-calibration"
VERSION = 1

_THRESHOLDS_FILE = Path(__file__).with_name("thresholds.json")


class CalibrationError(ValueError):
    """A calibration file that cannot be used: missing, not JSON, wrong version or fields."""


class A1Corner(Enum):
    """Which corner of the board, as the image shows it, is a1."""

    BOTTOM_LEFT = "bottom-left"
    """a1 nearest the image's bottom-left; files run right, ranks up (the default)."""
    BOTTOM_RIGHT = "bottom-right"
    """a1 nearest the bottom-right; files run up, ranks left (the board turned a quarter)."""
    TOP_RIGHT = "top-right"
    """a1 nearest the top-right; files run left, ranks down (the board seen upside down)."""
    TOP_LEFT = "top-left"
    """a1 nearest the top-left; files run down, ranks right."""


@dataclass(frozen=True)
class Thresholds:
    """The pipeline's tunable numbers (defaults in contracts/thresholds.json)."""

    work_long_side: int
    min_board_area: float
    grid_min_cells_span: float
    cell_px: int
    margin_cells: float
    patch_fraction: float
    empty_distance: float
    cluster_min_separation: float
    cluster_separation_sigmas: float
    light_vs_board_lightness: float
    match_distance: float
    uniform_spread: float
    tile_max_group: int
    tile_min_votes: int
    empty_min_votes: int
    ring_occlusion_fraction: float
    ring_outlier_error: float
    occlusion_min_cells: int
    bridge_min_score: float
    bridge_max_spread: float
    tile_height_cells: float
    bridge_height_cells: float
    bridge_height_step: float
    bridge_heights: int
    bump_misaligned_fraction: float
    adapt_rate: float
    grid_bend_fit: float
    """Cells: a calibration whose located grid lies farther than this from the board's
    printed lines at some inner crossing (`vision.bend`) fits a lens to the lines."""
    grid_bend_limit: float
    """Cells: a calibration whose grid still lies farther than this from the printed lines
    is refused (the reader would read the wrong cells)."""

    @classmethod
    def from_json(cls, data: Any, *, base: Thresholds | None = None) -> Thresholds:
        """Thresholds from a JSON object; keys it lacks come from `base` (or the defaults)."""
        if not isinstance(data, dict):
            raise CalibrationError("thresholds must be a JSON object")
        start = base if base is not None else default_thresholds()
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise CalibrationError(f"unknown threshold(s): {', '.join(unknown)}")
        values: dict[str, Any] = {}
        for name, value in data.items():
            want = int if known[name].type == "int" else float
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise CalibrationError(f"threshold {name} must be a number, not {value!r}")
            values[name] = want(value)
        return replace(start, **values)


_DEFAULTS: list[Thresholds] = []


def default_thresholds() -> Thresholds:
    """The default thresholds, read once from contracts/thresholds.json."""
    if not _DEFAULTS:
        data = json.loads(_THRESHOLDS_FILE.read_text(encoding="utf-8"))
        known = {f.name: f for f in fields(Thresholds)}
        missing = sorted(set(known) - set(data))
        if missing:
            raise CalibrationError(f"{_THRESHOLDS_FILE}: missing {', '.join(missing)}")
        kinds = {k: int if known[k].type == "int" else float for k in known}
        values: dict[str, Any] = {k: kinds[k](v) for k, v in data.items()}
        _DEFAULTS.append(Thresholds(**values))
    return _DEFAULTS[0]


Lab = tuple[float, float, float]


@dataclass(frozen=True)
class ColourModel:
    """Lab colour centres (L 0..100, a and b around 0) learned from the board.

    `empty` is the bare board inside a cell, `ring` the board's border around the grid;
    `light` and `dark` are the tiles and `bridge` the bridges' grey, each None until seen.
    """

    empty: Lab
    ring: Lab
    light: Lab | None = None
    dark: Lab | None = None
    bridge: Lab | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: (list(v) if v is not None else None) for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, data: Any) -> ColourModel:
        if not isinstance(data, dict):
            raise CalibrationError("colours must be a JSON object")
        try:
            return cls(
                empty=_lab(data["empty"]),
                ring=_lab(data["ring"]),
                light=_lab(data["light"]) if data.get("light") is not None else None,
                dark=_lab(data["dark"]) if data.get("dark") is not None else None,
                bridge=_lab(data["bridge"]) if data.get("bridge") is not None else None,
            )
        except KeyError as exc:
            raise CalibrationError(f"colours: missing {exc.args[0]}") from exc


@dataclass(frozen=True)
class Lens:
    """Pinhole camera matrix and distortion coefficients (OpenCV's model) for one image size."""

    camera_matrix: tuple[tuple[float, float, float], ...]
    distortion: tuple[float, ...]
    image_size: tuple[int, int]
    rms_error: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "camera_matrix": [list(r) for r in self.camera_matrix],
            "distortion": list(self.distortion),
            "image_size": list(self.image_size),
            "rms_error": self.rms_error,
        }

    @classmethod
    def from_json(cls, data: Any) -> Lens:
        if not isinstance(data, dict):
            raise CalibrationError("lens must be a JSON object")
        try:
            matrix = tuple(tuple(float(v) for v in row) for row in data["camera_matrix"])
            dist = tuple(float(v) for v in data["distortion"])
            size = _size(data["image_size"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CalibrationError(f"lens: bad or missing field ({exc})") from exc
        if len(matrix) != 3 or any(len(r) != 3 for r in matrix):
            raise CalibrationError("lens: camera_matrix must be 3 x 3")
        if len(dist) not in (4, 5, 8, 12, 14):
            raise CalibrationError("lens: distortion must have 4, 5, 8, 12 or 14 coefficients")
        rows = cast(tuple[tuple[float, float, float], ...], matrix)  # 3 x 3, checked above
        return cls(rows, dist, size, float(data.get("rms_error", 0.0)))


BOARD_CELLS = 100
BOARD_VALUES = 27  # Lab of a cell's 3 x 3 sample boxes
VIEW_LIGHT = 18  # a quadratic in x and y per BGR channel


@dataclass(frozen=True)
class Calibration:
    """Everything the pipeline needs to read one camera's view of one board quickly."""

    image_size: tuple[int, int]
    corners: tuple[tuple[float, float], ...]
    a1: A1Corner = A1Corner.BOTTOM_LEFT
    colours: ColourModel | None = None
    lens: Lens | None = None
    thresholds: Thresholds = field(default_factory=default_thresholds)
    ring: tuple[tuple[float, float, float, float, float], ...] | None = None
    """The bare border around the grid in the calibration photo, per sample box: its
    board coordinates (x, y) and its BGR. A hand or an arm across the border is found as
    a difference from it (a fixed shadow on the border is in it too)."""
    board: tuple[tuple[float, ...] | None, ...] | None = None
    """The bare board as the calibration photo shows it, per cell (a1, b1, ... j10): the Lab
    of its 3 x 3 sample boxes (27 numbers, light-normalised as the reader measures them),
    or None for a cell a tile covered. A tile is then also what changed since, which a
    fixed shadow, a window's light or a lamp's glare on the bare board did not."""
    view: str | None = None
    """The calibration photo's top-down view of the board as the reader warps it (a PNG
    image, base64), for the second look at a cell to compare with (`vision.patches`)."""
    view_light: tuple[float, ...] | None = None
    """The light field fitted to the border in that view (`VIEW_LIGHT` numbers)."""

    def __post_init__(self) -> None:
        if len(self.corners) != 4 or any(len(c) != 2 for c in self.corners):
            raise CalibrationError("corners must be four (x, y) points")
        if self.board is not None and (
            len(self.board) != BOARD_CELLS
            or any(row is not None and len(row) != BOARD_VALUES for row in self.board)
        ):
            raise CalibrationError(
                f"board: must be {BOARD_CELLS} rows of {BOARD_VALUES} numbers or null")
        if (self.view is None) != (self.view_light is None):
            raise CalibrationError("view and view_light come together")
        if self.view_light is not None and len(self.view_light) != VIEW_LIGHT:
            raise CalibrationError(f"view_light: must be {VIEW_LIGHT} numbers")

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "image_size": list(self.image_size),
            "corners": [[round(x, 3), round(y, 3)] for x, y in self.corners],
            "a1": self.a1.value,
            "colours": self.colours.to_json() if self.colours else None,
            "lens": self.lens.to_json() if self.lens else None,
            "ring": [[round(v, 2) for v in row] for row in self.ring] if self.ring else None,
            "board": [None if row is None else [round(v, 2) for v in row]
                      for row in self.board] if self.board else None,
            "view": self.view,
            "view_light": list(self.view_light) if self.view_light is not None else None,
            "thresholds": {
                k: v for k, v in asdict(self.thresholds).items()
                if v != getattr(default_thresholds(), k)
            },
        }

    @classmethod
    def from_json(cls, data: Any) -> Calibration:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CalibrationError(f"not a calibration file (no \"format\": \"{FORMAT}\")")
        version = data.get("version")
        if version != VERSION:
            raise CalibrationError(
                f"calibration format version {version!r} is not supported (this is {VERSION})"
            )
        try:
            corners = tuple((float(x), float(y)) for x, y in data["corners"])
            size = _size(data["image_size"])
            a1 = A1Corner(data.get("a1", A1Corner.BOTTOM_LEFT.value))
        except KeyError as exc:
            raise CalibrationError(f"missing field {exc.args[0]!r}") from exc
        except (TypeError, ValueError) as exc:
            raise CalibrationError(f"bad field ({exc})") from exc
        colours = data.get("colours")
        lens = data.get("lens")
        ring = data.get("ring")
        try:
            ring_rows = tuple(
                (float(x), float(y), float(b), float(g), float(r)) for x, y, b, g, r in ring
            ) if ring is not None else None
        except (TypeError, ValueError) as exc:
            raise CalibrationError(f"ring: must be rows of five numbers ({exc})") from exc
        board = data.get("board")
        try:
            board_rows = tuple(
                None if row is None else tuple(float(v) for v in row) for row in board
            ) if board is not None else None
        except (TypeError, ValueError) as exc:
            raise CalibrationError(f"board: must be rows of numbers or null ({exc})") from exc
        view, view_light = data.get("view"), data.get("view_light")
        if view is not None:
            try:
                base64.b64decode(view, validate=True)
            except (TypeError, ValueError, binascii.Error) as exc:
                raise CalibrationError(f"view: must be a base64 PNG image ({exc})") from exc
        try:
            light = tuple(float(v) for v in view_light) if view_light is not None else None
        except (TypeError, ValueError) as exc:
            raise CalibrationError(f"view_light: must be numbers ({exc})") from exc
        return cls(
            image_size=size,
            corners=corners,
            a1=a1,
            colours=ColourModel.from_json(colours) if colours is not None else None,
            lens=Lens.from_json(lens) if lens is not None else None,
            thresholds=Thresholds.from_json(data.get("thresholds", {})),
            ring=ring_rows,
            board=board_rows,
            view=view,
            view_light=light,
        )


def load_calibration(path: str | Path) -> Calibration:
    """Read a calibration file; CalibrationError with the file name for anything wrong."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"{path}: cannot read ({exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CalibrationError(f"{path}: not JSON ({exc})") from exc
    try:
        return Calibration.from_json(data)
    except CalibrationError as exc:
        raise CalibrationError(f"{path}: {exc}") from exc


def save_calibration(calibration: Calibration, path: str | Path) -> None:
    """Write a calibration file (pretty JSON, stable key order)."""
    Path(path).write_text(json.dumps(calibration.to_json(), indent=2) + "\n", encoding="utf-8")


def _lab(value: Any) -> Lab:
    if not isinstance(value, list | tuple) or len(value) != 3:
        raise CalibrationError(f"a colour must be three numbers (L, a, b), not {value!r}")
    return (float(value[0]), float(value[1]), float(value[2]))


def _size(value: Any) -> tuple[int, int]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise CalibrationError(f"image_size must be [width, height], not {value!r}")
    w, h = int(value[0]), int(value[1])
    if w <= 0 or h <= 0:
        raise CalibrationError(f"image_size must be positive, not {value!r}")
    return (w, h)
