"""The live loop's commands: transcribe, games, export, demo, watch — and their errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ponte.commands.live as live_commands
from lab.scenes import demo_moves
from ponte.cli import main
from ponte.commands.demo import DEMO_VIDEO
from ponte.live.session import LiveSession
from ponte.live.settle import BoardView, Reading
from ponte.live.store import Store
from referee import read_record
from tests.live_scenes import Beat, GroundTruthReader, boards_of_moves, render_script, write_video

MOVES = ["a1,a2", "j9,j10", "a3,b3", "h2,h3"]


@pytest.fixture
def video(tmp_path: Path) -> tuple[Path, GroundTruthReader]:
    boards = boards_of_moves(MOVES)
    bad = BoardView({**boards[-1].tiles, "b4": "light", "e6": "light"}, boards[-1].bridges)
    fixed = BoardView({**boards[-1].tiles, "e8": "light", "f2": "light"}, boards[-1].bridges)
    beats = [Beat(b) for b in boards] + [Beat(bad), Beat(fixed)]
    path = tmp_path / "game.avi"
    truths = write_video(path, render_script(beats))
    return path, GroundTruthReader(path, truths)


@pytest.mark.slow
def test_transcribe_reads_the_demo_video_through_the_vision_pipeline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    moves, at, illegal = demo_moves()
    out = tmp_path / "demo.pdd"
    assert main(["transcribe", str(DEMO_VIDEO), "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    kinds = ["move"] * at + ["illegal", "corrected"] + ["move"] * (len(moves) - at) + ["end"]
    assert [e["type"] for e in lines] == kinds
    assert [e["move"] for e in lines if e["type"] == "move"] == moves
    assert lines[0] == {"type": "move", "ply": 1, "move": moves[0], "colour": "light",
                        "t": lines[0]["t"]} and lines[0]["t"] > 0
    flagged = lines[at]
    assert flagged["reason"] in ("group_too_large", "island_too_close")
    assert set(illegal.split(",")) <= set(flagged["cells"])
    assert lines[at + 1]["undone"] is True
    assert lines[-1]["result"] == "*" and "light" in lines[-1]["score"]
    assert lines[-1]["t"] > lines[-2]["t"]  # the end of the recording
    assert "transcribe [" in captured.err and "100.0%" in captured.err
    record = read_record(out.read_text().splitlines())
    assert [str(m) for m in record.moves] == moves


@pytest.mark.slow
def test_transcribe_cli_with_the_ground_truth_stand_in(
    video: tuple[Path, GroundTruthReader], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, reader = video
    monkeypatch.setattr(live_commands, "_camera", lambda args: reader)
    out = tmp_path / "game.pdd"
    assert main(["transcribe", str(path), "--out", str(out), "--json", "--quiet"]) == 0
    captured = capsys.readouterr()
    kinds = [json.loads(line)["type"] for line in captured.out.splitlines()]
    assert kinds == ["move"] * 4 + ["illegal", "corrected", "move", "end"]
    assert captured.err.startswith("transcribe: 5 moves")
    assert [str(m) for m in read_record(out.read_text().splitlines()).moves] == MOVES + ["e8,f2"]


def test_transcribe_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["transcribe", str(tmp_path / "nope.mp4"), "--out", "x.pdd"]) == 2
    assert "no such video" in capsys.readouterr().err
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video")
    assert main(["transcribe", str(junk), "--out", str(tmp_path / "x.pdd")]) == 2
    assert "cannot open" in capsys.readouterr().err
    assert main(["transcribe", str(junk), "--out", "x.pdd", "--calibration",
                 str(tmp_path / "none.json")]) == 2
    assert "no such calibration file" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["transcribe", str(junk), "--out", "x.pdd", "--calibration", str(bad)]) == 2
    assert "not a calibration file" in capsys.readouterr().err
    assert main(["transcribe", str(junk), "--out", "x.pdd", "--settle", "-1"]) == 2


def test_games_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    session = LiveSession(Store(data), tags={"Light": "Ann", "Dark": "Bob"})
    for k in range(20):
        session.feed(Reading(k / 30, BoardView.of({"e5": "light", "f6": "light"})))
    assert main(["games", "--data", str(data)]) == 0
    listing = capsys.readouterr().out
    assert "Ann - Bob" in listing and "1 moves" in listing
    assert main(["export", "1", "--data", str(data)]) == 0
    assert "1. e5,f6" in capsys.readouterr().out
    out = tmp_path / "g.json"
    assert main(["export", "1", "--format", "json", "--data", str(data), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["moves"][0]["move"] == "e5,f6"
    assert main(["export", "7", "--data", str(data)]) == 2
    assert "no game 7" in capsys.readouterr().err


def test_watch_refuses_a_missing_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", "--source", str(tmp_path / "nothing"), "--data", str(tmp_path)]) == 2
    assert "no such camera, file or folder" in capsys.readouterr().err


def test_watch_waits_for_an_absent_camera_until_its_duration_ends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{_free_port()}/video.mjpg"  # nothing listens there
    args = ["watch", "--source", url, "--no-web", "--data", str(tmp_path), "--duration", "1"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert err.count(f"waiting for camera {url}: cannot open") == 1
    assert "game 1 started" in err and "0 frames, 0 moves" in err


def test_watch_records_into_the_data_folder_and_resumes_there(
    video: tuple[Path, GroundTruthReader], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = video
    data = tmp_path / "data"
    args = ["watch", "--source", str(path), "--no-web", "--data", str(data), "--duration", "1"]
    assert main(args) == 0
    assert "game 1 started" in capsys.readouterr().err
    assert main(args) == 0
    assert "game 1 resumed" in capsys.readouterr().err
    assert len(Store(data).games()) == 1


@pytest.mark.slow
def test_demo_runs_the_bundled_video_to_the_end(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--headless", "--once", "--speed", "2", "--data", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    moves = demo_moves()[0]
    assert "550 frames" in err and f"{len(moves)} moves read: {' '.join(moves)}" in err
    assert Store(tmp_path).games()[0]["tags"]["Event"] == "Ponte demo"


@pytest.mark.slow
def test_transcribe_reads_a_pass_from_the_board_and_ends_the_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    from referee.playout import heuristic_game

    game = heuristic_game(8)  # light cannot place two, passes; dark's last turn ends it
    moves = [str(m.move) for m in game.moves]
    assert moves[-2:] == ["pass", "i10,j10"] and game.outcome() is not None
    boards = boards_of_moves(moves)
    boards = [b for k, b in enumerate(boards) if k == 0 or not b.same_as(boards[k - 1])]
    path = tmp_path / "passed.avi"
    truths = write_video(path, render_script([Beat(b, hand_frames=3, still_frames=6)
                                              for b in boards]))
    monkeypatch.setattr(live_commands, "_camera", lambda args: GroundTruthReader(path, truths))
    out = tmp_path / "passed.pdd"
    assert main(["transcribe", str(path), "--out", str(out), "--json", "--quiet"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["type"] for e in lines[-3:]] == ["pass", "move", "end"]
    assert lines[-3] == {"type": "pass", "ply": len(moves) - 1, "move": "pass",
                         "colour": "light", "t": lines[-3]["t"]}
    assert lines[-2]["move"] == "i10,j10" and lines[-2]["colour"] == "dark"
    result = game.outcome().result  # type: ignore[union-attr]
    assert lines[-1]["termination"] == "passed" and lines[-1]["result"] == result
    assert [e["type"] for e in lines[:-3] if e["type"] != "notice"] == ["move"] * (len(moves) - 2)
    notices = [e for e in lines if e["type"] == "notice"]
    assert {e["kind"] for e in notices} == {"cannot_place_two"}
    assert "light cannot place two tiles" in notices[-1]["message"]
    record = read_record(out.read_text().splitlines())
    assert [str(m) for m in record.moves] == moves and record.tags["Result"] == result


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_watch_waits_for_a_camera_that_is_not_there_yet(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import threading
    import time
    import urllib.request

    import cv2

    from tests.live_scenes import MjpegCamera

    boards = boards_of_moves(["e5,f6"])
    frames = render_script([Beat(boards[0], hand_frames=0, still_frames=20),
                            Beat(boards[1], still_frames=300)])
    jpegs = [cv2.imencode(".jpg", image)[1].tobytes() for image, _ in frames]
    cam_port, web_port = _free_port(), _free_port()
    url = f"http://127.0.0.1:{cam_port}/video.mjpg"
    root = Path(__file__).resolve().parents[1]
    # A shell starts a background job with SIGINT ignored, and a child inherits that: run
    # under `... &`, the watch would never see the Ctrl-C. Any handler here (not "ignore")
    # makes the child start with the default, as from a terminal.
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            # (-X faulthandler: should it ever hang, SIGABRT makes it print every thread's
            # stack)
            [sys.executable, "-X", "faulthandler", "-m", "ponte", "watch", "--source", url,
             "--port", str(web_port), "--data", str(tmp_path / "data")],
            cwd=root, stderr=subprocess.PIPE, text=True,
        )
    finally:
        signal.signal(signal.SIGINT, before)
    lines: list[str] = []
    assert proc.stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr or []), daemon=True)
    reader.start()

    def wait_for(what: str, check: object, timeout: float = 40) -> object:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = check()  # type: ignore[operator]
            if value:
                return value
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; stderr: {''.join(lines)}")

    def state() -> dict | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/api/state", timeout=2) as r:
                return json.loads(r.read())  # type: ignore[no-any-return]
        except OSError:
            return None

    camera = None
    try:
        wait_for("the waiting message", lambda: any("waiting for camera" in x for x in lines))
        seen = wait_for("the web page", state)
        assert seen["camera"]["status"] == "unavailable"  # type: ignore[index]
        assert "cannot open" in seen["camera"]["message"]  # type: ignore[index]
        time.sleep(1.0)  # a few more failed attempts: still one message
        camera = MjpegCamera(cam_port, jpegs, fps=10)  # the camera comes
        wait_for("the move through the camera",
                 lambda: [m["move"] for m in (state() or {}).get("moves", [])] == ["e5,f6"])
        assert (state() or {})["camera"]["status"] == "ok"
        proc.send_signal(signal.SIGINT)
        try:
            assert proc.wait(20) == 0
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            proc.wait(10)
            reader.join(5)
            raise AssertionError("watch did not stop on Ctrl-C; where it was: "
                                 + "".join(lines)) from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if camera is not None:
            camera.close()
        reader.join(5)
        proc.stderr.close()
    err = "".join(lines)
    assert err.count("waiting for camera") == 1 and "frames arriving" in err
    assert "watch: stopped" in err and "Traceback" not in err
    store = Store(tmp_path / "data")
    assert store.game(1)["moves"][0]["move"] == "e5,f6"
    store.close()
