"""`LiveSession`: the live loop's state behind the `LiveApi` the web page and LEDs use.

It owns the `Table` (the refereed game), the `EventBus` and the `Store`. The frame loop
feeds it `Reading`s; a board that settles is judged against the record, and every step —
the ops, the events, the moves with their times, a JPEG of the board — is committed to the
database before its events are published, so what watchers see has been recorded.
Controls (swap, pass, confirm, override, undo, new game, end game) arrive from other
threads (the web server, the LED button); one lock keeps them and the frame loop apart.

On start it resumes the newest unfinished game in the database by replaying its ops; the
board in front of the camera is then audited against that record on the first settled view.
"""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from contracts.live import ControlError, EventBus, EventType, LiveApi
from ponte.live.infer import expected_board
from ponte.live.settle import DEFAULT_WINDOW, BoardView, Reading, SettleDetector
from ponte.live.store import Store, StoreError
from ponte.live.table import Emitted, Op, OpError
from referee import SIZES, Supply

SnapshotMaker = Callable[[], bytes | None]
STALE_S = 3.0
"""Seconds without a frame after which the camera status says that frames stopped."""


def _duration(seconds: float) -> str:
    """A wait in words: "12 s", "4 min", "2 h 5 min"."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


class LiveSession:
    """One assistant at one table: the current game, its record, its watchers."""

    def __init__(
        self,
        store: Store,
        *,
        settle_window: float = DEFAULT_WINDOW,
        bus: EventBus | None = None,
        resume: bool = True,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        self.bus = bus or EventBus()
        self.store = store
        self.settle_window = settle_window
        self._lock = threading.RLock()
        self._detector = SettleDetector(settle_window)
        self._judged: BoardView | None = None
        self._latest: Reading | None = None
        self._camera: dict[str, Any] = {"status": "waiting", "message": None, "fps": None,
                                        "last_frame": None}
        self._camera_jpeg: bytes | None = None
        self._frames: list[float] = []
        self._camera_reader: Any | None = None
        self._calibration_file: Path | None = None
        self.resumed = False
        current = store.current_game() if resume else None
        if current is not None:
            self._open(current)
            self.resumed = True
            self.bus.publish(EventType.NOTICE, {
                "kind": "resumed",
                "game": current,
                "message": f"resumed game {current} after {len(self.table.game.moves)} "
                "moves; the board is checked against the record when it next settles",
            })
        else:
            self._start(dict(tags or {}), 10, Supply.PHYSICAL)

    # ----------------------------------------------------------------- games

    def _open(self, game_id: int) -> None:
        self.game_id = game_id
        self.table = self.store.table(game_id)
        info = self.store.game(game_id)
        self.tags: dict[str, str] = {str(k): str(v) for k, v in info["tags"].items()}
        self.started = float(info["started"])
        self._move_times = {int(m["ply"]): float(m["t"]) for m in info["moves"]}
        self._detector.reset(expected_board(self.table.game))  # what a flickering cell holds

    def _start(self, tags: dict[str, str], size: int, supply: Supply) -> None:
        tags.setdefault("Event", "Ponte del Diavolo")
        tags.setdefault("Date", datetime.date.today().strftime("%Y.%m.%d"))
        tags.setdefault("Light", "Light")
        tags.setdefault("Dark", "Dark")
        game_id = self.store.new_game(tags, size, supply)
        self._open(game_id)
        self._judged = None

    # ----------------------------------------------------------------- frames

    def feed(self, reading: Reading, snapshot: SnapshotMaker | None = None) -> list[Emitted]:
        """One frame's reading; judges the board when it settles. Returns the events."""
        with self._lock:
            self._note_frame(reading)
            settled = self._detector.feed(reading)
            if settled is None or settled.board.same_as(self._judged):
                return []
            return self._judge(settled.board, reading.t, snapshot)

    def _note_frame(self, reading: Reading) -> None:
        self._frames.append(reading.t)
        if len(self._frames) > 30:
            del self._frames[0]
        if not reading.occluded:
            self._latest = reading
        # A piece just put down, read but held back until the picture rests: "settling".
        status = ("settling" if reading.pending else "occluded") if reading.occluded else "ok"
        self._camera["last_frame"] = time.monotonic()
        if len(self._frames) > 1 and self._frames[-1] > self._frames[0]:
            self._camera["fps"] = round((len(self._frames) - 1)
                                        / (self._frames[-1] - self._frames[0]), 1)
        if self._camera["status"] != status:
            self.set_camera_status(status)

    def set_camera_status(self, status: str, message: str | None = None) -> None:
        """Camera or board status (ok, occluded, settling, no-signal, bumped...), published on
        change."""
        with self._lock:
            self._camera["status"] = status
            self._camera["message"] = message
            data: dict[str, Any] = {"status": status}
            if message:
                data["message"] = message
        self.bus.publish(EventType.CAMERA, data)

    def set_camera_picture(self, jpeg: bytes | None) -> None:
        with self._lock:
            self._camera_jpeg = jpeg

    def _judge(self, board: BoardView, t: float, snapshot: SnapshotMaker | None,
               by: str | None = None) -> list[Emitted]:
        """Judge a board and commit what followed; `by` marks the moves and flags that a
        control (an override) made, for the record and the page."""
        self._judged = board
        start = len(self.table.ops)
        events = self.table.judge(board, t)
        if by is not None:
            for kind, data in events:
                if kind in (EventType.MOVE, EventType.ILLEGAL):
                    data["by"] = by
        self._commit(self.table.ops[start:], events, t, snapshot)
        return events

    def _commit(self, ops: list[Op], events: list[Emitted], t: float,
                snapshot: SnapshotMaker | None = None) -> None:
        for kind, data in events:
            if kind is EventType.MOVE:
                self._move_times[int(data["ply"])] = float(data.get("t", t))
        jpeg = None
        if snapshot is not None and any(
            k is EventType.MOVE or (k is EventType.ILLEGAL and d.get("move"))
            for k, d in events
        ):
            jpeg = snapshot()  # a new move (legal or flagged) is on the board
        if ops or events:
            self.store.commit_step(
                self.game_id, self.table, [(op, t) for op in ops],
                [(k.value, d) for k, d in events], self._move_times, jpeg,
            )
        for kind, data in events:
            self.bus.publish(kind, {"game": self.game_id, **data})

    # ----------------------------------------------------------------- LiveApi

    def state(self) -> dict[str, Any]:
        with self._lock:
            state = self.table.state()
            state["game"] = {
                "id": self.game_id,
                "light": self.tags.get("Light"),
                "dark": self.tags.get("Dark"),
                "started": self.started,
                "status": "over" if self.table.over else "playing",
                "result": self.table.result(),
                "resumed": self.resumed,
            }
            state["camera"] = self._camera_state()
            return state

    def _camera_state(self) -> dict[str, Any]:
        """The camera's status for the page; frames that stopped coming show as such (no
        frame rate is claimed for a picture that is no longer there)."""
        camera = dict(self._camera)
        last = camera.pop("last_frame")
        age = None if last is None else time.monotonic() - last
        camera["last_frame_age"] = None if age is None else round(age, 3)
        if age is not None and age > STALE_S:
            camera["fps"] = None
            since = f"no frames for {_duration(age)}"
            if camera["status"] in ("ended", "no-signal", "unavailable"):
                camera["message"] = f"{camera['message']}; {since}" if camera["message"] else since
            else:
                camera["status"], camera["message"] = "no-frames", since
        return camera

    def camera_ended(self, message: str) -> None:
        """The source has no more frames (a video file came to its end)."""
        with self._lock:
            self._camera["fps"] = None
        self.set_camera_status("ended", message)

    def control(self, action: str, params: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(params, Mapping):
            raise ControlError("params must be a JSON object", 400)
        with self._lock:
            t = self._now()
            if action == "new_game":
                self._new_game(params, t)
            elif action == "confirm":
                self._confirm(t)
            else:
                try:
                    ops = self.table.control_ops(action, params)
                except OpError as exc:
                    raise ControlError(str(exc), exc.status) from None
                events: list[Emitted] = [(EventType.CONTROL, {"action": action,
                                                              "params": dict(params), "t": t})]
                for op in ops:
                    events += self.table.apply(op, t)
                self._commit(ops, events, t)
                if action == "undo":
                    self._judged = self._detector.latest()
                elif action in ("override", "drop_override") and self._judged is not None:
                    self._judge(self._judged, t, None, by="override")
            self.bus.publish(EventType.STATE, {"game": self.game_id, "action": action})
            return self.state()

    def _now(self) -> float:
        return self._latest.t if self._latest is not None else 0.0

    def _confirm(self, t: float) -> None:
        if self.table.over:
            raise ControlError("the game is over, so there is no move to confirm: "
                               "start a new game", 409)
        latest = self._latest
        if latest is None:
            raise ControlError("no board has been seen yet", 409)
        self._commit([], [(EventType.CONTROL, {"action": "confirm", "params": {}, "t": t})], t)
        board = self._detector.latest()  # flickering cells as settled, when they have
        self._judge(board if board is not None else latest.board, t, None)

    def _new_game(self, params: Mapping[str, Any], t: float) -> None:
        tags: dict[str, str] = {}
        for colour, tag in (("light", "Light"), ("dark", "Dark")):
            name = params.get(colour, tag)
            if not isinstance(name, str) or not name.strip() or len(name) > 80:
                raise ControlError(f'"{colour}" must be a player name (1-80 characters)', 400)
            tags[tag] = name.strip()
        size = params.get("board", 10)
        if size not in SIZES:
            raise ControlError('"board" must be 10 or 12', 400)
        seen = self._camera_board_size()
        if seen is not None and seen != size:
            raise ControlError(
                f"the camera reads a {seen} x {seen} board, so a {size} x {size} game would "
                f"have every piece misplaced: start a {seen} x {seen} game, or put the "
                f"{size} x {size} board in front of a camera calibrated for it", 409)
        try:
            supply = Supply(params.get("supply", "physical"))
        except ValueError:
            raise ControlError('"supply" must be "physical" or "unlimited"', 400) from None
        if not self.table.over:
            self._commit([], [(EventType.CONTROL, {"action": "new_game", "params": dict(params),
                                                   "t": t})], t)
            self.store.finish(self.game_id, self.table.result(), "ended")
        self._start(tags, int(size), supply)
        self._commit([], [(EventType.CONTROL, {"action": "new_game", "params": dict(params),
                                               "t": t})], t)

    def _camera_board_size(self) -> int | None:
        """The size of board the attached camera reads (None without a camera)."""
        size = getattr(self._camera_reader, "board_size", None)
        return size if isinstance(size, int) else None

    # ----------------------------------------------------------------- calibration page

    def attach_camera(self, camera: Any, calibration_file: Path | None = None) -> None:
        """The camera reader the loop uses, for the calibration page (and where to save).
        Its self-calibration asks the session whether the board should be empty."""
        self._camera_reader = camera
        self._calibration_file = calibration_file
        camera.expect_empty = self.board_should_be_empty

    def board_should_be_empty(self) -> bool:
        """Whether nothing should be on the board: the game has no move and no open flag."""
        with self._lock:
            return self.table.should_be_empty

    def calibration(self) -> dict[str, Any]:
        """The calibration page's view: image size, corners (a1's first), cell readings."""
        view = None if self._camera_reader is None else self._camera_reader.calibration_view()
        if view is None:
            problem = getattr(self._camera_reader, "problem", None)
            raise ControlError("no calibration yet: the board has not been found"
                               + (f" ({problem})" if problem else ""), 409)
        view["file"] = str(self._calibration_file) if self._calibration_file else None
        return dict(view)

    def set_calibration(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """New corners from the calibration page (`corners`, `a1`); saved when a file is
        known. Recorded as a control event."""
        from contracts.calibration import save_calibration
        from ponte.live.camera import CameraError

        if self._camera_reader is None:
            raise ControlError("this session has no camera", 409)
        try:
            calibration = self._camera_reader.set_corners(
                [list(p) for p in body["corners"]], int(body.get("a1", 0))
            )
        except (CameraError, KeyError, TypeError, ValueError) as exc:
            raise ControlError(f"cannot use these corners: {exc}", 400) from None
        if self._calibration_file is not None:
            try:
                save_calibration(calibration, self._calibration_file)
            except OSError as exc:
                raise ControlError(f"cannot save {self._calibration_file}: {exc}", 500) from None
        with self._lock:
            t = self._now()
            self._commit([], [(EventType.CONTROL, {"action": "calibrate",
                                                   "params": dict(body), "t": t})], t)
        return self.calibration()

    def camera_jpeg(self) -> bytes | None:
        with self._lock:
            return self._camera_jpeg

    def games(self) -> list[dict[str, Any]]:
        return self.store.games()

    def game(self, game_id: int) -> dict[str, Any]:
        try:
            return self.store.game(game_id)
        except StoreError as exc:
            raise ControlError(str(exc), exc.status) from None

    def export(self, game_id: int, fmt: str) -> str:
        try:
            return self.store.export(game_id, fmt)
        except StoreError as exc:
            raise ControlError(str(exc), exc.status) from None

    def snapshot(self, game_id: int, ply: int) -> bytes | None:
        try:
            return self.store.snapshot(game_id, ply)
        except StoreError as exc:
            raise ControlError(str(exc), exc.status) from None


def _implements_live_api(session: LiveSession) -> LiveApi:
    """Lets mypy check that LiveSession fulfils the web page's contract."""
    return session
