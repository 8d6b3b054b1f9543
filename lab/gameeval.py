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
  to absorb).
"""

from __future__ import annotations

import csv
import dataclasses
import statistics
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contracts.live import EventType
from lab.scenes import boards_of_moves, demo_moves, position_of, rows_of
from ponte.live.camera import CameraReader
from ponte.live.loop import transcribe
from ponte.live.settle import DEFAULT_WINDOW, BoardView, Reading, cell_key
from ponte.live.sources import Frame

FPS = 15.0
KNOCK_AT_S = 6.0
"""With `--knock`, when the camera is knocked (in the still time after the first move)."""
JPEG_QUALITY = 85

COLUMNS = ["setup", "seed", "knock", "moves", "read_right", "first_wrong", "flags",
           "notices", "delay_median_s", "delay_max_s", "frames", "hand_frames",
           "hand_frames_wrong", "still_frames", "still_frames_wrong", "still_frames_flagged",
           "still_frames_held"]


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

    def row(self) -> list[object]:
        delays = self.delays
        return [self.setup, self.seed, int(self.knock), self.moves, self.read_right,
                self.first_wrong, self.flags, self.notices,
                f"{statistics.median(delays):.2f}" if delays else "",
                f"{max(delays):.2f}" if delays else "", self.frames, self.hand_frames,
                self.hand_frames_wrong, self.still_frames, self.still_frames_wrong,
                self.still_frames_flagged, self.still_frames_held]


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


class _Frames:
    """A `FrameSource` over rendered frames, each compressed and decompressed as a webcam's
    video is; keeps the truth of the frame last read."""

    live = False
    description = "generated game video"

    def __init__(self, frames: Iterator[tuple[Any, Any]], fps: float) -> None:
        self._frames = frames
        self._fps = fps
        self.truth: Any = None
        self.put_down: list[float] = []
        """When the last piece of each move was put down (seconds)."""
        self._changed = 0.0
        self._seen: tuple[Any, Any] | None = None

    def read(self) -> Frame | None:
        import cv2
        import numpy as np

        item = next(self._frames, None)
        if item is None:
            return None
        image, self.truth = item
        seen = (self.truth.board, self.truth.bridges)
        if seen != self._seen:
            self._seen, self._changed = seen, self.truth.time_s
        if self.truth.move > len(self.put_down):
            self.put_down.append(self._changed)
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        if not ok:
            raise RuntimeError("cannot JPEG-encode a generated frame")
        decoded = cv2.imdecode(np.frombuffer(data.tobytes(), np.uint8), cv2.IMREAD_COLOR)
        return Frame(decoded, self.truth.index / self._fps, self.truth.index)


class _Watched(CameraReader):
    """The live loop's camera, counting its readings against the frames' truth."""

    def __init__(self, frames: _Frames, calibration: Any | None = None) -> None:
        super().__init__(calibration)
        self._frames = frames
        self.counts = dict(hand=0, hand_wrong=0, still=0, still_wrong=0, still_flagged=0,
                           still_held=0)

    def read(self, image: Any, t: float) -> Reading:
        reading = super().read(image, t)
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
              fps: float = FPS, measured_lens: bool = True) -> GameResult:
    """Render one game of `turns` board moves on `setup` and read it through the live loop."""
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
    timing = SequenceTiming(fps=fps, still_s=1.5,
                            bump=CameraBump(at_s=KNOCK_AT_S) if knock else None)
    calibration = None
    if spec.camera.distorted and measured_lens:
        # A wide-angle webcam is set up as the README says: its lens measured
        # (`ponte calibrate-lens`) and the empty board calibrated with it.
        from calibration.make import make_calibration
        from lab.evaluate import empty_photo

        photo, lens = empty_photo(spec)
        calibration = make_calibration(photo, lens=lens, empty=True)
    frames = _Frames(render_sequence(positions, spec, timing, hand), fps)
    camera = _Watched(frames, calibration)
    result = transcribe(frames, camera, settle_window=DEFAULT_WINDOW)
    read = [str(m.move) for m in result.table.game.moves if not m.withdrawn]
    right, first_wrong = compare_moves(moves, read)
    committed = [float(data["t"]) for kind, data in result.events
                 if kind is EventType.MOVE and data.get("move") not in ("swap", "pass")]
    delays = tuple(round(c - t, 3)
                   for c, t in zip(committed[:right], frames.put_down, strict=False))
    flags = sum(1 for kind, _ in result.events if kind is EventType.ILLEGAL)
    notices = sum(1 for kind, _ in result.events if kind is EventType.NOTICE)
    c = camera.counts
    return GameResult(setup, seed, knock, len(moves), right, first_wrong, flags, notices,
                      delays, result.frames, c["hand"], c["hand_wrong"], c["still"],
                      c["still_wrong"], c["still_flagged"], c["still_held"])


def _play(job: tuple[str, int, int, bool, float, bool]) -> GameResult:
    import cv2

    cv2.setNumThreads(1)
    setup, seed, turns, knock, fps, measured_lens = job
    return play_game(setup, seed, turns, knock=knock, fps=fps, measured_lens=measured_lens)


def evaluate_games(setups: Sequence[str], seeds: Sequence[int], turns: int, out: Path, *,
                   knock: bool = False, jobs: int = 1, fps: float = FPS,
                   measured_lens: bool = True) -> int:
    """Play every (setup, seed) game, write the CSV table (one row a game, then the total)
    and print a summary. Returns 0 when every game's record is right with no flag, else 1."""
    work = [(s, seed, turns, knock, fps, measured_lens) for seed in seeds for s in setups]
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            results = list(pool.imap(_play, work))
    else:
        results = [_play(job) for job in work]
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for r in results:
            writer.writerow(r.row())
        total = GameResult(
            "all", -1, knock, sum(r.moves for r in results),
            sum(r.read_right for r in results),
            f"{sum(1 for r in results if r.first_wrong)} game(s)",
            sum(r.flags for r in results), sum(r.notices for r in results),
            tuple(d for r in results for d in r.delays), sum(r.frames for r in results),
            sum(r.hand_frames for r in results), sum(r.hand_frames_wrong for r in results),
            sum(r.still_frames for r in results), sum(r.still_frames_wrong for r in results),
            sum(r.still_frames_flagged for r in results),
            sum(r.still_frames_held for r in results))
        writer.writerow(total.row())
    for r in [*results, total]:
        mark = "ok " if not r.first_wrong and not r.flags else "BAD" if r is not total else "   "
        delay = r.row()[8:10]
        print(f"{mark} {r.setup:<24} seed {r.seed:>3}  moves {r.read_right}/{r.moves}"
              f"  flags {r.flags}  delay median {delay[0]} s max {delay[1]} s"
              f"  hand frames wrong {r.hand_frames_wrong}/{r.hand_frames}"
              f"  still wrong {r.still_frames_wrong}/{r.still_frames}"
              + (f"  ({r.first_wrong})" if r.first_wrong and r is not total else ""),
              file=sys.stderr)
    print(f"written to {out}", file=sys.stderr)
    return 0 if all(not r.first_wrong and not r.flags for r in results) else 1
