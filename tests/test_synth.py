"""Tests for lab.synth: the synthetic scene generator used to test and evaluate vision."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.synth import (
    SETUPS,
    CameraBump,
    CameraSpec,
    Effects,
    HandSpec,
    InvalidScene,
    Lighting,
    LooseTile,
    MarkerSpec,
    Phase,
    Prop,
    SceneSpec,
    SequenceTiming,
    TableKind,
    TableLook,
    a1_margin_px,
    parse_cell,
    random_position,
    random_spec,
    render,
    render_sequence,
    write_video,
)
from lab.synth.dataset import main as dataset_main
from lab.synth.position import (
    crossed_cells,
    grid_from_board,
    looks_plausible,
    random_game,
    segments_cross,
)
from lab.synth.video import main as video_main

EMPTY = tuple("." * 10 for _ in range(10))


def _board_with(cells: dict[str, str]) -> tuple[str, ...]:
    rows = [list(r) for r in EMPTY]
    for name, ch in cells.items():
        f, r = parse_cell(name)
        rows[9 - r][f] = ch
    return tuple("".join(r) for r in rows)


def _clean_spec(**kw: object) -> SceneSpec:
    """An overhead, evenly lit, noise-free scene (easy to check pixel by pixel)."""
    base = dict(
        board=_board_with({"a1": "L", "c2": "D", "j10": "D", "e5": "L", "e7": "L"}),
        bridges=(("e5", "e7"),),
        camera=CameraSpec(elevation_deg=90.0, distance=17.0, focal_px=900.0),
        lighting=Lighting(falloff=0.0, gradient=0.0, vignette=0.0, glare=0.0),
        effects=Effects(noise_sigma=0.0, blur_sigma=0.0, jpeg_quality=None),
    )
    base.update(kw)
    return SceneSpec(**base)  # type: ignore[arg-type]


def test_same_spec_renders_the_same_image() -> None:
    spec = random_spec(np.random.default_rng(3), "hands")
    a, b = render(spec), render(spec)
    assert np.array_equal(a.image, b.image)
    assert a.occluded_cells == b.occluded_cells


def test_same_seed_samples_the_same_spec_and_other_seeds_differ() -> None:
    a = random_spec(np.random.default_rng(11), "phone-rotated-brown")
    b = random_spec(np.random.default_rng(11), "phone-rotated-brown")
    c = random_spec(np.random.default_rng(12), "phone-rotated-brown")
    assert a == b
    assert a != c


def _cell_centre_pixels(h: np.ndarray) -> np.ndarray:
    pts = np.array([[f + 0.5, r + 0.5] for r in range(10) for f in range(10)], np.float64)
    return cv2.perspectiveTransform(pts[None], h)[0]


def test_homography_puts_tiles_where_the_truth_says() -> None:
    spec = _clean_spec(bridges=())
    frame = render(spec)
    assert frame.homography is not None
    lab = cv2.cvtColor(frame.image, cv2.COLOR_BGR2LAB).astype(int)
    grid = grid_from_board(frame.board)
    centres = _cell_centre_pixels(frame.homography)
    for index, (x, y) in enumerate(centres):
        f, r = index % 10, index // 10
        l_, a_, _ = lab[int(round(y)), int(round(x))]
        kind = int(grid[f, r])
        if kind == 1:
            assert l_ > 180, (f, r)
        elif kind == 2:
            assert a_ > 150, (f, r)  # red
        else:
            assert l_ < 170 and a_ < 140, (f, r)


def test_a1_is_the_corner_nearest_the_bottom_left_for_any_azimuth() -> None:
    for azimuth in (0.0, 30.0, 95.0, 170.0, 200.0, 265.0, -80.0):
        cam = CameraSpec(elevation_deg=60.0, azimuth_deg=azimuth, distance=22.0, focal_px=900.0)
        frame = render(_clean_spec(camera=cam))
        bottom_left = np.array([0.0, 720.0])
        dist = np.linalg.norm(frame.corners - bottom_left, axis=1)
        assert int(np.argmin(dist)) == 0
        # a1 -> j1 -> j10 -> a10 runs counter-clockwise on screen (files left to right)
        along_rank, along_file = (
            frame.corners[1] - frame.corners[0],
            frame.corners[3] - frame.corners[0],
        )
        assert along_rank[0] * along_file[1] - along_rank[1] * along_file[0] < 0
        # the light tile at a1 shows near the a1 corner
        assert frame.homography is not None
        x, y = _cell_centre_pixels(frame.homography)[0]
        assert frame.image[int(y), int(x)].mean() > 150


def test_random_positions_are_physically_consistent() -> None:
    rng = np.random.default_rng(0)
    for _ in range(30):
        board, bridges = random_position(rng, light_tiles=30, dark_tiles=30, bridges=10)
        grid = grid_from_board(board)
        ends = [parse_cell(c) for br in bridges for c in br]
        assert len(ends) == len(set(ends))
        for a_name, b_name in bridges:
            a, b = parse_cell(a_name), parse_cell(b_name)
            assert grid[a] == grid[b] != 0
            assert all(grid[c] == 0 for c in crossed_cells(a, b))
        segs = [(parse_cell(a), parse_cell(b)) for a, b in bridges]
        for i, (a, b) in enumerate(segs):
            for c, d in segs[i + 1 :]:
                assert not segments_cross(a, b, c, d)


@pytest.mark.parametrize(
    ("cells", "bridges", "message"),
    [
        ({"a1": "L", "a3": "D"}, (("a1", "a3"),), "two tiles of one colour"),
        ({"a1": "L", "a2": "D", "a3": "L"}, (("a1", "a3"),), "passes over a tile"),
        ({"a1": "L", "a4": "L"}, (("a1", "a4"),), "bridge's distance"),
    ],
)
def test_impossible_bridges_are_refused(
    cells: dict[str, str], bridges: tuple[tuple[str, str], ...], message: str
) -> None:
    with pytest.raises(InvalidScene, match=message):
        SceneSpec(board=_board_with(cells), bridges=bridges)


def test_hand_marks_cells_it_covers_as_occluded() -> None:
    hand = HandSpec(target=(5.0, 5.0), from_deg=270.0, height=1.5)
    frame = render(_clean_spec(hands=(hand,)))
    assert frame.occluded
    assert "e5" in frame.occluded_cells
    assert "j10" not in frame.occluded_cells
    clear = render(_clean_spec())
    assert not clear.occluded and not clear.occluded_cells


@pytest.mark.parametrize("name", sorted(SETUPS))
def test_every_setup_renders_a_full_frame(name: str) -> None:
    spec = random_spec(np.random.default_rng(5), name)
    frame = render(spec)
    assert frame.image.shape == (720, 1280, 3) and frame.image.dtype == np.uint8
    assert ((frame.corners >= 0) & (frame.corners <= [1280, 720])).all()
    assert (frame.homography is None) == spec.camera.distorted


def test_spec_is_hashable_and_replaceable() -> None:
    spec = _clean_spec()
    assert hash(dataclasses.replace(spec, seed=2)) != hash(spec) or spec.seed == 2


def _small_game() -> list[tuple[tuple[str, ...], tuple[tuple[str, str], ...]]]:
    b1 = _board_with({"c3": "L", "c5": "L"})
    b2 = _board_with({"c3": "L", "c5": "L", "f6": "D", "g6": "D"})
    return [(EMPTY, ()), (b1, ()), (b2, ()), (b2, (("c3", "c5"),))]


def _small_video_spec() -> SceneSpec:
    return _clean_spec(
        board=EMPTY,
        bridges=(),
        camera=CameraSpec(elevation_deg=75.0, distance=18.0, focal_px=300.0, width=320, height=180),
    )


def test_sequence_shows_each_move_placed_by_a_hand_then_settles() -> None:
    timing = SequenceTiming(fps=10.0, still_s=1.0)
    frames = list(render_sequence(_small_game(), _small_video_spec(), timing))
    truths = [t for _, t in frames]
    assert [t.index for t in truths] == list(range(len(truths)))
    assert all(abs(t.time_s - t.index / 10.0) < 1e-9 for t in truths)
    moves = [t.move for t in truths]
    assert moves == sorted(moves) and moves[0] == 0 and moves[-1] == 3
    # each move: still frames, then hand frames, then still frames showing the next position
    game = _small_game()
    for t in truths:
        if t.phase is Phase.STILL:
            assert not t.occluded
            assert (t.board, t.bridges) == game[t.move]
    assert truths[0].phase is Phase.STILL and truths[-1].phase is Phase.STILL
    # the hand is over the board while tiles appear one at a time
    tile_counts = {sum(row.count("L") + row.count("D") for row in t.board) for t in truths}
    assert tile_counts == {0, 1, 2, 3, 4}
    assert any(t.phase is Phase.HAND and t.occluded for t in truths)
    # frame count follows the timing: 4 still periods and 3 moves
    per_tile = timing.hover_s + timing.place_s
    expected = 4 * 1.0 + 3 * (timing.reach_s + timing.leave_s) + 5 * per_tile
    assert len(truths) == int(expected * 10.0 + 1e-9)


def test_camera_bump_moves_the_board_in_the_image() -> None:
    timing = SequenceTiming(fps=10.0, still_s=1.0, bump=CameraBump(at_s=0.5, shift=(0.4, 0.0)))
    game = _small_game()[:2]
    truths = [t for _, t in render_sequence(game, _small_video_spec(), timing)]
    before = [t for t in truths if not t.bumped]
    after = [t for t in truths if t.bumped]
    assert before and after and all(t.time_s >= 0.5 for t in after)
    settled = np.abs(after[-1].frame.corners - before[-1].frame.corners).max()
    assert settled > 2.0
    # during the shake the view swings past where it settles
    swing = max(np.abs(t.frame.corners - before[-1].frame.corners).max() for t in after)
    assert swing > settled


@pytest.mark.parametrize("suffix", [".mp4", ".avi"])
def test_video_round_trips_through_videowriter_and_videocapture(
    tmp_path: Path, suffix: str
) -> None:
    timing = SequenceTiming(fps=10.0, still_s=0.5)
    path = tmp_path / f"game{suffix}"
    frames = list(render_sequence(_small_game()[:2], _small_video_spec(), timing))
    truths = write_video(path, iter(frames), timing.fps)
    cap = cv2.VideoCapture(str(path))
    read = []
    while True:
        ok, image = cap.read()
        if not ok:
            break
        read.append(image)
    cap.release()
    assert len(read) == len(truths) == len(frames)
    assert read[0].shape == frames[0][0].shape
    for (original, _), decoded in zip(frames, read, strict=True):
        assert np.abs(original.astype(int) - decoded.astype(int)).mean() < 6.0


def test_video_with_an_unknown_extension_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\.mp4 or \.avi"):
        write_video(tmp_path / "game.mkv", iter([]), 10.0)


def test_dataset_writes_images_and_truth_lines(tmp_path: Path) -> None:
    count = len(SETUPS)
    code = dataset_main(["--out", str(tmp_path), "--count", str(count), "--seed", "3"])
    assert code == 0
    lines = (tmp_path / "truth.jsonl").read_text().splitlines()
    assert len(lines) == count
    records = [json.loads(line) for line in lines]
    assert {r["setup"] for r in records} == set(SETUPS)
    for r in records:
        image = cv2.imread(str(tmp_path / r["image"]))
        assert image is not None and image.shape == (720, 1280, 3)
        assert len(r["board"]) == 10 and len(r["corners"]) == 4
    again = tmp_path / "again"
    dataset_main(["--out", str(again), "--count", "2", "--seed", "3"])
    assert (again / "images/00001.jpg").read_bytes() == (tmp_path / "images/00001.jpg").read_bytes()


def test_dataset_rejects_an_unknown_setup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        dataset_main(["--out", str(tmp_path), "--setups", "nope"])
    assert exc.value.code == 2
    assert "unknown setup" in capsys.readouterr().err


def test_lens_distortion_follows_opencvs_model() -> None:
    straight = _clean_spec(bridges=(), camera=CameraSpec(distance=14.0, focal_px=700.0))
    bent_cam = dataclasses.replace(straight.camera, k1=-0.18, k2=0.03)
    bent = render(dataclasses.replace(straight, camera=bent_cam))
    plain = render(straight)
    assert bent.homography is None and plain.homography is not None
    k = bent.camera_matrix
    dist = np.array(bent.dist_coeffs)
    # the distorted corners, undistorted by OpenCV, are the pinhole corners
    undone = cv2.undistortPoints(bent.corners.reshape(-1, 1, 2), k, dist, P=k).reshape(-1, 2)
    assert np.abs(undone - plain.corners).max() < 0.5
    # tiles sit where OpenCV's forward model puts the pinhole cell centres
    centres = _cell_centre_pixels(plain.homography)
    rays = cv2.convertPointsToHomogeneous(
        cv2.undistortPoints(centres.reshape(-1, 1, 2), k, np.zeros(4))
    )
    bent_px, _ = cv2.projectPoints(rays.astype(np.float64), np.zeros(3), np.zeros(3), k, dist)
    bent_px = bent_px.reshape(-1, 2)
    grid = grid_from_board(bent.board)
    lab = cv2.cvtColor(bent.image, cv2.COLOR_BGR2LAB).astype(int)
    for index, (x, y) in enumerate(bent_px):
        f, r = index % 10, index // 10
        l_, a_, _ = lab[int(round(y)), int(round(x))]
        if grid[f, r] == 1:
            assert l_ > 180, (f, r)
        elif grid[f, r] == 2:
            assert a_ > 150, (f, r)
        else:
            assert l_ < 170 and a_ < 140, (f, r)


def test_too_strong_lens_distortion_is_refused() -> None:
    with pytest.raises(InvalidScene, match="folds over"):
        _clean_spec(camera=CameraSpec(focal_px=500.0, k1=-0.6))


def test_bridge_seen_at_an_angle_stands_above_its_cell() -> None:
    board = _board_with({"e4": "L", "e6": "L"})
    cam = CameraSpec(elevation_deg=45.0, distance=20.0, focal_px=1000.0)
    look = Lighting(falloff=0.0, gradient=0.0, vignette=0.0, shadow_strength=0.0)
    with_bridge = render(
        _clean_spec(board=board, bridges=(("e4", "e6"),), camera=cam, lighting=look)
    )
    without = render(_clean_spec(board=board, bridges=(), camera=cam, lighting=look))
    diff = np.abs(with_bridge.image.astype(int) - without.image.astype(int)).sum(axis=2) > 30
    ys, xs = np.nonzero(diff)
    assert without.homography is not None
    mid = cv2.perspectiveTransform(np.array([[[4.5, 5.5]]]), without.homography)[0, 0]
    # the arch's top projects above (smaller y) the crossed cell's centre on the board
    assert ys.min() < mid[1] - 20
    assert abs(np.median(xs) - mid[0]) < 15


def test_loose_tiles_beside_the_board_are_drawn_but_not_on_the_board() -> None:
    spec = _clean_spec(bridges=(), loose_tiles=(LooseTile(-2.5, 5.0, "D", 20.0),))
    frame = render(spec)
    plain = render(_clean_spec(bridges=()))
    assert frame.board == plain.board
    assert frame.homography is not None
    x, y = cv2.perspectiveTransform(np.array([[[-2.5, 5.0]]]), frame.homography)[0, 0]
    assert np.abs(frame.image[int(y), int(x)].astype(int) - plain.image[int(y), int(x)]).sum() > 60
    with pytest.raises(InvalidScene, match="lies on the board"):
        _clean_spec(loose_tiles=(LooseTile(5.0, 5.0, "L"),))


def test_sequence_takes_pieces_away_and_carries_bridges() -> None:
    b1 = _board_with({"c3": "L", "c5": "L", "h8": "D"})
    b2 = _board_with({"c3": "L", "c5": "L"})
    game = [(b1, ()), (b2, ()), (b2, (("c3", "c5"),))]
    timing = SequenceTiming(fps=10.0, still_s=0.5)
    truths = [t for _, t in render_sequence(game, _small_video_spec(), timing)]
    assert [t.move for t in truths][-1] == 2
    # the dark tile disappears while the hand is there, the bridge appears while it is there
    gone = next(t for t in truths if t.board == b2)
    built = next(t for t in truths if t.bridges)
    assert gone.phase is Phase.HAND and gone.move == 0
    assert built.phase is Phase.HAND and built.move == 1
    for t in truths:
        if t.phase is Phase.STILL:
            assert (t.board, t.bridges) == game[t.move]


def test_sequence_refuses_an_impossible_position() -> None:
    bad = (_board_with({"a1": "L"}), (("a1", "a3"),))
    with pytest.raises(InvalidScene):
        list(render_sequence([(EMPTY, ()), bad], _small_video_spec()))


def test_hand_holding_a_bridge_covers_more_than_one_holding_a_tile() -> None:
    with_tile = HandSpec(target=(5.0, 5.0), from_deg=270.0, height=2.0, holding="L")
    with_bridge = dataclasses.replace(with_tile, holding="B")
    a = render(_clean_spec(hands=(with_tile,)))
    b = render(_clean_spec(hands=(with_bridge,)))
    assert (b.occlusion_mask > 0).sum() > (a.occlusion_mask > 0).sum()


def test_aruco_markers_are_found_where_the_truth_says() -> None:
    spec = _clean_spec(
        camera=CameraSpec(elevation_deg=65.0, azimuth_deg=10.0, distance=30.0, focal_px=1000.0),
        markers=MarkerSpec(ids=(3, 0, 1, 2)),
    )
    frame = render(spec)
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), cv2.aruco.DetectorParameters()
    )
    corners, ids, _ = detector.detectMarkers(cv2.cvtColor(frame.image, cv2.COLOR_BGR2GRAY))
    assert ids is not None and sorted(ids.ravel().tolist()) == [0, 1, 2, 3]
    for marker_id, found in zip(ids.ravel(), corners, strict=True):
        assert np.abs(found.reshape(4, 2) - frame.markers[int(marker_id)]).max() < 1.5
    # the marker given for a1 lies beyond the a1 corner of the grid
    a1_marker = frame.markers[3].mean(axis=0)
    assert np.linalg.norm(a1_marker - frame.corners[0]) < np.linalg.norm(
        a1_marker - frame.corners[2]
    )


def test_unknown_marker_dictionary_is_refused() -> None:
    with pytest.raises(InvalidScene, match="ArUco dictionary"):
        _clean_spec(markers=MarkerSpec(dictionary="DICT_NOPE"))


def test_moving_hand_is_smeared_along_its_motion() -> None:
    still = HandSpec(target=(5.0, 5.0), from_deg=270.0, height=2.0)
    moving = dataclasses.replace(still, motion=(1.0, 0.0, 0.0))
    a = render(_clean_spec(hands=(still,)))
    b = render(_clean_spec(hands=(moving,)))
    cols_a = np.nonzero(a.occlusion_mask.any(axis=0))[0]
    cols_b = np.nonzero(b.occlusion_mask.any(axis=0))[0]
    assert cols_b.max() - cols_b.min() > cols_a.max() - cols_a.min() + 20


def test_light_drift_changes_brightness_but_not_the_board() -> None:
    timing = SequenceTiming(fps=10.0, still_s=2.0, light_drift=0.3, light_drift_period_s=2.0)
    frames = list(render_sequence(_small_game()[:1], _small_video_spec(), timing))
    means = [float(image.mean()) for image, _ in frames]
    assert max(means) - min(means) > 10.0
    assert all(t.board == EMPTY and t.phase is Phase.STILL for _, t in frames)


def test_random_cameras_keep_the_orientation_rule_unambiguous() -> None:
    for i, name in enumerate(sorted(SETUPS) * 3):
        spec = random_spec(np.random.default_rng([21, i]), name)
        assert a1_margin_px(spec.camera) >= 0.1 * spec.camera.height


def test_props_on_the_table_are_drawn_and_must_stay_off_the_board() -> None:
    box = Prop(x=-4.5, y=5.0, width=3.0, depth=6.0, height=0.3, color=(40.0, 60.0, 150.0))
    frame = render(_clean_spec(bridges=(), props=(box,)))
    plain = render(_clean_spec(bridges=()))
    assert frame.board == plain.board
    assert frame.homography is not None
    x, y = cv2.perspectiveTransform(np.array([[[-4.5, 5.0]]]), frame.homography)[0, 0]
    assert 0 <= x < 1280 and 0 <= y < 720
    changed = np.abs(frame.image[int(y), int(x)].astype(int) - plain.image[int(y), int(x)])
    assert changed.sum() > 60
    with pytest.raises(InvalidScene, match="overlaps the board"):
        _clean_spec(props=(Prop(x=5.0, y=-1.0, width=3.0, depth=3.0, height=1.0),))


def test_random_game_alternates_two_tile_moves_and_bridges_plausibly() -> None:
    game = random_game(np.random.default_rng(4), 30)
    assert len(game) == 31 and game[0] == (EMPTY, ())
    for move, ((board_a, bridges_a), (board_b, bridges_b)) in enumerate(itertools.pairwise(game)):
        SceneSpec(board=board_b, bridges=bridges_b)  # physically possible
        assert looks_plausible(grid_from_board(board_b))
        colour = "L" if move % 2 == 0 else "D"
        added = [
            (ra, ca, cb)
            for ra, rb in zip(board_a, board_b, strict=True)
            for ca, cb in zip(ra, rb, strict=True)
            if ca != cb
        ]
        new_bridges = set(bridges_b) - set(bridges_a)
        assert set(bridges_a) <= set(bridges_b)
        if added:
            assert len(added) == 2 and not new_bridges
            assert all(ca == "." and cb == colour for _, ca, cb in added)
        else:
            assert len(new_bridges) <= 1


def test_video_command_writes_a_game_and_its_truth(tmp_path: Path) -> None:
    out = tmp_path / "game.avi"
    code = video_main(["--out", str(out), "--moves", "1", "--fps", "5", "--still", "0.4"])
    assert code == 0
    lines = [json.loads(x) for x in out.with_suffix(".jsonl").read_text().splitlines()]
    cap = cv2.VideoCapture(str(out))
    count = 0
    while cap.read()[0]:
        count += 1
    cap.release()
    assert count == len(lines) > 0
    assert lines[0]["move"] == 0 and lines[-1]["move"] == 1
    assert {line["phase"] for line in lines} == {"still", "hand"}


def test_unknown_setup_and_bad_frame_rate_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="unknown setup 'nope'"):
        random_spec(np.random.default_rng(0), "nope")
    with pytest.raises(InvalidScene, match="frame rate"):
        list(render_sequence(_small_game(), _small_video_spec(), SequenceTiming(fps=0.0)))
    with pytest.raises(InvalidScene, match="bad board row"):
        SceneSpec(board=("." * 9,) * 10)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    light=st.integers(0, 45),
    dark=st.integers(0, 45),
    bridges=st.integers(0, 15),
)
def test_random_positions_always_pass_the_physical_checks(
    seed: int, light: int, dark: int, bridges: int
) -> None:
    board, bridge_list = random_position(np.random.default_rng(seed), 10, light, dark, bridges)
    SceneSpec(board=board, bridges=bridge_list)
    assert looks_plausible(grid_from_board(board))
    assert sum(row.count("L") for row in board) <= light
    assert sum(row.count("D") for row in board) <= dark


def test_table_edge_shows_the_floor_beyond_it() -> None:
    table = TableLook(
        color=(200.0, 200.0, 200.0),
        kind=TableKind.PLAIN,
        contrast=0.0,
        extent=(7.0, 7.0),
        floor_color=(20.0, 20.0, 20.0),
    )
    cam = CameraSpec(elevation_deg=90.0, distance=30.0, focal_px=900.0)
    frame = render(_clean_spec(bridges=(), table=table, camera=cam))
    assert frame.homography is not None
    (inside, outside) = cv2.perspectiveTransform(
        np.array([[[5.0, 11.5], [5.0, 12.5]]]), frame.homography
    )[0]
    assert frame.image[int(inside[1]), int(inside[0])].mean() > 150
    assert frame.image[int(outside[1]), int(outside[0])].mean() < 60
    with pytest.raises(InvalidScene, match="larger than the board"):
        _clean_spec(table=TableLook(extent=(4.0, 9.0)))
