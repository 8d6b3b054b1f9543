"""The ray-traced scene source: its camera agrees with POV-Ray, its truth with its scenes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from lab.raytrace import camera as camera_mod
from lab.raytrace import render as render_module
from lab.raytrace import scene as scene_module
from lab.raytrace.camera import Camera, a1_corner, lens_folds
from lab.raytrace.model import SETUPS, random_scene, random_table
from lab.raytrace.povray import camera_block, render_scene, vec
from lab.raytrace.render import DRAFT, Quality, render, traced_canvas
from lab.raytrace.stills import write_stills
from referee import Bridge, Cell, Colour, Position, Tiles

POINTS = np.array([[2.3, 7.1, 0.3], [8.0, 1.0, 0.0], [5.0, 5.0, 1.0], [0.5, 0.5, 0.0],
                   [9.5, 9.0, 0.2]])
SMALL = dataclasses.replace(DRAFT, scale=0.25)


def _spheres(points: np.ndarray, cam: Camera, width: int, height: int) -> str:
    text = ("#version 3.7;\nglobal_settings { assumed_gamma 1.0 }\n"
            + camera_block(cam, width, height) + "background { rgb 0 }\n")
    for p in points:
        text += (f"sphere {{ {vec(p)}, 0.08 texture {{ pigment {{ rgb 1 }} "
                 "finish { ambient 1 diffuse 0 } } }\n")
    return text


def _blobs(image: np.ndarray) -> list[tuple[float, float]]:
    g = image[..., 1].astype(np.float64)
    n, labels = cv2.connectedComponents((g > 100).astype(np.uint8))
    out = []
    for k in range(1, n):
        ys, xs = np.nonzero(labels == k)
        w = g[ys, xs]
        out.append((float((xs * w).sum() / w.sum()), float((ys * w).sum() / w.sum())))
    return sorted(out)


def test_povray_draws_a_point_where_the_camera_projects_it() -> None:
    cam = Camera(elevation_deg=52, azimuth_deg=37, roll_deg=7, distance=18, hfov_deg=60,
                 width=480, height=270)
    seen = _blobs(render_scene(_spheres(POINTS, cam, 480, 270), 480, 270, antialias=None))
    expected = sorted(map(tuple, cam.project(POINTS)))
    assert len(seen) == len(POINTS)
    assert np.abs(np.array(seen) - np.array(expected)).max() < 0.6


def test_the_lens_bends_the_traced_image_as_opencv_models_it() -> None:
    cam = Camera(elevation_deg=75, azimuth_deg=10, roll_deg=0, distance=13, hfov_deg=80,
                 width=400, height=300, k1=-0.2, k2=0.02)
    assert not lens_folds(cam)
    cw, ch, maps = traced_canvas(cam)
    assert maps is not None and cw > cam.width and ch > cam.height
    traced = render_scene(_spheres(POINTS, cam, cw, ch), cw, ch, antialias=None)
    bent = cv2.remap(traced, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR)
    seen = _blobs(bent)
    expected = sorted(map(tuple, cam.project(POINTS)))
    assert len(seen) == len(POINTS)
    assert np.abs(np.array(seen) - np.array(expected)).max() < 0.8
    straight = dataclasses.replace(cam, k1=0.0, k2=0.0)
    moved = np.abs(straight.project(POINTS) - cam.project(POINTS)).max()
    assert moved > 5  # the check above would catch a lens applied the wrong way round


def test_a_lens_whose_polynomial_folds_is_refused() -> None:
    cam = Camera(elevation_deg=80, azimuth_deg=0, roll_deg=0, distance=12, hfov_deg=100,
                 width=640, height=480, k1=-0.6, k2=0.0)
    assert lens_folds(cam)


def test_a1_is_the_grid_corner_nearest_the_bottom_left_with_a_clear_margin() -> None:
    for setup in SETUPS:
        table = random_table((11, 0), setup)
        corner, margin = a1_corner(table.camera)
        assert corner == table.board_turns
        assert margin >= 0.1 * table.camera.height
        assert camera_mod.corners_in_view(table.camera, margin_px=1.0)


def test_the_same_seed_draws_the_same_scene_and_another_seed_another() -> None:
    table = random_table((3, 1), "hands")
    assert random_table((3, 1), "hands") == table
    one, again, other = (random_scene(table, s) for s in ((3, 1, 0), (3, 1, 0), (3, 1, 1)))
    assert one == again
    assert other.tiles != one.tiles


def test_every_scene_holds_a_position_the_referee_allows() -> None:
    for p in range(6):
        scene = random_scene(random_table((4, p), "oblique-daylight"), (4, p, 0))
        position = Position()
        for colour in (Colour.LIGHT, Colour.DARK):
            cells = [Cell(t.file, t.rank) for t in scene.tiles if t.colour == colour.value]
            assert len(cells) % 2 == 0  # two tiles a turn
            for a, b in zip(cells[::2], cells[1::2], strict=True):
                position.place_tiles(colour, Tiles(a, b))
            assert all(len(g) <= 4 for g in position.groups(colour))
        rows = scene.board_rows()
        assert sum(r.count("L") + r.count("D") for r in rows) == len(scene.tiles)
        for bridge in scene.bridges:
            move = Bridge(Cell(*bridge.a), Cell(*bridge.b))
            colour = position.tile_at(move.a)
            assert colour is not None
            assert position.bridge_verdict(colour, move) is None
            position.build_bridge(colour, move)


def test_a_rendered_frame_carries_its_truth(tmp_path: Path) -> None:
    table = random_table((5, 2), "hands")
    scene = random_scene(table, (5, 2, 1))
    frame = render(scene, SMALL, board=table.seed)
    h, w = frame.image.shape[:2]
    assert (w, h) == (round(table.camera.width / 4), round(table.camera.height / 4))
    assert frame.truth["board"] == list(scene.board_rows())
    assert frame.truth["occluded"] == bool(frame.truth["occluded_cells"])
    if frame.truth["occluded_cells"]:
        assert frame.truth["hand_pixels"] > 0
    corners = np.array(frame.truth["corners"])
    assert corners.shape == (4, 2)
    assert np.all((corners >= 0) & (corners < [w, h]))
    decoded = cv2.imdecode(np.frombuffer(frame.encoded, np.uint8), cv2.IMREAD_COLOR)
    assert decoded.shape == frame.image.shape


@pytest.mark.slow
def test_a_still_set_is_written_once_and_picked_up_where_it_stopped(tmp_path: Path) -> None:
    out = tmp_path / "set"
    made = write_stills(out, tables=2, per_table=1, seed=9,
                        setups=["webcam-overhead", "wide-webcam"], quality=SMALL)
    assert made == 2
    lines = (out / "truth.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["setup"] for r in records] == ["webcam-overhead", "wide-webcam"]
    for r in records:
        assert (out / r["image"]).exists() and (out / r["empty"]).exists()
    (out / "truth" / "0001-00.json").unlink()
    for part, missing in (((0, 2), 0), ((1, 2), 1)):  # table 1 is part 1 of 2's
        assert write_stills(out, tables=2, per_table=1, seed=9,
                            setups=["webcam-overhead", "wide-webcam"], quality=SMALL,
                            part=part) == missing
    (out / "VERSION").write_text("0\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="generator 0"):
        write_stills(out, tables=2, per_table=1, seed=9, setups=["webcam-overhead"],
                     quality=SMALL)


@pytest.mark.slow
def test_every_photo_of_a_table_shows_the_same_board(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Calibration learns the bare board from the empty photo: were each photo's print
    # drawn anew (another frame line, other water), every frame would differ from it.
    prints: list[bytes] = []
    real = scene_module.board_print

    def kept(edition: Any, rng: np.random.Generator) -> bytes:
        prints.append(real(edition, rng))
        return prints[-1]

    monkeypatch.setattr(render_module, "board_print", kept)
    write_stills(tmp_path / "set", tables=1, per_table=2, seed=9,
                 setups=["webcam-overhead"], quality=SMALL)
    assert len(prints) == 3  # the empty photo and two positions
    assert prints[0] == prints[1] == prints[2]
    other = random_table((9, 1), "webcam-overhead")
    assert real(other.edition, np.random.default_rng([*other.seed, 3])) != prints[0]


def test_fine_quality_antialiases_and_draft_does_not() -> None:
    assert Quality().antialias is not None and DRAFT.antialias is None
