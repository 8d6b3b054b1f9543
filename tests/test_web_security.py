"""Who may use the controls: open on loopback; on the network spectators read, the controls
need the start-up token (header, or the cookie set by the link); serving announces the
token with a link and a QR code."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.live_double import FakeLive
from tests.raw_http import get, post_json
from tests.waiting import wait_until
from web import create_app, serve

TOKEN = "s3cret-token"
SPECTATOR = {"REMOTE_ADDR": "192.168.1.50"}


@pytest.fixture
def network_app(fake_live: FakeLive) -> Flask:
    return create_app(fake_live, {"TESTING": True, "CONTROL_TOKEN": TOKEN,
                                  "CONTROL_URL": f"http://192.168.1.2:8000/?token={TOKEN}"})


@pytest.fixture
def spectator(network_app: Flask) -> FlaskClient:
    web_client = network_app.test_client()
    web_client.environ_base.update(SPECTATOR)
    return web_client


def test_spectators_see_everything(spectator: FlaskClient) -> None:
    for path in ("/", "/camera", "/games", "/games/1", "/api/state", "/api/games",
                 "/api/games/1/replay", "/games/1/download/pdd"):
        assert spectator.get(path).status_code == 200, path


def test_controls_without_the_token_are_refused(spectator: FlaskClient,
                                                fake_live: FakeLive) -> None:
    response = spectator.post("/api/control/pass", json={})
    assert response.status_code == 403
    assert "token" in response.get_json()["error"]
    assert spectator.post("/api/calibration", json={}).status_code == 403
    assert spectator.post("/api/control/swap", json={},
                          headers={"X-Ponte-Token": "guess"}).status_code == 403
    assert fake_live.controls == []


def test_the_token_header_opens_the_controls(spectator: FlaskClient,
                                             fake_live: FakeLive) -> None:
    fake_live.play("c3,d4")
    response = spectator.post("/api/control/swap", json={}, headers={"X-Ponte-Token": TOKEN})
    assert response.status_code == 200
    assert fake_live.controls == [("swap", {})]


def test_the_control_link_sets_a_cookie_and_drops_the_token_from_the_address(
    spectator: FlaskClient, fake_live: FakeLive
) -> None:
    response = spectator.get(f"/?token={TOKEN}")
    assert response.status_code == 302 and response.headers["Location"] == "/"
    cookie = response.headers["Set-Cookie"]
    assert "ponte_token=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert spectator.get("/api/session").get_json()["may_control"] is True
    fake_live.play("c3,d4")
    assert spectator.post("/api/control/swap", json={}).status_code == 200


def test_a_wrong_link_says_so(spectator: FlaskClient) -> None:
    page = spectator.get("/?token=nope").get_data(as_text=True)
    assert "not valid" in page
    assert spectator.get("/api/session").get_json() == {"may_control": False,
                                                         "token_required": True}


def test_the_page_is_read_only_for_spectators(spectator: FlaskClient) -> None:
    page = spectator.get("/").get_data(as_text=True)
    assert "Watching read-only" in page
    assert 'data-action="pass"' not in page
    assert "Controls on your phone" not in page  # the link is not shown to spectators


def test_the_host_screen_shows_the_link_and_a_qr_code(network_app: Flask) -> None:
    page = network_app.test_client().get("/").get_data(as_text=True)
    assert "Controls on your phone" in page
    assert f"?token={TOKEN}" in page and 'aria-label="QR code"' in page
    assert 'data-action="pass"' in page


def test_loopback_without_a_token_has_open_controls(web_client: FlaskClient,
                                                    fake_live: FakeLive) -> None:
    fake_live.play("c3,d4")
    assert web_client.get("/api/session").get_json() == {"may_control": True,
                                                     "token_required": False}
    assert web_client.post("/api/control/swap", json={}).status_code == 200


def test_serving_on_loopback_needs_no_token() -> None:
    said: list[str] = []
    web = serve(FakeLive(), "127.0.0.1", 0, announce=said.append)
    try:
        assert web.token is None and web.url == f"http://127.0.0.1:{web.port}/"
        assert said == [f"web page: {web.url}"]
        with urllib.request.urlopen(web.url + "api/state", timeout=5) as answer:
            assert json.load(answer)["turn"] == "light"
    finally:
        web.shutdown()


def test_serving_on_the_network_announces_a_token_link_and_qr_code() -> None:
    said: list[str] = []
    live = FakeLive()
    web = serve(live, "0.0.0.0", 0, announce=said.append)
    try:
        assert web.token and len(web.token) >= 16
        text = "\n".join(said)
        assert f"controls token: {web.token}" in text
        assert f"controls link: {web.control_url}" in text and "?token=" in web.control_url
        assert "▀" in text or "▄" in text
        local = f"http://127.0.0.1:{web.port}/"
        with urllib.request.urlopen(local + "api/state", timeout=5) as answer:
            assert answer.status == 200
    finally:
        web.shutdown()


def test_a_busy_port_is_a_clear_error() -> None:
    web = serve(FakeLive(), "127.0.0.1", 0, announce=lambda text: None)
    try:
        with pytest.raises(OSError, match="cannot serve the web page on 127.0.0.1"):
            serve(FakeLive(), "127.0.0.1", web.port, announce=lambda text: None)
    finally:
        web.shutdown()


def test_a_stopped_server_refuses_connections() -> None:
    web = serve(FakeLive(), "127.0.0.1", 0, announce=lambda text: None)
    web.shutdown()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(web.url, timeout=2)


def test_pages_forbid_foreign_scripts_and_framing(web_client: FlaskClient) -> None:
    policy = web_client.get("/").headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy


REBOUND = "rebind.attacker.example"


@pytest.mark.parametrize("path", ["/", "/games/1", "/api/state", "/api/session", "/events",
                                  "/camera.mjpg", f"/?token={TOKEN}"])
def test_a_rebinding_host_gets_nothing_on_loopback(web_client: FlaskClient, path: str) -> None:
    response = web_client.get(path, headers={"Host": f"{REBOUND}:8000"})
    assert response.status_code == 421
    assert f"not served under the name '{REBOUND}'" in response.get_json()["error"]
    assert "Set-Cookie" not in response.headers


def test_a_rebinding_host_cannot_press_a_button(web_client: FlaskClient,
                                                fake_live: FakeLive) -> None:
    fake_live.play("c3,d4")
    response = web_client.post("/api/control/swap", json={},
                               headers={"Host": REBOUND, "Origin": f"http://{REBOUND}"})
    assert response.status_code == 421
    assert fake_live.controls == []


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST.:8000", "127.0.0.1:8000", "[::1]:8000",
                                  "192.168.1.2:8000", "[fe80::1]"])
def test_addresses_and_loopback_names_are_served(web_client: FlaskClient, host: str) -> None:
    assert web_client.get("/api/state", headers={"Host": host}).status_code == 200


def test_the_host_screen_shows_no_token_to_a_rebinding_host(network_app: Flask) -> None:
    response = network_app.test_client().get("/", headers={"Host": REBOUND})
    assert response.status_code == 421
    assert TOKEN.encode() not in response.data


def test_served_on_the_network_a_rebinding_host_gets_no_token_but_the_machine_does() -> None:
    import socket

    web = serve(FakeLive(), "0.0.0.0", 0, announce=lambda text: None)
    try:
        assert web.token
        rebound = get(web.port, "/", host=f"{REBOUND}:{web.port}")
        assert rebound.status == 421 and web.token.encode() not in rebound.body
        controls = post_json(web.port, "/api/control/pass", b"{}", host=REBOUND)
        assert controls.status == 421
        own = get(web.port, "/", host=f"127.0.0.1:{web.port}")
        assert own.status == 200 and web.token.encode() in own.body  # the host screen
        named = get(web.port, "/api/state", host=f"{socket.gethostname()}:{web.port}")
        assert named.status == 200
    finally:
        web.shutdown()


def test_a_client_that_polls_too_fast_is_told_to_wait(fake_live: FakeLive) -> None:
    app = create_app(fake_live, {"TESTING": True, "RATE_LIMIT": (2.0, 5)})
    poller = app.test_client()
    answers = [poller.get("/api/state") for _ in range(8)]
    assert [a.status_code for a in answers[:5]] == [200] * 5
    refused = answers[-1]
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"
    assert "too many requests from 127.0.0.1" in refused.get_json()["error"]
    other = app.test_client()
    other.environ_base.update(SPECTATOR)
    assert other.get("/api/state").status_code == 200  # another client is not held up
    static = poller.get("/static/common.js")
    assert static.status_code == 200  # static files are not counted
    static.close()
    # served again once it slows down (to one request each 20 ms)
    assert wait_until(lambda: poller.get("/api/state").status_code != 429, 5, interval=0.02)


def test_without_a_rate_limit_every_request_is_served(fake_live: FakeLive) -> None:
    poller = create_app(fake_live, {"TESTING": True, "RATE_LIMIT": None}).test_client()
    assert {poller.get("/api/state").status_code for _ in range(60)} == {200}
