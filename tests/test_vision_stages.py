"""Stage functions of the camera pipeline on small drawn fixtures (no 3D, no noise)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from contracts.calibration import A1Corner, ColourModel, default_thresholds
from tests.vision_drawing import draw_board, place_in_scene
from vision.cells import CellState, bridge_kind, cell_name, cells_under, parse_cell
from vision.errors import BoardNotFound, ImageTooSmall, ImageUnreadable
from vision.geometry import board_geometry
from vision.imageio import decode_image
from vision.locate import locate_board, order_visually, orient_corners
from vision.markers import marker_sheet
from vision.pipeline import read_board

ROWS = [
    "L.D.......",
    "L.D.......",
    "L.D.......",
    "..........",
    "....LL..DD",
    "D.........",
    "D......L..",
    "D......L..",
    "..........",
    "L........D",
]

QUADS = {
    "square-on": [(300, 60), (980, 80), (1010, 700), (270, 690)],
    "turned": [(640, 20), (1060, 360), (640, 700), (220, 360)],
    "steep": [(420, 120), (860, 120), (1120, 690), (160, 690)],
}


@pytest.mark.parametrize("name", sorted(QUADS))
def test_board_is_located_to_a_pixel(name: str) -> None:
    image, truth = place_in_scene(draw_board(ROWS), QUADS[name])
    found = locate_board(default_thresholds(), image)
    assert np.abs(order_visually(found) - order_visually(truth)).max() < 1.5


@pytest.mark.parametrize("name", sorted(QUADS))
def test_drawn_boards_are_read_cell_for_cell(name: str) -> None:
    image, _ = place_in_scene(draw_board(ROWS), QUADS[name])
    obs = read_board(image)
    assert obs.board_rows() == ROWS
    assert not obs.occluded
    assert obs.bridges == ()


def test_board_with_other_colours_is_read() -> None:
    board = draw_board(ROWS, board_bgr=(120, 160, 120), light_bgr=(235, 235, 235),
                       dark_bgr=(30, 60, 90))
    image, _ = place_in_scene(board, QUADS["square-on"], table_bgr=(40, 40, 40))
    assert read_board(image).board_rows() == ROWS


def test_a1_corner_choice_turns_the_board_without_mirroring() -> None:
    corners = np.array([[10, 10], [90, 10], [90, 90], [10, 90]], np.float64)  # TL TR BR BL
    size = (100, 100)
    bl = orient_corners(corners, A1Corner.BOTTOM_LEFT, size)
    assert bl.tolist() == [[10, 90], [90, 90], [90, 10], [10, 10]]
    br = orient_corners(corners, A1Corner.BOTTOM_RIGHT, size)
    assert br.tolist() == [[90, 90], [90, 10], [10, 10], [10, 90]]
    tl = orient_corners(corners, A1Corner.TOP_LEFT, size)
    assert tl.tolist() == [[10, 10], [10, 90], [90, 90], [90, 10]]


def test_geometry_puts_raised_points_away_from_an_angled_camera() -> None:
    _, truth = place_in_scene(draw_board(), QUADS["steep"])
    corners = orient_corners(truth, A1Corner.BOTTOM_LEFT, (1280, 720))
    geo = board_geometry(corners, (1280, 720))
    base = np.array([[5.0, 5.0]])
    raised = geo.raised(base, 0.5)
    # The camera stands beyond rank 1 (the bottom of the image): raised things lean to rank 10.
    assert raised[0, 1] > 5.05
    assert abs(raised[0, 0] - 5.0) < 0.1


def test_empty_table_has_no_board() -> None:
    rng = np.random.default_rng(3)
    image = rng.integers(90, 110, (480, 640, 3), dtype=np.uint8)
    with pytest.raises(BoardNotFound):
        locate_board(default_thresholds(), image)


def test_bad_bytes_and_tiny_images_raise_typed_errors() -> None:
    with pytest.raises(ImageUnreadable):
        decode_image(b"")
    with pytest.raises(ImageUnreadable):
        decode_image(b"this is not an image")
    ok, png = cv2.imencode(".png", np.zeros((10, 10, 3), np.uint8))
    assert ok
    with pytest.raises(ImageTooSmall):
        decode_image(png.tobytes())


def test_jpeg_turned_by_its_exif_block_is_turned_and_a_cut_one_is_an_error() -> None:
    image = np.zeros((80, 120, 3), np.uint8)
    image[:20, :40] = 255  # a white corner, top left
    data = cv2.imencode(".jpg", image)[1].tobytes()
    tiff = (b"MM\x00\x2a\x00\x00\x00\x08\x00\x01"
            + (0x0112).to_bytes(2, "big") + (3).to_bytes(2, "big") + (1).to_bytes(4, "big")
            + (6).to_bytes(2, "big") + bytes(2) + bytes(4))  # orientation 6: turn right
    exif = b"\xff\xe1" + (2 + 6 + len(tiff)).to_bytes(2, "big") + b"Exif\x00\x00" + tiff
    turned = decode_image(data[:2] + exif + data[2:], reduce=2)  # a phone's photo
    assert turned.shape == (60, 40, 3)
    assert turned[:20, -10:].mean() > 200 and turned[:10, :10].mean() < 50  # now top right
    assert decode_image(data, reduce=2).shape == (40, 60, 3)
    with pytest.raises(ImageUnreadable):
        decode_image(data[: len(data) // 3])


def test_cell_names_round_trip_and_bridge_shapes() -> None:
    assert parse_cell("j10") == (9, 9)
    assert cell_name(*parse_cell("c7")) == "c7"
    with pytest.raises(ValueError):
        parse_cell("k1")
    assert bridge_kind((0, 0), (0, 2)) == "straight"
    assert bridge_kind((0, 0), (2, 2)) == "diagonal"
    assert bridge_kind((0, 0), (2, 1)) == "knight"
    assert bridge_kind((0, 0), (3, 0)) is None
    assert cells_under((0, 0), (2, 1)) == ((1, 0), (1, 1))
    assert cells_under((4, 4), (3, 2)) == ((4, 3), (3, 3))
    assert cells_under((2, 2), (0, 0)) == ((1, 1),)


def test_the_conflict_table_says_what_the_bridge_layout_allows() -> None:
    from vision.bridges import BRIDGE_OFFSETS, BridgeLayout, pair_conflicts

    pairs = tuple(((f, r), (f + df, r + dr)) for r in range(10) for f in range(10)
                  for df, dr in BRIDGE_OFFSETS if 0 <= f + df < 10 and 0 <= r + dr < 10)
    table = pair_conflicts(pairs)
    assert table.shape == (len(pairs), len(pairs)) and (table == table.T).all()
    for j, placed in enumerate(pairs):
        layout = BridgeLayout()
        layout.add(*placed, 1)
        fits = np.array([layout.fits(*pair) for pair in pairs])
        assert np.array_equal(table[:, j], ~fits), placed
    index = {tuple(sorted(p)): i for i, p in enumerate(pairs)}

    def conflict(a: str, b: str, c: str, d: str) -> bool:
        i = index[tuple(sorted((parse_cell(a), parse_cell(b))))]
        j = index[tuple(sorted((parse_cell(c), parse_cell(d))))]
        return bool(table[i, j])

    assert conflict("c5", "d7", "c5", "e5")  # one tile, two bridge ends
    assert conflict("d5", "c7", "c5", "d7")  # a knight's bridges crossing
    assert conflict("a1", "c1", "b1", "b3")  # a bridge ending on a cell another passes over
    assert not conflict("a1", "c1", "a2", "c2")  # side by side


def test_marker_sheet_holds_four_detectable_markers() -> None:
    sheet = marker_sheet()
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), cv2.aruco.DetectorParameters()
    )
    _, ids, _ = detector.detectMarkers(sheet)
    assert ids is not None and sorted(ids.ravel().tolist()) == [0, 1, 2, 3]


def test_observation_picture_marks_cells() -> None:
    image, _ = place_in_scene(draw_board(ROWS), QUADS["square-on"])
    text = read_board(image).picture()
    assert text.splitlines()[0] == "10 L . D . . . . . . ."
    assert CellState("L") is CellState.LIGHT


def test_board_is_located_by_aruco_markers_at_its_corners() -> None:
    board = draw_board(ROWS)
    side, pad = board.shape[0], 60
    canvas = np.full((side + 2 * pad, side + 2 * pad, 3), (70, 110, 140), np.uint8)
    canvas[pad : pad + side, pad : pad + side] = board
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    for marker_id, (x, y) in enumerate([(0, 0), (side + pad, 0), (side + pad, side + pad),
                                        (0, side + pad)]):
        marker = cv2.aruco.generateImageMarker(dictionary, marker_id, pad - 6, borderBits=1)
        white = np.full((pad, pad), 255, np.uint8)
        white[3:-3, 3:-3] = marker
        canvas[y : y + pad, x : x + pad] = white[:, :, None]
    quad = [(300.0, 60.0), (950.0, 90.0), (1000.0, 690.0), (250.0, 660.0)]
    image, _ = place_in_scene(canvas, quad)
    by_markers = locate_board(default_thresholds(), image, markers=True)
    by_outline = locate_board(default_thresholds(), image)
    assert np.abs(order_visually(by_markers) - order_visually(by_outline)).max() < 3.0
    with pytest.raises(BoardNotFound, match="ArUco"):
        locate_board(default_thresholds(), place_in_scene(board, quad)[0], markers=True)


def test_bridges_never_overlap_one_another() -> None:
    """Two candidates on one line (b10-d10 and c10-e10) cannot both stand: c10 would be
    a tile under a bridge. Only one is read, however well both paths match."""
    from contracts.calibration import ColourModel
    from vision.bridges import BridgePlan, find_bridges
    from vision.classify import BRIDGE, LIGHT, CellReading

    b10, c10, d10, e10 = (parse_cell(n) for n in ("b10", "c10", "d10", "e10"))
    grey = (60.0, 0.0, 0.0)
    model = ColourModel(empty=(40.0, 20.0, 20.0), ring=(30.0, 0.0, 0.0),
                        light=(90.0, 0.0, 30.0), dark=(30.0, 40.0, 30.0), bridge=grey)
    codes = np.zeros(100, np.int64)
    votes = np.zeros((100, 4))
    votes[:, 0] = 9
    for f, r in (b10, c10, d10, e10):
        codes[r * 10 + f] = LIGHT
        votes[r * 10 + f] = (0, 5, 0, 4)
        votes[r * 10 + f, BRIDGE] = 4
    reading = CellReading(codes, np.ones(100), votes, np.zeros((100, 4)))
    plan = BridgePlan(((b10, d10), (c10, e10)), 1, np.zeros((10, 4), np.int64), np.zeros((10, 2)))
    paths = np.tile(np.array(grey), (2, 5, 1))
    found, colours = find_bridges(default_thresholds(), plan, paths, reading, model)
    assert len(found) == 1 and colours == [LIGHT]
    # Apart, both stand.
    plan = BridgePlan(((b10, d10), (e10, parse_cell("g10"))), 1, plan.boxes, plan.xy)
    g10 = parse_cell("g10")
    codes[g10[1] * 10 + g10[0]] = LIGHT
    votes[g10[1] * 10 + g10[0]] = (0, 5, 0, 4)
    found, _ = find_bridges(default_thresholds(), plan, paths, reading, model)
    assert len(found) == 2


def _lamp_ring() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The border ring's sample points (40, just outside the grid), a lamp's smooth
    falloff as light-field coefficients, the bare border it lights, and the cells' centres."""
    from vision.features import design_at

    k = np.arange(10) + 0.5
    edge = np.full(10, -0.2)
    far = np.full(10, 10.2)
    xy = np.concatenate([np.column_stack(p) for p in
                         ((k, edge), (k, far), (edge, k), (far, k))])
    truth = np.array([[120.0, 130.0, 140.0], [-30.0, -25.0, -20.0], [10.0, 12.0, 8.0],
                      [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    cells = np.array([(f + 0.5, r + 0.5) for r in range(10) for f in range(10)])
    return xy, truth, design_at(xy) @ truth, cells


def test_light_field_against_the_bare_border_ignores_a_shadow_along_one_side() -> None:
    # A lamp's smooth falloff across the board, seen on the border ring; then tiles'
    # shadows under a low window darken most of the left side of the border.
    from vision.features import field_at, light_field, light_field_against

    xy, truth, bare, cells = _lamp_ring()
    now = bare * 1.1  # the exposure changed a little since calibration
    shadow = (xy[:, 0] < 0) & (xy[:, 1] > 1)
    now[shadow] *= 0.45
    want = field_at(truth, cells)
    fitted, _ = light_field(default_thresholds(), now, xy)
    against = light_field_against(default_thresholds(), now, bare, xy, shadow)
    err_fitted = np.abs(field_at(fitted, cells) - want).max()
    err_against = np.abs(field_at(against, cells) - want).max()
    assert err_fitted > 0.1  # the shadow, fitted as light, bends the field
    assert err_against < 0.02


def test_light_field_against_the_bare_border_seen_along_one_side_only_stays_in_bounds() -> None:
    # A window's shadows over three sides of the border: the samples seen bare lie along
    # the fourth and one just round its corner, which is all that fixes the slope across
    # the board. The border's change where it is seen bare (1.0, and 0.7 round the
    # corner) bounds it elsewhere, so the field stays a light field; fitted as a free
    # plane it ran below zero over most of the board (a window frame read with 29 cells
    # wrong, its far ranks all dark tiles).
    from vision.features import field_at, light_field_against

    xy, truth, bare, cells = _lamp_ring()
    now = bare.copy()
    seen = xy[:, 1] < 0  # the near side ...
    seen[20] = True  # ... and the left side's first sample, in a soft shadow
    now[~seen] *= np.linspace(0.2, 0.6, int((~seen).sum()))[:, None]
    now[20] *= 0.7
    field = field_at(light_field_against(default_thresholds(), now, bare, xy, ~seen), cells)
    # the light is the bare border's (only shadows fell), but one bare side cannot show
    # that: the field is only kept near it (0.53 off with the free plane, 0.23 now)
    assert np.abs(field - field_at(truth, cells)).max() < 0.3
    assert field.min() > 0.75 and field.max() < 1.3


def _shadowed_board_scene() -> tuple[np.ndarray, np.ndarray, list[int], list[int], list[int]]:
    """Lab sample boxes of a blue board with cream and black tiles, most of its bare cells
    in a window's deep shadow, and the bare board as calibration saw it."""
    rng = np.random.default_rng(3)
    blue, cream, black = (55.0, -3.0, -34.0), (94.0, -4.0, 18.0), (14.0, 1.0, -1.0)
    background = np.tile(np.array(blue), (100, 9, 1)) + rng.normal(0, 0.4, (100, 9, 3))
    now = background + rng.normal(0, 0.4, (100, 9, 3))
    light = [i for i in range(100) if i % 7 == 0]
    dark = [i for i in range(100) if i % 7 == 3]
    shade = [i for i in range(100) if i % 7 not in (0, 3) and i % 10 < 8]
    now[light] = np.array(cream) + rng.normal(0, 0.6, (len(light), 9, 3))
    now[dark] = np.array(black) + rng.normal(0, 0.6, (len(dark), 9, 3))
    # A shadow scales L + 16, a and b alike (a and b over L + 16 stay put).
    factor = 0.4
    shaded = now[shade].copy()
    shaded[..., 0] = (shaded[..., 0] + 16.0) * factor - 16.0
    shaded[..., 1:] *= factor
    now[shade] = shaded
    return now, background, light, dark, shade


def test_colour_model_keeps_the_board_when_a_window_shadow_covers_most_of_it() -> None:
    from contracts.calibration import ColourModel
    from vision.classify import bare_in_shadow, colour_distance, learn_colours

    now, background, light, dark, shade = _shadowed_board_scene()
    assert len(shade) > 50
    found = bare_in_shadow(default_thresholds(), now, background)
    assert set(np.flatnonzero(found)) == set(shade)  # not the black tiles, not the lit board
    hint = ColourModel(empty=(55.0, -3.0, -34.0), ring=(30.0, 0.0, -20.0), light=None,
                       dark=None)
    settings = default_thresholds()
    model = learn_colours(settings, now, (30.0, 0.0, -20.0), hint, background)
    assert model.light is not None and model.dark is not None

    def near(colour: tuple[float, float, float], want: tuple[float, float, float]) -> bool:
        return float(colour_distance(np.array([colour]), want)[0]) < 6.0

    assert near(model.empty, (55.0, -3.0, -34.0))
    assert near(model.light, (94.0, -4.0, 18.0))
    assert near(model.dark, (14.0, 1.0, -1.0))
    # Without the bare board seen before, the shadow is one more colour to cluster.
    blind = learn_colours(settings, now, (30.0, 0.0, -20.0), hint)
    assert not (near(blind.empty, model.empty) and blind.dark is not None
                and near(blind.dark, model.dark))


def _tile_shadows_scene(dark: tuple[float, float, float]) -> tuple[np.ndarray, list[int]]:
    """Lab sample boxes of a pale grey board under a low window: cream tiles, four tiles of
    the colour `dark`, and sixteen bare cells in the tiles' deep shadows (0.45 times as
    light), in groups of at most three. Returns the boxes and the dark tiles' cells."""
    rng = np.random.default_rng(11)
    board, cream = (70.0, -6.0, -8.0), (94.0, -4.0, 18.0)
    now = np.tile(np.array(board), (100, 9, 1)) + rng.normal(0, 0.5, (100, 9, 3))
    creams = [0, 1, 4, 5, 22, 23, 26, 27, 60, 61, 64, 65, 82, 83, 86, 87]
    darks = [44, 45, 48, 49]
    shade = [10, 11, 14, 15, 32, 33, 36, 37, 70, 71, 74, 75, 92, 93, 96, 97]
    now[creams] = np.array(cream) + rng.normal(0, 0.6, (len(creams), 9, 3))
    now[darks] = np.array(dark) + rng.normal(0, 0.6, (len(darks), 9, 3))
    shaded = now[shade].copy()
    shaded[..., 0] = (shaded[..., 0] + 16.0) * 0.45 - 16.0
    shaded[..., 1:] *= 0.45
    now[shade] = shaded
    return now, darks


def test_a_red_tile_colour_is_learnt_without_the_deep_shadows_clustered_with_it() -> None:
    """A pale grey board's deep shadows are as dark as red tiles and far more of them: one
    cluster holds both, and its median is a shadow. On a neutral board `bare_in_shadow`
    cannot leave shadows out (a black tile looks like one), but the red tiles' own colour
    is unlike the board's, so the dark tile colour is theirs."""
    from contracts.calibration import ColourModel
    from vision.classify import colour_distance, learn_colours

    settings = default_thresholds()
    hint = ColourModel(empty=(70.0, -6.0, -8.0), ring=(30.0, 0.0, -20.0), light=None, dark=None)
    red = (37.0, 18.0, 22.0)
    now, _ = _tile_shadows_scene(red)
    model = learn_colours(settings, now, (30.0, 0.0, -20.0), hint)
    assert model.dark is not None
    assert float(colour_distance(np.array([model.dark]), red)[0]) < 4.0
    # Black tiles look like the board in a shadow: they and the shadows stay one colour.
    black = (14.0, 1.0, -1.0)
    now, _ = _tile_shadows_scene(black)
    model = learn_colours(settings, now, (30.0, 0.0, -20.0), hint)
    assert model.dark is not None and model.dark[0] < 25.0
    assert abs(model.dark[1]) < 4.0 and abs(model.dark[2]) < 5.0


def test_the_board_in_a_shadow_is_never_taken_for_the_light_tiles() -> None:
    """Red tiles and a few deep shadows on a pale grey board, no light tile yet: the
    shadows, lighter than the red tiles, made a cluster of their own, and of two tile
    colours the lighter was taken for the light one. A colour like the board's in a shadow
    is no light tile."""
    from contracts.calibration import ColourModel
    from vision.classify import colour_distance, learn_colours

    rng = np.random.default_rng(12)
    board, red = (70.0, -6.0, -8.0), (33.0, 45.0, 30.0)
    now = np.tile(np.array(board), (100, 9, 1)) + rng.normal(0, 0.5, (100, 9, 3))
    reds = [44, 45, 48, 49, 81, 82]
    shade = [10, 11, 14, 15, 32, 33, 36, 37, 70, 71, 74, 75]
    now[reds] = np.array(red) + rng.normal(0, 0.6, (len(reds), 9, 3))
    shaded = now[shade].copy()
    shaded[..., 0] = (shaded[..., 0] + 16.0) * 0.6 - 16.0
    shaded[..., 1:] *= 0.6
    now[shade] = shaded
    hint = ColourModel(empty=board, ring=(30.0, 0.0, -20.0), light=None, dark=None)
    model = learn_colours(default_thresholds(), now, (30.0, 0.0, -20.0), hint)
    assert model.light is None
    assert model.dark is not None and float(colour_distance(np.array([model.dark]), red)[0]) < 4.0
    # Tracking, with the red tiles' colour known: the shadows, lighter than it and like no
    # colour known, are not named light for their lightness either.
    known = ColourModel(empty=board, ring=(30.0, 0.0, -20.0), light=None, dark=red)
    model = learn_colours(default_thresholds(), now, (30.0, 0.0, -20.0), known)
    assert model.light is None and model.dark is not None


def test_white_tiles_on_a_pale_board_are_not_taken_for_the_board() -> None:
    """A nearly full board under a window: no bare cell is left uniform (shadow edges cross
    them all), and white tiles lie near enough the pale board's colour to pass for it. The
    bare board seen at calibration tells them apart: the bare cells still look as they did,
    the white ones do not."""
    from contracts.calibration import ColourModel
    from vision.classify import colour_distance, learn_colours

    rng = np.random.default_rng(5)
    pale, white, red = (68.0, -7.0, -8.0), (82.0, -4.5, -1.0), (31.0, 44.0, 28.0)
    assert float(colour_distance(np.array([white]), pale)[0]) < default_thresholds().match_distance
    background = np.tile(np.array(pale), (100, 9, 1)) + rng.normal(0, 0.4, (100, 9, 3))
    now = background + rng.normal(0, 0.4, (100, 9, 3))
    # Tiles in groups of up to four, every third rank and every fourth file left bare.
    tiled = [i for i in range(100) if (i // 10) % 3 != 2 and (i % 10) % 4 != 3]
    dark = [i for i in tiled if (i % 10) % 4 == 2]
    light = [i for i in tiled if i not in dark]
    bare = [i for i in range(100) if i not in tiled]
    now[light] = np.array(white) + rng.normal(0, 0.6, (len(light), 9, 3))
    now[dark] = np.array(red) + rng.normal(0, 0.6, (len(dark), 9, 3))
    now[bare, 0, 0] -= 30.0  # a shadow's edge across one corner of every bare cell
    hint = ColourModel(empty=pale, ring=(50.0, -3.0, 7.0), light=None, dark=None)
    settings = default_thresholds()

    def near(colour: tuple[float, float, float] | None, want: tuple[float, float, float]
             ) -> bool:
        return colour is not None and float(colour_distance(np.array([colour]), want)[0]) < 4.0

    model = learn_colours(settings, now, (50.0, -3.0, 7.0), hint, background)
    assert near(model.empty, pale) and near(model.light, white) and near(model.dark, red)
    # Without it, the white tiles are the nearest thing to the board's colour.
    blind = learn_colours(settings, now, (50.0, -3.0, 7.0), hint)
    assert near(blind.empty, white) and blind.light is None
    # A lamp turned up since calibration: no cell looks as it did, and the bare board,
    # unlike its old self, is still the board.
    brighter = now.copy()
    brighter[bare, 0, 0] += 30.0
    brighter[..., 0] += 12.0
    lit = learn_colours(settings, brighter, (50.0, -3.0, 7.0), hint, background)
    assert near(lit.empty, (80.0, -7.0, -8.0)) and near(lit.light, (94.0, -4.5, -1.0))


def test_a_frame_darker_than_the_calibration_photo_keeps_its_light_tiles() -> None:
    """The camera's exposure fell since calibration (a hand near the lens): board, tiles and
    border are all darker, and the light tiles now lie nearer the board's old colour than
    the board does. Compared in this frame's exposure, the board is still the board."""
    from contracts.calibration import ColourModel
    from vision.classify import colour_distance, learn_colours

    rng = np.random.default_rng(8)
    board, light, dark = (46.0, -4.3, -5.5), (60.0, -1.5, 8.8), (12.0, 1.6, -5.0)
    now = np.tile(np.array(board), (100, 9, 1)) + rng.normal(0, 0.5, (100, 9, 3))
    lights = [i for i in range(100) if (i // 10) % 3 == 0 and i % 10 in (1, 2, 6, 7)]
    darks = [i for i in range(100) if (i // 10) % 3 == 1 and i % 10 in (4, 8)]
    now[lights] = np.array(light) + rng.normal(0, 0.5, (len(lights), 9, 3))
    now[darks] = np.array(dark) + rng.normal(0, 0.5, (len(darks), 9, 3))
    hint = ColourModel(empty=(68.6, -6.7, -7.0), ring=(59.4, -0.5, 5.5), light=None,
                       dark=None)  # the empty board's photo, brighter
    settings = default_thresholds()

    def near(colour: tuple[float, float, float] | None, want: tuple[float, float, float]
             ) -> bool:
        return colour is not None and float(colour_distance(np.array([colour]), want)[0]) < 3.0

    assert (float(colour_distance(np.array([light]), hint.empty)[0])
            < float(colour_distance(np.array([board]), hint.empty)[0]))
    model = learn_colours(settings, now, (40.6, -0.4, 3.7), hint)  # the border: 19 darker
    assert near(model.empty, board) and near(model.light, light) and near(model.dark, dark)
    same = learn_colours(settings, now, hint.ring, hint)  # the border as bright as before
    assert near(same.empty, light) and same.light is None  # the light tiles taken for board


def test_a_black_tile_on_a_grey_board_is_not_taken_for_its_shadow() -> None:
    from vision.classify import bare_in_shadow

    grey = np.tile(np.array([60.0, 0.0, 2.0]), (100, 9, 1))
    now = grey.copy()
    now[10] = (15.0, 0.0, 0.5)  # black tile: the grey board's shade-free colour, darker
    assert not bare_in_shadow(default_thresholds(), now, grey).any()
    assert not bare_in_shadow(default_thresholds(), now, None).any()


def test_a_stray_cell_is_read_as_the_networks_likeliest_colour_unless_it_gives_them_none() -> None:
    from vision.occlusion import stray_class

    model = ColourModel(empty=(80.0, 0.0, 20.0), ring=(60.0, 5.0, 20.0),
                        light=(92.0, 0.0, 8.0), dark=(30.0, 30.0, 20.0))
    lab = np.array([82.0, 0.0, 18.0])  # nearest the bare board
    settings = default_thresholds()
    assert stray_class(settings, lab, model) == 0
    assert stray_class(settings, lab, model, np.array([0.0, 0.4, 0.0, 0.6])) == 1  # likeliest
    assert stray_class(settings, lab, model, np.array([0.0, 0.01, 0.02, 0.97])) == 0  # a guess


def test_a_bridge_seen_on_no_tile_excuses_nothing_on_the_border() -> None:
    """A hand over a corner can look like a deck standing there (one end hidden, the other
    bare board); the border it changes must still count as an arm's, so the frame is
    flagged rather than read as a board. A bridge seen on a tile, or hidden at both ends
    (the far edge of a board seen at an angle), still excuses its border."""
    from vision.cells import SIZE
    from vision.classify import DARK, EMPTY, LIGHT, UNKNOWN
    from vision.occlusion import border_excuses

    def at(name: str) -> int:
        f, r = parse_cell(name)
        return r * SIZE + f

    read = np.full(SIZE * SIZE, EMPTY)
    read[[at("a1"), at("c1")]] = DARK  # a bridge seen on both its tiles
    read[[at("a7"), at("b9")]] = UNKNOWN  # one hidden at both ends
    read[at("j10")] = UNKNOWN  # one hidden at one end, bare board at the other (h9)
    bridges = [(parse_cell("a1"), parse_cell("c1")), (parse_cell("a7"), parse_cell("b9")),
               (parse_cell("h9"), parse_cell("j10"))]
    codes, spanned = read.copy(), np.zeros(SIZE * SIZE, bool)
    for (a, b), colour in zip(bridges, (DARK, LIGHT, LIGHT), strict=True):
        for f, r in (a, b):
            codes[r * SIZE + f] = colour
            spanned[r * SIZE + f] = True
        for f, r in cells_under(a, b):
            spanned[r * SIZE + f] = True
    ring_codes, ring_spanned = border_excuses(codes, spanned, read, bridges)
    assert ring_codes[at("j10")] == UNKNOWN and ring_codes[at("h9")] == EMPTY
    assert not ring_spanned[[at("h9"), at("j10")]].any()
    assert ring_codes[at("a1")] == DARK and ring_spanned[[at("a1"), at("b1"), at("c1")]].all()
    assert ring_codes[at("a7")] == LIGHT and ring_spanned[[at("a7"), at("b9")]].all()
    # With no such bridge, nothing changes.
    same = border_excuses(codes, spanned, read, bridges[:2])
    assert same[0] is codes and same[1] is spanned
