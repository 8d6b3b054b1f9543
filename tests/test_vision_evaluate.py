"""The evaluation (lab.evaluate): what its tally counts on clean and hand frames, and
the mistakes it lists behind the counts."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from contracts.calibration import load_calibration
from lab.evaluate import (
    COLUMNS,
    MISTAKE_COLUMNS,
    MODES,
    Tally,
    evaluate,
    mistakes,
    scene,
    show_scene,
    tracker_for,
)
from vision.cells import SIZE, CellState, parse_cell
from vision.imageio import decode_image
from vision.observation import Observation
from vision.tracking import BoardReader

TRUTH = tuple("." * SIZE for _ in range(SIZE))


def _obs(wrong: int, occluded: bool) -> Observation:
    """A reading of the empty board with `wrong` light tiles on rank 1."""
    rows = [[CellState.EMPTY] * SIZE for _ in range(SIZE)]
    for f in range(wrong):
        rows[0][f] = CellState.LIGHT
    cells = tuple(tuple(row) for row in rows)
    conf = tuple((1.0,) * SIZE for _ in range(SIZE))
    hidden = frozenset({(0, 0)}) if occluded else frozenset()
    return Observation(cells, (), conf, hidden, occluded, ((0.0, 0.0),) * 4)


def test_wrong_cells_are_counted_on_every_clean_frame_and_apart_on_unflagged_ones() -> None:
    tally = Tally()
    tally.add(TRUTH, set(), False, _obs(2, occluded=True), 5.0)  # flagged, no hand in it
    tally.add(TRUTH, set(), False, _obs(1, occluded=False), 5.0)
    tally.add(TRUTH, set(), False, _obs(0, occluded=False), 5.0)
    tally.add(TRUTH, set(), True, _obs(3, occluded=False), 5.0)  # a hand, read wrong
    tally.add(TRUTH, set(), False, None, 5.0)  # an error
    row = dict(zip(COLUMNS, tally.row("s", "tracker"), strict=True))
    assert row["clean_frames"] == 3 and row["cells"] == 300
    assert row["cells_wrong"] == 3  # the flagged frame's cells count too
    assert row["clean_flagged_occluded"] == 1
    assert row["cells_unflagged"] == 200 and row["cells_wrong_unflagged"] == 1
    assert row["hand_frames"] == 1 and row["hand_frames_wrong_unflagged"] == 1
    assert row["errors"] == 1


def test_mistakes_name_each_wrong_cell_and_bridge_and_an_unflagged_hand() -> None:
    light = replace(_obs(2, occluded=False), bridges=(((0, 0), (1, 0)),))
    truth_bridges = {("c1", "e1")}
    assert mistakes(TRUTH, truth_bridges, False, light) == [
        ("cell", "a1", ".", "L", "0"), ("cell", "b1", ".", "L", "0"),
        ("missed", "c1-e1", "bridge", "", "0"), ("false", "a1-b1", "", "bridge", "0")]
    assert mistakes(TRUTH, set(), False, _obs(1, occluded=True)) == [
        ("cell", "a1", ".", "L", "1")]  # a flagged frame's mistakes are listed, flagged
    assert mistakes(TRUTH, set(), True, _obs(1, occluded=False)) == [("hand", "", "", "", "0")]
    assert mistakes(TRUTH, set(), True, _obs(1, occluded=True)) == []  # flagged: as counted
    assert mistakes(TRUTH, set(), False, _obs(0, occluded=False)) == []
    assert mistakes(TRUTH, set(), False, None, "no board") == [("error", "", "", "no board", "")]


def test_a_scene_is_drawn_as_the_evaluation_draws_it() -> None:
    from lab.synth import SETUPS, random_spec

    rng = np.random.default_rng([5, list(SETUPS).index("markers")])
    drawn = [random_spec(rng, "markers") for _ in range(3)]
    assert [scene(5, "markers", i) for i in range(3)] == drawn
    with pytest.raises(ValueError, match="unknown setup"):
        scene(5, "no-such-setup", 0)


@pytest.mark.slow
def test_the_listing_holds_every_mistake_the_table_counts(tmp_path: Path) -> None:
    """One frame of each setup (tuning seed 2), read both ways: the listed mistakes add up
    to the table's counts, mode by mode. (Read from scratch, the wide-angle frame's far
    edge is read wrong, so there is something to list.) That frame, written out by
    `show_scene`, has the same mistakes, and its files read it again: the calibration
    file makes the reader the evaluation made."""
    table, listing = tmp_path / "eval.csv", tmp_path / "mistakes.csv"
    assert evaluate(9, table, seed=2, listing=listing) == 0
    with table.open(newline="", encoding="utf-8") as handle:
        totals = {row["mode"]: row for row in csv.DictReader(handle) if row["setup"] == "all"}
    assert tuple(totals) == MODES == ("read", "tracker", "live")
    with listing.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == MISTAKE_COLUMNS
        lines = list(reader)
    assert lines
    for mode, row in totals.items():
        mine = [line for line in lines if line["mode"] == mode]
        assert all(line["seed"] == "2" for line in mine)
        cells = [line for line in mine if line["kind"] == "cell"]
        assert len(cells) == int(row["cells_wrong"])
        assert sum(line["flagged"] == "0" for line in cells) == int(row["cells_wrong_unflagged"])
        missed = sum(line["kind"] == "missed" for line in mine)
        false = sum(line["kind"] == "false" for line in mine)
        assert int(row["bridges_true"]) - missed == int(row["bridges_matched"])
        assert int(row["bridges_found"]) - false == int(row["bridges_matched"])
        assert sum(line["kind"] == "hand" for line in mine) == int(
            row["hand_frames_wrong_unflagged"])
        assert sum(line["kind"] == "error" for line in mine) == int(row["errors"])
    wide = [tuple(line.values()) for line in lines if line["setup"] == "wide-angle-distorted"]
    assert wide
    folder = tmp_path / "scene"
    shown = show_scene(2, "wide-angle-distorted", 0, folder)
    assert [tuple(str(v) for v in row) for row in shown] == wide
    truth = json.loads((folder / "truth.json").read_text())
    assert set(truth) == {"board", "bridges", "occluded"} and len(truth["board"]) == SIZE
    for line in lines:
        if line["setup"] == "wide-angle-distorted" and line["kind"] == "cell":
            f, r = parse_cell(line["where"])
            assert truth["board"][SIZE - 1 - r][f] == line["truth"]
    frame = cv2.imread(str(folder / "tracker.png"))
    data = (folder / "frame.jpg").read_bytes()
    assert frame is not None and frame.shape == decode_image(data).shape
    assert (folder / "lens.json").exists() and cv2.imread(str(folder / "empty.png")) is not None
    obs = BoardReader(load_calibration(folder / "calibration.json")).read(data)
    made = tracker_for(scene(2, "wide-angle-distorted", 0), None)
    assert made is not None
    first = made.read(data)
    assert (first.cells, first.bridges, first.occluded_cells, first.occluded) == (
        obs.cells, obs.bridges, obs.occluded_cells, obs.occluded)
    # The file keeps the corners to a thousandth of a pixel: the confidences barely move.
    assert np.allclose(first.confidence, obs.confidence, atol=1e-3)
    assert np.allclose(first.corners, obs.corners, atol=0.01)
    again = mistakes(tuple(truth["board"]), {(a, b) for a, b in truth["bridges"]},
                     truth["occluded"], obs)
    assert [("tracker", *m) for m in again] == [
        (line["mode"], line["kind"], line["where"], line["truth"], line["read"],
         line["flagged"]) for line in lines
        if line["setup"] == "wide-angle-distorted" and line["mode"] == "tracker"]
