"""The learned cell and bridge classifiers: the network, its training, the shipped models."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from contracts.calibration import ColourModel, default_thresholds
from lab.train import Raw, cell_examples, load_raw, read_scene, save_raw, train
from vision.bridges import BridgePlan
from vision.learned import (
    BRIDGE_MODEL,
    CELL_CLASSES,
    CELL_MODEL,
    DECK_OUTLINE,
    Network,
    bridge_network,
    cell_features,
    cell_network,
)

SETTINGS = default_thresholds()


def test_training_learns_a_rule_the_features_carry(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3000, 6))
    y = (x[:, 0] * x[:, 1] > 0).astype(np.int64) + 2 * (x[:, 2] > 1.0)
    net = train(x, y, 4, hidden=32, epochs=30)
    test = rng.normal(size=(1000, 6))
    want = (test[:, 0] * test[:, 1] > 0).astype(np.int64) + 2 * (test[:, 2] > 1.0)
    assert (net.proba(test).argmax(axis=1) == want).mean() > 0.9
    net.save(tmp_path / "n.npz")
    again = Network.load(tmp_path / "n.npz")
    assert np.allclose(again.proba(test), net.proba(test))


def test_binary_network_gives_probabilities() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2000, 3))
    y = (x[:, 0] + x[:, 2] > 0).astype(np.float64)
    net = train(x, y, 1, hidden=8, epochs=20)
    p = net.proba(x)
    assert p.shape == (2000,) and ((p > 0.5) == (y == 1)).mean() > 0.95


def test_shipped_models_load_and_fit_the_features() -> None:
    assert CELL_MODEL.exists() and BRIDGE_MODEL.exists()
    cells, bridges = cell_network(), bridge_network()
    assert cells is not None and bridges is not None
    model = ColourModel(empty=(50.0, 0.0, 10.0), ring=(30.0, 0.0, 0.0),
                        light=(90.0, 0.0, 20.0), dark=None)
    frame = SimpleNamespace(sub_lab=np.full((100, 9, 3), 50.0), rim_lab=np.full((100, 8, 3), 50.0),
                            texture=np.zeros((100, 9)), edges=np.zeros((100, 5)),
                            background=None)
    feats = cell_features(frame, model)
    assert feats.shape[1] == cells.w1.shape[0]
    assert cells.proba(feats).shape == (100, CELL_CLASSES)


def test_a_generated_scene_reads_into_examples(tmp_path: Path) -> None:
    cells = cell_network()
    assert cells is not None
    out = read_scene(1000, 0, cells)
    assert out is not None
    raw, labels, bx, by = out
    assert isinstance(raw, Raw) and isinstance(labels, np.ndarray)
    assert labels.shape == (100,) and set(labels) <= {0, 1, 2, 3}
    assert len(bx) == len(by) and bx.shape[1] == bridge_network().w1.shape[0]  # type: ignore
    # kept raw, the scene gives the same cell features as read directly
    save_raw(tmp_path / "raw.npz", [(raw, labels)])
    (again, again_labels), = load_raw(tmp_path / "raw.npz")
    assert list(again_labels) == list(labels)
    x, y = cell_examples([(again, again_labels)])
    assert x.shape == (100, cells.w1.shape[0]) and list(y) == list(labels)
    assert np.allclose(x, cell_features(raw, raw.colours()), atol=1e-3)


def test_the_shade_free_features_stay_put_in_a_shadow_and_tell_black_from_shaded_blue() -> None:
    from vision.features import to_lab
    from vision.learned import against_colours

    blue_board = np.array([[150.0, 110.0, 60.0]])  # BGR
    lit, shaded = to_lab(blue_board), to_lab(blue_board * 0.45)
    black = to_lab(np.array([[55.0, 52.0, 50.0]]))
    assert abs(shaded[0, 0] - black[0, 0]) < 12  # as dark as each other
    model = ColourModel(empty=tuple(float(v) for v in lit[0]), ring=(30.0, 0.0, 0.0))  # type: ignore[arg-type]
    tone = against_colours(np.vstack([shaded, black]), model)[:, 11:13]  # a, b over L + 16 vs board
    assert np.linalg.norm(tone[0]) < 0.1 < np.linalg.norm(tone[1])


def test_model_files_of_another_version_fall_back_to_the_thresholds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lab.synth import render
    from tests.test_vision_reading import BOARD, board_scene
    from vision import pipeline

    frame = render(board_scene(elevation_deg=90.0))
    assert pipeline.read_board(frame.image).board_rows() == list(BOARD)
    odd = Network(np.zeros(7), np.ones(7), np.zeros((7, 4)), np.zeros(4), np.zeros((4, 4)),
                  np.zeros(4))
    monkeypatch.setattr(pipeline, "cell_network", lambda **_: odd)
    # the thresholds alone still read this easy overhead frame, without an error
    assert pipeline.read_board(frame.image).board_rows() == list(BOARD)


def test_local_contrast_follows_the_board_turned_and_sees_a_tile_among_its_neighbours() -> None:
    from vision.learned import local_contrast

    rng = np.random.default_rng(3)
    grid = np.tile(np.array([70.0, 0.0, 10.0]), (10, 10, 1)) + rng.normal(0, 0.3, (10, 10, 3))
    grid[:, 5:] += (12.0, 0.0, 4.0)  # a lamp's glare over half the board
    grid[4, 7] = (95.0, 0.0, 40.0)  # a cream tile in the glare, as light as ...
    grid[4, 2] = (82.0, 0.0, 14.0)  # ... bare board would be there, here a tile too
    feats = local_contrast(grid.reshape(100, 3)).reshape(10, 10, -1)
    turned = local_contrast(np.rot90(grid).reshape(100, 3)).reshape(10, 10, -1)
    assert np.allclose(np.rot90(feats), turned)  # the sorted neighbours do not care
    around = feats.reshape(10, 10, 8, 6)
    # both tiles stand out from all eight neighbours: every neighbour is darker
    assert (around[4, 7, :, 0] < -0.3).all() and (around[4, 2, :, 0] < -0.3).all()
    assert (np.abs(around[7, 2, :, 0]) < 0.05).all()  # bare board among bare board


def test_against_the_background_a_tile_differs_and_bare_board_under_a_fixed_shadow_does_not(
) -> None:
    from vision.learned import BACKGROUND_FEATURES, against_background

    rng = np.random.default_rng(4)
    board = np.tile(np.array([70.0, 0.0, 10.0]), (100, 9, 1)) + rng.normal(0, 0.3, (100, 9, 3))
    board[40:60, :, 0] -= 30.0  # a window bar's shadow across two ranks, there all along
    now = board + rng.normal(0, 0.3, board.shape)
    now[45] = (85.0, 0.0, 35.0)  # a cream tile put down in the shadow
    background = board.copy()
    background[7] = np.nan  # a tile stood here in the calibration photo
    feats = against_background(now, background)
    assert feats.shape == (100, BACKGROUND_FEATURES)
    assert feats[45, 0] > 0.5 > 0.05 > feats[44, 0]  # the tile changed its cell, the shadow not
    assert feats[7].tolist() == [0.0] * BACKGROUND_FEATURES  # unknown: nothing, flag 0
    assert feats[44, -1] == 1.0
    assert not against_background(now, None).any()


def test_training_weighs_cells_much_darker_than_the_bare_board_more() -> None:
    from lab.train import shade_weights
    from vision.learned import BACKGROUND_AT, BACKGROUND_FEATURES, against_background

    out = read_scene(1000, 0, None)
    assert out is not None
    raw, labels = out
    assert isinstance(raw, Raw)
    background = np.tile(np.array([70.0, 0.0, 10.0]), (100, 9, 1))
    background[5] = np.nan  # not known: no weight
    sub = background.copy()
    sub[3, :, 0] = 20.0  # a deep shadow (or a dark tile) on bare board seen before
    sub[4, :, 0] = 60.0  # a little darker only
    sub[5, :, 0] = 20.0
    shaded = replace(raw, sub_lab=np.nan_to_num(sub, nan=20.0), background=background)
    x = cell_features(shaded, shaded.colours())
    assert np.allclose(x[:, BACKGROUND_AT:BACKGROUND_AT + BACKGROUND_FEATURES],
                       against_background(shaded.sub_lab, background))
    weights = shade_weights(x, 3.0)
    assert weights[3] == 3.0
    assert weights[4] == weights[5] == weights[0] == 1.0


def test_merged_networks_give_the_mean_of_their_scores() -> None:
    from vision.learned import merge_networks

    rng = np.random.default_rng(2)
    x = rng.normal(size=(300, 5))
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1)
    nets = [train(x, y, 3, hidden=8, epochs=3, seed=s) for s in (0, 1)]
    merged = merge_networks(nets)
    assert merged.w1.shape == (5, 16)
    assert np.allclose(merged.scores(x), (nets[0].scores(x) + nets[1].scores(x)) / 2,
                       atol=1e-4)
    other = train(x * 2, y, 3, hidden=8, epochs=1)
    with pytest.raises(ValueError):
        merge_networks([nets[0], other])


def test_bridge_candidates_see_how_their_deck_differs_from_the_bare_board_seen_before() -> None:
    from contracts.calibration import default_thresholds
    from vision.learned import candidate_features
    from vision.measure import make_plan

    settings = default_thresholds()
    corners = np.array([(340.0, 610.0), (940.0, 610.0), (940.0, 10.0), (340.0, 10.0)])
    plan = make_plan(settings, corners, (1280, 720))
    bridges = plan.bridges
    assert bridges.nearest is not None and len(bridges.nearest) == len(bridges.boxes)
    # over the middle of the board, every path sample has a cell sample box near it
    middle = [j for j, (a, b) in enumerate(bridges.pairs) if 2 <= min(a[0], b[0])
              and max(a[0], b[0]) <= 7 and 2 <= min(a[1], b[1]) and max(a[1], b[1]) <= 7]
    n = len(bridges.boxes) // (len(bridges.pairs) * bridges.heights)
    rows = (np.array(middle)[:, None] * bridges.heights + np.arange(bridges.heights)).ravel()
    near = bridges.nearest[(rows[:, None] * n + np.arange(n)).ravel()]
    assert (near >= 0).mean() > 0.6 and near.max() < 900

    board = (60.0, 0.0, -20.0)  # a blue board, and the bridges nearly its colour
    model = ColourModel(empty=board, ring=(70.0, 5.0, 20.0), light=(90.0, 0.0, 20.0),
                        dark=(30.0, 20.0, 15.0), bridge=(62.0, 0.0, -14.0))
    probs = np.tile([0.0, 0.5, 0.0, 0.5], (100, 1))  # light tiles or hidden: all candidates
    background = np.tile(np.array(board), (100, 9, 1))

    def bare(rows: np.ndarray) -> np.ndarray:
        return np.tile(np.array(board), (len(rows), n, 1))

    def deck(rows: np.ndarray) -> np.ndarray:
        return np.tile(np.array([62.0, 0.0, -14.0]), (len(rows), n, 1))

    seen, keep = candidate_features(SETTINGS, bridges, bare, model, probs, background)
    moved, _ = candidate_features(SETTINGS, bridges, deck, model, probs, background)
    blind, _ = candidate_features(SETTINGS, bridges, deck, model, probs, None)
    assert seen.shape == moved.shape == blind.shape and len(keep) == len(bridges.pairs)
    # before the flanks and the deck's outline (not measured here): how much of the deck's
    # path the board seen before covers, and how its shade-free colour (a, b over L + 16,
    # the lightness ratio) changed since
    tail = 3 + DECK_OUTLINE
    share, shade = slice(-tail - 4, -tail - 3), slice(-tail - 3, -tail)
    assert seen[:, share].mean() > 0.6 and not blind[:, share].any()
    assert np.abs(seen[:, shade]).max() < 1e-9 and not blind[:, shade].any()
    covered = moved[:, share][:, 0] > 0.5  # (the median of the samples is then of known ones)
    assert (np.abs(moved[covered, -tail - 2] - (-14 / 78 + 20 / 76)) < 0.01).all()
    # and what a deck of nearly the board's colour changed is there, not without it
    assert (np.abs(moved - seen)[covered].max(axis=1) > 0.15).all()
    assert np.abs(blind - seen).max() > 0  # the deck's own colour still counts without it


def test_bridge_candidates_see_the_board_beside_the_deck() -> None:
    from vision.learned import bridge_features

    heights, n, pairs = 2, 5, 3
    board, deck = np.array([60.0, 0.0, -20.0]), np.array([62.0, 0.0, -14.0])
    model = ColourModel(empty=tuple(board), ring=(70.0, 5.0, 20.0), light=(90.0, 0.0, 20.0),
                        dark=(30.0, 20.0, 15.0), bridge=tuple(deck))
    kinds = np.tile([1.0, 0.0, 0.0], (pairs, 1))
    ends, under = np.tile([0.0, 1.0, 0.0, 0.0], (pairs, 2, 1)), np.tile(
        [1.0, 0.0, 0.0, 0.0], (pairs, 2, 1))
    on_deck = np.tile(deck, (pairs * heights, n, 1))
    on_board = np.tile(board, (pairs * heights, n, 1))
    beside = np.tile(board, (pairs * heights, n, 2, 1))

    def features(paths: np.ndarray, flanks: np.ndarray | None) -> np.ndarray:
        return bridge_features(paths, heights, kinds, ends, under, model, None,
                               None if flanks is None else (lambda rows: flanks[rows]))

    blind = np.abs(features(on_deck, None) - features(on_board, None)).max(axis=0) > 1e-9
    seeing = np.abs(features(on_deck, beside) - features(on_board, beside)).max(axis=0) > 1e-9
    assert features(on_deck, beside).shape == features(on_deck, None).shape
    assert (blind <= seeing).all() and seeing.sum() > blind.sum()
    # the board beside a path over the bare board: nothing stands out
    flat = features(on_board, beside) - features(on_board, None)
    assert np.abs(flat).max() < 1e-9
    # seen at an angle, a path lying over the top of a tile read clearly behind it
    over_tile = np.tile([0.0, 1.0, 0.0, 0.0], (pairs * heights, n, 1))
    plain = bridge_features(on_deck, heights, kinds, ends, under, model)
    behind = bridge_features(on_deck, heights, kinds, ends, under, model, None, None,
                             over_tile)
    assert plain.shape == behind.shape and np.abs(behind - plain).max() > 0.5


def test_a_deck_shows_its_outline_along_its_path_and_bare_board_does_not() -> None:
    import cv2

    from contracts.calibration import default_thresholds
    from vision.bridges import measure_deck_edges
    from vision.features import texture
    from vision.learned import deck_outline
    from vision.measure import make_plan

    settings = default_thresholds()
    corners = np.array([(340.0, 610.0), (940.0, 610.0), (940.0, 10.0), (340.0, 10.0)])
    plan = make_plan(settings, corners, (1280, 720))
    bridges, side = plan.bridges, plan.sampling.side
    n = len(bridges.boxes) // (len(bridges.pairs) * bridges.heights)
    px = settings.cell_px

    def edges(pair: tuple[tuple[int, int], tuple[int, int]], deck: int | None,
              shadow: bool = False) -> np.ndarray:
        """The edges of a pair's first path, drawn as a strip of grey `deck` (None: no deck)
        on a board of grey 120, with a dark line along its minus edge when `shadow`."""
        row = bridges.pairs.index(pair) * bridges.heights
        boxes = bridges.boxes[row * n:(row + 1) * n]
        centres = np.column_stack([boxes[:, 0] + boxes[:, 2], boxes[:, 1] + boxes[:, 3]]) / 2
        along = centres[-1] - centres[0]
        ends = centres[0] - along, centres[-1] + along
        image = np.full((side, side, 3), 120, np.uint8)
        if deck is not None:
            p, q = (tuple(int(round(v)) for v in e) for e in ends)
            cv2.line(image, p, q, (deck, deck, deck), int(round(0.34 * px)))
            if shadow:
                normal = bridges.edge_normals[row * n]
                off = -normal * 0.2 * px
                cv2.line(image, tuple(int(round(v)) for v in ends[0] + off),
                         tuple(int(round(v)) for v in ends[1] + off), (40, 40, 40), 2)
        out = measure_deck_edges(bridges, texture(image, plan.sampling)[2], np.array([row]))
        assert out is not None and out.shape == (1, n, 2, 2)
        return out

    for pair in (((3, 4), (5, 4)), ((3, 4), (5, 6)), ((3, 4), (4, 6))):
        light, dark, bare = edges(pair, 200), edges(pair, 60), edges(pair, None)
        # a lighter deck: the grey level rises into it on both sides, all along; a darker
        # one falls; bare board does neither
        assert (light[0, :, :, 0] > 0.3).all() and (dark[0, :, :, 0] < -0.3).all()
        assert np.abs(bare).max() < 1e-9
        outline = deck_outline(np.concatenate([light, dark, bare]))
        assert outline.shape == (3, DECK_OUTLINE)
        assert outline[0, 0] > 0.3 and outline[1, 0] < -0.3 and not outline[2].any()
        assert outline[0, 2] == outline[1, 2] == 1.0  # every sample agrees, on both sides
    # a deck of the board's own grey shows only the shadow line along one edge: that side
    # comes first, darker than the deck
    shaded = deck_outline(edges(((3, 4), (5, 4)), 120, shadow=True))[0]
    assert shaded[1] > 0.2 and shaded[3] < -0.1 and abs(shaded[7]) < 0.05


@pytest.mark.parametrize("damage", ["not a zip", "cut short", "other arrays"])
def test_a_damaged_model_file_is_read_without_and_named_in_a_warning(
    tmp_path: Path, damage: str
) -> None:
    from vision.decks import DECK_MODEL
    from vision.learned import model_file
    from vision.patches import PatchNetwork, shipped

    path = tmp_path / "model.npz"
    if damage == "not a zip":
        path.write_bytes(b"this is no model" * 20)
    elif damage == "cut short":
        path.write_bytes(DECK_MODEL.read_bytes()[:4000])
    else:
        np.savez(path, a=np.zeros(3))
    for load in (lambda p: shipped(p), lambda p: model_file(Network.load, p)):
        with pytest.warns(RuntimeWarning, match="model.npz is unreadable"):
            assert load(path) is None
    # a missing file is an option (the pipeline reads without that network), not a fault
    assert shipped(tmp_path / "none.npz") is None
    assert isinstance(shipped(DECK_MODEL), PatchNetwork)


def _bare_board_paths() -> tuple[BridgePlan, ColourModel,
                                 Callable[[np.ndarray], np.ndarray]]:
    """A plan's bridges for a board seen from above, its colours, and path samples that
    show bare board everywhere (what `candidate_features` measures)."""
    from contracts.calibration import default_thresholds
    from vision.measure import make_plan

    corners = np.array([(340.0, 610.0), (940.0, 610.0), (940.0, 10.0), (340.0, 10.0)])
    bridges = make_plan(default_thresholds(), corners, (1280, 720)).bridges
    model = ColourModel(empty=(60.0, 0.0, -20.0), ring=(70.0, 5.0, 20.0),
                        light=(90.0, 0.0, 20.0), dark=(30.0, 20.0, 15.0))
    n = len(bridges.boxes) // (len(bridges.pairs) * bridges.heights)

    def paths(rows: np.ndarray) -> np.ndarray:
        return np.tile(np.array([60.0, 0.0, -20.0]), (len(rows), n, 1))

    return bridges, model, paths


def test_a_cell_the_second_look_took_for_bare_board_can_still_end_a_bridge() -> None:
    """A bridge's foot can hide most of its tile's top, and the patch network may then read
    the tile as bare board: candidates take each end's higher chance, before or after."""
    from vision.learned import candidate_features, end_chance

    bridges, model, paths = _bare_board_paths()

    before = np.tile([1.0, 0.0, 0.0, 0.0], (100, 1))  # bare board everywhere ...
    before[[22, 24]] = (0.3, 0.7, 0.0, 0.0)  # ... but c3 and e3, light tiles it seems
    after = before.copy()
    after[24] = (0.99, 0.01, 0.0, 0.0)  # the second look: e3 is bare board after all
    pair = bridges.pairs.index(((2, 2), (4, 2)))
    _, keep = candidate_features(SETTINGS, bridges, paths, model, after)
    assert pair not in keep.tolist()
    ends = np.maximum(end_chance(before), end_chance(after))
    _, keep = candidate_features(SETTINGS, bridges, paths, model, after, ends=ends)
    assert pair in keep.tolist()


def test_candidates_are_pairs_of_one_colour_over_bare_cells() -> None:
    """A bridge stands on two tiles of one colour over bare cells: while tracking, a pair of
    a light and a dark tile, or one over a tile, is not asked about, unless a foot may hide
    an end; from scratch (no bare board seen before), the cells are less sure of
    themselves, and it is."""
    from vision.learned import candidate_features

    bridges, model, paths = _bare_board_paths()

    probs = np.tile([1.0, 0.0, 0.0, 0.0], (100, 1))  # bare board everywhere ...
    probs[[22, 42]] = (0.0, 1.0, 0.0, 0.0)  # ... light tiles on c3 and c5
    probs[24] = (0.0, 0.0, 1.0, 0.0)  # a dark one on e3
    probs[[62, 82]] = (0.0, 1.0, 0.0, 0.0)  # light tiles on c7 and c9 ...
    probs[72] = (0.0, 0.0, 1.0, 0.0)  # ... with a dark one on c8 between them

    seen = np.tile(np.array([60.0, 0.0, -20.0]), (100, 9, 1))  # the bare board seen before

    def asked(a: tuple[int, int], b: tuple[int, int], p: np.ndarray,
              background: np.ndarray | None = seen) -> bool:
        _, keep = candidate_features(SETTINGS, bridges, paths, model, p, background)
        return bridges.pairs.index((a, b)) in keep.tolist()

    assert asked((2, 2), (2, 4), probs)  # c3-c5: light to light over bare c4
    assert not asked((2, 2), (4, 2), probs)  # c3-e3: light to dark
    assert not asked((2, 6), (2, 8), probs)  # c7-c9: over a tile
    hidden = probs.copy()
    hidden[24] = (0.0, 0.0, 0.3, 0.7)  # e3's top hidden, by a foot say
    assert asked((2, 2), (4, 2), hidden)
    under = probs.copy()
    under[72] = (0.0, 0.0, 0.5, 0.5)  # c8 hidden, by the deck say
    assert asked((2, 6), (2, 8), under)
    assert asked((2, 2), (4, 2), probs, None) and asked((2, 6), (2, 8), probs, None)
    assert asked((2, 2), (4, 2), probs, np.full((100, 9, 3), np.nan))  # known nowhere


def test_a_pair_whose_one_end_a_foot_may_hide_is_asked_about_while_tracking() -> None:
    """A bridge's foot can hide its tile so well that the cell network reads bare board
    there with conviction. While tracking, a pair is asked about anyway when its other end
    is a sure tile and the "bare" end differs from the bare board seen before; a bare cell
    that has not changed, a pair with no sure tile, or one over a tile is not."""
    from vision.learned import candidate_features, foot_candidates

    bridges, model, paths = _bare_board_paths()
    probs = np.tile([1.0, 0.0, 0.0, 0.0], (100, 1))  # bare board everywhere ...
    probs[22] = (0.0, 1.0, 0.0, 0.0)  # ... but a light tile on c3
    probs[62] = (0.0, 1.0, 0.0, 0.0)  # and on c7, with a dark one on c8 beside it
    probs[72] = (0.0, 0.0, 1.0, 0.0)
    seen = np.tile(np.array([60.0, 0.0, -20.0]), (100, 9, 1))
    change = np.zeros(100)
    change[[24, 82]] = SETTINGS.foot_change + 1.0  # e3 and c9 are not as they were

    def asked(a: tuple[int, int], b: tuple[int, int], p: np.ndarray,
              moved: np.ndarray | None = change) -> bool:
        foot = None if moved is None else foot_candidates(SETTINGS, bridges, p, moved)
        _, keep = candidate_features(SETTINGS, bridges, paths, model, p, seen, extra=foot)
        return bridges.pairs.index((a, b)) in keep.tolist()

    foot = foot_candidates(SETTINGS, bridges, probs, change)
    assert foot[bridges.pairs.index(((2, 2), (4, 2)))]  # c3-e3
    assert asked((2, 2), (4, 2), probs)
    assert not asked((2, 2), (4, 2), probs, None)  # without the changes: the plain rule
    assert not asked((2, 2), (4, 2), probs, np.zeros(100))  # e3 unchanged: bare board
    assert not asked((2, 2), (4, 2), probs, np.full(100, np.nan))  # no bare board known
    assert not asked((2, 2), (2, 4), probs)  # c3-c5: c5 unchanged
    assert not asked((2, 6), (2, 8), probs)  # c7-c9 passes over the dark tile on c8
    unsure = probs.copy()
    unsure[22] = (0.6, 0.4, 0.0, 0.0)  # c3 no sure tile either
    assert not asked((2, 2), (4, 2), unsure)
    unsure[22] = (0.0, 0.1, 0.0, 0.9)  # c3 hidden, by a hand maybe
    assert not asked((2, 2), (4, 2), unsure)
    both = probs.copy()
    both[24] = (0.0, 1.0, 0.0, 0.0)  # e3 read as a tile: a plain candidate, not a foot's
    assert asked((2, 2), (4, 2), both)
    pair = bridges.pairs.index(((2, 2), (4, 2)))
    assert not foot_candidates(SETTINGS, bridges, both, change)[pair]
    # After a change of light every bare cell has changed a little: e3 must stand out.
    dimmer = np.full(100, SETTINGS.foot_change)
    dimmer[24] = SETTINGS.foot_change + 1.0
    assert not asked((2, 2), (4, 2), probs, dimmer)
    dimmer[24] = SETTINGS.foot_change * (SETTINGS.foot_spread + 1.0)
    assert asked((2, 2), (4, 2), probs, dimmer)


def test_the_cell_network_can_learn_from_scenes_of_more_seeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import lab.train
    from lab.train import main

    cache = tmp_path / "cache"
    args = ["--cells-only", "--scenes", "2", "--seed", "1000", "--more-seeds", "1001",
            "--epochs", "1", "--hidden", "8", "--jobs", "1", "--cache", str(cache),
            "--out", str(tmp_path)]
    assert main(args) == 0
    assert (cache / "raw.npz").exists() and (cache / "raw-1001.npz").exists()
    first = capsys.readouterr().err
    assert "cells: 400 examples" in first  # two scenes of each seed
    assert Network.load(tmp_path / CELL_MODEL.name).w1.shape[1] == 16  # two of 8, side by side

    def generate(*_: object, **__: object) -> None:
        raise AssertionError("the scenes are in the cache")

    monkeypatch.setattr(lab.train, "collect", generate)
    assert main(args) == 0  # again, from the cache
    assert "cells: 400 examples" in capsys.readouterr().err


def test_the_cell_network_can_learn_from_more_hard_scenes_and_count_scenes_kept_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import lab.train
    from lab.synth import SETUPS
    from lab.train import main
    from lab.train_patches import HARD_SETUPS

    asked: list[list[int]] = []
    real_collect = lab.train.collect

    def recorded(count: int, seed: int, jobs: int, *args: Any,
                 **kwargs: Any) -> list[tuple[object, ...]]:
        indices = kwargs.get("indices")
        asked.append(list(range(count)) if indices is None else list(indices))
        return real_collect(count, seed, jobs, *args, **kwargs)

    monkeypatch.setattr(lab.train, "collect", recorded)
    cache = tmp_path / "cache"
    args = ["--cells-only", "--scenes", "2", "--hard-scenes", "2", "--hold-out", "2",
            "--epochs", "1", "--hidden", "8", "--jobs", "1", "--cache", str(cache),
            "--out", str(tmp_path)]
    assert main(args) == 0
    assert (cache / "raw.npz").exists() and (cache / "raw-hard.npz").exists()
    regular, hard = asked
    assert regular == [0, 1]
    names = list(SETUPS)
    assert len(hard) == 2 and min(hard) >= 2
    assert all(names[i % len(names)] in HARD_SETUPS for i in hard)
    err = capsys.readouterr().err
    assert "cells: 200 examples" in err  # two of the four scenes are kept out ...
    assert "cells held out: this network reads" in err and "of 200 wrong" in err  # ... and read
    assert Network.load(tmp_path / CELL_MODEL.name).w1.shape[1] == 16


def test_frames_read_from_scratch_get_the_cell_network_made_for_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lab.evaluate import tracker_for
    from lab.synth import render
    from tests.test_vision_reading import BOARD, board_scene
    from vision import pipeline
    from vision.learned import SCRATCH_CELL_MODEL, model_file

    calibrated, scratch = cell_network(), cell_network(scratch=True)
    shipped = model_file(Network.load, SCRATCH_CELL_MODEL)
    assert calibrated is not None and scratch is not None and shipped is not None
    assert np.array_equal(scratch.w1, shipped.w1) and np.array_equal(scratch.w2, shipped.w2)
    assert scratch.w1.shape != calibrated.w1.shape or not np.array_equal(scratch.w1,
                                                                          calibrated.w1)
    assert scratch.mean.shape == calibrated.mean.shape  # the same inputs

    asked: list[bool] = []

    def recorded(*, scratch: bool = False) -> Network | None:
        asked.append(scratch)
        return cell_network(scratch=scratch)

    monkeypatch.setattr(pipeline, "cell_network", recorded)
    spec = board_scene(elevation_deg=70.0)
    frame = render(spec)
    assert pipeline.read_board(frame.image).board_rows() == list(BOARD)
    assert asked == [True]  # no calibration: no bare board known
    reader = tracker_for(spec, frame)
    assert reader is not None
    asked.clear()
    assert reader.read(frame.image).board_rows() == list(BOARD)
    assert asked and not any(asked)  # calibrated: the bare board is known


def test_without_its_own_file_a_frame_from_scratch_gets_the_cell_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vision.learned

    monkeypatch.setattr(vision.learned, "SCRATCH_CELL_MODEL", tmp_path / "missing.npz")
    assert cell_network(scratch=True) is cell_network()


def test_ponte_models_names_the_folder_every_network_is_loaded_from(tmp_path: Path) -> None:
    import json
    import os
    import shutil
    import subprocess
    import sys

    from vision.learned import SHIPPED_MODELS, models_folder

    assert models_folder({}) == SHIPPED_MODELS == CELL_MODEL.parent
    assert models_folder({"PONTE_MODELS": ""}) == SHIPPED_MODELS
    assert models_folder({"PONTE_MODELS": str(tmp_path)}) == tmp_path.resolve()
    shutil.copy(CELL_MODEL, tmp_path / CELL_MODEL.name)  # the only file there
    code = """if True:
        import json
        from vision.decks import DECK_MODEL, deck_network
        from vision.learned import (BRIDGE_MODEL, CELL_MODEL, SCRATCH_CELL_MODEL,
                                    bridge_network, cell_network)
        from vision.patches import PATCH_MODEL, patch_network
        paths = [CELL_MODEL, SCRATCH_CELL_MODEL, BRIDGE_MODEL, PATCH_MODEL, DECK_MODEL]
        cells, scratch = cell_network(), cell_network(scratch=True)
        print(json.dumps({"folders": sorted({str(p.parent) for p in paths}),
                          "cells": cells is not None and scratch is cells,
                          "others": [bridge_network(), patch_network(), deck_network()]
                                    == [None] * 3}))
    """
    env = {**os.environ, "PONTE_MODELS": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen == {"folders": [str(tmp_path.resolve())], "cells": True, "others": True}


def _truth_labels(folder: Path) -> list[np.ndarray]:
    """Per image of a still set, its cells' labels as the cell network learns them (cell
    r * 10 + f: 0 empty, 1 light, 2 dark, 3 hidden by a hand)."""
    from lab.sets import load_set
    from vision.cells import parse_cell

    out = []
    for record in load_set(folder):
        labels = np.array([".LD".index(ch) for row in record["board"][::-1] for ch in row])
        for name in record["occluded_cells"]:
            f, r = parse_cell(name)
            labels[r * 10 + f] = 3
        out.append(labels)
    return out


def test_the_networks_can_learn_from_a_still_set_with_its_truth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], synth_still_set: Path
) -> None:
    from lab.train import main

    shipped = CELL_MODEL.read_bytes()
    cache = tmp_path / "cache"
    args = ["--scenes-from", str(synth_still_set), "--scenes", "3", "--epochs", "1",
            "--hidden", "8", "--shade-weights", "3", "--jobs", "1", "--cache", str(cache),
            "--out", str(tmp_path / "models")]
    assert main(args) == 0
    err = capsys.readouterr().err
    raw = load_raw(cache / "raw.npz")
    wanted = _truth_labels(synth_still_set)
    assert len(raw) == 3  # the first three of the set's nine images, each read ...
    for (_, labels), want in zip(raw, wanted, strict=False):
        assert np.array_equal(labels, want)  # ... with the set's truth
    counts = np.bincount(np.concatenate(wanted[:3]), minlength=4).tolist()
    assert f"cells: 300 examples, classes {counts}" in err
    assert "bridges:" in err and "training examples wrong" in err
    assert (tmp_path / "models" / CELL_MODEL.name).exists()
    assert (tmp_path / "models" / BRIDGE_MODEL.name).exists()
    assert CELL_MODEL.read_bytes() == shipped


def test_a_still_set_is_refused_with_options_that_generate_scenes_or_without_truth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], synth_still_set: Path
) -> None:
    from lab.train import main

    for more in (["--scenes-from", str(synth_still_set), "--hard-scenes", "2"],
                 ["--scenes-from", str(synth_still_set), "--more-seeds", "1002"],
                 ["--scenes-from", str(tmp_path)]):
        with pytest.raises(SystemExit) as stop:
            main([*more, "--out", str(tmp_path / "models")])
        assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "not with --scenes-from" in err and "holds no truth.jsonl" in err
    assert not (tmp_path / "models").exists()
