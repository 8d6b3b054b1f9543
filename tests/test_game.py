"""The game: turn order, the pie rule, passing, the end, the outcome, the two-round window."""

from __future__ import annotations

import pytest

from referee import (
    Colour,
    Game,
    IllegalMoveError,
    Pass,
    Reason,
    Supply,
    Swap,
    Termination,
    Tiles,
    parse_move,
    round_of,
)
from referee.cells import Cell
from referee.verdicts import Illegal


def play(game: Game, *moves: str) -> None:
    for text in moves:
        game.push(parse_move(text))


def reason(game: Game, text: str) -> Reason | None:
    verdict = game.verdict(parse_move(text))
    return None if verdict is None else verdict.reason


def test_first_move_is_two_light_tiles_then_dark() -> None:
    game = Game()
    assert game.turn is Colour.LIGHT
    assert reason(game, "pass") is Reason.FIRST_MOVE_NOT_TILES
    assert reason(game, "swap") is Reason.SWAP_NOT_ALLOWED
    play(game, "e5,f6")
    assert game.position.tile_at(Cell.parse("e5")) is Colour.LIGHT
    assert game.turn is Colour.DARK


@pytest.mark.parametrize("swap", [True, False])
def test_pie_rule_either_way_dark_moves_next(swap: bool) -> None:
    game = Game()
    play(game, "e5,f6")
    assert game.swap_allowed()
    if swap:
        play(game, "swap")
        assert game.swapped
    assert game.turn is Colour.DARK
    play(game, "a1,c1")
    assert game.position.tile_at(Cell.parse("a1")) is Colour.DARK
    assert game.turn is Colour.LIGHT
    assert reason(game, "swap") is Reason.SWAP_NOT_ALLOWED


def test_swap_only_right_after_the_first_move() -> None:
    game = Game()
    play(game, "e5,f6", "swap")
    assert reason(game, "swap") is Reason.SWAP_NOT_ALLOWED
    assert [m.turn for m in game.moves] == [1, None]


def test_pass_only_when_two_tiles_cannot_be_placed() -> None:
    game = Game(supply=Supply.PHYSICAL)
    play(game, "e5,f6")
    assert reason(game, "pass") is Reason.PASS_NOT_ALLOWED
    with pytest.raises(IllegalMoveError) as info:
        game.push(Pass())
    assert info.value.verdict.reason is Reason.PASS_NOT_ALLOWED
    assert "may not pass" in str(info.value)


def _game_where_light_cannot_place() -> Game:
    game = Game()
    play(game, "e5,f6", "a1,c1")
    game.position.tiles_left[Colour.LIGHT.code] = 1  # supply nearly spent
    return game


def test_light_passes_then_dark_has_exactly_one_more_turn() -> None:
    game = _game_where_light_cannot_place()
    assert game.pass_allowed()
    assert reason(game, "a3,a4") is Reason.NO_TILES_LEFT
    play(game, "pass")
    assert not game.is_over() and game.turn is Colour.DARK
    play(game, "h8,h9")
    assert game.is_over()
    assert reason(game, "a9,a10") is Reason.GAME_OVER
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.PASSED


def test_a_player_who_cannot_place_may_still_build_bridges() -> None:
    game = Game()
    play(game, "e5,g5", "a1,a2")
    game.position.tiles_left[Colour.LIGHT.code] = 0
    assert game.pass_allowed()
    assert reason(game, "e5-g5") is None
    play(game, "e5-g5")
    assert not game.is_over()


def test_dark_passing_ends_the_game_at_once() -> None:
    game = Game()
    play(game, "e5,f6", "a1,c1", "h8,h10")
    game.position.tiles_left[Colour.DARK.code] = 0
    play(game, "pass")
    assert game.is_over() and game.turn is None
    outcome = game.outcome()
    assert outcome is not None
    assert outcome.winner is None and outcome.result == "draw"  # 0:0, no islands, no bridges


def test_winner_by_points() -> None:
    game = Game()
    play(game, "a1,b1", "j10,j9", "a2,b2")  # a light island
    game.position.tiles_left[Colour.DARK.code] = 0
    play(game, "pass")
    outcome = game.outcome()
    assert outcome is not None and outcome.winner is Colour.LIGHT and outcome.result == "light"


def test_pop_restores_the_game() -> None:
    game = Game()
    play(game, "e5,f6", "swap", "a1,c1", "e7,f8")
    before = bytes(game.position.cells)
    play(game, "a3,a4")
    game.pop()
    assert bytes(game.position.cells) == before
    assert game.turn is Colour.DARK
    game.pop()
    game.pop()
    assert game.moves[-1].move == Swap()
    game.pop()
    game.pop()
    assert game.moves == [] and game.turn is Colour.LIGHT
    with pytest.raises(IndexError):
        game.pop()


@pytest.mark.parametrize(("turn", "rnd"), [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3)])
def test_rounds_are_a_light_and_a_dark_turn(turn: int, rnd: int) -> None:
    assert round_of(turn) == rnd


def _flagged_game() -> Game:
    """Light's third-turn tiles break the distance rule and stay on the board."""
    game = Game()
    play(game, "a1,b1", "j10,j9", "a2,b2", "j1,j2")  # light island a1,b1,a2,b2
    return game


def test_illegal_tiles_are_flagged_at_once_with_reason_and_cells() -> None:
    game = _flagged_game()
    flag = game.push_flagged(parse_move("c3,h5"))  # c3 touches the island diagonally
    assert flag.verdict.reason is Reason.ISLAND_TOO_CLOSE
    assert "c3" in flag.verdict.cells
    assert flag.raised_in_turn == 5 and flag.deadline == 2 * (round_of(5) + 2)
    assert game.turn is Colour.DARK  # play goes on
    assert game.position.tile_at(Cell.parse("c3")) is None  # judged as taken away
    assert game.position.tile_at(Cell.parse("h5")) is None
    assert reason(game, "c3,e3") is Reason.FLAGGED_CELL
    assert flag.rounds_left(game.turns_completed) == 3


def test_correcting_the_last_move_lets_the_mover_play_again() -> None:
    game = _flagged_game()
    flag = game.push_flagged(parse_move("c3,h5"))
    game.clear_flag(flag.id)
    assert game.flags == [] and game.turn is Colour.LIGHT
    assert len(game.moves) == 4
    play(game, "d4,h5")
    assert game.turn is Colour.DARK


def test_uncorrected_flag_voids_the_game_when_round_k_plus_2_ends() -> None:
    game = _flagged_game()
    game.push_flagged(parse_move("c3,h5"))  # turn 5, round 3 -> void when turn 10 ends
    play(game, "e9,e10", "g9,g10", "c9,c10", "a9,a10")
    assert game.turns_completed == 9 and not game.is_over()
    play(game, "c6,c7")
    assert game.is_over()
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.VOID
    assert outcome.result == "void" and outcome.winner is None


def test_flag_taken_back_late_keeps_the_game_and_the_turn_stays_spent() -> None:
    game = _flagged_game()
    flag = game.push_flagged(parse_move("c3,h5"))
    play(game, "e9,e10")
    game.clear_flag(flag.id)
    assert game.flags == [] and game.turn is Colour.LIGHT
    assert game.moves[4].withdrawn
    play(game, "g9,g10", "c9,c10", "a9,a10", "c6,c7", "f1,f2")
    assert not game.is_over()


def test_a_change_outside_a_turn_is_flagged_the_same_way() -> None:
    game = _flagged_game()
    verdict = Illegal(Reason.TILE_APPEARED, ("e5",), "a light tile appeared on e5")
    flag = game.raise_flag(verdict, [Cell.parse("e5")])
    assert reason(game, "e5,h7") is Reason.FLAGGED_CELL
    game.clear_flag(flag.id)
    assert reason(game, "e5,h7") is None
    assert len(game.moves) == 4


def test_game_ending_with_a_flag_up_is_void() -> None:
    game = _flagged_game()
    game.push_flagged(parse_move("c3,h5"))
    game.position.tiles_left[Colour.DARK.code] = 0
    play(game, "pass")
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.VOID


@pytest.mark.parametrize("lost", [Reason.TILE_VANISHED, Reason.BRIDGE_VANISHED])
def test_a_recorded_piece_no_longer_seen_never_voids_the_game(lost: Reason) -> None:
    game = Game()
    play(game, "a1,a2", "j9,j10")
    flag = game.raise_flag(Illegal(lost, ("a2",), "the light tile on a2 is missing"))
    assert not flag.voids and flag.to_dict(game.turns_completed)["voids"] is False
    play(game, "c3,c4", "h2,h3", "e5,e6", "f8,g8", "i4,i5", "b9,c9")  # three rounds on
    assert not game.is_over()
    game.position.tiles_left[Colour.DARK.code] = 0
    play(game, "e9,e10", "pass")  # dark passes with the flag still up: scored, not void
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.PASSED


def test_a_copy_of_a_game_goes_its_own_way() -> None:
    game = _flagged_game()
    fork = game.copy()
    play(fork, "e8,f2")
    fork.raise_flag(Illegal(Reason.TILE_APPEARED, ("g4",), "a tile on g4"), [Cell.parse("g4")])
    assert len(fork.moves) == len(game.moves) + 1 and len(fork.flags) == len(game.flags) + 1
    assert reason(game, "g4,g6") is None and reason(fork, "g4,g6") is Reason.FLAGGED_CELL
    fork.pop()
    assert [str(m.move) for m in fork.moves] == [str(m.move) for m in game.moves]


def test_flagged_moves_that_cannot_stand_are_refused() -> None:
    game = _flagged_game()
    with pytest.raises(IllegalMoveError):
        game.push_flagged(parse_move("a1,c5"))  # a1 is occupied: no tile can lie there
    with pytest.raises(ValueError, match="legal"):
        game.push_flagged(parse_move("e5,h7"))


def test_legal_moves_cover_pairs_bridges_swap_and_pass() -> None:
    game = Game()
    play(game, "e5,g5")
    moves = game.legal_moves()
    assert Swap() in moves and Pass() not in moves
    play(game, "a1,a2")
    assert parse_move("e5-g5") in game.legal_moves()
    for move in game.legal_moves()[:50]:
        assert game.is_legal(move)


def test_pass_allowed_when_no_pair_of_cells_is_legal_together() -> None:
    game = Game(supply=Supply.UNLIMITED)
    play(game, "e5,f6", "a1,c1")
    position = game.position
    # fill the board with dark tiles (as a drawing, not as play) but for two light-legal
    # cells that are not legal together: b9 and b10 would join a9.. into five.
    for i in range(position.geo.area):
        if not position.cells[i]:
            position.cells[i] = Colour.DARK.code
    for name in ("a9", "a10", "b8"):
        position.cells[position.geo.index(Cell.parse(name))] = Colour.LIGHT.code
    for name in ("b9", "b10"):
        position.cells[position.geo.index(Cell.parse(name))] = 0
    # a9,a10,b8 + b9 + b10: a group of five; each alone is a group of four: an island
    pair = Tiles(Cell.parse("b9"), Cell.parse("b10"))
    assert position.tiles_verdict(Colour.LIGHT, pair) is not None
    assert position.legal_tile_pairs(Colour.LIGHT) == []
    assert game.pass_allowed()
    play(game, "pass")
    assert game.light_passed and game.turn is Colour.DARK
