"""Random legal games: for property tests, benchmarks and generated example games."""

from __future__ import annotations

import random

from referee.cells import Colour
from referee.game import Game
from referee.moves import Bridge, Move, Pass, Swap, Tiles
from referee.position import Supply


def random_move(game: Game, rng: random.Random, bridge_rate: float = 0.15) -> Move:
    """A random legal move for the player to move (the game must not be over).

    Cheap in the opening (tries random pairs of free cells first), exact at the end: it
    passes only when no two tiles can be placed, as the rules demand.
    """
    colour = game.turn
    if colour is None:
        raise ValueError("the game is over")
    position = game.position
    if game.swap_allowed() and rng.random() < 0.3:
        return Swap()
    if game.turns_completed > 0 and rng.random() < bridge_rate:
        bridge = _random_bridge(game, colour, rng, tries=12)
        if bridge is not None:
            return bridge
    geo = position.geo
    free = [
        i
        for i in range(geo.area)
        if not (position.cells[i] or position.blocked[i] or position.obstructed[i])
    ]
    if len(free) >= 2 and position.tiles_left[colour.code] >= 2:
        for _ in range(24):
            a, b = rng.sample(free, 2)
            move = Tiles(geo.cell(a), geo.cell(b))
            if position.tiles_verdict(colour, move) is None:
                return move
    pairs = position.legal_tile_pairs(colour)
    if pairs:
        return rng.choice(pairs)
    if game.turns_completed == 0:
        raise ValueError("no legal first move")
    bridges = position.legal_bridges(colour)
    if bridges and rng.random() < 0.6:
        return rng.choice(bridges)
    return Pass()


def _random_bridge(game: Game, colour: Colour, rng: random.Random, tries: int) -> Bridge | None:
    position = game.position
    own = [
        i
        for i, c in enumerate(position.cells)
        if c == colour.code and position.bridge_end[i] < 0
    ]
    if not own:
        return None
    geo = position.geo
    for _ in range(tries):
        i = rng.choice(own)
        spans = geo.spans[i]
        j, _under = spans[rng.randrange(len(spans))]
        move = Bridge(geo.cell(i), geo.cell(j))
        if position.bridge_verdict(colour, move) is None:
            return move
    return None


def random_game(
    seed: int | random.Random = 0,
    size: int = 10,
    supply: Supply = Supply.PHYSICAL,
    max_turns: int | None = None,
    bridge_rate: float = 0.15,
) -> Game:
    """Play a random legal game to its end (or for `max_turns` board turns)."""
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    game = Game(size, supply)
    while not game.is_over():
        if max_turns is not None and game.turns_completed >= max_turns:
            break
        game.push(random_move(game, rng, bridge_rate))
    return game


def heuristic_move(game: Game, rng: random.Random, candidates: int = 40) -> Move:
    """A plausible move: the best of a sample of legal moves by a simple greedy measure
    (own points, islands and tiles in groups, minus the opponent's points). Makes example
    games that look like play: islands grow, bridges join them."""
    colour = game.turn
    if colour is None:
        raise ValueError("the game is over")
    if game.swap_allowed():
        return Swap() if rng.random() < 0.5 else random_move(game, rng, 0.0)
    position = game.position
    pairs = position.legal_tile_pairs(colour)
    moves: list[Move] = list(rng.sample(pairs, min(candidates, len(pairs))))
    moves.extend(position.legal_bridges(colour))
    if not moves:
        return Pass()
    points_before = game.score().of(colour).points
    best: Move = moves[0]
    best_value = float("-inf")
    for move in moves:
        game.push(move)
        result = game.score()
        mine, theirs = result.of(colour), result.of(colour.other)
        groups = [g for g in game.position.groups(colour) if len(g) > 1]
        value = (
            3 * mine.points
            + mine.islands
            + 0.3 * sum(len(g) for g in groups)
            - 2 * theirs.points
            + rng.random()
        )
        if isinstance(move, Bridge) and mine.points == points_before:
            value -= 2  # a bridge that joins nothing yet is worth less than two tiles
        game.pop()
        if value > best_value:
            best, best_value = move, value
    return best


def heuristic_game(seed: int = 0, size: int = 10, supply: Supply = Supply.PHYSICAL) -> Game:
    """Play a whole game with `heuristic_move` for both sides."""
    rng = random.Random(seed)
    game = Game(size, supply)
    while not game.is_over():
        game.push(heuristic_move(game, rng))
    return game
