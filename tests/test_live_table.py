"""Settling, move inference and the table: plain boards in, referee ops and events out."""

from __future__ import annotations

import pytest

from contracts.live import EventType
from ponte.live.settle import BoardView, Reading, SettleDetector, Stirring
from ponte.live.table import OpError, Table, replay


def board(tiles: dict[str, str] | None = None, bridges: list[tuple[str, str]] = ()) -> BoardView:
    return BoardView.of(tiles or {}, bridges)


def with_tiles(view: BoardView, **cells: str) -> BoardView:
    tiles = dict(view.tiles)
    for cell, colour in cells.items():
        if colour == "empty":
            tiles.pop(cell, None)
        else:
            tiles[cell] = colour
    return BoardView(tiles, view.bridges)


def kinds(events: list) -> list[str]:
    return [e[0].value for e in events]


# ----------------------------------------------------------------- settle


def test_board_commits_only_after_the_window_and_once_per_still_stretch() -> None:
    det = SettleDetector(0.4)
    b = board({"a1": "light"})
    assert det.feed(Reading(0.0, b)) is None
    assert det.feed(Reading(0.2, b)) is None
    settled = det.feed(Reading(0.41, b))
    assert settled is not None and settled.board.same_as(b) and settled.since == 0.0
    assert det.feed(Reading(2.0, b)) is None


def test_hands_over_the_board_never_commit_what_they_cover() -> None:
    det = SettleDetector(0.4)
    ghost = board({"c3": "dark"})
    for k in range(100):
        assert det.feed(Reading(k / 30, ghost, occluded=True)) is None
    flicker = [board(), board({"d4": "light"})]
    for k in range(60):
        assert det.feed(Reading(4 + k / 30, flicker[k % 2])) is None


def test_a_hand_passing_over_an_unchanged_board_starts_a_new_stretch() -> None:
    det = SettleDetector(0.3)
    b = board({"a1": "light"})
    det.feed(Reading(0.0, b))
    assert det.feed(Reading(0.5, b)) is not None
    det.feed(Reading(0.6, b, occluded=True))
    det.feed(Reading(0.7, b))
    assert det.feed(Reading(1.1, b)) is not None


def test_a_reading_held_back_by_the_camera_runs_the_clock_but_is_never_committed() -> None:
    det = SettleDetector(0.4)
    before, placed = board({"a1": "light"}), board({"a1": "light", "c3": "dark"})
    det.feed(Reading(0.0, before))
    assert det.feed(Reading(0.5, before)) is not None
    det.feed(Reading(1.0, before, occluded=True))  # the hand
    for k in range(15):  # the new tile, held back while the picture near it settles
        assert det.feed(Reading(1.1 + k / 30, placed, occluded=True,
                                occluded_cells=frozenset({"c3"}), pending=True)) is None
    settled = det.feed(Reading(1.6, placed))  # trusted: the window has run meanwhile
    assert settled is not None and settled.board.same_as(placed) and settled.since == 1.1
    # A pending reading that changes starts the stretch afresh; a hidden one resets it.
    det.feed(Reading(2.0, before, occluded=True, pending=True))
    assert det.feed(Reading(2.1, before)) is None
    det.feed(Reading(2.6, before, occluded=True))
    assert det.feed(Reading(2.7, before)) is None
    assert det.feed(Reading(3.2, before)) is not None


def test_a_change_the_picture_moved_near_is_held_back_until_it_rests() -> None:
    stir = Stirring(rest=0.5, flicker_changes=4, flicker_readings=20)
    before, placed = board({"a1": "light"}), board({"a1": "light", "c3": "dark"})
    assert stir.apply(Reading(0.0, before, moved=frozenset({"a1", "c3"}))) == Reading(
        0.0, before, moved=frozenset({"a1", "c3"}))  # nothing read before it to differ from
    stir.apply(Reading(0.1, before))
    held = stir.apply(Reading(0.2, placed, moved=frozenset({"c2", "c3"})))
    assert held.occluded and held.pending and held.occluded_cells == {"c3"}
    assert stir.apply(Reading(0.69, placed)).pending  # moved 0.49 s ago
    assert not stir.apply(Reading(0.75, placed)).occluded  # rested
    # A change where the picture did not move is not held back; a hidden reading passes.
    assert not stir.apply(Reading(0.8, before, moved=frozenset({"j9"}))).occluded
    hidden = Reading(0.9, placed, occluded=True, occluded_cells=frozenset({"c3"}),
                     moved=frozenset({"c3"}))
    assert stir.apply(hidden) is hidden


def test_a_bridge_is_held_back_when_the_picture_moved_near_any_of_its_cells() -> None:
    stir = Stirring(rest=0.5, flicker_changes=4, flicker_readings=20)
    tiles = {"a1": "light", "c1": "light"}
    stir.apply(Reading(0.0, board(tiles)))
    bridged = board(tiles, [("a1", "c1")])
    held = stir.apply(Reading(0.1, bridged, moved=frozenset({"b1"})))  # over the deck
    assert held.pending and held.occluded_cells == {"a1", "b1", "c1"}
    assert not stir.apply(Reading(0.7, bridged)).occluded


def test_a_flickering_cell_is_not_held_back_by_the_moving_picture() -> None:
    stir = Stirring(rest=0.5, flicker_changes=4, flicker_readings=20)
    steady, glare = board({"a1": "light"}), board({"a1": "light", "e5": "light"})
    held = []
    for k in range(12):  # e5 flips every frame while the picture near it moves
        reading = stir.apply(Reading(k / 30, glare if k % 2 else steady,
                                     moved=frozenset({"e5"})))
        held.append(reading.pending)
    assert held[1] and not any(held[5:])  # held at first; flickering once it flipped 4 times


def test_stirring_rejects_impossible_settings() -> None:
    with pytest.raises(ValueError):
        Stirring(rest=-1.0, flicker_changes=4, flicker_readings=20)
    with pytest.raises(ValueError):
        Stirring(rest=0.5, flicker_changes=0, flicker_readings=20)


def flicker_stream(det: SettleDetector, boards: list[tuple[float, BoardView | None]],
                   cell: str, value: str, t0: float = 0.0, fps: float = 30.0) -> list:
    """Feed boards (None: a hand over the board) from their start times on, with `cell`
    reading `value` on every other frame; return the (time, board) of each commit."""
    commits = []
    for (start, view), (end, _) in zip(boards, [*boards[1:], (boards[-1][0] + 3.0, None)],
                                       strict=True):
        for k in range(int(round((end - start) * fps))):
            t = start + k / fps
            if view is None:
                settled = det.feed(Reading(t, board({cell: value}), occluded=True))
            else:
                frame = with_tiles(view, **{cell: value}) if k % 2 else view
                settled = det.feed(Reading(t, frame))
            if settled is not None:
                commits.append((t, settled.board))
    return commits


def test_one_flickering_cell_does_not_keep_a_real_move_from_settling() -> None:
    b0 = board({"e5": "light", "f6": "light"})
    b1 = with_tiles(b0, c3="dark", c4="dark")
    det = SettleDetector(0.4, reference=b0)
    commits = flicker_stream(det, [(0.0, b0), (3.0, None), (4.0, b1)], "d4", "light")
    assert [c[1].key() for c in commits] == [b0.key(), b1.key()]  # 10 s of glare on d4
    assert 4.0 < commits[1][0] <= 4.5  # within the normal window once the hand is gone
    assert det.latest() is not None and det.latest().same_as(b1)  # type: ignore[union-attr]


def test_a_flickering_cell_is_committed_as_changed_only_once_it_has_stably_changed() -> None:
    b0 = board({"e5": "light", "f6": "light"})
    det = SettleDetector(0.4, reference=b0)
    commits = flicker_stream(det, [(0.0, b0)], "d4", "light")
    steady = with_tiles(b0, d4="light")
    for k in range(30):
        settled = det.feed(Reading(3.0 + k / 30, steady))
        if settled is not None:
            commits.append((3.0 + k / 30, settled.board))
    assert [c[1].key() for c in commits] == [b0.key(), steady.key()]
    assert commits[1][0] >= 3.4


def test_a_cell_mostly_showing_a_new_reading_settles_at_it() -> None:
    b0 = board({"e5": "light"})
    seen = with_tiles(b0, d4="dark")
    det = SettleDetector(0.4, reference=b0)
    commits = []
    for k in range(120):  # dark on d4, but one frame in ten reads it empty
        settled = det.feed(Reading(k / 30, b0 if k % 10 == 9 else seen))
        if settled is not None:
            commits.append(settled.board)
    assert [c.key() for c in commits] == [seen.key()]


def test_a_long_settle_window_gets_a_longer_flicker_window() -> None:
    assert SettleDetector(0.4).flicker_window == 2.0
    assert SettleDetector(10.0).flicker_window == 20.0


def test_without_a_reference_a_flickering_cell_holds_the_board_back() -> None:
    det = SettleDetector(0.4)
    b0 = board({"e5": "light", "f6": "light"})
    assert flicker_stream(det, [(0.0, b0)], "d4", "light") == []
    det.reset(b0)
    assert [c[1].key() for c in flicker_stream(det, [(5.0, b0)], "d4", "light")] == [b0.key()]


def test_a_hand_read_as_tiles_with_one_flickering_cell_is_not_let_through() -> None:
    b0 = board({"e5": "light", "f6": "light"})
    ghost = with_tiles(b0, **{c: "dark" for c in ("d1", "d3", "e1", "e2", "e3", "g1", "g2")})
    det = SettleDetector(0.4, reference=b0)
    assert flicker_stream(det, [(0.0, ghost)], "f5", "light") == []


def test_more_than_two_flickering_cells_hold_the_board_back() -> None:
    b0 = board({"e5": "light"})
    det = SettleDetector(0.4, reference=b0)
    commits = []
    for k in range(120):
        view = with_tiles(b0, a1="dark", b2="dark", c3="dark") if k % 2 else b0
        settled = det.feed(Reading(k / 30, view))
        if settled is not None:
            commits.append(settled.board)
    assert commits == []


def test_two_tiles_placed_one_after_the_other_in_sight_are_not_flicker() -> None:
    b0 = board({"e5": "light"})
    det = SettleDetector(0.4, reference=b0)
    commits = []
    two = with_tiles(b0, c3="dark", c4="dark")
    views = [b0] * 15 + [with_tiles(b0, c3="dark")] * 6 + [two] * 30
    for k, view in enumerate(views):
        settled = det.feed(Reading(k / 30, view))
        if settled is not None:
            commits.append(settled.board)
    assert [c.key() for c in commits] == [b0.key(), two.key()]


# ----------------------------------------------------------------- moves


def test_two_tiles_of_the_movers_colour_are_a_move() -> None:
    table = Table()
    events = table.judge(board({"e5": "light", "f6": "light"}), 1.0)
    assert kinds(events) == ["move"]
    assert events[0][1]["move"] == "e5,f6" and events[0][1]["ply"] == 1
    assert table.game.turn is not None and table.game.turn.value == "dark"


def test_one_tile_and_a_pause_is_not_a_turn_then_the_second_completes_it() -> None:
    table = Table()
    events = table.judge(board({"e5": "light"}), 1.0)
    assert kinds(events) == ["notice"] and events[0][1]["cells"] == ["e5"]
    assert table.game.moves == [] and table.game.flags == []
    assert table.judge(board({"e5": "light"}), 5.0) == []
    events = table.judge(board({"e5": "light", "g7": "light"}), 6.0)
    assert kinds(events) == ["move"]


def test_a_bridge_between_own_tiles_is_a_move() -> None:
    table = Table()
    b = board({"a1": "light", "c1": "light"})
    table.judge(b, 1)
    b = with_tiles(b, h8="dark", h9="dark")
    table.judge(b, 2)
    b = with_tiles(b, e5="light", e6="light")
    table.judge(b, 3)
    b = with_tiles(b, j1="dark", j2="dark")
    table.judge(b, 4)
    events = table.judge(BoardView(b.tiles, frozenset({("a1", "c1")})), 5)
    assert kinds(events) == ["move"] and events[0][1]["move"] == "a1-c1"
    assert table.state()["board"]["blocked"] == ["b1"]


def test_wrong_colour_is_flagged_and_clears_when_taken_away() -> None:
    table = Table()
    events = table.judge(board({"e5": "dark", "f6": "dark"}), 1.0)
    assert kinds(events) == ["illegal"]  # one flag for the pair
    assert events[0][1]["reason"] == "wrong_colour" and events[0][1]["cells"] == ["e5", "f6"]
    events = table.judge(board({"e5": "light", "f6": "light"}), 2.0)
    assert kinds(events) == ["corrected", "move"]
    assert table.game.flags == []


def test_too_many_tiles_at_once_are_flagged() -> None:
    table = Table()
    table.judge(board({"a1": "light", "a2": "light"}), 1)
    events = table.judge(board({"a1": "light", "a2": "light", "c3": "dark", "c4": "dark",
                                "c5": "dark"}), 2)
    assert [e[1]["reason"] for e in events] == ["too_many_pieces"]  # one flag for them all
    assert events[0][1]["cells"] == ["c3", "c4", "c5"]
    events = table.judge(board({"a1": "light", "a2": "light", "c3": "dark", "c4": "dark"}), 3)
    assert kinds(events) == ["corrected", "move"]


def test_illegal_placement_is_flagged_and_the_mover_corrects_it() -> None:
    table = Table()
    b = board({"a1": "light", "a2": "light"})
    table.judge(b, 1)
    b = with_tiles(b, j9="dark", j10="dark")
    table.judge(b, 2)
    b = with_tiles(b, a3="light", b3="light")
    assert kinds(table.judge(b, 3)) == ["move"]
    b = with_tiles(b, h2="dark", h3="dark")
    table.judge(b, 4)
    flagged = with_tiles(b, b4="light", e6="light")  # a1 a2 a3 b3 b4: a group of five
    events = table.judge(flagged, 5)
    assert kinds(events) == ["illegal"]
    assert events[0][1]["reason"] == "group_too_large" and events[0][1]["cells"]
    assert events[0][1]["rounds_left"] == 3
    assert table.game.turn is not None and table.game.turn.value == "dark"
    fixed = with_tiles(flagged, b4="empty", e6="empty", e8="light", f2="light")
    events = table.judge(fixed, 6)
    assert kinds(events) == ["corrected", "move"]
    assert events[0][1]["undone"] is True
    assert [str(m.move) for m in table.game.moves][-1] == "e8,f2"
    assert table.game.flags == []


def test_an_uncorrected_illegal_move_voids_the_game_after_two_rounds() -> None:
    table = Table()
    b = board({"a1": "light", "a2": "light"})
    table.judge(b, 1)
    b = with_tiles(b, j9="dark", j10="dark")
    table.judge(b, 2)
    b = with_tiles(b, a3="light", a4="light")
    table.judge(b, 3)
    b = with_tiles(b, j1="dark", j2="dark")
    table.judge(b, 4)
    b = with_tiles(b, a5="light", e5="light")  # a group of five: flagged in round 3
    events = table.judge(b, 5)
    assert kinds(events) == ["illegal"] and events[0][1]["reason"] == "group_too_large"
    t = 6
    for light, dark in [
        (("c8", "e8"), ("g5", "g3")),
        (("c6", "e10"), ("h6", "h7")),
    ]:
        assert not table.over
        b = with_tiles(b, **{dark[0]: "dark", dark[1]: "dark"})
        events = table.judge(b, t)
        assert "move" in kinds(events)
        b = with_tiles(b, **{light[0]: "light", light[1]: "light"})
        events = table.judge(b, t + 1)
        t += 2
    b = with_tiles(b, i4="dark", i5="dark")
    events = table.judge(b, t)
    assert kinds(events) == ["move", "void", "end"]
    assert table.result() == "void"


def test_a_knocked_tile_is_caught_by_the_audit_and_cleared_when_put_back() -> None:
    table = Table()
    b = board({"a1": "light", "a2": "light"})
    table.judge(b, 1)
    knocked = with_tiles(b, a2="empty", b2="light")
    events = table.judge(knocked, 2)
    assert sorted(e[1]["reason"] for e in events) == ["tile_vanished", "wrong_colour"]
    events = table.judge(b, 3)
    assert kinds(events) == ["corrected", "corrected"] and table.game.flags == []


def test_a_stray_tile_of_the_other_colour_becomes_its_first_tile_once_the_mover_moves() -> None:
    table = Table()
    b = board({"a1": "light", "a2": "light"})
    table.judge(b, 1)
    odd = with_tiles(b, j10="light")
    assert [e[1]["reason"] for e in table.judge(odd, 2)] == ["wrong_colour"]
    events = table.judge(with_tiles(odd, e5="dark", f6="dark"), 3)
    assert kinds(events) == ["corrected", "move", "notice"] and table.game.flags == []
    assert events[2][1]["cells"] == ["j10"] and table.pending == "j10"


def test_a_move_is_still_read_while_an_old_anomaly_stays_on_the_board() -> None:
    table = Table()
    b = board({"a1": "light", "a2": "light"})
    table.judge(b, 1)
    odd = with_tiles(b, j8="light", j9="light", j10="light")  # no turn explains them
    assert [e[1]["reason"] for e in table.judge(odd, 2)] == ["too_many_pieces"]
    events = table.judge(with_tiles(odd, e5="dark", e6="dark"), 3)
    assert kinds(events) == ["move"] and events[0][1]["move"] == "e5,e6"
    assert len(table.game.flags) == 1


def test_a_recorded_tile_read_as_the_other_colour_asks_to_be_put_back_and_blocks_nothing() -> None:
    table = Table()
    b = board({"a1": "light", "a2": "light"})
    table.judge(b, 1)
    misread = with_tiles(b, a2="dark")
    events = table.judge(misread, 2)
    assert [e[1]["reason"] for e in events] == ["tile_vanished"] and not events[0][1]["voids"]
    events = table.judge(with_tiles(misread, e5="dark", e6="dark"), 3)
    assert kinds(events) == ["move"]
    events = table.judge(with_tiles(b, e5="dark", e6="dark"), 4)
    assert kinds(events) == ["corrected"] and table.game.flags == []
    assert [str(m.move) for m in table.game.moves] == ["a1,a2", "e5,e6"]


def test_override_fixes_a_misread_cell() -> None:
    table = Table()
    table.judge(board({"e5": "light"}), 1)
    op = table.control_op("override", {"cell": "f6", "value": "light"})
    table.apply(op, 2)
    events = table.judge(board({"e5": "light"}), 3)
    assert kinds(events) == ["move"] and events[0][1]["move"] == "e5,f6"
    events = table.judge(board({"e5": "light", "f6": "light"}), 4)
    assert events == [] and table.overrides == {}


def test_undo_takes_back_the_overrides_on_the_undone_move_only() -> None:
    table = Table()
    for op in (table.control_op("override", {"cell": "e5", "value": "light"}),
               table.control_op("override", {"cell": "j10", "value": "empty"})):
        table.apply(op, 1)
    seen = board({"f6": "light", "j10": "dark"})  # j10: glare the camera reads as a tile
    assert kinds(table.judge(seen, 2)) == ["move"]
    ops = table.control_ops("undo", {})
    assert ops == [{"op": "pop"}, {"op": "override", "key": "cell:e5", "value": None}]
    for op in ops:
        table.apply(op, 3)
    assert table.game.moves == [] and table.overrides == {"cell:j10": "empty"}
    assert kinds(table.judge(seen, 4)) == ["notice"]  # f6 alone: one tile, no move
    assert replay(table.ops).overrides == table.overrides


def test_an_override_is_dropped_by_its_key() -> None:
    table = Table()
    table.apply(table.control_op("override", {"bridge": ["a1", "c1"], "present": True}), 1)
    assert table.control_ops("drop_override", {"key": "bridge:a1-c1"}) == [
        {"op": "override", "key": "bridge:a1-c1", "value": None}]
    with pytest.raises(OpError, match="there is no override on d4 to drop"):
        table.control_op("drop_override", {"key": "cell:d4"})


def test_a_game_ended_from_the_controls_offers_no_move_and_no_undo() -> None:
    table = Table()
    table.judge(board({"a1": "light", "a2": "light"}), 1)
    table.apply(table.control_op("end_game", {}), 2)
    state = table.state()
    assert state["over"] and state["undo_allowed"] is False
    assert state["placeable"] == [] and not state["swap_allowed"] and not state["pass_allowed"]


def test_replaying_the_ops_rebuilds_the_same_game() -> None:
    table = Table()
    b = board({"a1": "light", "a2": "light"})
    table.judge(b, 1)
    table.apply(table.control_op("swap", {}), 2)
    table.judge(with_tiles(b, a3="dark", j2="dark"), 3)
    table.judge(with_tiles(b, a3="dark", j2="dark", j3="light", j5="dark"), 4)
    assert table.pending == "j3" and len(table.game.flags) == 1
    again = replay(table.ops)
    mine, theirs = table.state(), again.state()
    assert mine.pop("pending") == "j3" and theirs.pop("pending") is None  # seen again
    assert mine == theirs
    assert again.open_anomalies().keys() == table.open_anomalies().keys()


def test_controls_refuse_what_the_rules_forbid() -> None:
    table = Table()
    with pytest.raises(OpError, match="swap"):
        table.control_op("swap", {})
    with pytest.raises(OpError, match="no move"):
        table.control_op("undo", {})
    with pytest.raises(OpError, match="not on the 10 x 10"):
        table.control_op("override", {"cell": "k1", "value": "light"})
    with pytest.raises(OpError, match="unknown"):
        table.control_op("dance", {})
    table.judge(board({"e5": "light", "f6": "light"}), 1)
    with pytest.raises(OpError, match="may not pass"):
        table.control_op("pass", {})
    assert EventType.END.value == "end"


def _light_a1_c1_then_dark_h8_h9() -> tuple[Table, dict[str, str]]:
    """A table after two turns: light on a1 and c1 (a bridge apart), dark on h8 and h9."""
    table = Table()
    tiles = {"a1": "light", "c1": "light"}
    table.judge(board(tiles), 1)
    tiles.update(h8="dark", h9="dark")
    table.judge(board(tiles), 2)
    return table, tiles


def test_override_of_a_bridge_the_camera_missed() -> None:
    table, tiles = _light_a1_c1_then_dark_h8_h9()
    op = table.control_op("override", {"bridge": ["c1", "a1"], "present": True})
    assert op["key"] == "bridge:a1-c1"
    table.apply(op, 3)
    events = table.judge(board(tiles), 4)
    assert kinds(events) == ["move"] and events[0][1]["move"] == "a1-c1"
    with pytest.raises(OpError, match="shape"):
        table.control_op("override", {"bridge": ["a1", "a2"]})


def test_pass_is_allowed_only_when_two_tiles_cannot_be_placed() -> None:
    from referee.playout import heuristic_game

    moves = [str(m.move) for m in heuristic_game(2).moves]
    first_pass = moves.index("pass")
    table = Table()
    for text in moves[:first_pass]:
        table.apply({"op": "push", "move": text}, 0)
    assert table.state()["pass_allowed"] is True
    events = table.apply(table.control_op("pass", {}), 1)
    assert events[0][1]["move"] == "pass"


def test_a_tile_under_a_bridge_is_flagged() -> None:
    table, tiles = _light_a1_c1_then_dark_h8_h9()
    table.judge(board(tiles, [("a1", "c1")]), 3)  # light bridges a1-c1 over b1
    tiles.update(b1="dark", j1="dark")
    events = table.judge(board(tiles, [("a1", "c1")]), 4)
    assert kinds(events) == ["illegal"] and events[0][1]["reason"] == "blocked"
    assert "b1" in events[0][1]["cells"]


def test_ending_from_the_controls_scores_the_game_by_the_tie_breaks() -> None:
    table = Table()
    tiles = {"a1": "light", "a2": "light"}
    table.judge(board(tiles), 1)
    tiles.update(j1="dark", j2="dark")
    table.judge(board(tiles), 2)
    tiles.update(a3="light", a4="light")
    table.judge(board(tiles), 3)
    tiles.update(j3="dark", j4="dark")
    table.judge(board(tiles), 4)
    tiles.update(c1="light", c2="light")
    table.judge(board(tiles), 5)  # one island each: light is ahead on nothing yet
    assert table.result() == "*" and table.termination() is None
    events = table.apply(table.control_op("end_game", {}), 6)
    assert kinds(events) == ["end"]
    end = events[0][1]
    assert end["result"] == "draw" and end["winner"] is None and end["termination"] == "ended"
    assert end["score"]["light"]["points"] == end["score"]["dark"]["points"] == 1
    assert table.result() == "draw" and replay(table.ops).result() == "draw"


def test_ending_from_the_controls_with_a_flag_up_voids_the_game() -> None:
    table = Table()
    table.judge(board({"a1": "light", "a2": "light"}), 1)
    table.judge(board({"a1": "light", "a2": "light", "e5": "light"}), 2)  # wrong colour
    assert table.game.flags
    events = table.apply(table.control_op("end_game", {}), 3)
    assert kinds(events) == ["void", "end"]
    assert events[1][1]["result"] == "void" and events[1][1]["winner"] is None
    assert table.result() == "void" and table.state()["outcome"]["termination"] == "void"


# ----------------------------------------------------------------- passing from the board


def table_before_first_pass(seed: int) -> tuple[Table, list[str]]:
    """A table at the position where a heuristic game's first pass comes, and the moves
    from that pass on."""
    from referee.playout import heuristic_game

    moves = [str(m.move) for m in heuristic_game(seed).moves]
    first = moves.index("pass")
    table = Table()
    for text in moves[:first]:
        table.apply({"op": "push", "move": text}, 0)
    return table, moves[first:]


def with_move(view: BoardView, move: str) -> BoardView:
    if "," in move:
        a, b = move.split(",")
        colour = "dark"
        return BoardView({**view.tiles, a: colour, b: colour}, view.bridges)
    a, b = move.split("-")
    return BoardView.of(view.tiles, [*view.bridges, (a, b)])


def test_light_who_cannot_place_two_passes_when_dark_moves_and_the_game_ends() -> None:
    from ponte.live.infer import expected_board

    table, rest = table_before_first_pass(8)
    assert rest[:2] == ["pass", "i10,j10"] and table.game.turn is not None
    assert table.game.turn.value == "light" and table.game.pass_allowed()
    events = table.judge(with_move(expected_board(table.game), "i10,j10"), 50)
    moves = [d["move"] for k, d in events if k is EventType.MOVE]
    assert moves == ["pass", "i10,j10"]
    assert [d["colour"] for k, d in events if k is EventType.MOVE] == ["light", "dark"]
    assert kinds(events)[-1] == "end" and not table.game.flags
    end = events[-1][1]
    assert end["termination"] == "passed" and end["result"] == table.result() != "*"
    assert replay(table.ops).result() == table.result()


def test_a_bridge_of_the_other_colour_after_light_cannot_move_is_a_pass_and_the_bridge() -> None:
    from ponte.live.infer import expected_board

    table, rest = table_before_first_pass(3)
    assert rest[:2] == ["pass", "f4-h4"]
    events = table.judge(with_move(expected_board(table.game), "f4-h4"), 50)
    assert [d["move"] for k, d in events if k is EventType.MOVE] == ["pass", "f4-h4"]
    assert table.game.is_over() and kinds(events)[-1] == "end"


def test_one_tile_of_the_other_colour_waits_for_the_second_before_the_pass() -> None:
    from ponte.live.infer import expected_board

    table, _ = table_before_first_pass(8)
    before = expected_board(table.game)
    events = table.judge(BoardView({**before.tiles, "i10": "dark"}, before.bridges), 50)
    assert kinds(events) == ["notice"] and "one dark tile on i10" in events[0][1]["message"]
    assert str(table.game.moves[-1].move) != "pass"
    events = table.judge(with_move(before, "i10,j10"), 51)
    assert [d["move"] for k, d in events if k is EventType.MOVE] == ["pass", "i10,j10"]


def test_dark_tiles_while_light_can_still_place_two_stay_wrong_colour() -> None:
    table = Table()
    table.judge(board({"a1": "light", "a2": "light"}), 1)
    table.judge(board({"a1": "light", "a2": "light", "j1": "dark", "j2": "dark"}), 2)
    events = table.judge(board({"a1": "light", "a2": "light", "j1": "dark", "j2": "dark",
                                "e5": "dark", "e7": "dark"}), 3)
    assert kinds(events) == ["illegal"] and events[0][1]["reason"] == "wrong_colour"
    assert events[0][1]["cells"] == ["e5", "e7"]
    assert len(table.game.moves) == 2


def test_light_tiles_while_dark_cannot_place_two_are_flagged_with_the_way_out() -> None:
    from ponte.live.infer import expected_board

    table, rest = table_before_first_pass(2)
    assert rest == ["pass"] and table.game.turn is not None
    assert table.game.turn.value == "dark" and table.game.pass_allowed()
    before = expected_board(table.game)
    free = [f"{f}{r}" for f in "abcdefghij" for r in range(1, 11) if f"{f}{r}" not in before.tiles]
    light = BoardView({**before.tiles, free[0]: "light", free[1]: "light"}, before.bridges)
    events = table.judge(light, 50)
    assert kinds(events) == ["illegal"]
    assert all(d["reason"] == "wrong_colour" and "pass from the controls" in d["message"]
               for _, d in events)
    assert str(table.game.moves[-1].move) != "pass"
    table.judge(before, 51)  # taken back; dark passes from the controls: the game ends
    events = table.apply(table.control_op("pass", {}), 52)
    assert kinds(events)[-1] == "end" and events[-1][1]["termination"] == "passed"
    events = table.judge(light, 53)  # pieces put down after the end are no move
    assert kinds(events) == ["notice"] and events[0][1]["kind"] == "after_end"
    assert set(events[0][1]["cells"]) == set(free[:2])
    assert table.judge(before, 54) == [] and str(table.game.moves[-1].move) == "pass"
