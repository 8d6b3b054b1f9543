"""`ponte bench referee`: the referee's speed on one core.

Prints microseconds per legality check of a turn (two tiles, in crowded mid-game
positions), milliseconds to list every legal tile pair of a crowded mid-game position, and
complete random games per second.
"""

from __future__ import annotations

import argparse
import random
import time

from referee import Colour, Game, Tiles
from referee.playout import random_game


def _midgame_positions(count: int) -> list[Game]:
    games = []
    seed = 1000
    while len(games) < count:
        game = random_game(seed, max_turns=30)
        seed += 1
        if not game.is_over() and game.turn is not None:
            games.append(game)
    return games


def run(args: argparse.Namespace) -> int:
    quick = bool(getattr(args, "quick", False))
    games = _midgame_positions(5 if quick else 20)
    rng = random.Random(7)

    checks: list[tuple[Game, Tiles]] = []
    for game in games:
        geo = game.position.geo
        colour = game.turn or Colour.LIGHT
        legal_pairs = game.position.legal_tile_pairs(colour)
        for pair in rng.sample(legal_pairs, min(100, len(legal_pairs))):
            checks.append((game, pair))  # legal turns: the full check runs
        for _ in range(100):
            a, b = rng.sample(range(geo.area), 2)
            checks.append((game, Tiles(geo.cell(a), geo.cell(b))))
    legal = sum(1 for game, move in checks if game.verdict(move) is None)
    repeat = 3 if quick else 20
    start = time.perf_counter()
    for _ in range(repeat):
        for game, move in checks:
            game.verdict(move)
    per_check = (time.perf_counter() - start) / (repeat * len(checks)) * 1e6

    pair_counts = []
    start = time.perf_counter()
    listings = 0
    for _ in range(2 if quick else 10):
        for game in games:
            colour = game.turn or Colour.LIGHT
            pair_counts.append(len(game.position.legal_tile_pairs(colour)))
            listings += 1
    per_listing = (time.perf_counter() - start) / listings * 1e3

    n_games = 20 if quick else 300
    start = time.perf_counter()
    moves = 0
    for seed in range(n_games):
        moves += len(random_game(seed).moves)
    elapsed = time.perf_counter() - start

    print(f"legality check of a turn:      {per_check:7.2f} us   "
          f"({len(checks)} turns in {len(games)} mid-game positions, {legal} legal)")
    print(f"list all legal tile pairs:     {per_listing:7.3f} ms   "
          f"(mid-game after 30 turns, {min(pair_counts)}-{max(pair_counts)} pairs)")
    print(f"complete random games:         {n_games / elapsed:7.0f} per second   "
          f"({moves / n_games:.1f} moves per game)")
    return 0
