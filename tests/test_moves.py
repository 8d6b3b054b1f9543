"""Moves and cells: one text form that round-trips; parse errors are not illegal moves."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee import Bridge, Cell, IllegalMoveError, InvalidMoveError, Pass, Swap, Tiles, parse_move
from referee.cells import BridgeShape, bridge_shape, cells_under, geometry


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("c1,c2", "c1,c2"),
        ("C2, c1", "c1,c2"),
        (" a10 , a9 ", "a9,a10"),
        ("c1-a1", "a1-c1"),
        ("A1 - B3", "a1-b3"),
        ("PASS", "pass"),
        ("Swap", "swap"),
    ],
)
def test_parse_and_print(text: str, expected: str) -> None:
    move = parse_move(text)
    assert str(move) == expected
    assert parse_move(str(move)) == move


@pytest.mark.parametrize(
    "text",
    ["", "c1", "c1,c2,c3", "a1-c1-e1", "c1;c2", "z,c1", "c0,c1", "c100,c1", "hello", "1,2"],
)
def test_not_moves_are_parse_errors(text: str) -> None:
    with pytest.raises(InvalidMoveError):
        parse_move(text)


def test_parse_errors_and_illegal_moves_are_different_value_errors() -> None:
    assert issubclass(InvalidMoveError, ValueError) and issubclass(IllegalMoveError, ValueError)
    assert not issubclass(InvalidMoveError, IllegalMoveError)


def test_three_tiles_on_a_line_say_what_a_turn_is() -> None:
    with pytest.raises(InvalidMoveError, match="two tiles, not 3"):
        parse_move("a1,b1,c1")


def test_tile_order_does_not_matter() -> None:
    assert parse_move("c2,c1") == parse_move("c1,c2")
    assert Tiles(Cell(2, 1), Cell(2, 0)) == Tiles(Cell(2, 0), Cell(2, 1))
    assert Bridge(Cell(2, 0), Cell(0, 0)) == Bridge(Cell(0, 0), Cell(2, 0))
    assert Pass() == Pass() and Swap() != Pass()


cells = st.builds(Cell, st.integers(0, 11), st.integers(0, 11))


@given(cells, cells)
def test_text_form_round_trips(a: Cell, b: Cell) -> None:
    for move in (Tiles(a, b), Bridge(a, b)):
        assert parse_move(str(move)) == move
    assert Cell.parse(a.name) == a


def test_cells_order_by_file_then_rank() -> None:
    names = ["b1", "a10", "a2", "a1"]
    assert [c.name for c in sorted(map(Cell.parse, names))] == ["a1", "a2", "a10", "b1"]


@pytest.mark.parametrize(
    ("a", "b", "shape", "under"),
    [
        ("c3", "e3", BridgeShape.STRAIGHT, ["d3"]),
        ("c3", "c1", BridgeShape.STRAIGHT, ["c2"]),
        ("c3", "e5", BridgeShape.DIAGONAL, ["d4"]),
        ("c3", "a1", BridgeShape.DIAGONAL, ["b2"]),
        ("c3", "d5", BridgeShape.KNIGHT, ["c4", "d4"]),
        ("c3", "b1", BridgeShape.KNIGHT, ["c2", "b2"]),
        ("c3", "e4", BridgeShape.KNIGHT, ["d3", "d4"]),
        ("c3", "a2", BridgeShape.KNIGHT, ["b3", "b2"]),
        ("c3", "f3", None, []),
        ("c3", "d4", None, []),
    ],
)
def test_bridge_shapes_and_cells_under(a: str, b: str, shape: BridgeShape | None,
                                       under: list[str]) -> None:
    ca, cb = Cell.parse(a), Cell.parse(b)
    assert bridge_shape(cb.file - ca.file, cb.rank - ca.rank) is shape
    assert [c.name for c in cells_under(ca, cb)] == under
    assert sorted(c.name for c in cells_under(cb, ca)) == sorted(under)


def test_geometry_neighbours() -> None:
    geo = geometry(10)
    corner = geo.index(Cell.parse("a1"))
    assert len(geo.orth[corner]) == 2 and len(geo.ring[corner]) == 3
    middle = geo.index(Cell.parse("e5"))
    assert len(geo.ring[middle]) == 8 and len(geo.spans[middle]) == 16
    with pytest.raises(ValueError):
        geometry(11)
