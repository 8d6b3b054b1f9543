"""Replaying records for the Games page, and the final board as SVG and PNG."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import cv2
import numpy as np
import pytest

from referee import Game, parse_move, record_of, write_record
from web.render import board_png, board_svg
from web.replay import ReplayError, replay


def pdd_of(game: Game) -> str:
    out = io.StringIO()
    write_record(record_of(game, {"Light": "Ann"}), out)
    return out.getvalue()


def test_replay_follows_the_game(web_example_game: Game) -> None:
    tags, states = replay(pdd_of(web_example_game))
    assert tags["Light"] == "Ann"
    assert len(states) == len(web_example_game.moves) + 1
    assert states[-1]["over"] and states[-1]["outcome"]["result"] == \
        web_example_game.outcome().result  # type: ignore[union-attr]
    assert all(s["placeable"] == [] for s in states)


def test_a_flagged_move_is_replayed_as_flagged() -> None:
    game = Game()
    for text in ("c3,d4", "swap", "f6,g6", "e2,e3", "h8,h9", "a1,a3"):
        game.push(parse_move(text))
    game.push_flagged(parse_move("f7,g7"))  # type: ignore[arg-type]
    _tags, states = replay(pdd_of(game))
    assert len(states[-1]["flags"]) == 1
    assert states[-1]["flags"][0]["reason"] == "island_too_close"
    assert set(states[-1]["board"]["obstructed"]) == {"f7", "g7"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[Board "9"]\n', "cannot be read"),
        ("1. c3,c3\n", "move 1"),
        ("1. c3,d4\n2. pass\n", "move 2"),
    ],
)
def test_a_record_that_cannot_be_replayed_says_why(text: str, message: str) -> None:
    with pytest.raises(ReplayError, match=message):
        replay(text)


def test_the_board_as_svg_and_png(web_example_game: Game) -> None:
    _tags, states = replay(pdd_of(web_example_game))
    final = states[-1]
    root = ET.fromstring(board_svg(final, "Ann v Bob"))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.find(f"{ns}title").text == "Ann v Bob"  # type: ignore[union-attr]
    lines = [e for e in root.iter(f"{ns}line") if e.get("stroke-width") == "9"]
    assert len(lines) == len(final["board"]["bridges"])
    picture = cv2.imdecode(np.frombuffer(board_png(final), np.uint8), cv2.IMREAD_COLOR)
    side = picture.shape[0]
    cell = 40
    for name, colour in final["board"]["tiles"].items():
        file, rank = ord(name[0]) - 97, int(name[1:]) - 1
        x, y = 28 + file * cell + 10, 28 + (9 - rank) * cell + 10
        b, g, r = (int(v) for v in picture[y, x])
        assert (r > 200) == (colour == "light"), name
    assert side == 2 * 28 + 10 * cell
