"""The .pdd record format: reading, writing, round trips, and clear errors."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee import (
    Game,
    RecordError,
    Supply,
    Termination,
    parse_move,
    read_record,
    read_records,
    record_of,
    write_record,
    write_records,
)
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
    text = out.getvalue()
    assert "5. c3,h5" in text and "# [%flagged] flagged: the light island" in text


def test_a_byte_order_mark_is_not_part_of_the_first_line() -> None:
    record = read_record(io.StringIO("\ufeff1. e5,f6\nswap\n"))
    assert [str(m) for m in record.moves] == ["e5,f6", "swap"]
    record = read_record(io.StringIO('\ufeff[Event "x"]\n1. e5,f6\n'))
    assert record.tags == {"Event": "x"}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[Result "banana"]\nc1,c2\n', "Result must be one of"),
        ('[Termination "tired"]\nc1,c2\n', "Termination must be one of"),
        ("c1,c2  # [%t soon]\n", "a time is a number"),
        ("# [%corrected c1]\nc1,c2\n", "one tile alone"),
        ("c1,c2  # [%corrected d1,d2]\n", "line of their own"),
        ("c1,c2  # [%flagged yes]\n", "takes no value"),
        ("# [%cleared 1]\nc1,c2\n", "no move 1 yet"),
    ],
)
def test_closed_tag_values_and_annotations_are_checked(text: str, words: str) -> None:
    with pytest.raises(RecordError, match=words) as info:
        read_record(io.StringIO(text))
    assert info.value.line == 1


TIMED = """\
[Board "10"]
[Supply "physical"]
[Result "*"]

1. a1,b1       # [%t 3.5]
2. j9,j10      # [%t 9.0] slow
# [%corrected c3,h5] [%t 20.2] the light island at a1 b1 a2 b2 would touch c3
3. a2,b2       # [%t 24.0]
# [%corrected e5,e6]
"""


def test_times_and_corrections_are_read_and_written_back_alike() -> None:
    record = read_record(io.StringIO(TIMED))
    assert record.times == {0: 3.5, 1: 9.0, 2: 24.0}
    assert record.comments == {1: "slow"}
    first, last = record.corrections
    assert first.before == 2 and str(first.move) == "c3,h5" and first.t == 20.2
    assert first.note.startswith("the light island")
    assert last.before == 3 and last.t is None and last.note == ""
    out = io.StringIO()
    write_record(record, out)
    assert out.getvalue() == TIMED
    again = read_record(io.StringIO(out.getvalue()))
    assert again.times == record.times and again.corrections == record.corrections


def test_several_records_in_one_handle() -> None:
    game = random_game(3)
    records = [record_of(game, {"Event": "one"}), read_record(io.StringIO(TIMED))]
    out = io.StringIO()
    write_records(records, out)
    back = read_records(io.StringIO(out.getvalue()))
    assert [r.tags.get("Event") for r in back] == ["one", None]
    assert back[0].moves == records[0].moves and back[1].corrections == records[1].corrections
    with pytest.raises(RecordError, match="second game") as info:
        read_record(io.StringIO(out.getvalue()))
    assert info.value.line == out.getvalue().splitlines().index('[Board "10"]', 2) + 1


def test_a_game_ended_at_the_table_says_so_in_its_record() -> None:
    game = Game()
    for text in ("a1,b1", "j10,j9", "a2,b2"):
        game.push(parse_move(text))
    game.end()
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.ENDED
    assert outcome.result == "light"  # an island against none, as it stands
    record = record_of(game)
    assert record.tags["Termination"] == "ended" and record.tags["Result"] == "light"
    game.pop()
    assert not game.is_over()


def test_flagged_moves_and_flags_cleared_later_round_trip() -> None:
    game = Game()
    for text in ("a1,b1", "j10,j9", "a2,b2", "j1,j2"):
        game.push(parse_move(text))
    flag = game.push_flagged(parse_move("c3,h5"))
    game.push(parse_move("f1,g1"))
    game.clear_flag(flag.id)
    game.push(parse_move("c8,c9"))
    record = record_of(game)
    assert record.flagged == {4} and record.cleared == [(6, 4)]
    out = io.StringIO()
    write_record(record, out)
    assert "# [%cleared 5] taken back\n7. c8,c9" in out.getvalue()
    again = read_record(io.StringIO(out.getvalue()))
    assert again.flagged == {4} and again.cleared == [(6, 4)] and again.moves == record.moves
