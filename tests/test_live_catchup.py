"""Catch-up and no cascades: turns the camera did not see one by one, read on plain boards.

Each test is a table fed settled boards as the camera would give them when it misses
something (quick players, an arm over the board, a piece read late or not at all), with
the record checked move for move and every flag counted.
"""

from __future__ import annotations

import statistics
import time

from contracts.live import EventType
from ponte.live.catchup import MAX_TURNS, best, explanations
from ponte.live.infer import expected_board
from ponte.live.settle import BoardView
from ponte.live.table import Table
from referee import Game, parse_move
from referee.playout import heuristic_game


def board(tiles: dict[str, str] | None = None, bridges: list[tuple[str, str]] = ()) -> BoardView:
    return BoardView.of(tiles or {}, bridges)


def plus(view: BoardView, *moves: str, colour: str | None = None) -> BoardView:
    """The board with more pieces: "e5,f6" two tiles (of `colour`), "a1-c1" a bridge."""
    tiles, bridges = dict(view.tiles), set(view.bridges)
    for move in moves:
        if "," in move:
            assert colour is not None
            for cell in move.split(","):
                tiles[cell] = colour
        else:
            a, b = move.split("-")
            bridges.add((a, b) if (a[0], int(a[1:])) <= (b[0], int(b[1:])) else (b, a))
    return BoardView(tiles, frozenset(bridges))


def kinds(events: list) -> list[str]:
    return [e[0].value for e in events]


def record(table: Table) -> list[str]:
    return [str(m.move) for m in table.game.moves]


def opened(moves: list[str]) -> tuple[Table, BoardView]:
    """A table that has seen `moves` one by one, and the board they leave."""
    table = Table()
    for text in moves:
        table.apply({"op": "push", "move": text}, 0)
    return table, expected_board(table.game)


OPENING = ["a1,a2", "j9,j10", "a4,b4", "h2,h3"]
"""Light a1 a2 a4 b4, dark j9 j10 h2 h3; light to move."""


def test_two_tile_turns_seen_at_once_are_recorded_in_turn_order() -> None:
    table, now = opened(OPENING)
    both = plus(plus(now, "e5,f6", colour="light"), "c7,c8", colour="dark")
    events = table.judge(both, 1)
    assert kinds(events) == ["move", "move"]
    assert record(table) == OPENING + ["e5,f6", "c7,c8"]
    assert table.game.turn is not None and table.game.turn.value == "light"


def test_a_bridge_and_the_next_players_tiles_are_read_as_two_turns() -> None:
    table, now = opened(OPENING)
    later = plus(plus(now, "a2-b4"), "c7,c8", colour="dark")  # the bridge was never seen
    events = table.judge(later, 1)
    assert kinds(events) == ["move", "move"] and not table.game.flags
    assert record(table) == OPENING + ["a2-b4", "c7,c8"]


def test_a_turn_and_the_next_players_first_tile_wait_for_its_second() -> None:
    table, now = opened(OPENING)
    seen = plus(now, "e5,f6", colour="light")
    seen = BoardView({**seen.tiles, "c7": "dark"}, seen.bridges)
    events = table.judge(seen, 1)
    assert kinds(events) == ["move", "notice"] and events[1][1]["cells"] == ["c7"]
    assert table.pending == "c7"
    events = table.judge(plus(seen, "c7,c8", colour="dark"), 2)
    assert kinds(events) == ["move"] and record(table)[-2:] == ["e5,f6", "c7,c8"]


def test_three_turns_that_several_explanations_fit_raise_one_notice_and_record_none() -> None:
    table, now = opened(OPENING)
    three = plus(plus(now, "e5,f6", "g8,i6", colour="light"), "c7,c8", colour="dark")
    events = table.judge(three, 1)
    assert kinds(events) == ["notice"] and events[0][1]["kind"] == "catch_up"
    assert events[0][1]["message"].startswith("three turns seen at once: confirm")
    assert record(table) == OPENING and not table.game.flags
    state = table.state()
    assert state["unsure"]["cells"] == ["c7", "c8", "e5", "f6", "g8", "i6"]
    assert table.judge(three, 2) == []  # the same board again: the notice is up already
    proposal = state["unsure"]["proposal"]
    events = table.judge(three, 3, confirm=True)  # the players confirm the proposal
    assert kinds(events) == ["move"] * 3 and record(table) == OPENING + proposal
    assert table.state()["unsure"] is None


def test_the_order_pieces_were_first_seen_in_decides_between_explanations() -> None:
    table, now = opened(OPENING)
    # Light's bridge a2-b4 is not seen; dark's tiles are, on light's turn: one flag.
    dark = plus(now, "c7,c8", colour="dark")
    events = table.judge(dark, 1)
    assert kinds(events) == ["illegal"] and events[0][1]["reason"] == "wrong_colour"
    # Light moves again and the bridge is read at last: bridge, dark's tiles, light's.
    events = table.judge(plus(dark, "a2-b4", "e5,f6", colour="light"), 2)
    assert kinds(events) == ["corrected", "move", "move", "move"]
    assert record(table) == OPENING + ["a2-b4", "c7,c8", "e5,f6"]
    assert table.game.flags == [] and table.game.turn is not None
    assert table.game.turn.value == "dark"


def test_a_tile_read_one_turn_late() -> None:
    table, now = opened(OPENING)
    events = table.judge(BoardView({**now.tiles, "e5": "light"}), 1)  # f6 is not read
    assert kinds(events) == ["notice"]
    late = plus(BoardView({**now.tiles, "e5": "light"}), "c7,c8", colour="dark")
    events = table.judge(late, 2)  # dark moved; f6 still unread: one flag
    assert kinds(events) == ["illegal"]
    events = table.judge(BoardView({**late.tiles, "f6": "light"}), 3)
    assert kinds(events) == ["corrected", "move", "move"]
    assert record(table) == OPENING + ["e5,f6", "c7,c8"] and table.game.flags == []


def test_an_illegal_turn_inside_a_caught_up_sequence_is_flagged_at_once() -> None:
    table, now = opened(OPENING)
    # a1 a2 a3 a4 b4: light's group of five; then dark's legal tiles.
    both = plus(plus(now, "a3,e6", colour="light"), "c7,c8", colour="dark")
    events = table.judge(both, 1)
    assert kinds(events) == ["illegal", "move"]
    illegal = events[0][1]
    assert illegal["reason"] == "group_too_large" and "a3" in illegal["cells"]
    assert illegal["move"] == "a3,e6" and illegal["rounds_left"] == 3
    assert record(table) == OPENING + ["a3,e6", "c7,c8"]
    alone, _ = opened(OPENING)  # the same flag as when the turn is seen alone
    seen_alone = alone.judge(plus(now, "a3,e6", colour="light"), 1)
    assert seen_alone[0][1]["deadline_turn"] == illegal["deadline_turn"]


def test_lights_forced_pass_between_two_dark_turns() -> None:
    moves = [str(m.move) for m in heuristic_game(8).moves]
    first = moves.index("pass")
    table, now = opened(moves[: first - 1])  # dark to move, light passes after it
    dark_a, dark_b = moves[first - 1], moves[first + 1]
    seen = plus(plus(now, dark_a, colour="dark"), dark_b, colour="dark")
    found = best(explanations(table.game, {c: v for c, v in seen.tiles.items()
                                           if c not in now.tiles}, frozenset(), seen.tiles))
    assert found and all("pass" in [str(m) for m in e.moves] for e in found)
    assert len(found) == 6  # which two of dark's four tiles came first: the board cannot tell
    events = table.judge(seen, 1)
    assert kinds(events) == ["notice"] and not table.game.flags
    assert table.state()["unsure"]["proposal"][1] == "pass"
    events = table.judge(seen, 2, confirm=True)
    assert record(table)[first - 1:] == [str(m) for m in found[0].moves]
    assert kinds(events)[-1] == "end" and table.over and table.result() != "void"


def test_a_spurious_tile_costs_one_flag_that_goes_down_by_itself() -> None:
    table, now = opened(OPENING)
    glare = BoardView({**now.tiles, "h8": "dark"}, now.bridges)  # on light's turn
    events = table.judge(glare, 1)
    assert kinds(events) == ["illegal"]
    events = table.judge(now, 2)
    assert kinds(events) == ["corrected"] and table.game.flags == []
    assert record(table) == OPENING


def test_a_spurious_tile_beside_a_move_does_not_hold_the_move() -> None:
    table, now = opened(OPENING)
    moved = plus(now, "e5,f6", colour="light")
    events = table.judge(BoardView({**moved.tiles, "h8": "dark"}, moved.bridges), 1)
    assert kinds(events) == ["move", "notice"]  # h8: dark's first tile, perhaps
    events = table.judge(moved, 2)
    assert events == [] and table.pending is None and record(table) == OPENING + ["e5,f6"]


def test_a_recorded_bridge_no_longer_seen_asks_to_be_put_back_and_never_voids() -> None:
    table, now = opened(OPENING + ["a2-b4", "c7,c8"])
    gone = BoardView(now.tiles, frozenset())
    events = table.judge(gone, 1)
    assert kinds(events) == ["illegal"] and events[0][1]["reason"] == "bridge_vanished"
    assert "put it back" in events[0][1]["message"] and events[0][1]["voids"] is False
    view = gone
    for k, (light, dark) in enumerate([("e5,f6", "c1,c2"), ("e8,e9", "g5,g6"),
                                       ("i2,i4", "f9,g10")]):
        view = plus(view, light, colour="light")
        assert "move" in kinds(table.judge(view, 2 + 2 * k))
        view = plus(view, dark, colour="dark")
        assert "move" in kinds(table.judge(view, 3 + 2 * k))
    assert not table.over and table.result() == "*"  # three rounds on: not void
    events = table.judge(plus(view, "a2-b4"), 10)  # put back
    assert kinds(events) == ["corrected"] and table.game.flags == []


def test_the_two_round_window_still_voids_pieces_placed_against_the_rules() -> None:
    table, now = opened(OPENING)
    view = plus(now, "a3,e6", colour="light")  # a group of five, left on the board
    assert kinds(table.judge(view, 1)) == ["illegal"]
    for k, (dark, light) in enumerate([("c7,c8", "e9,f3"), ("h6,h7", "i9,c5")]):
        view = plus(plus(view, dark, colour="dark"), light, colour="light")
        table.judge(view, 2 + k)  # two turns at once each time
    view = plus(view, "f9,g10", colour="dark")
    events = table.judge(view, 9)
    assert kinds(events)[-2:] == ["void", "end"] and table.result() == "void"


def test_catch_up_is_fast() -> None:
    """Three turns on a board from the middle of a game: well under the 300 ms budget."""
    played = [str(m.move) for m in heuristic_game(3).moves][:30]
    assert "pass" not in played
    game, whole = _replay(played[:-3]), _replay(played)
    before, after = expected_board(game), expected_board(whole)
    tiles = {c: v for c, v in after.tiles.items() if c not in before.tiles}
    bridges = frozenset(after.bridges - before.bridges)
    times = []
    for _ in range(5):
        start = time.perf_counter()
        found = explanations(game, tiles, bridges, after.tiles, max_turns=MAX_TURNS)
        times.append(time.perf_counter() - start)
    assert any([str(m) for m in e.moves] == played[-3:] for e in found)
    assert statistics.median(times) < 0.05, times


def _replay(moves: list[str]) -> Game:
    game = Game()
    for text in moves:
        game.push(parse_move(text))
    return game


def test_only_moves_the_record_has_reach_the_events() -> None:
    table, now = opened(OPENING)
    both = plus(plus(now, "e5,f6", colour="light"), "c7,c8", colour="dark")
    events = table.judge(both, 1)
    assert [d["move"] for k, d in events if k is EventType.MOVE] == ["e5,f6", "c7,c8"]
    assert [d["ply"] for k, d in events if k is EventType.MOVE] == [5, 6]
