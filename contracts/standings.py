"""Club standings over the archive's game summaries (as `LiveApi.games()` lists them)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

POINTS = {"win": 1.0, "draw": 0.5, "loss": 0.0}
"""Standings points for a game won, drawn and lost."""


def standings(games: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Wins, draws, losses and points of each player over the finished games, best first.

    Players are named as the games' Light and Dark tags name them (the colour's name where
    a tag is missing). Unfinished and void games are not counted.
    """
    table: dict[str, dict[str, Any]] = {}
    for game in games:
        result = game.get("result")
        if game.get("status") == "playing" or result not in ("light", "dark", "draw"):
            continue
        tags = game.get("tags") or {}
        for colour in ("light", "dark"):
            name = str(tags.get(colour.capitalize()) or colour.capitalize())
            row = table.setdefault(name, {"player": name, "games": 0, "wins": 0, "draws": 0,
                                          "losses": 0, "points": 0.0})
            row["games"] += 1
            outcome = "draw" if result == "draw" else "win" if result == colour else "loss"
            row[{"win": "wins", "draw": "draws", "loss": "losses"}[outcome]] += 1
            row["points"] += POINTS[outcome]
    return sorted(table.values(), key=lambda r: (-r["points"], -r["wins"], r["player"]))
