"""The web API over the real live session (`LiveSession` with its SQLite store), fed the
board readings the camera loop would give: controls, recorded games, replays, snapshots."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from ponte.live.session import LiveSession
from ponte.live.settle import BoardView, Reading
from ponte.live.store import Store
from web import create_app


class Camera:
    def __init__(self, session: LiveSession) -> None:
        self.session = session
        self.tiles: dict[str, str] = {}
        self.t = 0.0

    def lay(self, colour: str, *cells: str) -> None:
        for cell in cells:
            self.tiles[cell] = colour
        self.t += 1.0
        self.session.feed(Reading(self.t, BoardView.of(self.tiles)),
                          snapshot=lambda: b"\xff\xd8 photo %d" % int(self.t))


@pytest.fixture
def session(tmp_path: Path) -> Iterator[LiveSession]:
    store = Store(tmp_path)
    yield LiveSession(store, settle_window=0.0, tags={"Light": "Ann", "Dark": "Bob"})
    store.close()


@pytest.fixture
def live_client(session: LiveSession) -> FlaskClient:
    return create_app(session, {"TESTING": True}).test_client()


def test_moves_seen_by_the_camera_show_in_the_state(live_client: FlaskClient,
                                                    session: LiveSession) -> None:
    Camera(session).lay("light", "c3", "d4")
    state = live_client.get("/api/state").get_json()
    assert state["board"]["tiles"] == {"c3": "light", "d4": "light"}
    assert state["game"]["light"] == "Ann" and state["swap_allowed"] is True


def test_controls_act_on_the_live_session(live_client: FlaskClient,
                                          session: LiveSession) -> None:
    camera = Camera(session)
    camera.lay("light", "c3", "d4")
    assert live_client.post("/api/control/swap", json={}).get_json()["swapped"] is True
    refused = live_client.post("/api/control/pass", json={})
    assert refused.status_code == 409 and "may not pass" in refused.get_json()["error"]
    state = live_client.post("/api/control/undo", json={}).get_json()
    assert state["moves"][-1]["move"] == "c3,d4"
    response = live_client.post("/api/control/new_game", json={"light": "Cleo", "dark": "Dan"})
    assert response.status_code == 200
    assert response.get_json()["game"]["light"] == "Cleo"
    assert response.get_json()["board"]["tiles"] == {}


def test_a_camera_misread_is_overridden(live_client: FlaskClient,
                                        session: LiveSession) -> None:
    camera = Camera(session)
    camera.lay("light", "c3", "d4")
    response = live_client.post("/api/control/override", json={"cell": "d4", "value": "empty"})
    assert response.status_code == 200
    response = live_client.post("/api/control/override",
                                json={"bridge": ["a1", "a2"], "present": True})
    assert response.status_code == 400  # the live loop's own check, passed on
    assert response.get_json()["error"] == "a1-a2 is not a bridge's shape"
    events = live_client.get(f"/api/games/{session.game_id}").get_json()["events"]
    assert {"action": "override", "params": {"cell": "d4", "value": "empty"}}.items() <= \
        next(e for e in events if e["type"] == "control").items()


def test_a_recorded_game_replays_with_its_flag_and_photos(live_client: FlaskClient,
                                                          session: LiveSession) -> None:
    camera = Camera(session)
    camera.lay("light", "c3", "d4")
    live_client.post("/api/control/swap", json={})
    camera.lay("dark", "f6", "g6")
    camera.lay("light", "e2", "e3")
    camera.lay("dark", "h8", "h9")
    camera.lay("light", "a1", "a3")
    camera.lay("dark", "f7", "g7")  # an island touching h8: flagged
    game_id = session.game_id
    games = live_client.get("/api/games").get_json()["games"]
    assert games[0]["id"] == game_id and games[0]["tags"]["Light"] == "Ann"
    replay = live_client.get(f"/api/games/{game_id}/replay").get_json()
    final = replay["states"][-1]
    assert len(replay["states"]) == 8
    assert final["flags"][0]["reason"] == "island_too_close"
    assert final["board"]["tiles"] == live_client.get("/api/state").get_json()["board"]["tiles"]
    photo = live_client.get(f"/games/{game_id}/snapshot/1.jpg")
    assert photo.status_code == 200 and photo.data.startswith(b"\xff\xd8 photo")
    assert live_client.get(f"/games/{game_id}/download/pdd").get_data(as_text=True) \
        .count("\n") > 8
    assert live_client.get(f"/games/{game_id}/download/json").get_json()["id"] == game_id
    assert live_client.get(f"/games/{game_id}/download/png").mimetype == "image/png"
    assert live_client.get("/api/games/999").status_code == 404
    assert live_client.get("/games/999/download/pdd").status_code == 404


def _a_game_dark_leads(camera: Camera, client: FlaskClient) -> None:
    """Light c3,d4, swap, dark builds an island of four, light two lone tiles."""
    camera.lay("light", "c3", "d4")
    assert client.post("/api/control/swap", json={}).status_code == 200
    camera.lay("dark", "f6", "g6")
    camera.lay("light", "a1", "a3")
    camera.lay("dark", "h6", "i6")


def test_undo_takes_back_the_override_that_made_the_move(live_client: FlaskClient,
                                                          session: LiveSession) -> None:
    camera = Camera(session)
    camera.lay("light", "c3", "d4")
    live_client.post("/api/control/swap", json={})
    for cell in ("f6", "g6"):  # the camera missed dark's tiles: the players enter them
        live_client.post("/api/control/override", json={"cell": cell, "value": "dark"})
    assert session.state()["moves"][-1]["move"] == "f6,g6"
    state = live_client.post("/api/control/undo", json={}).get_json()
    assert [m["move"] for m in state["moves"]] == ["c3,d4", "swap"]
    assert state["overrides"] == {}
    state = live_client.post("/api/control/confirm", json={}).get_json()
    assert [m["move"] for m in state["moves"]] == ["c3,d4", "swap"]
    record = live_client.get(f"/api/games/{session.game_id}").get_json()
    made = [e for e in record["events"] if e["type"] == "move" and e["move"] == "f6,g6"]
    assert made and made[0]["by"] == "override"


def test_an_override_is_listed_and_dropped(live_client: FlaskClient,
                                           session: LiveSession) -> None:
    camera = Camera(session)
    camera.lay("light", "c3", "d4")
    live_client.post("/api/control/override", json={"cell": "j9", "value": "dark"})
    assert session.state()["overrides"] == {"cell:j9": "dark"}
    response = live_client.post("/api/control/drop_override", json={"key": "cell:j9"})
    assert response.status_code == 200 and response.get_json()["overrides"] == {}
    again = live_client.post("/api/control/drop_override", json={"key": "cell:j9"})
    assert again.status_code == 409
    assert again.get_json()["error"] == "there is no override on j9 to drop"
    bad = live_client.post("/api/control/drop_override", json={"key": "j9"})
    assert bad.status_code == 400 and "names no override" in bad.get_json()["error"]
    off = live_client.post("/api/control/drop_override", json={"key": "cell:z99"})
    assert off.status_code == 400 and "not a cell of the board" in off.get_json()["error"]


def test_after_the_end_confirm_and_undo_are_refused_with_a_reason(
    live_client: FlaskClient, session: LiveSession
) -> None:
    _a_game_dark_leads(Camera(session), live_client)
    state = live_client.post("/api/control/end_game", json={}).get_json()
    assert state["over"] and state["outcome"]["winner"] == "dark"
    assert state["undo_allowed"] is False and state["placeable"] == []
    assert state["swap_allowed"] is False and state["pass_allowed"] is False
    undo = live_client.post("/api/control/undo", json={})
    assert undo.status_code == 409
    assert undo.get_json()["error"] == ("the game was ended from the controls, so its moves "
                                        "are final: start a new game")
    confirm = live_client.post("/api/control/confirm", json={})
    assert confirm.status_code == 409
    assert confirm.get_json()["error"].startswith("the game is over, so there is no move")


def test_the_replay_of_a_game_ended_from_the_controls_has_its_winner(
    live_client: FlaskClient, session: LiveSession
) -> None:
    _a_game_dark_leads(Camera(session), live_client)
    live_client.post("/api/control/end_game", json={})
    final = live_client.get(f"/api/games/{session.game_id}/replay").get_json()["states"][-1]
    assert final["over"] is True
    assert final["outcome"] == {"termination": "ended", "result": "dark", "winner": "dark"}


def test_a_12_by_12_game_is_refused_while_the_camera_reads_10_by_10(
    live_client: FlaskClient, session: LiveSession
) -> None:
    from ponte.live.camera import CameraReader

    session.attach_camera(CameraReader())
    response = live_client.post("/api/control/new_game", json={"board": 12})
    assert response.status_code == 409
    assert response.get_json()["error"].startswith(
        "the camera reads a 10 x 10 board, so a 12 x 12 game would have every piece misplaced")
    assert session.table.size == 10
    assert live_client.post("/api/control/new_game", json={"board": 10}).status_code == 200


def test_the_standings_count_the_finished_games(live_client: FlaskClient,
                                                session: LiveSession) -> None:
    assert live_client.get("/api/standings").get_json() == {"standings": []}
    camera = Camera(session)
    camera.lay("light", "c3", "c4")
    camera.lay("dark", "h8", "h9")
    camera.lay("light", "c5", "c6")  # an island for light, none for dark
    assert live_client.get("/api/standings").get_json() == {"standings": []}  # still on
    assert live_client.post("/api/control/end_game", json={}).status_code == 200
    rows = live_client.get("/api/standings").get_json()["standings"]
    assert [(r["player"], r["wins"], r["losses"], r["points"]) for r in rows] == [
        ("Ann", 1, 0, 1.0), ("Bob", 0, 1, 0.0)]
    page = live_client.get("/games").get_data(as_text=True)
    assert 'id="standings"' in page and "standings.js" in page
