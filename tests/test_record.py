"""The .pdd record format: reading, writing, round trips, and clear errors."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee import Game, RecordError, Supply, parse_move, read_record, record_of, write_record
from referee.playout import random_game

EXAMPLE = """\
[Event "Club night"]
[Date "2026.11.22"]
[Light "Ann \\"the tile\\" Smith"]
[Dark "Bob"]
[Board "10"]
[Supply "physical"]
[Result "*"]

# the opening
1. E5,f6      # light, by the older player
swap
2.d4,D5
3... c3-e3    # not legal, but a well-formed move

PASS
"""


def test_read_tags_moves_comments_numbers_and_case() -> None:
    record = read_record(io.StringIO(EXAMPLE))
    assert record.tags["Light"] == 'Ann "the tile" Smith'
    assert record.tags["Board"] == "10" and record.supply is Supply.PHYSICAL
    assert [str(m) for m in record.moves] == ["e5,f6", "swap", "d4,d5", "c3-e3", "pass"]
    assert record.lines == [10, 11, 12, 13, 15]


def test_write_then_read_gives_the_same_record() -> None:
    record = read_record(io.StringIO(EXAMPLE))
    out = io.StringIO()
    write_record(record, out)
    again = read_record(io.StringIO(out.getvalue()))
    assert again.tags == record.tags and again.moves == record.moves


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([10, 12]), st.sampled_from(list(Supply)))
def test_random_games_round_trip_through_the_record(seed: int, size: int, supply: Supply) -> None:
    game = random_game(seed, size=size, supply=supply)
    out = io.StringIO()
    write_record(record_of(game, {"Event": "test", "Light": "A", "Dark": "B"}), out)
    record = read_record(io.StringIO(out.getvalue()))
    replay = Game(record.board_size, record.supply)
    for move in record.moves:
        replay.push(move)
    assert replay.moves == game.moves
    outcome = game.outcome()
    assert outcome is not None and record.tags["Result"] == outcome.result


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("[Board \"11\"]\nc1,c2\n", 1, "Board"),
        ("[Supply \"lots\"]\n", 1, "Supply"),
        ("[Event Club]\n", 1, "tag"),
        ("c1,c2\n[Event \"x\"]\n", 2, "before the moves"),
        ("c1,c2\n\nc1\n", 3, "one tile"),
        ("c1,c2\nhello world\n", 2, "not a move"),
        ("c1,c2\na1,b1,c1\n", 2, "not 3"),
        ("c1\x00\x01,c2\n", 1, "control"),
    ],
)
def test_errors_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(RecordError) as info:
        read_record(io.StringIO(text))
    assert info.value.line == line
    assert words in str(info.value)
    assert str(info.value).startswith(f"line {line}:")


def test_bad_utf8_is_a_record_error() -> None:
    handle = io.TextIOWrapper(io.BytesIO(b"c1,c2\n\xff\xfe\xfa\n"), encoding="utf-8")
    with pytest.raises(RecordError, match="UTF-8"):
        read_record(handle)


def test_flagged_moves_are_written_with_a_comment() -> None:
    game = Game()
    for text in ("a1,b1", "j10,j9", "a2,b2", "j1,j2"):
        game.push(parse_move(text))
    game.push_flagged(parse_move("c3,h5"))
    out = io.StringIO()
    write_record(record_of(game), out)
    assert "5. c3,h5" in out.getvalue() and "# flagged: the light island" in out.getvalue()
