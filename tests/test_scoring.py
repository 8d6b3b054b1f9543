"""Scoring: triangular numbers over bridge-joined islands, and the tie-breaks."""

from __future__ import annotations

import pytest

from referee import Colour, score, triangular
from referee.scoring import Score
from tests.boards import oracle_problems, position_from_rows

# The scoring example of the rules, laid out on the 10 x 10 board: light's four islands all
# joined by bridges (10 points); dark's two islands joined through the sandbank j4,j5 (3)
# and two lone islands (1 + 1): 5 points.
SCORING_EXAMPLE = """
D...DD....
D...DD....
D......DD.
D......DD.
..........
LL.LL....D
LL.LL....D
..........
LL.LL..DD.
LL.LL..DD.
"""
SCORING_BRIDGES = "b1-d1 a2-a4 b4-d4 i2-j4 j5-i7"


def test_rules_scoring_example() -> None:
    position = position_from_rows(SCORING_EXAMPLE, bridges=SCORING_BRIDGES)
    assert oracle_problems(position) == []
    result = score(position)
    assert (result.light.points, result.light.islands, result.light.bridges) == (10, 4, 3)
    assert (result.dark.points, result.dark.islands, result.dark.bridges) == (5, 4, 2)
    assert sorted(g.points for g in result.dark.groups) == [1, 1, 3]
    joined = next(g for g in result.dark.groups if g.points == 3)
    assert [[c.name for c in bank] for bank in joined.sandbanks] == [["j4", "j5"]]
    assert len(joined.bridges) == 2
    assert result.leader() is Colour.LIGHT
    assert sum(g.points for g in result.light.groups) == result.light.points


def test_sandbanks_alone_score_nothing() -> None:
    position = position_from_rows("LLL.L", bridges="c1-e1")
    assert score(position).light.points == 0
    assert score(position).light.groups == ()


def test_lone_islands_score_one_each() -> None:
    position = position_from_rows("LL.LL\nLL.LL")
    assert score(position).light.points == 2
    joined = position_from_rows("LL.LL\nLL.LL", bridges="b1-d1")
    assert score(joined).light.points == 3


@pytest.mark.parametrize("k", range(1, 13))
def test_triangular_numbers(k: int) -> None:
    assert triangular(k) == sum(range(1, k + 1))
    assert triangular(k) == [1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 66, 78][k - 1]


def test_tie_breaks_points_then_islands_then_bridges() -> None:
    def make(lp: int, li: int, lb: int, dp: int, di: int, db: int) -> Score:
        from referee.scoring import ColourScore

        return Score(
            ColourScore(Colour.LIGHT, lp, li, lb, ()), ColourScore(Colour.DARK, dp, di, db, ())
        )

    assert make(3, 2, 1, 2, 5, 5).leader() is Colour.LIGHT
    assert make(3, 2, 1, 3, 3, 0).leader() is Colour.DARK
    assert make(3, 3, 1, 3, 3, 2).leader() is Colour.DARK
    assert make(3, 3, 2, 3, 3, 2).leader() is None
