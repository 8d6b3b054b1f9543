"""What the LEDs show: LedView -> LedFrame for each layout, and the FRAME payload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_bridge.protocol import (
    Colour,
    Effect,
    LedFrame,
    MsgType,
    PayloadError,
    decode_frame,
    decode_frame_runs,
    encode_frame,
    encode_frame_runs,
    frame_message,
    render_expected,
)
from firmware_bridge.view import (
    DARK,
    FLAG,
    IDLE,
    LIGHT,
    OFF,
    VOID,
    WIN,
    LayoutError,
    LedView,
    Status,
    Turn,
    layout_names,
    load_layout,
    render_view,
)

EDGES = load_layout("edges")
MATRIX = load_layout("matrix")


def test_shipped_layouts_are_edges_and_matrix() -> None:
    assert layout_names() == ["edges", "matrix"]
    assert EDGES.led_count(10) == 23 and EDGES.led_count(12) == 27
    assert MATRIX.led_count(10) == 103 and MATRIX.led_count(12) == 147


def test_edges_light_the_file_and_rank_of_a_flagged_cell_blinking() -> None:
    view = LedView(Turn.DARK, frozenset({(3, 7)}), Status.FLAGGED)
    colours = render_view(view, EDGES).colours()
    files, ranks, turn_light, turn_dark, status = (
        colours[:10],
        colours[10:20],
        colours[20],
        colours[21],
        colours[22],
    )
    assert [i for i, c in enumerate(files) if c == FLAG] == [3]
    assert [i for i, c in enumerate(ranks) if c == FLAG] == [7]
    assert FLAG.effect is Effect.BLINK
    assert (turn_light, turn_dark, status) == (OFF, DARK, FLAG)


def test_matrix_is_serpentine_so_odd_ranks_run_backwards() -> None:
    view = LedView(Turn.LIGHT, frozenset({(0, 0), (0, 1), (9, 9)}), Status.FLAGGED)
    colours = render_view(view, MATRIX).colours()
    assert [i for i, c in enumerate(colours[:100]) if c == FLAG] == [0, 19, 90]
    assert colours[100] == LIGHT and colours[101] == OFF


def test_a_twelve_board_uses_more_leds() -> None:
    view = LedView(Turn.LIGHT, frozenset({(11, 11)}), Status.FLAGGED, board_size=12)
    colours = render_view(view, MATRIX).colours()
    assert len(colours) == 147 and colours[132] == FLAG


@pytest.mark.parametrize("layout", [EDGES, MATRIX])
def test_void_blinks_everything_red_and_idle_breathes(layout: object) -> None:
    assert set(render_view(LedView(status=Status.VOID), layout).colours()) == {VOID}  # type: ignore[arg-type]
    assert set(render_view(LedView(), layout).colours()) == {IDLE}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("winner", "expected"),
    [(Turn.LIGHT, (WIN, OFF)), (Turn.DARK, (OFF, WIN)), (Turn.NONE, (WIN, WIN))],
)
def test_game_over_shows_green_on_the_winners_side(
    winner: Turn, expected: tuple[Colour, Colour]
) -> None:
    colours = render_view(LedView(status=Status.OVER, winner=winner), EDGES).colours()
    assert (colours[20], colours[21]) == expected
    assert colours[22] == WIN


@pytest.mark.parametrize(
    "kwargs",
    [{"board_size": 11}, {"flagged": frozenset({(10, 0)})}, {"flagged": frozenset({(0, -1)})}],
)
def test_impossible_views_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        LedView(**kwargs)  # type: ignore[arg-type]


def test_unknown_or_malformed_layouts_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(LayoutError, match="no layout 'ring'"):
        load_layout("ring")
    bad = tmp_path / "layouts.json"
    bad.write_text(json.dumps({"odd": {"parts": ["files", "moon"]}}))
    with pytest.raises(LayoutError, match="unknown parts"):
        load_layout("odd", bad)
    bad.write_text("{not json")
    with pytest.raises(LayoutError, match="cannot read"):
        load_layout("odd", bad)


colours = st.builds(
    Colour, st.integers(0, 255), st.integers(0, 255), st.integers(0, 255), st.sampled_from(Effect)
)


@st.composite
def frames(draw: st.DrawFn) -> LedFrame:
    palette = tuple(draw(st.lists(colours, min_size=1, max_size=16, unique=True)))
    indices = draw(st.lists(st.integers(0, len(palette) - 1), max_size=150))
    return LedFrame(palette, tuple(indices))


@given(frames())
def test_frame_payload_round_trips(frame: LedFrame) -> None:
    assert decode_frame(encode_frame(frame)) == frame


@given(frames(), st.integers(1, 8))
def test_a_cut_frame_payload_is_refused(frame: LedFrame, cut: int) -> None:
    payload = encode_frame(frame)
    with pytest.raises(PayloadError):
        decode_frame(payload[:-cut] if cut < len(payload) else b"")


@given(frames())
def test_run_length_frame_payload_round_trips(frame: LedFrame) -> None:
    assert decode_frame_runs(encode_frame_runs(frame)) == frame


@given(frames())
def test_the_shorter_encoding_is_chosen(frame: LedFrame) -> None:
    kind, payload = frame_message(frame)
    packed, runs = encode_frame(frame), encode_frame_runs(frame)
    assert len(payload) == min(len(packed), len(runs))
    decode = decode_frame if kind is MsgType.FRAME else decode_frame_runs
    assert decode(payload) == frame


def test_a_mostly_dark_matrix_goes_run_length_encoded() -> None:
    view = LedView(Turn.LIGHT, frozenset({(2, 3), (7, 7)}), Status.FLAGGED)
    kind, payload = frame_message(render_view(view, MATRIX))
    assert kind is MsgType.FRAME_RUNS and len(payload) < len(
        encode_frame(render_view(view, MATRIX))
    )


@pytest.mark.parametrize(
    ("runs", "message"),
    [(b"\x00\x00", "zero LEDs"), (b"\x02\x00", "cover 2 LEDs"), (b"\x03", "odd number")],
)
def test_bad_run_length_payloads_are_refused(runs: bytes, message: str) -> None:
    palette_and_count = encode_frame_runs(LedFrame((OFF,), (0, 0, 0)))[:-2]
    with pytest.raises(PayloadError, match=message):
        decode_frame_runs(palette_and_count + runs)


def test_expected_render_is_grb_with_unused_leds_dark() -> None:
    frame = LedFrame.from_colours([Colour(1, 2, 3), Colour(4, 5, 6)])
    assert render_expected(frame, 3) == bytes([2, 1, 3, 5, 4, 6, 0, 0, 0])
