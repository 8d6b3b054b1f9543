"""The rules' examples 1-9 and the rulings on tiles, islands, sandbanks and bridges."""

from __future__ import annotations

import itertools

import pytest

from referee import Bridge, Cell, Colour, Position, Reason, Supply, Tiles, parse_move
from referee.position import segments_cross
from tests.boards import oracle_problems, position_from_rows

L, D = Colour.LIGHT, Colour.DARK


def tiles(text: str) -> Tiles:
    move = parse_move(text)
    assert isinstance(move, Tiles)
    return move


def bridge(text: str) -> Bridge:
    move = parse_move(text)
    assert isinstance(move, Bridge)
    return move


def reason(position: Position, colour: Colour, text: str) -> Reason | None:
    move = parse_move(text)
    if isinstance(move, Tiles):
        verdict = position.tiles_verdict(colour, move)
    else:
        assert isinstance(move, Bridge)
        verdict = position.bridge_verdict(colour, move)
    return None if verdict is None else verdict.reason


# ---------------------------------------------------------------- example 1: distance rule


def test_example_1_island_and_sandbanks_keep_their_distance() -> None:
    position = position_from_rows(
        """
        L..L
        ...L
        LL..
        LL.L
        """
    )
    assert oracle_problems(position) == []
    # the island a1,b1,a2,b2 touches nothing light: the sandbanks d3,d4, a4 and d1 all
    # keep a cell of distance
    assert reason(position, L, "e8,f8") is None


def test_example_1_sandbanks_may_touch_each_other_diagonally() -> None:
    position = position_from_rows(
        """
        L..
        .L.
        """
    )
    assert reason(position, L, "c1,e5") is None  # a third sandbank, diagonal to b1
    assert oracle_problems(position) == []


# ---------------------------------------------------------------- examples 2 and 3


EXAMPLE_2 = """
....L
LL.L.
"""
EXAMPLE_3 = "LL.L"


def test_example_2_no_island_from_two_sandbanks_when_it_would_touch_another() -> None:
    # c1 would join the sandbanks a1,b1 and d1 into an island touching the sandbank e2
    position = position_from_rows(EXAMPLE_2)
    verdict = position.tiles_verdict(L, tiles("c1,h8"))
    assert verdict is not None and verdict.reason is Reason.ISLAND_TOO_CLOSE
    assert set(verdict.cells) == {"a1", "b1", "c1", "d1", "e2"}
    assert "island" in verdict.message and "sandbank" in verdict.message


def test_example_3_an_island_can_be_formed_here() -> None:
    position = position_from_rows(EXAMPLE_3)
    assert reason(position, L, "c1,h8") is None
    position.place_tiles(L, tiles("c1,h8"))
    assert oracle_problems(position) == []
    assert len(position.group(Cell.parse("b1"))) == 4


# ---------------------------------------------------------------- examples 4 and 5


def test_example_4_extending_a_sandbank() -> None:
    position = position_from_rows(
        """
        .L..
        L...
        """
    )
    assert reason(position, L, "b3,j10") is None  # b2,b3 grows beside the sandbank a1
    assert reason(position, L, "c2,c3") is None  # b2,c2,c3 still a sandbank


def test_example_5_no_group_of_five() -> None:
    position = position_from_rows(
        """
        LL..
        LL..
        """
    )
    verdict = position.tiles_verdict(L, tiles("c1,j10"))
    assert verdict is not None and verdict.reason is Reason.GROUP_TOO_LARGE
    assert set(verdict.cells) == {"a1", "b1", "c1", "a2", "b2"}


def test_two_tiles_that_make_a_five_together_are_illegal() -> None:
    position = position_from_rows("LLL")
    assert reason(position, L, "d1,e1") is Reason.GROUP_TOO_LARGE
    assert reason(position, L, "d1,e2") is Reason.ISLAND_TOO_CLOSE  # island a1-d1 touches e2
    assert reason(position, L, "d1,f1") is None  # f1 is two cells from the island


def test_example_6_colours_do_not_restrict_each_other() -> None:
    position = position_from_rows(
        """
        DDL.
        DD..
        LLL.
        """
    )
    assert oracle_problems(position) == []  # a dark island touching light tiles
    assert reason(position, L, "d1,j10") is None  # a light island touching a dark one
    assert reason(position, D, "c2,j10") is Reason.GROUP_TOO_LARGE  # dark's own rule still holds
    position.place_tiles(L, tiles("d1,j10"))
    assert oracle_problems(position) == []


def test_island_may_not_touch_its_colour_diagonally_from_either_side() -> None:
    position = position_from_rows(
        """
        ....
        LL..
        LL..
        """
    )
    # the island a1,b1,a2,b2: a light tile on c3 would touch it diagonally
    assert reason(position, L, "c3,j10") is Reason.ISLAND_TOO_CLOSE
    assert reason(position, L, "d3,j10") is None
    assert reason(position, D, "c3,c2") is None


def test_sandbank_turning_into_island_next_to_a_diagonal_sandbank() -> None:
    position = position_from_rows(
        """
        ...L
        LLL.
        """
    )
    # d1 would join a1,b1,c1 and d2: a group of five
    assert reason(position, L, "d1,j10") is Reason.GROUP_TOO_LARGE
    position2 = position_from_rows(
        """
        ....L
        LLL..
        """
    )
    assert reason(position2, L, "d1,j10") is Reason.ISLAND_TOO_CLOSE  # e2 diagonal to d1


# ---------------------------------------------------------------- examples 7, 8, 9: bridges


@pytest.mark.parametrize(
    ("rows", "move", "under"),
    [
        ("L.L", "a1-c1", ["b1"]),  # straight
        ("..L\n...\nL..", "a1-c3", ["b2"]),  # diagonal
        (".L\n..\nL.", "a1-b3", ["a2", "b2"]),  # knight, long along the file
        ("..L\nL..", "a1-c2", ["b1", "b2"]),  # knight, long along the rank
    ],
)
def test_example_7_three_bridge_shapes(rows: str, move: str, under: list[str]) -> None:
    position = position_from_rows(rows)
    assert reason(position, L, move) is None
    placed = position.build_bridge(L, bridge(move))
    assert sorted(c.name for c in placed.under) == sorted(under)
    assert sorted(c.name for c in position.blocked_cells()) == sorted(under)


def test_example_8_a_tile_carries_only_one_bridge() -> None:
    position = position_from_rows("L.L.L", bridges="a1-c1")
    verdict = position.bridge_verdict(L, bridge("c1-e1"))
    assert verdict is not None and verdict.reason is Reason.BRIDGE_END_IN_USE
    assert "c1" in verdict.cells


def test_example_8_no_bridge_over_a_tile_of_either_colour() -> None:
    assert reason(position_from_rows("LDL"), L, "a1-c1") is Reason.BRIDGE_OVER_TILE
    knight = position_from_rows(".L\nD.\nL.")
    assert reason(knight, L, "a1-b3") is Reason.BRIDGE_OVER_TILE


def test_example_9_blocked_cells_take_no_tiles() -> None:
    position = position_from_rows(
        """
        ...L
        .L..
        L.L.
        """,
        bridges="a1-c1 b2-d3",
    )
    assert sorted(c.name for c in position.blocked_cells()) == ["b1", "c2", "c3"]
    for cell in ("b1", "c2", "c3"):
        assert reason(position, D, f"{cell},j10") is Reason.BLOCKED
    assert reason(position, D, "d2,j10") is None


def test_bridge_needs_own_tiles_at_both_ends() -> None:
    position = position_from_rows("L.D")
    verdict = position.bridge_verdict(L, bridge("a1-c1"))
    assert verdict is not None and verdict.reason is Reason.BRIDGE_END_NOT_OWN_TILE
    assert verdict.cells == ("c1",)
    assert reason(position_from_rows("L.."), L, "a1-c1") is Reason.BRIDGE_END_NOT_OWN_TILE


@pytest.mark.parametrize("move", ["a1-d1", "a1-b1", "a1-b2", "a1-c4", "a1-a1", "a1-e5"])
def test_other_distances_are_not_bridges(move: str) -> None:
    position = Position(10)
    assert reason(position, L, move) is Reason.NOT_A_BRIDGE_SHAPE


def test_crossing_bridges_are_illegal() -> None:
    position = position_from_rows(
        """
        L.L
        ...
        L.L
        """,
        bridges="a1-c3",
    )
    verdict = position.bridge_verdict(L, bridge("a3-c1"))
    assert verdict is not None and verdict.reason is Reason.BRIDGES_CROSS
    assert set(verdict.cells) == {"a1", "c3", "a3", "c1"}


def test_offset_diagonals_that_cross_between_cells_are_illegal() -> None:
    # RULINGS: a2-c4 with a3-c1 share no cell but their segments cross
    position = position_from_rows(
        """
        ..L
        L..
        L..
        ..L
        """,
        bridges="a2-c4",
    )
    assert reason(position, L, "a3-c1") is Reason.BRIDGES_CROSS


def test_parallel_knight_bridges_may_share_a_blocked_cell() -> None:
    position = position_from_rows(
        """
        .LL
        ...
        LL.
        """,
        bridges="a1-b3",
    )
    assert reason(position, L, "b1-c3") is None
    position.build_bridge(L, bridge("b1-c3"))
    assert position.blocked[position.geo.index(Cell.parse("b2"))] == 2
    position.remove_bridge(bridge("b1-c3"))
    assert position.blocked[position.geo.index(Cell.parse("b2"))] == 1


def test_knight_bridge_crossing_a_diagonal_one() -> None:
    position = position_from_rows(
        """
        ..L
        L..
        L.L
        """,
        bridges="a1-c3",
    )
    assert reason(position, L, "a2-c1") is Reason.BRIDGES_CROSS  # they share b2 and cross


@pytest.mark.parametrize(
    ("a", "b", "c", "d", "cross"),
    [
        ("a1", "c3", "a3", "c1", True),
        ("a1", "c1", "a2", "c2", False),
        ("a1", "b3", "b1", "c3", False),
        ("a1", "c1", "b1", "b3", True),  # T: an end on the other's line
        ("a1", "c1", "c1", "e1", True),  # shared end (the end-in-use rule catches it first)
        ("a1", "c1", "d1", "f1", False),  # collinear, apart
        ("a1", "e1", "c1", "g1", True),  # collinear, overlapping
    ],
)
def test_segments_cross(a: str, b: str, c: str, d: str, cross: bool) -> None:
    cells = [Cell.parse(x) for x in (a, b, c, d)]
    assert segments_cross(*cells) is cross
    assert segments_cross(cells[2], cells[3], cells[0], cells[1]) is cross


# ---------------------------------------------------------------- tiles: other cases


def test_tiles_on_occupied_same_or_off_board_cells(light: Colour) -> None:
    position = position_from_rows("LD")
    assert reason(position, light, "a1,c1") is Reason.OCCUPIED
    assert reason(position, light, "b1,c1") is Reason.OCCUPIED
    assert reason(position, light, "c1,c1") is Reason.SAME_CELL
    assert reason(position, light, "c1,k1") is Reason.OFF_BOARD
    assert reason(position, light, "c1,a11") is Reason.OFF_BOARD
    assert reason(position, light, "z99,c1") is Reason.OFF_BOARD


def test_twelve_by_twelve_board_has_files_to_l() -> None:
    position = Position(12)
    assert reason(position, L, "l12,k1") is None
    assert reason(position, L, "m1,a1") is Reason.OFF_BOARD


def test_supply_runs_out() -> None:
    position = Position(10)
    position.tiles_left[L.code] = 1
    assert reason(position, L, "a1,c1") is Reason.NO_TILES_LEFT
    assert not position.can_place_two(L)
    assert position.legal_tile_pairs(L) == []
    position.tiles_left[L.code] = 2
    assert position.can_place_two(L)


def test_bridge_pool_runs_out() -> None:
    position = position_from_rows("L.L")
    position.bridges_left = 0
    assert reason(position, L, "a1-c1") is Reason.NO_BRIDGES_LEFT
    assert position.legal_bridges(L) == []


def test_unlimited_supply_has_no_counts() -> None:
    position = Position(10, Supply.UNLIMITED)
    assert position.tiles_in_supply(L) is None and position.bridges_in_supply() is None
    assert Position(10).tiles_in_supply(L) == 40 and Position(10).bridges_in_supply() == 15


def test_obstructed_cells_are_unusable_and_count_for_nothing() -> None:
    position = position_from_rows(".LLL")
    position.obstruct([Cell.parse("a1")])  # a flagged light tile stands on a1
    assert reason(position, L, "a1,j10") is Reason.FLAGGED_CELL
    assert reason(position, L, "e1,j10") is None  # b1..e1 is an island: a1 doesn't count


def test_legal_bridges_lists_exactly_the_legal_ones() -> None:
    position = position_from_rows(
        """
        L.L.L
        .....
        L.L.L
        """,
        bridges="a1-c1",
    )
    listed = set(position.legal_bridges(L))
    cells = position.tiles(L)
    brute = {
        Bridge(a, b)
        for a, b in itertools.combinations(cells, 2)
        if position.bridge_verdict(L, Bridge(a, b)) is None
    }
    assert listed == brute and bridge("a3-c3") in listed and bridge("c1-e1") not in listed


def test_pairs_are_judged_together() -> None:
    pairs = set(position_from_rows("LL").legal_tile_pairs(L))
    assert tiles("c1,d1") in pairs  # a1..d1 together: an island
    assert tiles("c1,c2") in pairs
    pairs = set(position_from_rows("LLL").legal_tile_pairs(L))
    assert tiles("d1,f1") in pairs
    assert tiles("d1,e2") not in pairs  # each alone is fine; together the island touches e2
    assert tiles("d1,e1") not in pairs  # a five
    assert len(pairs) == len({(p.a, p.b) for p in pairs})
