"""The `ponte` command as a whole: its help texts and the exit-status convention."""

from __future__ import annotations

import pytest

from ponte.cli import main


def _help(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as info:
        main([*args, "--help"])
    assert info.value.code == 0
    return capsys.readouterr().out


def test_the_top_help_lists_every_command_and_the_exit_status(
    capsys: pytest.CaptureFixture[str]
) -> None:
    text = _help(capsys)
    leds = text[text.index("    leds "):text.index("    read ")]
    assert "sim" in leds and "test" in leds and "find" in leds
    assert "exit status" in text
    for status in ("0 ", "1 ", "2 ", "130 "):
        assert f"\n  {status}" in text


@pytest.mark.parametrize("command", ["demo", "watch"])
def test_demo_and_watch_have_a_description(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    text = _help(capsys, command)
    usage, _, rest = text.partition("\n\n")
    assert rest.split("\n", 1)[0] not in ("options:", "positional arguments:")
    assert "live loop" in rest or "camera" in rest


def test_bench_targets_say_what_they_measure(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys, "bench")
    assert "benchmark the" not in text
    assert "frame-to-acknowledgement" in text and "legality" in text


def test_export_format_states_its_default(capsys: pytest.CaptureFixture[str]) -> None:
    text = " ".join(_help(capsys, "export").split())
    assert "--format {pdd,json} pdd (a game record, the default) or json" in text
    assert "--all" in text
