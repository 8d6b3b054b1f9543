"""A TEST DOUBLE of the live loop's `LiveApi` for the web page's tests: an in-memory table
around a real `referee.Game`, with the real `EventBus`. No camera, no database; recorded
games are kept in a list. The real implementation is `ponte.live.session.LiveSession`.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Mapping
from typing import Any

from contracts.live import ControlError, EventBus, EventType
from referee import (
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Pass,
    Supply,
    Swap,
    parse_move,
    record_of,
    write_record,
)
from referee.view import game_state


class FakeLive:
    """In-memory stand-in for the live loop (tests only)."""

    def __init__(self, light: str = "Ann", dark: str = "Bob") -> None:
        self.bus = EventBus()
        self.current = Game()
        self.names = {"light": light, "dark": dark}
        self.recorded: list[dict[str, Any]] = []
        self.snapshots: dict[tuple[int, int], bytes] = {}
        self.jpeg: bytes | None = None
        self.controls: list[tuple[str, dict[str, Any]]] = []
        self.overrides: list[dict[str, Any]] = []
        self.calibration_data: dict[str, Any] | None = None

    # --- driving the double from a test

    def play(self, text: str) -> None:
        """A move seen on the board: legal moves are played, illegal ones flagged."""
        move = parse_move(text)
        verdict = self.current.verdict(move)
        if verdict is None:
            played = self.current.push(move)
            self.bus.publish(EventType.MOVE, {"ply": played.ply, "move": str(move),
                                              "colour": played.colour.value
                                              if played.colour else None})
        else:
            self.current.push_flagged(move)  # type: ignore[arg-type]
            self.bus.publish(EventType.ILLEGAL, {"ply": len(self.current.moves),
                                                 **verdict.to_dict()})

    def record(self, game: Game, tags: dict[str, str] | None = None) -> int:
        """Add a finished game to the recorded games; returns its id."""
        game_id = len(self.recorded) + 1
        tags = {"Light": "Ann", "Dark": "Bob", "Date": "2026.11.22", **(tags or {})}
        self.recorded.append({"id": game_id, "game": game, "tags": tags})
        return game_id

    # --- LiveApi

    def state(self) -> dict[str, Any]:
        state = game_state(self.current)
        state["game"] = {"id": 0, **self.names, "started": 0.0, "status": "playing"}
        state["camera"] = {"status": "ok" if self.jpeg else "no-signal", "fps": None}
        return state

    def control(self, action: str, params: Mapping[str, Any]) -> dict[str, Any]:
        self.controls.append((action, dict(params)))
        try:
            if action == "swap":
                self.current.push(Swap())
            elif action == "pass":
                self.current.push(Pass())
            elif action == "undo":
                try:
                    self.current.pop()
                except IndexError:
                    raise ControlError("there is no move to undo", 409) from None
            elif action == "new_game":
                self.current = Game(int(params.get("board", 10)),
                                 Supply(params.get("supply", "physical")))
                self.names = {"light": params["light"], "dark": params["dark"]}
            elif action == "override":
                self.overrides.append(dict(params))
            elif action == "end_game":
                raise ControlError("the double cannot end games", 409)
        except (IllegalMoveError, InvalidMoveError) as exc:
            raise ControlError(str(exc), 409) from None
        self.bus.publish(EventType.CONTROL, {"action": action, "params": dict(params)})
        self.bus.publish(EventType.STATE, {"action": action})
        return self.state()

    def camera_jpeg(self) -> bytes | None:
        return self.jpeg

    def games(self) -> list[dict[str, Any]]:
        return [self._summary(g) for g in reversed(self.recorded)]

    def _summary(self, entry: dict[str, Any]) -> dict[str, Any]:
        game: Game = entry["game"]
        outcome = game.outcome()
        return {"id": entry["id"], "tags": entry["tags"], "started": time.time(),
                "result": outcome.result if outcome else "*", "moves": len(game.moves)}

    def _entry(self, game_id: int) -> dict[str, Any]:
        for entry in self.recorded:
            if entry["id"] == game_id:
                return entry
        raise ControlError(f"no game {game_id}", 404)

    def game(self, game_id: int) -> dict[str, Any]:
        entry = self._entry(game_id)
        info = self._summary(entry)
        info["moves"] = [{"ply": m.ply, "move": str(m.move), "t": float(m.ply)}
                         for m in entry["game"].moves]
        info["events"] = [{"type": "move", "ply": m.ply, "move": str(m.move)}
                          for m in entry["game"].moves]
        return info

    def export(self, game_id: int, fmt: str) -> str:
        entry = self._entry(game_id)
        if fmt == "pdd":
            out = io.StringIO()
            write_record(record_of(entry["game"], entry["tags"]), out)
            return out.getvalue()
        if fmt == "json":
            return json.dumps(self.game(game_id))
        raise ControlError(f"unknown format {fmt}", 400)

    def snapshot(self, game_id: int, ply: int) -> bytes | None:
        self._entry(game_id)
        return self.snapshots.get((game_id, ply))


class CalibratableFake(FakeLive):
    """The double with the calibration methods the page expects (tests only)."""

    def calibration(self) -> dict[str, Any]:
        return self.calibration_data or {
            "image_size": [640, 480],
            "corners": [[100, 80], [540, 80], [540, 420], [100, 420]],
            "a1": 3,
            "readings": [
                {"cell": f"{chr(97 + f)}{r + 1}",
                 "value": "light" if (f, r) == (0, 0) else "dark" if f == r else "empty",
                 "confidence": 0.5 if (f, r) == (3, 4) else 0.95}
                for r in range(10) for f in range(10)
            ],
        }

    def set_calibration(self, body: dict[str, Any]) -> dict[str, Any]:
        self.calibration_data = {**self.calibration(), **body}
        return self.calibration_data
