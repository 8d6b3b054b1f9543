"""`ponte eval games --videos DIR`: recorded game videos through the live loop.

`ponte eval games` renders its games on the fly; this reads games already on disk, such as
the ray-traced ones `python -m lab.raytrace.games` writes and `lab/frozen/raytrace-games`
keeps. A folder of game videos holds, per game `NN`:

- `NN.mp4`: the video;
- `NN.jsonl` (or gzipped, `NN.jsonl.gz`): one JSON truth line per video frame, in frame
  order: `index`, `time_s`, `move` (moves completed so far), `phase` (`still` or
  `hand`), `board` (rows, top rank first, `.` `L` `D`), `bridges` (pairs of cells),
  `bumped` (the camera has been knocked), `setup` (and `occluded_cells`, `corners`,
  which are not read here);
- `NN.moves`: the moves played, one a line.

Each video goes through the live loop as `ponte transcribe` runs it: the file opened with
`open_source` (cv2.VideoCapture), the camera calibrating itself from the empty board at the
start, the settling, the referee. Meanwhile the camera's readings are counted against the
truth line of their frame (matched by frame index), and the record that comes out is
compared with `NN.moves`. The table is `ponte eval games`'s (`lab.gameeval.COLUMNS`), one
row a game: `seed` is the game's number `NN`, `knock` whether any of its frames is
`bumped`, and the `fast` and `drop` columns stay 0 (the videos are played as recorded).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lab.gameeval import GameResult, PutDown, Watched, game_result, run_all, write_games
from ponte.live.loop import transcribe
from ponte.live.settle import DEFAULT_WINDOW
from ponte.live.sources import Frame, FrameSource, SourceError, open_source

FROZEN = Path(__file__).parent / "frozen"
"""Where frozen sets are kept; a folder of game videos may be named by its name there."""


class GameVideoError(ValueError):
    """A folder of game videos that cannot be read as one (the message says which file and
    why, in one line)."""


@dataclass(frozen=True)
class TruthLine:
    """What one frame of a game video shows, as its truth line says."""

    index: int
    time_s: float
    move: int
    """Moves completed on the board so far."""
    phase: str
    """"still", or "hand" while a hand is over the board."""
    board: tuple[str, ...]
    bridges: tuple[tuple[str, str], ...]
    bumped: bool
    setup: str


@dataclass(frozen=True)
class GameVideo:
    """One game of a folder: its video, the truth of each of its frames, the moves played."""

    number: int
    video: Path
    truths: tuple[TruthLine, ...]
    moves: tuple[str, ...]


def video_folder(name: str) -> Path:
    """The folder `name` gives: a folder as it is, else the frozen set of that name."""
    for folder in (Path(name), FROZEN / name):
        if folder.is_dir():
            return folder
    known = ", ".join(sorted(p.name for p in FROZEN.glob("*") if any(p.glob("*.mp4"))))
    raise GameVideoError(f"no folder of game videos {name!r}: give a folder holding NN.mp4, "
                         f"NN.jsonl and NN.moves, or one of {known or '(none frozen yet)'}")


def _truth_line(record: Any) -> TruthLine:
    return TruthLine(int(record["index"]), float(record["time_s"]), int(record["move"]),
                     str(record["phase"]), tuple(str(r) for r in record["board"]),
                     tuple((str(a), str(b)) for a, b in record["bridges"]),
                     bool(record["bumped"]), str(record.get("setup", "-")))


def read_truths(path: Path) -> tuple[TruthLine, ...]:
    """The truth lines of `path`, checked to number the frames 0, 1, 2, ... in order."""
    truths: list[TruthLine] = []
    opened = (gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz"
              else path.open(encoding="utf-8"))
    with opened as handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            try:
                truth = _truth_line(json.loads(text))
            except json.JSONDecodeError as exc:
                raise GameVideoError(f"{path}:{number}: not JSON ({exc.msg})") from None
            except KeyError as exc:
                raise GameVideoError(f"{path}:{number}: no {exc.args[0]!r} in the truth "
                                     "line") from None
            except (TypeError, ValueError) as exc:
                raise GameVideoError(f"{path}:{number}: a truth line of the wrong shape "
                                     f"({exc})") from None
            if truth.index != len(truths):
                raise GameVideoError(f"{path}:{number}: the truth of frame {truth.index} "
                                     f"where frame {len(truths)}'s belongs")
            truths.append(truth)
    return tuple(truths)


def _frame_count(video: Path) -> int:
    """How many frames the container says `video` holds (0 when it does not say)."""
    try:
        source = open_source(str(video))
    except SourceError as exc:
        raise GameVideoError(str(exc)) from None
    try:
        return int(getattr(source, "frame_count", 0))
    finally:
        source.close()


def load_games(folder: Path) -> list[GameVideo]:
    """Every game of `folder`, in number order, each checked to have its truth and moves
    and as many truth lines as its video has frames (before any of them is read)."""
    if not folder.is_dir():
        raise GameVideoError(f"no such folder: {folder}")
    videos = sorted(p for p in folder.glob("*.mp4") if p.stem.isdigit())
    if not videos:
        raise GameVideoError(f"{folder} holds no game videos (NN.mp4 with NN.jsonl and "
                             "NN.moves)")
    games = []
    for video in videos:
        truth_file, moves_file = video.with_suffix(".jsonl"), video.with_suffix(".moves")
        if not truth_file.is_file() and video.with_suffix(".jsonl.gz").is_file():
            truth_file = video.with_suffix(".jsonl.gz")
        for needed in (truth_file, moves_file):
            if not needed.is_file():
                raise GameVideoError(f"{video} has no {needed.name} beside it")
        truths = read_truths(truth_file)
        frames = _frame_count(video)
        if frames and frames != len(truths):
            raise GameVideoError(f"{video} has {frames} frames but {truth_file.name} "
                                 f"{len(truths)} truth lines")
        moves = tuple(line.strip() for line in moves_file.read_text(encoding="utf-8")
                      .splitlines() if line.strip())
        games.append(GameVideo(int(video.stem), video, truths, moves))
    return games


class _VideoFrames:
    """A game video's frames as `ponte transcribe` reads them, each with its truth line:
    the truth of the frame last read is `truth`."""

    live = False

    def __init__(self, source: FrameSource, game: GameVideo) -> None:
        self._source = source
        self._game = game
        self.description = source.description
        self.truth: TruthLine | None = None
        self.put_down = PutDown()
        self.frames = 0
        """Frames of the video passed so far (read, or skipped as undecodable)."""

    def read(self) -> Frame | None:
        frame = self._source.read()
        if frame is None:
            return None
        truths = self._game.truths
        if frame.index >= len(truths):
            raise GameVideoError(f"{self._game.video} has more frames than its "
                                 f"{len(truths)} truth lines")
        self.truth = truths[frame.index]
        self.put_down.see(self.truth)
        self.frames = frame.index + 1
        return frame

    def close(self) -> None:
        self._source.close()


def read_game(game: GameVideo) -> GameResult:
    """Read one game video through the live loop; its row of the table (a `GameResult`)."""
    import cv2

    cv2.setNumThreads(1)
    try:
        source = open_source(str(game.video))
    except SourceError as exc:
        raise GameVideoError(str(exc)) from None
    frames = _VideoFrames(source, game)
    camera = Watched(frames)
    try:
        result = transcribe(frames, camera, settle_window=DEFAULT_WINDOW)
    finally:
        frames.close()
    if not result.table.over and frames.frames != len(game.truths):
        raise GameVideoError(f"{game.video} ended after {frames.frames} frames but has "
                             f"{len(game.truths)} truth lines")
    knock = any(t.bumped for t in game.truths)
    setup = game.truths[0].setup if game.truths else "-"
    return game_result(setup, game.number, knock, game.moves, result, frames.put_down.times,
                       camera)


def evaluate_videos(folder: Path, out: Path, *, jobs: int = 1) -> int:
    """Read every game video of `folder` (`jobs` at once), write the table of
    `ponte eval games` to `out` (one row a game, then the total) and print a summary.
    Returns 0 when every game is good, else 1; raises GameVideoError, before any game is
    read, when the folder is not one of game videos."""
    return write_games(run_all(read_game, load_games(folder), jobs), out)
