"""The evaluation's tally (vision.evaluate): what it counts on clean and hand frames."""

from __future__ import annotations

from vision.cells import SIZE, CellState
from vision.evaluate import COLUMNS, Tally
from vision.observation import Observation

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
