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
    assert main(["referee", write(tmp_path, "g.pdd", record)]) == 0
    assert "Result tag says 'dark', the moves give 'light'" in capsys.readouterr().out
