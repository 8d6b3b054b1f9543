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


@pytest.mark.parametrize("game_id", [2**63, 2**64 + 7, 99999999999999999999])
def test_game_ids_beyond_sqlites_integers_are_404s(live_client: FlaskClient,
                                                   game_id: int) -> None:
    for path in (f"/api/games/{game_id}", f"/api/games/{game_id}/replay",
                 f"/games/{game_id}/download/pdd", f"/games/{game_id}/snapshot/1.jpg",
                 f"/games/1/snapshot/{game_id}.jpg", f"/games/{game_id}"):
        response = live_client.get(path)
        assert response.status_code == 404, path
        assert response.get_json()["error"].startswith(("nothing at", "no page at")), path


def test_the_largest_id_sqlite_holds_is_an_ordinary_unknown_game(
    live_client: FlaskClient,
) -> None:
    response = live_client.get(f"/api/games/{2**63 - 1}")
    assert response.status_code == 404
    assert response.get_json()["error"].startswith(f"no game {2**63 - 1}")
