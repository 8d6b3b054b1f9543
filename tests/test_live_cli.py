"""The live loop's commands: transcribe, games, export, demo, watch — and their errors."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ponte.commands.live as live_commands
from lab.scenes import demo_game
from ponte.cli import main
from ponte.commands.demo import DEMO_VIDEO
from ponte.live.session import LiveSession
from ponte.live.settle import BoardView, Reading
from ponte.live.store import Store
from referee import read_record
from tests import waiting
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
    moves, at, illegal = demo_game()
    out = tmp_path / "demo.pdd"
    assert main(["transcribe", str(DEMO_VIDEO), "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    lines = [e for e in lines if e["type"] != "notice"]  # light cannot place two, near the end
    kinds = (["move"] * at + ["illegal", "corrected"] + ["move"] * (len(moves) - at - 2)
             + ["pass", "move", "end"])
    assert [e["type"] for e in lines] == kinds
    assert [e["move"] for e in lines if e["type"] in ("move", "pass")] == moves
    assert lines[0] == {"type": "move", "ply": 1, "move": moves[0], "colour": "light",
                        "t": lines[0]["t"]} and lines[0]["t"] > 0
    flagged = lines[at]
    assert flagged["reason"] in ("group_too_large", "island_too_close")
    assert set(illegal.split(",")) <= set(flagged["cells"])
    assert lines[at + 1]["undone"] is True
    assert lines[-1]["termination"] == "passed" and lines[-1]["result"] != "*"
    assert "transcribe [" not in captured.err  # no progress bar into a non-terminal
    assert f"transcribe: {len(moves)} moves, result {lines[-1]['result']}" in captured.err
    record = read_record(out.read_text().splitlines())
    assert [str(m) for m in record.moves] == moves
    [fix] = record.corrections
    assert fix.before == at and set(str(fix.move).split(",")) <= set(illegal.split(","))


@pytest.mark.slow
def test_transcribe_cli_with_the_ground_truth_stand_in(
    video: tuple[Path, GroundTruthReader], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, reader = video
    monkeypatch.setattr(live_commands, "camera_reader", lambda args: reader)
    out = tmp_path / "game.pdd"
    assert main(["transcribe", str(path), "--out", str(out), "--json", "--quiet"]) == 0
    captured = capsys.readouterr()
    kinds = [json.loads(line)["type"] for line in captured.out.splitlines()]
    assert kinds == ["move"] * 4 + ["illegal", "corrected", "move"]  # unfinished: no end
    assert captured.err.startswith("transcribe: 5 moves")
    assert "flagged and corrected before move 5: b4,e6 (" in captured.err
    record = read_record(out.read_text().splitlines())
    assert [str(m) for m in record.moves] == MOVES + ["e8,f2"]
    assert [str(c.move) for c in record.corrections] == ["b4,e6"]
    assert record.corrections[0].before == 4 and record.corrections[0].note
    assert sorted(record.times) == [0, 1, 2, 3, 4]
    assert record.times[4] > (record.corrections[0].t or 0) > record.times[3]


def test_transcribe_checks_its_out_file_before_reading_the_video(
    video: tuple[Path, GroundTruthReader], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, reader = video
    read: list[float] = []
    original = reader.read
    monkeypatch.setattr(reader, "read", lambda image, t: read.append(t) or original(image, t))
    monkeypatch.setattr(live_commands, "camera_reader", lambda args: reader)
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    for out in (tmp_path / "no" / "such" / "g.pdd", tmp_path, a_file / "g.pdd"):
        assert main(["transcribe", str(path), "--out", str(out)]) == 2
        assert "cannot write" in capsys.readouterr().err
    assert read == []  # refused before a frame was read


def test_transcribe_draws_its_progress_bar_only_on_a_terminal(
    video: tuple[Path, GroundTruthReader], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, reader = video
    monkeypatch.setattr(live_commands, "camera_reader", lambda args: reader)
    out = tmp_path / "g.pdd"
    assert main(["transcribe", str(path), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "transcribe [" not in err and err.startswith("transcribe: ")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["transcribe", str(path), "--out", str(out)]) == 0
    assert "100.0%" in capsys.readouterr().err


def test_transcribe_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["transcribe", str(tmp_path / "nope.mp4"), "--out", "x.pdd"]) == 2
    assert "no such video" in capsys.readouterr().err
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video")
    assert main(["transcribe", str(junk), "--out", str(tmp_path / "x.pdd")]) == 2
    assert "not a video" in capsys.readouterr().err
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


def test_watch_on_a_camera_that_is_not_there_says_so_once_in_its_own_words(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    index = next(k for k in range(57, 99) if not Path(f"/dev/video{k}").exists())
    args = ["watch", "--source", str(index), "--no-web", "--data", str(tmp_path),
            "--duration", "1.5"]
    assert main(args) == 0
    err = capfd.readouterr().err  # OpenCV writes to the file descriptor itself
    assert "WARN" not in err and "VIDEOIO" not in err and "cap_" not in err
    waiting = [line for line in err.splitlines() if "waiting for camera" in line]
    assert waiting == [f"watch: waiting for camera {index}: cannot open camera {index}: there "
                       f"is no /dev/video{index} (is the camera plugged in?) (retrying; Ctrl-C "
                       "to stop)"]


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
def test_watch_prints_a_line_for_each_move_and_flag(
    video: tuple[Path, GroundTruthReader], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    path, reader = video
    monkeypatch.setattr(live_commands, "camera_reader", lambda args: reader)
    args = ["watch", "--source", str(path), "--no-web", "--data", str(tmp_path)]
    assert main(args) == 0
    lines = [line for line in capsys.readouterr().err.splitlines()
             if re.match(r"watch: (\d+\. |flag: |corrected: )", line)]
    colours = ["light", "dark"] * 3
    assert lines[:4] == [f"watch: {n + 1}. {colours[n]} {m}" for n, m in enumerate(MOVES)]
    assert lines[4].startswith("watch: flag: light b4,e6 - ")
    assert lines[5:] == ["watch: corrected: b4,e6 taken back", "watch: 5. light e8,f2"]


@pytest.mark.slow
def test_demo_reads_every_move_of_the_bundled_whole_game(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import cv2

    from referee import BridgeShape, bridge_shape, parse_move

    moves, at, illegal = demo_game()
    # the game shows what a newcomer should see: every bridge shape, a pass, an end
    shapes = {bridge_shape(m.b.file - m.a.file, m.b.rank - m.a.rank)
              for m in map(parse_move, moves) if "-" in str(m)}
    assert shapes == set(BridgeShape) and "pass" in moves and at > 0
    frames = int(cv2.VideoCapture(str(DEMO_VIDEO)).get(cv2.CAP_PROP_FRAME_COUNT))
    assert DEMO_VIDEO.stat().st_size < 8_000_000
    # a faster speed paces the frames faster; the moves read are the same
    assert main(["demo", "--headless", "--once", "--speed", "4", "--data", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert f"{frames} frames, {len(moves)} moves read: {' '.join(moves)}" in err
    lines = [line for line in err.splitlines() if line.startswith("demo: ")]
    said = [line.split(" ", 2)[2] for line in lines
            if line.split(" ")[1].endswith(".") and line.split(" ")[1][:-1].isdigit()]
    assert [m.rsplit(" ", 1)[1] for m in said] == moves  # one line per move, in order
    assert f"demo: {len(moves)}. dark {moves[-1]}" in lines
    assert any(line.startswith(f"demo: flag: {'light' if at % 2 == 0 else 'dark'} {illegal} - ")
               for line in lines)
    assert f"demo: corrected: {illegal} taken back" in lines
    assert Store(tmp_path).games()[0]["tags"]["Event"] == "Ponte demo"
    assert any(line.startswith("demo: end: ") and "(passed)" in line for line in lines)


def test_a_demo_that_reads_no_move_says_so_and_fails(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # the video's first half second is the empty board: no move can be read in it
    args = ["demo", "--headless", "--duration", "0.5", "--data", str(tmp_path)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "0 moves read" in err and "no move was read, so the demo failed" in err


def test_demo_without_a_display_opens_no_browser_and_says_where_to_look(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import webbrowser

    import ponte.commands.demo as demo

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **k: bool(opened.append(url)))
    monkeypatch.setattr(demo, "has_display", lambda: False)
    args = ["demo", "--once", "--duration", "0.3", "--port", "0", "--data", str(tmp_path)]
    main(args)
    err = capsys.readouterr().err
    assert opened == []
    assert "no display here, so no browser is opened; open http://127.0.0.1:" in err


@pytest.mark.parametrize(("env", "platform", "seen"), [
    ({}, "linux", False), ({"DISPLAY": ":0"}, "linux", True),
    ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True), ({}, "darwin", True)])
def test_a_display_is_there_with_x_or_wayland_on_linux(
        monkeypatch: pytest.MonkeyPatch, env: dict[str, str], platform: str, seen: bool) -> None:
    import ponte.commands.demo as demo

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(demo.sys, "platform", platform)
    assert demo.has_display() is seen


def test_console_lines_say_each_move_flag_correction_and_end() -> None:
    from ponte.commands.live import console_line

    assert console_line("move", {"ply": 3, "colour": "light", "move": "c7-e5"}) == (
        "3. light c7-e5")
    assert console_line("move", {"ply": 9, "colour": "light", "move": "pass"}) == (
        "9. light pass")
    assert console_line("illegal", {"colour": "dark", "move": "e1,f1", "message": "too big"}) \
        == "flag: dark e1,f1 - too big"
    assert console_line("corrected", {"move": "e1,f1"}) == "corrected: e1,f1 taken back"
    end = {"winner": "dark", "termination": "passed",
           "score": {"light": {"points": 9}, "dark": {"points": 13}}}
    assert console_line("end", end) == "end: dark wins, light 9 - dark 13 (passed)"
    assert console_line("camera", {"status": "ok"}) is None


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
    monkeypatch.setattr(live_commands, "camera_reader",
                        lambda args: GroundTruthReader(path, truths))
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

    def wait_for(what: str, check: Callable[[], Any], timeout: float = 40) -> Any:
        try:
            return waiting.wait_for(check, timeout, what, interval=0.2)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; stderr: {''.join(lines)}") from None

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
        time.sleep(1.0)  # time for a few more failed attempts, to show still one message
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


def _played(store: Store, boards: list[dict[str, str]], light: str, dark: str) -> LiveSession:
    """A session that saw each board settle in turn."""
    session = LiveSession(store, resume=False, tags={"Light": light, "Dark": dark})
    t = 0.0
    for board in boards:
        for _ in range(20):
            t += 1 / 30
            session.feed(Reading(t, BoardView.of(board)))
    return session


def _boards_with_a_correction() -> list[dict[str, str]]:
    boards = [{"e5": "light", "f6": "light"}]
    for add in ({"j9": "dark", "j10": "dark"}, {"e4": "light", "e6": "light"},
                {"a1": "dark", "a2": "dark"}):
        boards.append({**boards[-1], **add})
    boards.append({**boards[-1], "e3": "light", "h1": "light"})  # a group of 5: flagged
    boards.append({**boards[-2], "h1": "light", "h2": "light"})  # taken back, played instead
    return boards


def test_export_keeps_move_times_and_corrections_for_the_referee(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    _played(Store(data), _boards_with_a_correction(), "Ann", "Bob")
    out = tmp_path / "g.pdd"
    assert main(["export", "1", "--data", str(data), "--out", str(out)]) == 0
    text = out.read_text()
    assert "# [%corrected e3,h1] [%t 3.1] tiles on e3,h1 would make a group of 5" in text
    record = read_record(text.splitlines())
    assert [str(m) for m in record.moves] == ["e5,f6", "j9,j10", "e4,e6", "a1,a2", "h1,h2"]
    assert sorted(record.times) == [0, 1, 2, 3, 4] and record.times[4] == 3.8
    assert main(["referee", "--json", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [m["t"] for m in report["moves"]] == [record.times[k] for k in range(5)]
    [fix] = report["corrected"]
    assert fix["ply"] == 5 and fix["move"] == "e3,h1" and "group of 5" in fix["reason"]
    assert main(["export", "1", "--format", "json", "--data", str(data)]) == 0
    [fix] = json.loads(capsys.readouterr().out)["corrected"]
    assert fix["ply"] == 5 and fix["move"] == "e3,h1" and fix["t"] == pytest.approx(3.13, 0.01)


def test_a_game_ended_from_the_controls_exports_what_the_referee_judges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    session = _played(Store(data), _boards_with_a_correction()[:3], "Ann", "Bob")
    session.control("end_game", {})
    out = tmp_path / "ended.pdd"
    assert main(["export", "1", "--data", str(data), "--out", str(out)]) == 0
    text = out.read_text()
    assert '[Result "light"]' in text and '[Termination "ended"]' in text
    assert main(["referee", "--json", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["over"] and report["result"] == "light" and report["result_agrees"] is True


def _evening(data: Path) -> None:
    """Three games: Ann beats Bob, Bob beats Cleo, Cleo and Ann unfinished."""
    store = Store(data)
    boards = _boards_with_a_correction()[:3]
    for light, dark in (("Ann", "Bob"), ("Bob", "Cleo"), ("Cleo", "Ann")):
        session = _played(store, boards, light, dark)
        if light != "Cleo":
            session.control("end_game", {})
    store.close()


def test_export_all_writes_every_game_and_the_referee_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    _evening(data)
    out = tmp_path / "evening.pdd"
    assert main(["export", "--all", "--data", str(data), "--out", str(out)]) == 0
    assert main(["referee", "--json", str(out)]) == 0
    reports = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["game"] for r in reports] == [1, 2, 3]
    assert [r["result"] for r in reports] == ["light", "light", "*"]
    assert all(r["legal"] and r["result_agrees"] is not False for r in reports)
    assert main(["export", "--all", "--format", "json", "--data", str(data)]) == 0
    games = json.loads(capsys.readouterr().out)
    assert [(g["id"], g["tags"]["Light"]) for g in games] == [(1, "Ann"), (2, "Bob"), (3, "Cleo")]
    assert main(["export", "--data", str(data)]) == 2
    assert "id or --all" in capsys.readouterr().err
    assert main(["export", "1", "--all", "--data", str(data)]) == 2


def test_games_standings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    _evening(data)
    assert main(["games", "--standings", "--json", "--data", str(data)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["player"], r["games"], r["wins"], r["draws"], r["losses"], r["points"])
            for r in rows] == [("Ann", 1, 1, 0, 0, 1.0), ("Bob", 2, 1, 0, 1, 1.0),
                               ("Cleo", 1, 0, 0, 1, 0.0)]
    assert main(["games", "--standings", "--data", str(data)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["#", "player", "games", "won", "drawn", "lost", "points"]
    assert table[1].split() == ["1", "Ann", "1", "1", "0", "0", "1"]
    assert table[3].split() == ["3", "Cleo", "1", "0", "0", "1", "0"]


def test_games_on_a_missing_folder_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    assert main(["games", "--data", str(missing)]) == 2
    assert "does not exist" in capsys.readouterr().err and not missing.exists()
    assert main(["export", "1", "--data", str(missing)]) == 2
    assert not missing.exists()
    assert main(["games", "--data", str(tmp_path)]) == 2
    assert "no games recorded" in capsys.readouterr().err
    assert not (tmp_path / "ponte.sqlite3").exists()


def test_a_flagged_move_taken_back_later_exports_what_the_referee_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    boards = _boards_with_a_correction()[:5]  # e3,h1 flagged and left on the board
    boards.append({**boards[-1], "b8": "dark", "b9": "dark"})
    back = {k: v for k, v in boards[-1].items() if k not in ("e3", "h1")}
    boards += [back, {**back, "c8": "light", "c9": "light"}]
    data = tmp_path / "data"
    _played(Store(data), boards, "Ann", "Bob")
    out = tmp_path / "g.pdd"
    assert main(["export", "1", "--data", str(data), "--out", str(out)]) == 0
    text = out.read_text()
    assert "5. e3,h1       # [%flagged] [%t 3.1]" in text
    assert "6. b8,b9       # [%t 3.8]\n# [%cleared 5] taken back\n7. c8,c9" in text
    assert main(["referee", "--json", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["legal"] and len(report["moves"]) == 7 and report["result"] == "*"
    assert report["moves"][4]["flagged"] and report["moves"][4]["withdrawn"]


def test_games_in_the_default_folder_before_any_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert main(["games"]) == 0
    assert "no games recorded yet" in capsys.readouterr().out
    assert not (tmp_path / "share").exists()
