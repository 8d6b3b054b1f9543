"""`ponte eval games`: whole games through the live loop, from generated game videos.

The still frames of `ponte eval vision` measure the camera pipeline one frame at a time; a
referee is judged by the record it writes. Here each game is a legal game (the demo's
heuristic players, board moves only) played on a scene of one setup: a hand carries every
piece in (`lab.synth.render_sequence`: it reaches in, hovers, puts the piece down and
leaves), the camera may be knocked once, and every frame is compressed as a webcam's
video is (JPEG). The frames go through the live loop as `ponte transcribe` runs it — the
camera calibrating itself from the empty board, the settling, the referee — and the record
that comes out is compared with the game played (a wide-angle webcam is set up as the README
says: its lens measured and the empty board calibrated with it, before the game; with
`--unmeasured-lens` it is not, and the loop's self-calibration measures the lens on the
board's own lines):

- moves read: how many of the game's moves the record has right, from the first, and the
  first move it got wrong or missed;
- flags: every flag raised is a false one (the games are legal);
- commit delay: seconds from the move's last piece put down to the move committed (the
  settling's 0.4 s and what the hand's leaving adds);
- hand frames read wrong: frames with the hand in the picture that the camera read as a
  board other than the one under it without flagging them occluded (what the settling has
  to absorb);
- catch-up notices: settled boards that several sequences of turns explained, asked about
  (`ponte.live.catchup`); flags still up when the video ends; whether the game was void;
  whether the record's turn is off from the game's (a camera error shifted it).

Three switches make the table harder to keep: `--fast` plays quickly (the next hand reaches
in 0.3 s after the last one left, so turns often settle together: catch-up), and
`--drop SHARE` has the reader lose pieces: each piece put down is, with that chance, left
out of every reading from the moment it is put down for a random time of up to one turn
(a reader that misses a bridge until the next turn, a tile read late); and `--every N`
has the loop read only every Nth frame, as it does on a core N times slower than the one
it takes a frame's time on: it reads the newest frame whenever it is free
(`ponte.live.sources.NewestFrame`), and the frames between go by unread.
"""

from __future__ import annotations

import csv
import dataclasses
import statistics
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from contracts.live import EventType
from lab.scenes import boards_of_moves, demo_moves, position_of, rows_of
from ponte.live.camera import CameraReader
from ponte.live.loop import Transcript, transcribe
from ponte.live.settle import DEFAULT_WINDOW, BoardView, Reading, cell_key
from ponte.live.sources import Frame

FPS = 15.0
KNOCK_AT_S = 6.0
"""With `--knock`, when the camera is knocked (in the still time after the first move)."""
JPEG_QUALITY = 85

FAST_STILL_S = 0.3
"""With `--fast`, seconds from one hand leaving the picture to the next reaching in."""
CALIBRATION_S = 1.5
"""With `--fast`, the empty board is still shown this long first (the camera calibrates)."""

COLUMNS = ["setup", "seed", "knock", "moves", "read_right", "first_wrong", "flags",
           "notices", "delay_median_s", "delay_max_s", "frames", "hand_frames",
           "hand_frames_wrong", "still_frames", "still_frames_wrong", "still_frames_flagged",
           "still_frames_held", "fast", "drop", "pieces_dropped", "moves_caught_up",
           "catch_up_notices",
           "flags_up_at_end", "void", "turn_shifted", "read_every"]


@dataclass(frozen=True)
class GameResult:
    setup: str
    seed: int
    knock: bool
    moves: int
    read_right: int
    """Moves of the record that match the game's, counted from the first."""
    first_wrong: str
    """"" when every move was read; else "N: played X, read Y" (Y "-" when missing)."""
    flags: int
    notices: int
    delays: tuple[float, ...]
    frames: int
    hand_frames: int
    hand_frames_wrong: int
    still_frames: int
    still_frames_wrong: int
    still_frames_flagged: int
    still_frames_held: int
    """Of the still frames flagged, those flagged only for a new reading held back while the
    picture near it had just moved (`Reading.pending`): a piece just put down, waiting."""
    fast: bool = False
    drop: float = 0.0
    pieces_dropped: int = 0
    moves_caught_up: int = 0
    """Moves recorded from a settled board that also recorded the move before them."""
    catch_up_notices: int = 0
    flags_up_at_end: int = 0
    void: bool = False
    turn_shifted: bool = False
    read_every: int = 1
    """The loop read one frame in this many (a core this many times slower)."""

    def row(self) -> list[object]:
        delays = self.delays
        return [self.setup, self.seed, int(self.knock), self.moves, self.read_right,
                self.first_wrong, self.flags, self.notices,
                f"{statistics.median(delays):.2f}" if delays else "",
                f"{max(delays):.2f}" if delays else "", self.frames, self.hand_frames,
                self.hand_frames_wrong, self.still_frames, self.still_frames_wrong,
                self.still_frames_flagged, self.still_frames_held, int(self.fast), self.drop,
                self.pieces_dropped, self.moves_caught_up, self.catch_up_notices,
                self.flags_up_at_end,
                int(self.void), int(self.turn_shifted), self.read_every]


def compare_moves(played: Sequence[str], read: Sequence[str]) -> tuple[int, str]:
    """How many moves `read` has right from the first, and the first one it has wrong."""
    for k, move in enumerate(played):
        got = read[k] if k < len(read) else "-"
        if got != move:
            return k, f"{k + 1}: played {move}, read {got}"
    if len(read) > len(played):
        return len(played), f"{len(played) + 1}: played -, read {read[len(played)]}"
    return len(played), ""


def _same(board: BoardView, rows: Sequence[str], bridges: Sequence[tuple[str, str]]) -> bool:
    return (rows_of(board) == tuple(rows)
            and set(board.bridges) == {tuple(sorted(b, key=cell_key)) for b in bridges})


class PutDown:
    """When the last piece of each move was put down (seconds), from a game's frame truths
    in order: the time the board last changed before the count of moves done went up."""

    def __init__(self, skip: int = 0) -> None:
        self._skip = skip
        """Positions shown before the first move only to keep the empty board in view."""
        self.times: list[float] = []
        self._changed = 0.0
        self._seen: tuple[Any, Any] | None = None

    def see(self, truth: Any) -> None:
        """Take the next frame's truth (its `board`, `bridges`, `move` and `time_s`)."""
        seen = (truth.board, truth.bridges)
        if seen != self._seen:
            self._seen, self._changed = seen, truth.time_s
        if truth.move - self._skip > len(self.times):
            self.times.append(self._changed)


class _Frames:
    """A `FrameSource` over rendered frames, each compressed and decompressed as a webcam's
    video is; keeps the truth of the frame last read."""

    live = False
    description = "generated game video"

    def __init__(self, frames: Iterator[tuple[Any, Any]], fps: float, skip: int = 0,
                 every: int = 1) -> None:
        self._frames = frames
        self._fps = fps
        self._every = every
        """One frame in this many is read; the others go by while the last is read."""
        self.truth: Any = None
        self.put_down = PutDown(skip)

    def read(self) -> Frame | None:
        import cv2
        import numpy as np

        for _ in range(self._every if self.truth is not None else 1):
            item = next(self._frames, None)
            if item is None:
                return None
            image, self.truth = item
            self.put_down.see(self.truth)
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        if not ok:
            raise RuntimeError("cannot JPEG-encode a generated frame")
        decoded = cv2.imdecode(np.frombuffer(data.tobytes(), np.uint8), cv2.IMREAD_COLOR)
        return Frame(decoded, self.truth.index / self._fps, self.truth.index)


def _pieces(truth: Any) -> set[str]:
    """The pieces a frame's truth holds: "e5" for a tile, "a1-c1" for a bridge."""
    rows = truth.board
    size = len(rows)
    cells = {f"{chr(ord('a') + f)}{size - r}" for r, row in enumerate(rows)
             for f, ch in enumerate(row) if ch in "LD"}
    return cells | {"-".join(sorted(b, key=cell_key)) for b in truth.bridges}


class DroppingReader:
    """A reader that loses pieces: each piece put down is, with chance `share`, left out of
    the readings for a random time of up to `turn_s` seconds from when it was put down."""

    def __init__(self, share: float, turn_s: float, seed: list[int]) -> None:
        import random

        self._rng = random.Random(str(seed))
        self.share = share
        self.turn_s = turn_s
        self._known: set[str] = set()
        self._until: dict[str, float] = {}
        self.dropped = 0

    def apply(self, truth: Any, reading: Reading) -> Reading:
        t = float(truth.time_s)
        for piece in sorted(_pieces(truth) - self._known):
            self._known.add(piece)
            if self._rng.random() < self.share:
                self._until[piece] = t + self._rng.uniform(0.0, self.turn_s)
                self.dropped += 1
        gone = {p for p, end in self._until.items() if t < end}
        if not gone:
            return reading
        board = reading.board
        tiles = {c: v for c, v in board.tiles.items() if c not in gone}
        bridges = frozenset(b for b in board.bridges if f"{b[0]}-{b[1]}" not in gone)
        return dataclasses.replace(reading, board=BoardView(tiles, bridges))


class Watched(CameraReader):
    """The live loop's camera, counting its readings against the truth of the frame last
    read (`frames.truth`, None before the first) and with `dropping`, losing pieces after
    they were counted."""

    def __init__(self, frames: Any, calibration: Any | None = None,
                 dropping: DroppingReader | None = None) -> None:
        super().__init__(calibration)
        self._frames = frames
        self._dropping = dropping
        self.counts = dict(hand=0, hand_wrong=0, still=0, still_wrong=0, still_flagged=0,
                           still_held=0)

    def read(self, image: Any, t: float) -> Reading:
        reading = self._count(super().read(image, t))
        if self._dropping is not None and self._frames.truth is not None:
            reading = self._dropping.apply(self._frames.truth, reading)
        return reading

    def _count(self, reading: Reading) -> Reading:
        truth = self._frames.truth
        if self.calibrated and truth is not None:
            right = _same(reading.board, truth.board, truth.bridges)
            if str(truth.phase) == "hand":
                self.counts["hand"] += 1
                self.counts["hand_wrong"] += int(not reading.occluded and not right)
            else:
                self.counts["still"] += 1
                self.counts["still_flagged"] += int(reading.occluded)
                self.counts["still_held"] += int(reading.pending)
                self.counts["still_wrong"] += int(not reading.occluded and not right)
        return reading


def play_game(setup: str, seed: int, turns: int, *, knock: bool = False,
              fps: float = FPS, measured_lens: bool = True, fast: bool = False,
              drop: float = 0.0, every: int = 1) -> GameResult:
    """Render one game of `turns` board moves on `setup` and read it through the live loop
    (`fast`: quick players; `drop`: the share of pieces the reader loses for a while;
    `every`: the loop reads one frame in this many)."""
    import math

    import numpy as np

    from lab.synth import SETUPS, CameraBump, SequenceTiming, render_sequence
    from lab.synth.setups import SKIN_TONES, SLEEVES, random_spec
    from lab.synth.spec import HandSpec

    moves = demo_moves(seed, turns)[0]
    boards = boards_of_moves(moves, flagged=False)
    positions = [position_of(b) for b in boards]
    rng = np.random.default_rng([seed, list(SETUPS).index(setup)])
    spec = dataclasses.replace(random_spec(rng, setup), board=positions[0][0], bridges=(),
                               hands=())
    hand = HandSpec(skin=SKIN_TONES[int(rng.integers(len(SKIN_TONES)))],
                    sleeve=SLEEVES[int(rng.integers(len(SLEEVES)))],
                    sleeve_reach=float(rng.uniform(0.0, 0.8)))
    timing = SequenceTiming(fps=fps, still_s=FAST_STILL_S if fast else 1.5,
                            bump=CameraBump(at_s=KNOCK_AT_S) if knock else None)
    turn_s = timing.reach_s + timing.hover_s + timing.place_s + timing.leave_s + timing.still_s
    # Quick play: the empty board in view long enough to calibrate on. Quick play or pieces
    # dropped: the last board in view until a piece dropped from it is read again and settles.
    skip = math.ceil(CALIBRATION_S / FAST_STILL_S) - 1 if fast else 0
    tail = math.ceil((turn_s + CALIBRATION_S) / timing.still_s) if fast or drop else 0
    positions = [positions[0]] * skip + positions + [positions[-1]] * tail
    calibration = None
    if spec.camera.distorted and measured_lens:
        # A wide-angle webcam is set up as the README says: its lens measured
        # (`ponte calibrate-lens`) and the empty board calibrated with it.
        from calibration.make import make_calibration
        from lab.evaluate import empty_photo

        photo, lens = empty_photo(spec)
        calibration = make_calibration(photo, lens=lens, empty=True)
    frames = _Frames(render_sequence(positions, spec, timing, hand), fps, skip, every)
    dropping = DroppingReader(drop, turn_s, [seed, list(SETUPS).index(setup)]) if drop else None
    camera = Watched(frames, calibration, dropping)
    result = transcribe(frames, camera, settle_window=DEFAULT_WINDOW)
    return game_result(setup, seed, knock, moves, result, frames.put_down.times, camera,
                       fast=fast, drop=drop,
                       dropped=dropping.dropped if dropping else 0, every=every)


def game_result(setup: str, seed: int, knock: bool, moves: Sequence[str], result: Transcript,
                put_down: Sequence[float], camera: Watched, *, fast: bool = False,
                drop: float = 0.0, dropped: int = 0, every: int = 1) -> GameResult:
    """The table's row for a game of `moves` read through the live loop into `result`, its
    moves' last pieces put down at `put_down` (seconds), read by `camera`."""
    read = [str(m.move) for m in result.table.game.moves if not m.withdrawn]
    right, first_wrong = compare_moves(moves, read)
    committed = [float(data["t"]) for kind, data in result.events
                 if kind is EventType.MOVE and data.get("move") not in ("swap", "pass")]
    delays = tuple(round(c - t, 3) for c, t in zip(committed[:right], put_down, strict=False))
    flags = sum(1 for kind, _ in result.events if kind is EventType.ILLEGAL)
    notices = sum(1 for kind, _ in result.events if kind is EventType.NOTICE)
    catch_up = sum(1 for kind, data in result.events
                   if kind is EventType.NOTICE and data.get("kind") == "catch_up")
    game = result.table.game
    caught_up = sum(1 for a, b in zip(committed, committed[1:], strict=False) if a == b)
    c = camera.counts
    return GameResult(setup, seed, knock, len(moves), right, first_wrong, flags, notices,
                      delays, result.frames, c["hand"], c["hand_wrong"], c["still"],
                      c["still_wrong"], c["still_flagged"], c["still_held"], fast, drop,
                      dropped, caught_up, catch_up, len(game.flags),
                      result.table.result() == "void", _turn_shifted(game), every)


def _turn_shifted(game: Any) -> bool:
    """Whether a move of the record is of the other colour than the game's move in its place
    (the games played alternate light and dark from the first move)."""
    board_moves = [m for m in game.moves if m.colour is not None]
    return any(m.colour.value != ("light" if k % 2 == 0 else "dark")
               for k, m in enumerate(board_moves))


def _play(job: tuple[str, int, int, bool, float, bool, bool, float, int]) -> GameResult:
    import cv2

    cv2.setNumThreads(1)
    setup, seed, turns, knock, fps, measured_lens, fast, drop, every = job
    return play_game(setup, seed, turns, knock=knock, fps=fps, measured_lens=measured_lens,
                     fast=fast, drop=drop, every=every)


def _good(r: GameResult) -> bool:
    """Every move right, no void, no shifted turn; no flag at all, or with pieces dropped
    from the readings, none left up at the end."""
    flags_ok = r.flags_up_at_end == 0 if r.drop else r.flags == 0
    return not r.first_wrong and flags_ok and not r.void and not r.turn_shifted


def evaluate_games(setups: Sequence[str], seeds: Sequence[int], turns: int, out: Path, *,
                   knock: bool = False, jobs: int = 1, fps: float = FPS,
                   measured_lens: bool = True, fast: bool = False, drop: float = 0.0,
                   every: int = 1) -> int:
    """Play every (setup, seed) game, write the CSV table (one row a game, then the total)
    and print a summary. Returns 0 when every game is good (`_good`), else 1."""
    if not 0.0 <= drop <= 1.0:
        raise ValueError("the share of pieces dropped must lie between 0 and 1")
    if every < 1:
        raise ValueError("the loop reads at least one frame in every so many")
    work = [(s, seed, turns, knock, fps, measured_lens, fast, drop, every)
            for seed in seeds for s in setups]
    return write_games(run_all(_play, work, jobs), out)


_Job = TypeVar("_Job")


def run_all(play: Callable[[_Job], GameResult], work: Sequence[_Job],
            jobs: int = 1) -> list[GameResult]:
    """`play` each piece of `work`, `jobs` at once (in processes of their own), in order."""
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            return list(pool.imap(play, work))
    return [play(job) for job in work]


def write_games(results: Sequence[GameResult], out: Path) -> int:
    """Write the CSV table of `results` (one row a game, then the total) and print a
    summary line a game. Returns 0 when every game is good (`_good`), else 1."""
    out.parent.mkdir(parents=True, exist_ok=True)
    total = GameResult(
        "all", -1, any(r.knock for r in results), sum(r.moves for r in results),
        sum(r.read_right for r in results),
        f"{sum(1 for r in results if r.first_wrong)} game(s)",
        sum(r.flags for r in results), sum(r.notices for r in results),
        tuple(d for r in results for d in r.delays), sum(r.frames for r in results),
        sum(r.hand_frames for r in results), sum(r.hand_frames_wrong for r in results),
        sum(r.still_frames for r in results), sum(r.still_frames_wrong for r in results),
        sum(r.still_frames_flagged for r in results),
        sum(r.still_frames_held for r in results), any(r.fast for r in results),
        max((r.drop for r in results), default=0.0),
        sum(r.pieces_dropped for r in results), sum(r.moves_caught_up for r in results),
        sum(r.catch_up_notices for r in results),
        sum(r.flags_up_at_end for r in results), any(r.void for r in results),
        any(r.turn_shifted for r in results), max((r.read_every for r in results), default=1))
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for r in [*results, total]:
            writer.writerow(r.row())
    for r in [*results, total]:
        mark = "ok " if _good(r) else "BAD" if r is not total else "   "
        delay = r.row()[8:10]
        print(f"{mark} {r.setup:<24} seed {r.seed:>3}  moves {r.read_right}/{r.moves}"
              f"  flags {r.flags} ({r.flags_up_at_end} up at the end)"
              f"  caught up {r.moves_caught_up}  catch-up notices {r.catch_up_notices}"
              + (f"  pieces dropped {r.pieces_dropped}" if r.drop else "")
              + (" VOID" if r.void else "") + (" TURN SHIFTED" if r.turn_shifted else "")
              + f"  delay median {delay[0]} s max {delay[1]} s"
              f"  hand frames wrong {r.hand_frames_wrong}/{r.hand_frames}"
              f"  still wrong {r.still_frames_wrong}/{r.still_frames}"
              + (f"  ({r.first_wrong})" if r.first_wrong and r is not total else ""),
              file=sys.stderr)
    print(f"written to {out}", file=sys.stderr)
    return 0 if all(_good(r) for r in results) else 1
