"""`ponte read`, `ponte calibrate`, `ponte markers` on good and bad files."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

import ponte.cli
from tests.test_vision_stages import QUADS, ROWS
from tests.vision_drawing import draw_board, place_in_scene


@pytest.fixture(autouse=True)
def _only_vision_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    # The other command modules are other issues' work; these tests need only this one.
    monkeypatch.setattr(ponte.cli, "COMMAND_MODULES", ("ponte.commands.vision",))


@pytest.fixture()
def images(tmp_path: Path) -> dict[str, Path]:
    board, _ = place_in_scene(draw_board(ROWS), QUADS["square-on"])
    paths = {
        "board": tmp_path / "board.jpg",
        "text": tmp_path / "notes.jpg",
        "empty": tmp_path / "empty.png",
        "tiny": tmp_path / "tiny.png",
        "table": tmp_path / "table.png",
    }
    cv2.imwrite(str(paths["board"]), board, [cv2.IMWRITE_JPEG_QUALITY, 92])
    paths["text"].write_text("not an image at all\n")
    paths["empty"].write_bytes(b"")
    cv2.imwrite(str(paths["tiny"]), np.full((10, 10, 3), 200, np.uint8))
    cv2.imwrite(str(paths["table"]), np.full((480, 640, 3), (60, 90, 120), np.uint8))
    return paths


def test_read_json_gives_one_line_per_image_and_errors_for_bad_ones(
    images: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    order = ["text", "board", "empty", "tiny", "table"]
    status = ponte.cli.main(["read", "--json", *[str(images[k]) for k in order]])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert status == 2
    assert [r["image"] for r in lines] == [str(images[k]) for k in order]
    assert set(lines[1]) == {"image", "board", "bridges", "occluded", "error", "error_type"}
    assert lines[1]["board"] == ROWS
    assert lines[1]["bridges"] == [] and lines[1]["occluded"] is False
    assert lines[1]["error"] is None and lines[1]["error_type"] is None
    kinds = {k: r["error_type"] for k, r in zip(order, lines, strict=True) if k != "board"}
    assert kinds == {"text": "image_unreadable", "empty": "image_unreadable",
                     "tiny": "image_too_small", "table": "board_not_found"}
    errors = {k: r["error"] for k, r in zip(order, lines, strict=True) if k != "board"}
    assert "empty" in errors["empty"] and "no board" in errors["table"]
    assert not [e for e in errors.values() if "Image" in e or "Board" in e]  # no class names


def test_read_says_plainly_what_it_cannot_read_and_exits_2(
    images: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert ponte.cli.main(["read", str(images["board"]), str(images["table"])]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"ponte read: {images['table']}: no board outline with a 10 x 10 " \
        "grid found in the image\n"
    assert "10 L . D" in captured.out
    assert ponte.cli.main(["read", str(images["text"])]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ponte read: {images['text']}: not an image") and err.count("notes") == 1


def test_hidden_cells_have_their_own_character_in_json_as_in_the_picture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dataclasses import replace

    from lab.synth import HandSpec, render
    from tests.test_vision_reading import board_scene

    hand = HandSpec(target=(4.5, 4.5), from_deg=270.0, height=1.5)
    frame = render(replace(board_scene(elevation_deg=90.0), hands=(hand,)))
    shot = tmp_path / "hand.png"
    cv2.imwrite(str(shot), frame.image)
    assert ponte.cli.main(["read", "--json", str(shot)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["occluded"] is True
    assert ponte.cli.main(["read", str(shot)]) == 0
    picture = capsys.readouterr().out.splitlines()[1:11]
    assert [row[3::2] for row in picture] == got["board"]
    hidden = {(f, 9 - k) for k, row in enumerate(got["board"]) for f, ch in enumerate(row)
              if ch == "?"}
    assert hidden and all(set(row) <= set(".LD?") for row in got["board"])
    truth = {(ord(c[0]) - 97, int(c[1:]) - 1) for c in frame.occluded_cells}
    assert hidden & truth


def test_read_good_image_exits_zero_with_a_text_picture(
    images: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert ponte.cli.main(["read", str(images["board"])]) == 0
    out = capsys.readouterr().out
    assert "10 L . D . . . . . . ." in out and "a b c d e f g h i j" in out


def test_calibrate_then_read_with_the_calibration(
    images: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cal = tmp_path / "cal.json"
    assert ponte.cli.main(["calibrate", str(images["board"]), "--out", str(cal)]) == 0
    data = json.loads(cal.read_text())
    assert data["format"] == "ponte-calibration" and data["version"] == 1
    assert data["colours"]["light"] is not None and data["colours"]["dark"] is not None
    said = capsys.readouterr().out
    known = sum(cell is not None for cell in data["board"])
    assert 60 <= known < 100 and f"bare board known in {known} of 100 cells" in said
    assert ponte.cli.main(["read", "--json", "--calibration", str(cal), str(images["board"])]) == 0
    assert json.loads(capsys.readouterr().out)["board"] == ROWS


def test_read_with_a_calibration_reads_as_the_live_loop_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A photo read with a calibration gets the live loop's reader (`read_calibrated`),
    # with the calibration photo's bare board and border, not only its corners and
    # colours. In this frame of window light (seed 11, a tuning seed), a reading with
    # those alone took five cells wrong, missed a bridge and flagged the frame as hidden.
    from dataclasses import replace

    from lab.evaluate import scene
    from lab.synth import render

    spec = scene(11, "window-daylight", 165)
    frame = render(spec)
    empty = replace(spec, board=tuple("." * 10 for _ in range(10)), bridges=(), hands=())
    photo, shot, cal = tmp_path / "empty.png", tmp_path / "frame.jpg", tmp_path / "cal.json"
    cv2.imwrite(str(photo), render(empty).image)
    shot.write_bytes(frame.encoded or cv2.imencode(".jpg", frame.image)[1].tobytes())
    assert ponte.cli.main(["calibrate", str(photo), "--empty", "--out", str(cal)]) == 0
    capsys.readouterr()
    assert ponte.cli.main(["read", "--json", "--calibration", str(cal), str(shot)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["board"] == list(frame.board)
    assert got["bridges"] == sorted(sorted(pair) for pair in frame.bridges)
    assert got["occluded"] is False


def test_calibrate_with_a1_top_right_turns_the_board(
    images: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cal = tmp_path / "cal.json"
    args = ["calibrate", str(images["board"]), "--out", str(cal), "--a1", "top-right"]
    assert ponte.cli.main(args) == 0
    capsys.readouterr()
    ponte.cli.main(["read", "--json", "--calibration", str(cal), str(images["board"])])
    board = json.loads(capsys.readouterr().out)["board"]
    assert board == [row[::-1] for row in reversed(ROWS)]


def test_bad_calibration_file_is_a_clear_error(
    images: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "ponte-calibration", "version": 99}')
    assert ponte.cli.main(["read", "--calibration", str(bad), str(images["board"])]) == 2
    err = capsys.readouterr().err
    assert "version 99 is not supported" in err and "Traceback" not in err


def test_calibrate_on_an_image_without_board_fails_cleanly(
    images: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = ponte.cli.main(["calibrate", str(images["table"]), "--out", str(tmp_path / "c.json")])
    assert status == 2
    assert "no board outline" in capsys.readouterr().err
    assert not (tmp_path / "c.json").exists()


def test_calibrate_empty_learns_the_whole_bare_board(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    photo = Path(__file__).resolve().parents[1] / "calibration" / "examples" / "empty-board.jpg"
    out = tmp_path / "c.json"
    assert ponte.cli.main(["calibrate", str(photo), "--out", str(out), "--empty"]) == 0
    assert "bare board known in 100 of 100 cells" in capsys.readouterr().out
    assert all(cell is not None for cell in json.loads(out.read_text())["board"])


def test_calibrate_empty_on_a_board_with_tiles_says_so(
    images: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "c.json"
    status = ponte.cli.main(["calibrate", str(images["board"]), "--out", str(out), "--empty"])
    assert status == 2
    err = capsys.readouterr().err
    assert "look like tiles" in err and "without --empty" in err and "Traceback" not in err
    assert not out.exists()


def test_markers_writes_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "markers.png"
    assert ponte.cli.main(["markers", "--out", str(out)]) == 0
    image = cv2.imread(str(out))
    assert image is not None and image.shape[0] > 1000


def test_eval_refuses_outputs_it_cannot_write_before_reading_any_frame(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An evaluation runs for minutes: a table or a listing it could not write at the end
    would lose them, so such paths are refused at once, with a message and no traceback."""
    import lab.evaluate

    def never(*args: object, **kwargs: object) -> int:
        raise AssertionError("the evaluation ran")

    monkeypatch.setattr(lab.evaluate, "evaluate", never)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for extra in (["--out", str(blocker / "eval.csv")],  # its folder cannot be made
                  ["--out", str(tmp_path / "ok.csv"), "--mistakes", str(tmp_path)]):
        assert ponte.cli.main(["eval", "vision", "--count", "9", *extra]) == 2
        err = capsys.readouterr().err
        assert "cannot write" in err or "is a folder" in err
        assert "Traceback" not in err
    assert not (tmp_path / "ok.csv").exists()


def test_eval_scene_writes_a_listed_frame_that_ponte_reads_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "scene"
    assert ponte.cli.main(["eval", "scene", "11", "window-daylight", "165",
                           "--out", str(folder)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "seed,setup,index,mode,kind,where,truth,read,flagged"
    assert all(line.startswith("11,window-daylight,165,") for line in lines[1:])
    assert not [line for line in lines if ",tracker," in line]
    assert "calibration.json" in err and "ponte read --json --calibration" in err
    truth = json.loads((folder / "truth.json").read_text())
    assert ponte.cli.main(["read", "--json", "--calibration", str(folder / "calibration.json"),
                           str(folder / "frame.jpg")]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["board"], got["bridges"], got["occluded"]) == (
        truth["board"], truth["bridges"], truth["occluded"])


def test_eval_scene_refuses_what_it_cannot_draw_or_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    for args, said in ((["2", "no-such-setup", "0", "--out", str(tmp_path)], "unknown setup"),
                       (["2", "markers", "-1", "--out", str(tmp_path)], "INDEX"),
                       (["2", "markers", "0", "--out", str(a_file)], "is a file")):
        assert ponte.cli.main(["eval", "scene", *args]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err


def test_calibrate_lens_writes_a_lens_file_calibrate_can_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_calibration import chessboard_views

    paths = []
    for i, view in enumerate(chessboard_views(5)):
        path = tmp_path / f"chess{i}.png"
        cv2.imwrite(str(path), view)
        paths.append(str(path))
    lens = tmp_path / "lens.json"
    assert ponte.cli.main(["calibrate-lens", *paths, "--out", str(lens)]) == 0
    assert "pattern found in 5 of 5 images" in capsys.readouterr().out
    data = json.loads(lens.read_text())
    assert data["format"] == "ponte-lens" and data["distortion"][0] < 0
    bad_pattern = ["calibrate-lens", paths[0], "--out", str(lens), "--pattern", "9by6"]
    assert ponte.cli.main(bad_pattern) == 2
    assert "--pattern" in capsys.readouterr().err
