"""The web page's pages and JSON API through Flask's test web_client, with the live loop's
test double: the state, every control, bad input, recorded games and their downloads."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import cv2
import numpy as np
import pytest
from flask.testing import FlaskClient

from tests.live_double import CalibratableFake, FakeLive
from tests.raw_http import post_json
from web import create_app, serve


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/", 'id="board"'),
        ("/camera", "/camera.mjpg"),
        ("/calibration", 'id="calib-stage"'),
        ("/games", 'id="games"'),
        ("/games/1", 'data-game-id="1"'),
    ],
)
def test_every_page_is_served(web_client: FlaskClient, path: str, expected: str) -> None:
    response = web_client.get(path)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    assert expected in response.get_data(as_text=True)


def test_static_files_are_served_locally(web_client: FlaskClient) -> None:
    page = web_client.get("/").get_data(as_text=True)
    assert "http://" not in page and "https://" not in page  # no CDN
    for name in ("style.css", "common.js", "board.js", "game.js", "replay.js", "icon.svg"):
        response = web_client.get(f"/static/{name}")
        assert response.status_code == 200 and response.data
        response.close()


def test_state_is_the_live_state_as_json(web_client: FlaskClient, fake_live: FakeLive) -> None:
    fake_live.play("c3,d4")
    state = web_client.get("/api/state").get_json()
    assert state["board"]["tiles"] == {"c3": "light", "d4": "light"}
    assert state["game"]["light"] == "Ann" and state["turn"] == "dark"
    assert state["last_move"]["cells"] == ["c3", "d4"]


def test_a_control_reaches_the_live_loop_and_returns_the_new_state(
    web_client: FlaskClient, fake_live: FakeLive
) -> None:
    fake_live.play("c3,d4")
    response = web_client.post("/api/control/swap", json={})
    assert response.status_code == 200
    assert response.get_json()["swapped"] is True
    assert fake_live.controls == [("swap", {})]


def test_a_control_with_an_empty_json_body_is_fine(web_client: FlaskClient,
                                                   fake_live: FakeLive) -> None:
    fake_live.play("c3,d4")
    assert web_client.post("/api/control/undo", content_type="application/json").status_code == 200
    assert fake_live.current.moves == []


def test_a_control_without_the_json_content_type_is_refused(web_client: FlaskClient,
                                                           fake_live: FakeLive) -> None:
    fake_live.play("c3,d4")
    for kind in (None, "text/plain", "application/x-www-form-urlencoded"):
        response = web_client.post("/api/control/undo", content_type=kind)
        assert response.status_code == 400
        assert "Content-Type: application/json" in response.get_json()["error"]
    assert fake_live.controls == []


def test_a_page_from_another_site_cannot_use_the_controls(web_client: FlaskClient,
                                                          fake_live: FakeLive) -> None:
    fake_live.play("c3,d4")
    response = web_client.post("/api/control/undo", json={},
                           headers={"Origin": "http://evil.example"})
    assert response.status_code == 403
    assert "another site" in response.get_json()["error"]
    rebound = web_client.post("/api/control/undo", json={},
                          headers={"Host": "evil.example:8000"})
    assert rebound.status_code == 421
    assert "not served under the name 'evil.example'" in rebound.get_json()["error"]
    same = web_client.post("/api/control/undo", json={}, headers={"Origin": "http://localhost"})
    assert same.status_code == 200


@pytest.mark.parametrize(
    ("params", "sent"),
    [
        ({"cell": "D4", "value": "dark"}, {"cell": "d4", "value": "dark"}),
        ({"cell": "j10", "value": "empty"}, {"cell": "j10", "value": "empty"}),
        ({"bridge": ["a1", "c1"], "present": False}, {"bridge": ["a1", "c1"], "present": False}),
    ],
)
def test_override_sends_clean_parameters(
    web_client: FlaskClient, fake_live: FakeLive, params: dict[str, Any], sent: dict[str, Any]
) -> None:
    assert web_client.post("/api/control/override", json=params).status_code == 200
    assert fake_live.overrides == [sent]


def test_new_game_sends_the_names(web_client: FlaskClient, fake_live: FakeLive) -> None:
    response = web_client.post("/api/control/new_game", json={"light": " Cleo ", "dark": ""})
    assert response.status_code == 200
    assert fake_live.controls[-1] == ("new_game", {"light": "Cleo", "dark": "Dark"})
    assert response.get_json()["game"]["light"] == "Cleo"


@pytest.mark.parametrize(
    ("action", "body", "message"),
    [
        ("fly", {}, "unknown control"),
        ("pass", {"now": True}, "takes no parameters"),
        ("pass", [], "must be a JSON object"),
        ("pass", "pass", "must be a JSON object"),
        ("override", {}, 'needs "cell"'),
        ("override", {"cell": "k1", "value": "light"}, "not a cell of the board"),
        ("override", {"cell": "a11", "value": "light"}, "not a cell of the board"),
        ("override", {"cell": "a0", "value": "light"}, "not a cell of the board"),
        ("override", {"cell": 44, "value": "light"}, "must be a cell name"),
        ("override", {"cell": "d4", "value": "red"}, "value must be"),
        ("override", {"cell": "d4", "value": "dark", "x": 1}, "takes only"),
        ("override", {"bridge": "a1-c1", "present": True}, "list of its two end cells"),
        ("override", {"bridge": ["a1", "a1"], "present": True}, "two different cells"),
        ("override", {"bridge": ["a1", "c1"], "present": "yes"}, "present must be"),
        ("override", {"bridge": ["a1", "z1"], "present": True}, "bridge end"),
        ("new_game", {"light": 7}, "name as text"),
        ("new_game", {"light": "x" * 41}, "longer than"),
        ("new_game", {"light": "a\u0007b"}, "control characters"),
        ("new_game", {"board": 11}, "board must be 10 or 12"),
        ("new_game", {"board": True}, "board must be 10 or 12"),
        ("new_game", {"supply": "infinite"}, "supply must be"),
    ],
)
def test_bad_control_input_is_a_400_with_a_clear_message(
    web_client: FlaskClient, fake_live: FakeLive, action: str, body: Any, message: str
) -> None:
    response = web_client.post(f"/api/control/{action}", json=body)
    assert response.status_code == 400
    assert message in response.get_json()["error"]
    assert fake_live.controls == []


def test_malformed_json_is_a_400(web_client: FlaskClient) -> None:
    response = web_client.post("/api/control/pass", data="{pass", content_type="application/json")
    assert response.status_code == 400
    assert "not valid JSON" in response.get_json()["error"]


def test_a_body_that_is_not_json_is_a_400(web_client: FlaskClient) -> None:
    response = web_client.post("/api/control/pass", data="pass=1",
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert "as JSON" in response.get_json()["error"]


def test_an_oversize_body_is_a_413(web_client: FlaskClient, fake_live: FakeLive) -> None:
    body = json.dumps({"light": "x" * 40_000})
    response = web_client.post("/api/control/new_game", data=body, content_type="application/json")
    assert response.status_code == 413
    assert response.get_json() == {"error": "request body too large"}
    assert fake_live.controls == []


def test_a_refused_control_answers_with_the_live_loops_reason(
    web_client: FlaskClient, fake_live: FakeLive
) -> None:
    fake_live.play("c3,d4")
    response = web_client.post("/api/control/pass", json={})
    assert response.status_code == 409
    assert "may not pass" in response.get_json()["error"]
    response = web_client.post("/api/control/end_game", json={})
    assert response.status_code == 409


def test_wrong_method_and_unknown_paths_answer_json(web_client: FlaskClient) -> None:
    assert web_client.get("/api/control/pass").status_code == 405
    assert web_client.get("/api/control/pass").get_json()["error"] == "method not allowed here"
    assert web_client.get("/no/such/page").get_json() == {"error": "no page at /no/such/page"}


@pytest.mark.parametrize(
    "path",
    [
        "/static/../app.py",
        "/static/..%2fapp.py",
        "/static/%2e%2e/app.py",
        "/games/..%2f..%2fetc%2fpasswd/download/pdd",
        "/games/1/download/..%2f..%2fapp.py",
        "/games/1/snapshot/..%2f1.jpg",
        "/games/-1",
    ],
)
def test_no_request_path_reaches_the_file_system(web_client: FlaskClient, path: str) -> None:
    response = web_client.get(path)
    assert response.status_code == 404
    assert b"import" not in response.data


def test_an_unexpected_error_is_json_without_a_traceback(fake_live: FakeLive) -> None:
    def broken() -> dict[str, Any]:
        raise RuntimeError("secret internals")

    fake_live.state = broken  # type: ignore[method-assign]
    web_client = create_app(fake_live, {"TESTING": False}).test_client()
    response = web_client.get("/api/state")
    assert response.status_code == 500
    assert response.get_json() == {"error": "internal error (RuntimeError); see the server log"}
    assert b"secret" not in response.data and b"Traceback" not in response.data


# --- recorded games ------------------------------------------------------------------


def test_games_are_listed(web_client: FlaskClient) -> None:
    games = web_client.get("/api/games").get_json()["games"]
    assert [g["id"] for g in games] == [1]
    assert games[0]["tags"]["Light"] == "Ann"


def test_one_game_and_an_unknown_one(web_client: FlaskClient) -> None:
    assert web_client.get("/api/games/1").get_json()["moves"][0]["ply"] == 1
    response = web_client.get("/api/games/99")
    assert response.status_code == 404 and response.get_json() == {"error": "no game 99"}


def test_replay_gives_the_state_after_every_move(
    web_client: FlaskClient, fake_live: FakeLive
) -> None:
    game = fake_live.recorded[0]["game"]
    body = web_client.get("/api/games/1/replay").get_json()
    states = body["states"]
    assert len(states) == len(game.moves) + 1
    assert states[0]["board"]["tiles"] == {}
    assert states[1]["board"]["tiles"] == {
        c.name: "light" for c in game.moves[0].move.cells
    }
    assert states[-1]["score"] == game.score().to_dict(breakdown=True)
    assert body["tags"]["Light"] == "Ann"


def test_a_record_that_cannot_be_replayed_is_a_422(web_client: FlaskClient,
                                                   fake_live: FakeLive) -> None:
    fake_live.export = lambda game_id, fmt: "1. c3,c3\n"  # type: ignore[method-assign]
    response = web_client.get("/api/games/1/replay")
    assert response.status_code == 422
    assert "move 1" in response.get_json()["error"]


def test_downloads(web_client: FlaskClient, fake_live: FakeLive) -> None:
    game = fake_live.recorded[0]["game"]
    pdd = web_client.get("/games/1/download/pdd")
    assert pdd.status_code == 200 and pdd.mimetype == "text/plain"
    assert 'attachment; filename="game-1.pdd"' == pdd.headers["Content-Disposition"]
    assert '[Light "Ann"]' in pdd.get_data(as_text=True)
    assert web_client.get("/games/1/download/json").get_json()["id"] == 1
    svg = web_client.get("/games/1/download/svg")
    assert svg.mimetype == "image/svg+xml"
    root = ET.fromstring(svg.data)
    assert root.tag.endswith("svg")
    rects = [e for e in root.iter() if e.tag.endswith("rect")]
    tiles = len(game.position.tiles(game.moves[0].colour)) + len(
        game.position.tiles(game.moves[0].colour.other))
    assert len(rects) >= tiles + 2
    png = web_client.get("/games/1/download/png")
    picture = cv2.imdecode(np.frombuffer(png.data, np.uint8), cv2.IMREAD_COLOR)
    assert picture is not None and picture.shape[0] == picture.shape[1] > 400
    wrong = web_client.get("/games/1/download/exe")
    assert wrong.status_code == 404 and "choose pdd, json, svg or png" in wrong.get_json()["error"]
    assert web_client.get("/games/7/download/pdd").status_code == 404


def test_snapshots(web_client: FlaskClient, fake_live: FakeLive) -> None:
    fake_live.snapshots[(1, 5)] = b"\xff\xd8 jpeg"
    response = web_client.get("/games/1/snapshot/5.jpg")
    assert response.status_code == 200 and response.mimetype == "image/jpeg"
    assert response.data == b"\xff\xd8 jpeg"
    missing = web_client.get("/games/1/snapshot/6.jpg")
    assert missing.status_code == 404 and "no snapshot" in missing.get_json()["error"]


# --- calibration ---------------------------------------------------------------------


def test_calibration_degrades_when_the_live_loop_cannot_calibrate(web_client: FlaskClient) -> None:
    response = web_client.get("/api/calibration")
    assert response.status_code == 501
    assert "ponte calibrate" in response.get_json()["error"]
    response = web_client.post("/api/calibration",
                           json={"corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "a1": 0})
    assert response.status_code == 501


def test_calibration_is_read_and_saved() -> None:
    live = CalibratableFake()
    web_client = create_app(live, {"TESTING": True}).test_client()
    assert web_client.get("/api/calibration").get_json()["a1"] == 3
    corners = [[10, 12.5], [600, 10], [610, 470], [5, 460]]
    response = web_client.post("/api/calibration", json={"corners": corners, "a1": 1})
    assert response.status_code == 200
    assert live.calibration_data is not None
    assert live.calibration_data["corners"] == corners and live.calibration_data["a1"] == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"corners": [[0, 0]] * 3}, "four"),
        ({"corners": [[0, 0], [1, 0], [1, 1], [0, "1"]]}, "[x, y]"),
        ({"corners": [[0, 0], [1, 0], [1, 1], [0, True]]}, "[x, y]"),
        ({"corners": [[0, 0], [1, 0], [1, 1], [0, 1e9]]}, "far outside"),
        ({"corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "a1": 4}, "a1 must be"),
        ({"corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "scale": 2}, "takes only"),
        ([1, 2], "JSON object"),
    ],
)
def test_bad_calibration_is_a_400(body: Any, message: str) -> None:
    live = CalibratableFake()
    web_client = create_app(live, {"TESTING": True}).test_client()
    response = web_client.post("/api/calibration", json=body)
    assert response.status_code == 400
    assert message in response.get_json()["error"]
    assert live.calibration_data is None


@pytest.mark.parametrize("depth", [2000, 8000])
def test_deeply_nested_json_is_a_400(web_client: FlaskClient, fake_live: FakeLive,
                                     depth: int) -> None:
    body = "[" * depth + "]" * depth
    assert len(body) <= 16 * 1024
    for path in ("/api/control/pass", "/api/control/new_game", "/api/calibration"):
        response = web_client.post(path, data=body, content_type="application/json")
        assert response.status_code == 400, path
        assert "nested too deeply" in response.get_json()["error"]
    assert fake_live.controls == []


@pytest.mark.parametrize(
    "path",
    ["/api/state", "/api/games", "/api/games/1", "/api/games/1/replay", "/api/session",
     "/games/1/download/pdd", "/games/1/download/json", "/games/1/download/svg",
     "/games/1/download/png", "/api/games/99", "/no/such/page", "/camera.jpg"],
)
def test_json_and_downloads_forbid_content_sniffing(web_client: FlaskClient,
                                                    path: str) -> None:
    response = web_client.get(path)
    assert response.headers["X-Content-Type-Options"] == "nosniff", path
    assert web_client.post("/api/control/fly", json={}).headers[
        "X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_over_16_kib_is_a_413_even_when_chunked(chunked: bool) -> None:
    live = FakeLive()
    web = serve(live, "127.0.0.1", 0, announce=lambda text: None)
    try:
        padded = b'{"light": "Cleo", "dark": "Dan"}' + b" " * 20_000  # valid JSON if cut
        answer = post_json(web.port, "/api/control/new_game", padded, chunked=chunked)
        assert answer.status == 413
        assert json.loads(answer.body) == {"error": "request body too large"}
        small = post_json(web.port, "/api/control/new_game", padded[:2000], chunked=chunked)
        assert small.status == 200
        assert live.controls == [("new_game", {"light": "Cleo", "dark": "Dan"})]
    finally:
        web.shutdown()
