"""The web page in a real headless Chromium (Debian's chromium + chromedriver, driven by
Selenium) against the app served on 127.0.0.1: a move arrives by SSE and is drawn, the
pass button works, a recorded game replays; a screenshot of each page goes to test-output/."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from referee import Colour, Game
from referee.playout import heuristic_game
from tests.live_double import CalibratableFake
from web import WebServer, serve

pytestmark = pytest.mark.browser

OUTPUT = Path(__file__).resolve().parents[1] / "test-output"


def _game_where_pass_is_allowed() -> Game:
    finished = heuristic_game(3)
    game = Game()
    for played in finished.moves:
        if not game.is_over() and game.pass_allowed():
            return game
        game.push(played.move)
    raise AssertionError("the example game never allows a pass")


@pytest.fixture
def live() -> CalibratableFake:
    live = CalibratableFake()
    live.record(heuristic_game(3), {"Light": "Carla", "Dark": "Dino"})
    picture = np.full((480, 640, 3), 90, np.uint8)
    cv2.rectangle(picture, (100, 80), (540, 420), (200, 220, 230), -1)
    live.jpeg = bytes(cv2.imencode(".jpg", picture)[1].tobytes())
    live.snapshots[(1, 10)] = live.jpeg
    return live


@pytest.fixture
def server(live: CalibratableFake) -> Iterator[WebServer]:
    web = serve(live, "127.0.0.1", 0, announce=lambda text: None,
                config={"SSE_HEARTBEAT": 1.0})
    yield web
    web.shutdown()


@pytest.fixture(scope="module")
def driver() -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--disable-gpu", "--window-size=1280,1000"):
        options.add_argument(arg)
    browser = webdriver.Chrome(
        service=Service(executable_path="/usr/bin/chromedriver"), options=options
    )
    browser.set_page_load_timeout(20)
    yield browser
    browser.quit()


def wait_for(check: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(0.05)


def shot(driver: WebDriver, name: str) -> None:
    OUTPUT.mkdir(exist_ok=True)
    driver.save_screenshot(str(OUTPUT / f"web-{name}.png"))


def attrs(driver: WebDriver, selector: str, name: str) -> set[str]:
    """The values of one attribute over the matching elements (read in one go, as the page
    redraws the board whenever an event arrives)."""
    found = driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])]"
        ".map((e) => e.getAttribute(arguments[1]));", selector, name)
    return set(found)


def tiles(driver: WebDriver) -> set[str]:
    return attrs(driver, "#board [data-tile]", "data-tile")


def names_on(game: Game) -> set[str]:
    return {c.name for colour in Colour for c in game.position.tiles(colour)}


def test_a_move_arrives_by_sse_and_is_drawn(driver: WebDriver, server: WebServer,
                                            live: CalibratableFake) -> None:
    for move in ("c3,d4", "swap", "f6,g6", "e2,e3"):
        live.play(move)
    driver.get(server.url)
    wait_for(lambda: tiles(driver) == {"c3", "d4", "f6", "g6", "e2", "e3"}, what="the board")
    wait_for(lambda: driver.execute_script(
        "return document.getElementById('link-status').dataset.status") == "live",
        what="the event stream")
    live.play("h8,h9")
    wait_for(lambda: {"h8", "h9"} <= tiles(driver), what="the new move drawn")
    assert attrs(driver, "#board [data-last]", "data-last") == {"h8", "h9"}
    log = driver.find_element(By.ID, "events").text
    assert "h8,h9" in log
    live.play("a1,a3")  # light plays a legal pair; then dark breaks the distance rule
    live.play("f7,g7")
    flagged = wait_for(lambda: attrs(driver, "[data-flag-cell]", "data-flag-cell"),
                       what="flag marks")
    assert {"f7", "g7"} <= flagged
    flag_text = driver.find_element(By.ID, "flags").text
    assert "round" in flag_text and "void" in flag_text
    driver.find_element(By.ID, "show-placeable").click()
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "[data-placeable]"),
             what="placeable cells")
    shot(driver, "game")
    driver.set_window_size(390, 1400)
    time.sleep(0.3)
    shot(driver, "game-phone")
    driver.set_window_size(1280, 1000)


def test_pressing_pass_sends_the_control_and_draws_the_result(
    driver: WebDriver, server: WebServer, live: CalibratableFake
) -> None:
    live.current = _game_where_pass_is_allowed()
    before = len(live.current.moves)
    driver.get(server.url)
    button = wait_for(lambda: (b := driver.find_element(By.ID, "btn-pass")).is_enabled() and b,
                      what="an enabled pass button")
    button.click()
    wait_for(lambda: driver.execute_script("return document.body.dataset.moves")
             == str(before + 1), what="the pass drawn")
    assert live.controls[-1] == ("pass", {})
    assert str(live.current.moves[-1].move) == "pass"
    assert "done" in driver.find_element(By.ID, "control-result").text


def test_a_refused_control_shows_the_reason(driver: WebDriver, server: WebServer,
                                            live: CalibratableFake) -> None:
    live.play("c3,d4")
    driver.get(server.url)
    wait_for(lambda: tiles(driver) == {"c3", "d4"}, what="the board")
    driver.find_element(By.ID, "btn-undo").click()
    wait_for(lambda: tiles(driver) == set(), what="the undone board")
    driver.find_element(By.CSS_SELECTOR, "#controls details summary").click()
    field = driver.find_element(By.CSS_SELECTOR, "#override-cell [name=cell]")
    field.send_keys("z99")
    driver.find_element(By.CSS_SELECTOR, "#override-cell button").click()
    result = driver.find_element(By.ID, "control-result")
    wait_for(lambda: "not a cell" in result.text, what="the error message")


def test_replaying_a_recorded_game(driver: WebDriver, server: WebServer,
                                   live: CalibratableFake) -> None:
    driver.get(server.url + "games")
    link = wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "[data-game='1'] a"),
                    what="the game list")
    assert "Carla v Dino" in driver.find_element(By.ID, "games").text
    shot(driver, "games")
    link[0].click()
    final = live.recorded[0]["game"]
    label = wait_for(lambda: driver.find_element(By.ID, "ply-label").get_attribute("data-ply"),
                     what="the replay")
    assert int(label) == len(final.moves)
    assert tiles(driver) == names_on(final)
    driver.find_element(By.ID, "first").click()
    wait_for(lambda: tiles(driver) == set(), what="the empty board")
    for _ in range(10):
        driver.find_element(By.ID, "next").click()
    wait_for(lambda: driver.find_element(By.ID, "ply-label").get_attribute("data-ply") == "10",
             what="move 10")
    replayed = Game()
    for played in final.moves[:10]:
        replayed.push(played.move)
    assert tiles(driver) == names_on(replayed)
    wait_for(lambda: driver.find_element(By.ID, "snapshot").is_displayed(), what="the photo")
    shot(driver, "replay")


def test_camera_and_calibration_pages(driver: WebDriver, server: WebServer) -> None:
    driver.get(server.url + "camera")
    wait_for(lambda: driver.execute_script(
        "const i = document.getElementById('camera'); return i.complete && i.naturalWidth"),
        what="the camera picture")
    wait_for(lambda: driver.find_element(By.ID, "camera-status").text.startswith("ok"),
             what="the camera status")
    shot(driver, "camera")
    driver.get(server.url + "calibration")
    corners = wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "[data-corner]"),
                       what="the corners")
    assert len(corners) == 4
    assert "light" in driver.find_element(By.ID, "readings").text
    shot(driver, "calibration")
