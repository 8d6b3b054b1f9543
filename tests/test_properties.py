"""Properties over random legal games (hypothesis chooses the seeds)."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from referee import Bridge, Cell, Colour, Game, Pass, Supply, Tiles, score
from referee.playout import random_game, random_move
from tests.boards import oracle_problems

seeds = st.integers(0, 1_000_000)
sizes = st.sampled_from([10, 12])
supplies = st.sampled_from(list(Supply))


@settings(max_examples=40, deadline=None)
@given(seeds, sizes, supplies)
def test_random_legal_playouts_never_reach_an_illegal_board(
    seed: int, size: int, supply: Supply
) -> None:
    rng = random.Random(seed)
    game = Game(size, supply)
    while not game.is_over():
        game.push(random_move(game, rng))
        assert oracle_problems(game.position) == []
    assert game.outcome() is not None


@settings(max_examples=30, deadline=None)
@given(seeds, st.integers(2, 40))
def test_the_order_of_the_two_tiles_never_matters(seed: int, turns: int) -> None:
    game = random_game(seed, max_turns=turns)
    position = game.position
    rng = random.Random(seed)
    free = [i for i in range(position.geo.area) if not position.cells[i]
            and not position.blocked[i]]
    for _ in range(60):
        if len(free) < 2:
            break
        a, b = (position.geo.cell(i) for i in rng.sample(free, 2))
        for colour in Colour:
            forward = position.tiles_verdict(colour, Tiles(a, b))
            backward = position.tiles_verdict(colour, Tiles(b, a))
            assert (forward is None) == (backward is None)


@settings(max_examples=25, deadline=None)
@given(seeds, st.integers(4, 60), sizes)
def test_listed_pairs_are_exactly_the_legal_pairs(seed: int, turns: int, size: int) -> None:
    game = random_game(seed, max_turns=turns, size=size)
    position = game.position
    every = [Cell(f, r) for f in range(size) for r in range(size)]
    for colour in Colour:
        listed = set(position.legal_tile_pairs(colour))
        brute = {
            Tiles(a, b)
            for a, b in itertools.combinations(every, 2)
            if position.tiles_verdict(colour, Tiles(a, b)) is None
        }
        assert listed == brute
        assert position.can_place_two(colour) == bool(brute)


@settings(max_examples=30, deadline=None)
@given(seeds, st.integers(4, 80))
def test_listed_bridges_are_exactly_the_legal_bridges(seed: int, turns: int) -> None:
    game = random_game(seed, max_turns=turns, bridge_rate=0.3)
    position = game.position
    for colour in Colour:
        own = position.tiles(colour)
        brute = {
            Bridge(a, b)
            for a, b in itertools.combinations(own, 2)
            if position.bridge_verdict(colour, Bridge(a, b)) is None
        }
        assert set(position.legal_bridges(colour)) == brute


@settings(max_examples=30, deadline=None)
@given(seeds)
def test_score_is_the_sum_over_joined_groups(seed: int) -> None:
    game = random_game(seed, bridge_rate=0.4)
    result = score(game.position)
    for side in (result.light, result.dark):
        assert side.points == sum(g.points for g in side.groups)
        assert side.islands == sum(len(g.islands) for g in side.groups)
        islands = [g for g in game.position.groups(side.colour) if len(g) == 4]
        assert side.islands == len(islands)


@settings(max_examples=20, deadline=None)
@given(seeds)
def test_pop_undoes_every_move(seed: int) -> None:
    game = random_game(seed, max_turns=30)
    states = []
    replay = Game()
    for played in game.moves:
        states.append((bytes(replay.position.cells), bytes(replay.position.blocked),
                       replay.turn, tuple(replay.position.tiles_left)))
        replay.push(played.move)
    for state in reversed(states):
        replay.pop()
        assert (bytes(replay.position.cells), bytes(replay.position.blocked), replay.turn,
                tuple(replay.position.tiles_left)) == state


@settings(max_examples=20, deadline=None)
@given(seeds)
def test_pass_is_legal_exactly_when_no_two_tiles_fit(seed: int) -> None:
    game = random_game(seed)
    for played in game.moves:
        if isinstance(played.move, Pass):
            replay = Game()
            for earlier in game.moves[: played.ply - 1]:
                replay.push(earlier.move)
            colour = replay.turn
            assert colour is not None
            assert not replay.position.can_place_two(colour)
            assert replay.position.legal_tile_pairs(colour) == []
            assert replay.pass_allowed() and replay.is_legal(Pass())
