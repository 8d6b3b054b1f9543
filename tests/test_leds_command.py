"""`ponte leds test` and `ponte bench leds`, run against the real firmware in simavr."""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware_bridge.controller import open_controller
from firmware_bridge.sim import Build, Emulator, build
from lab.bench import leds as bench_leds
from ponte.cli import CommandError
from ponte.commands import bench as bench_command
from ponte.commands import leds as leds_command
from tests.waiting import wait_until


def parse(argv: list[str]) -> argparse.Namespace:
    """Parses with only the commands under test (the whole CLI lists other teams' ones)."""
    parser = argparse.ArgumentParser(prog="ponte")
    subparsers = parser.add_subparsers(dest="command")
    leds_command.register(subparsers)
    bench_command.register(subparsers)
    return parser.parse_args(argv)


def test_self_test_covers_every_state_and_every_led() -> None:
    steps = leds_command.self_test_steps("matrix", 12)
    names = [name for name, _ in steps]
    assert sum(name.startswith("chase") for name in names) == 147
    assert names[-1].startswith("idle")
    assert all(len(frame.indices) == 147 for _, frame in steps)


def test_an_unreachable_port_is_a_one_line_error(tmp_path: Path) -> None:
    args = parse(["leds", "test", "--port", str(tmp_path / "ttyNONE")])
    with pytest.raises(CommandError, match="no LED controller at"):
        args.handler(args)


def test_bad_arguments_are_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(["leds", "test", "--port", "x", "--layout", "ring"])
    assert "invalid choice" in capsys.readouterr().err


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Build:
    return build(tmp_path_factory.mktemp("firmware"))


@pytest.fixture
def emulator(built: Build) -> Iterator[Emulator]:
    with Emulator(built).start() as emu:
        yield emu


@pytest.mark.firmware
def test_self_test_runs_on_the_emulated_controller(
    emulator: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    emulator.press(150)  # held while nobody listens: the firmware keeps it until acknowledged
    # Nothing to ask without listening: real time lets the 150 ms press of emulated time end.
    time.sleep(0.3)
    args = parse(["leds", "test", "--port", emulator.url, "--step", "0.01"])
    assert args.handler(args) == 0
    out = capsys.readouterr().out
    assert "button: short press, 1" in out
    assert "firmware 1.0.0, protocol 1, 150 LEDs; layout edges uses 23" in out
    assert "flag on c3" in out and "read-back of the last frame: matches" in out
    assert "crc_errors 0" in out


@pytest.mark.firmware
def test_bench_prints_a_row_per_layout(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse(["bench", "leds", "--quick"])
    assert args.bench_module == "lab.bench.leds"
    assert bench_leds.run(args) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines if line.startswith(("edges", "matrix"))]
    assert [(row[0], row[1], row[3]) for row in rows] == [
        ("edges", "23", "40"),
        ("matrix", "103", "40"),
    ]
    assert lines[-1].startswith("target p95 <= 10 ms:")


@pytest.mark.firmware
def test_the_largest_layout_fits_the_firmware(emulator: Emulator) -> None:
    with open_controller(emulator.url) as controller:
        assert controller.info is not None
        for name, frame in leds_command.self_test_steps("matrix", 12)[:3]:
            controller.show(frame)
            assert controller.readback().frame == frame, name


@pytest.mark.firmware
def test_sim_runs_the_firmware_for_a_person_to_try(tmp_path: Path, built: Build) -> None:
    link = tmp_path / "ttyLEDS"
    args = parse(
        ["leds", "sim", "--link", str(link), "--seconds", "3", "--press", "100"]
        + ["--build-dir", str(built.firmware.parent)]
    )
    runner = threading.Thread(target=args.handler, args=(args,))
    runner.start()
    try:
        assert wait_until(link.exists, 10, interval=0.05)
        with open_controller(str(link)) as controller:
            assert controller.info is not None and controller.info.led_count == 150
            assert controller.buttons.get(timeout=3).duration_ms >= 90
    finally:
        runner.join(10)
    assert not runner.is_alive() and not link.exists()
