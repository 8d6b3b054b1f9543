"""`ponte referee`: records checked move by move, JSON and human output, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ponte.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "games"

OPENING = '[Board "10"]\n[Supply "physical"]\n1. a1,b1\n2. j10,j9\n3. a2,b2\n4. j1,j2\n'


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict]]:  # type: ignore[type-arg]
    status = main(["referee", "--json", *args])
    out = capsys.readouterr().out
    return status, [json.loads(line) for line in out.splitlines()]


def write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


def test_bundled_examples_are_legal_and_finished(capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(str(p) for p in EXAMPLES.glob("*.pdd"))
    assert len(files) >= 3
    status, reports = run_json(capsys, *files)
    assert status == 0
    for report in reports:
        assert report["legal"] and report["over"] and report["error"] is None
        assert report["winner"] in ("light", "dark", "draw")
        assert set(report["score"]["light"]) == {"points", "islands", "bridges"}
        assert [m["ply"] for m in report["moves"]] == list(range(1, len(report["moves"]) + 1))


def test_illegal_move_stops_the_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "bad.pdd", OPENING + "5. c3,h5\n6. e5,e6\n")
    status, [report] = run_json(capsys, path)
    assert status == 1
    assert report["legal"] is False and report["over"] is False and report["winner"] is None
    last = report["moves"][-1]
    assert last["ply"] == 5 and last["legal"] is False and len(report["moves"]) == 5
    assert "c3" in last["cells"] and "island" in last["reason"]
    assert report["score"]["light"]["islands"] == 1


def test_human_output_names_the_illegal_move_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "bad.pdd", OPENING + "\n# oops\n5. c3,h5\n")
    assert main(["referee", path]) == 1
    out = capsys.readouterr().out
    assert "illegal move c3,h5 at ply 5 (line 9)" in out and "island" in out


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("empty.pdd", b"", "empty"),
        ("garbage.pdd", bytes(range(256)) * 20, "binary"),
        ("latin1.pdd", "a1,b1\n# caf\xe9\n".encode("latin-1"), "UTF-8"),
        ("three.pdd", b"a1,b1,c1\n", "line 1"),
        ("tags.pdd", b'[Board "11"]\na1,b1\n', "Board"),
        ("only-tags.pdd", b'[Event "x"]\n', "no moves"),
    ],
)
def test_unreadable_files_are_errors_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, words: str
) -> None:
    good = write(tmp_path, "good.pdd", OPENING)
    bad = write(tmp_path, name, content)
    status, reports = run_json(capsys, bad, good)
    assert status == 2
    assert words in reports[0]["error"] and reports[0]["legal"] is False
    assert reports[1]["error"] is None and reports[1]["legal"] is True  # others still checked


def test_missing_file_and_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, reports = run_json(capsys, str(tmp_path / "nope.pdd"), str(tmp_path))
    assert status == 2
    assert "no such file" in reports[0]["error"] and "directory" in reports[1]["error"]


def test_a_50_mb_file_is_refused_quickly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "huge.pdd"
    with open(path, "wb") as f:
        f.write(b"pass\n" * (10 * 1024 * 1024))  # 50 MiB
    status, [report] = run_json(capsys, str(path))
    assert status == 2 and "MB" in report["error"]


@pytest.mark.parametrize(
    ("moves", "words"),
    [
        ("k1,a1", "not on the 10 x 10 board"),
        ("z99,a1", "z99 is not on"),
        ("a1,b1\nswap\na3-d3", "not a bridge"),
        ("a1,b1\na5,a6\nb5,b6", None),
    ],
)
def test_illegal_moves_get_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], moves: str, words: str | None
) -> None:
    status, [report] = run_json(capsys, write(tmp_path, "g.pdd", moves + "\n"))
    if words is None:
        assert status == 0 and report["legal"]
    else:
        assert status == 1 and words in report["moves"][-1]["reason"]


def test_moves_after_the_game_is_over(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = (EXAMPLES / "club-night.pdd").read_text() + "a1,b1\n"
    status, [report] = run_json(capsys, write(tmp_path, "over.pdd", record))
    assert status == 1
    assert "game is over" in report["moves"][-1]["reason"]


def test_flags_override_tags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "g.pdd", '[Board "10"]\nk11,l12\n')
    status, _ = run_json(capsys, path)
    assert status == 1
    status, [report] = run_json(capsys, "--board", "12", path)
    assert status == 0 and report["legal"]


def test_the_installed_command_runs(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("ponte")
    result = subprocess.run(
        [str(exe), "referee", "--json", str(EXAMPLES / "club-night.pdd")],
        capture_output=True, text=True, timeout=60, env={**os.environ},
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["over"] is True
    result = subprocess.run([str(exe), "referee", str(tmp_path / "x.pdd")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "no such file" in result.stderr


def test_a_wrong_result_tag_is_pointed_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = (EXAMPLES / "club-night.pdd").read_text()
    record = record.replace('[Result "light"]', '[Result "dark"]')
    assert main(["referee", write(tmp_path, "g.pdd", record)]) == 1
    assert "Result tag says 'dark', the moves give 'light'" in capsys.readouterr().out


def test_a_byte_order_mark_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = (EXAMPLES / "club-night.pdd").read_text()
    path = write(tmp_path, "bom.pdd", "\ufeff".encode() + record.encode())
    status, [report] = run_json(capsys, path)
    assert status == 0 and report["error"] is None and report["over"]
    path = write(tmp_path, "bom2.pdd", b"\xef\xbb\xbf" + OPENING.split("\n", 2)[2].encode())
    status, [report] = run_json(capsys, path)
    assert status == 0 and len(report["moves"]) == 4


def test_json_checks_the_result_tag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = (EXAMPLES / "club-night.pdd").read_text()
    status, [report] = run_json(capsys, write(tmp_path, "right.pdd", record))
    assert status == 0 and report["result"] == "light" and report["result_agrees"] is True
    wrong = write(tmp_path, "wrong.pdd", record.replace('[Result "light"]', '[Result "dark"]'))
    status, [report] = run_json(capsys, wrong)
    assert status == 1 and report["legal"] is True
    assert report["result_tag"] == "dark" and report["result_agrees"] is False
    banana = write(tmp_path, "banana.pdd", record.replace('[Result "light"]', '[Result "banana"]'))
    status, [report] = run_json(capsys, banana)
    assert status == 2 and "Result must be one of" in report["error"]
    assert report["error"].startswith("line 8:")


def test_a_bad_byte_far_into_the_file_is_on_its_own_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [b"1. a1,b1"] + [b"# a comment to make the file longer than 8 kB"] * 398
    lines.append(b"# caf\xe9")
    path = write(tmp_path, "late.pdd", b"\n".join(lines) + b"\n")
    assert len(Path(path).read_bytes()) > 16 * 1024
    status, [report] = run_json(capsys, path)
    assert status == 2 and report["error"].startswith("line 400:") and "UTF-8" in report["error"]


def test_a_long_record_illegal_at_move_2_fails_fast_in_small_memory(tmp_path: Path) -> None:
    path = tmp_path / "long.pdd"
    with open(path, "wb") as f:
        f.write(b"1. a1,b1\n2. a1,a2\n")
        f.write(b"c3,c4\n" * (15 * 1024 * 1024 // 6))  # 15 MB of moves after the illegal one
    exe = Path(sys.executable).with_name("ponte")
    out = tmp_path / "out.json"
    with open(out, "w") as handle:
        proc = subprocess.Popen([str(exe), "referee", "--json", str(path)], stdout=handle)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, by wait4
    report = json.loads(out.read_text())
    assert proc.returncode == 1
    assert [m["ply"] for m in report["moves"]] == [1, 2]
    assert usage.ru_maxrss < 150 * 1024, f"{usage.ru_maxrss / 1024:.0f} MB"  # kB on Linux
    cpu = usage.ru_utime + usage.ru_stime  # not wall time: the machine may be busy
    assert cpu < 10, f"{cpu:.1f} s of CPU"


ENDED = OPENING + "5. c5,c6\n"


def test_a_game_ended_at_the_table_is_judged_as_it_stands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = '[Result "light"]\n[Termination "ended"]\n' + ENDED
    status, [report] = run_json(capsys, write(tmp_path, "ended.pdd", record))
    assert status == 0 and report["over"] is True and report["termination"] == "ended"
    assert report["result"] == "light" and report["result_agrees"] is True
    status, [report] = run_json(capsys, write(tmp_path, "on.pdd", '[Result "light"]\n' + ENDED))
    assert status == 1 and report["over"] is False and report["result"] == "*"
    assert main(["referee", write(tmp_path, "ended2.pdd", record)]) == 0
    assert "game ended at the table" in capsys.readouterr().out


def test_a_file_of_several_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    club = (EXAMPLES / "club-night.pdd").read_text()
    text = club + "\n" + '[Event "second"]\n' + OPENING + "5. c3,h5\n6. e5,e6\n"
    path = write(tmp_path, "evening.pdd", text)
    status, reports = run_json(capsys, path)
    assert status == 1 and [r["game"] for r in reports] == [1, 2]
    assert reports[0]["legal"] and reports[0]["over"]
    assert not reports[1]["legal"] and reports[1]["moves"][-1]["ply"] == 5
    assert main(["referee", path]) == 1
    out = capsys.readouterr().out
    assert f"{path} (game 2): illegal move c3,h5 at ply 5" in out


def test_times_and_corrections_are_read_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = OPENING.replace("3. a2,b2", "3. a2,b2  # [%t 12.5]")
    text += "# [%corrected c3,h5] [%t 30.0] touches the island\n5. e5,e6\n"
    status, [report] = run_json(capsys, write(tmp_path, "t.pdd", text))
    assert status == 0 and report["moves"][2]["t"] == 12.5 and report["moves"][0]["t"] is None
    [fix] = report["corrected"]
    assert fix["ply"] == 5 and fix["move"] == "c3,h5" and fix["t"] == 30.0
    assert fix["legal"] is False and "island" in fix["reason"]
    assert main(["referee", write(tmp_path, "t2.pdd", text)]) == 0
    assert "corrected before ply 5: c3,h5 (" in capsys.readouterr().out


FLAGGED = OPENING + "5. c3,h5  # [%flagged]\n6. f1,g1\n7. c8,c9\n"


def test_a_flagged_move_taken_back_later_is_read_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = FLAGGED + "# [%cleared 5]\n8. f9,f10\n"
    status, [report] = run_json(capsys, write(tmp_path, "f.pdd", text))
    assert status == 0 and report["legal"] and report["result"] == "*"
    flagged = report["moves"][4]
    assert flagged["flagged"] and flagged["withdrawn"] and "island" in flagged["reason"]
    assert [m["ply"] for m in report["moves"]] == list(range(1, 9))
    assert main(["referee", write(tmp_path, "f2.pdd", text)]) == 0
    assert "flagged at ply 5: c3,h5 (" in capsys.readouterr().out
    status, [report] = run_json(capsys, write(tmp_path, "bad.pdd", FLAGGED + "# [%cleared 6]\n"))
    assert status == 2 and "no flag is up for move 6" in report["error"]


def test_a_flag_left_up_past_its_window_voids_the_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = '[Result "void"]\n' + FLAGGED + "8. f9,f10\n9. h8,h9\n10. e4,e5\n"
    status, [report] = run_json(capsys, write(tmp_path, "v.pdd", text))
    assert status == 0, report
    assert report["over"] and report["result"] == "void" and report["result_agrees"] is True
    assert report["termination"] == "void"
    unflagged = text.replace("  # [%flagged]", "")
    status, [report] = run_json(capsys, write(tmp_path, "u.pdd", unflagged))
    assert status == 1 and report["moves"][-1]["ply"] == 5
