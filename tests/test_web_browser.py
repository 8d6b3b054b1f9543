"""The web page in a real headless Chromium (Debian's chromium + chromedriver, driven by
Selenium) against the app served on 127.0.0.1 over the real live session
(`ponte.live.session.LiveSession` with its SQLite store, fed board readings as the camera
loop would): a move arrives by SSE and is drawn, the pass button works, a recorded game
replays; a screenshot of each page goes to test-output/, and the game page's to
docs/game-page.png, the README's picture."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from ponte.live.feeder import PieceFeeder
from ponte.live.session import LiveSession
from ponte.live.settle import BoardView, Reading
from ponte.live.store import Store
from referee import Colour, Game, Move
from tests import waiting
from tests.live_double import CalibratableFake
from web import WebServer, serve

pytestmark = pytest.mark.browser

OUTPUT = Path(__file__).resolve().parents[1] / "test-output"
README_PICTURE = Path(__file__).resolve().parents[1] / "docs" / "game-page.png"


def _jpeg(shade: int) -> bytes:
    picture = np.full((480, 640, 3), 90, np.uint8)
    cv2.rectangle(picture, (100, 80), (540, 420), (shade, 220, 230), -1)
    cv2.putText(picture, "camera", (250, 260), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (40, 40, 40), 3)
    return bytes(cv2.imencode(".jpg", picture)[1].tobytes())


class Table(PieceFeeder):
    """The real live session, fed the readings a camera would give as moves are made."""

    def __init__(self, data: Path) -> None:
        self.store = Store(data)
        super().__init__(LiveSession(self.store, settle_window=0.0,
                                     tags={"Light": "Carla", "Dark": "Dino"}))
        self.session.set_camera_picture(_jpeg(200))
        self.session.set_camera_status("ok")

    def make(self, move: Move | str,
             snapshot: Callable[[], bytes | None] | None = None) -> None:
        super().make(move, snapshot or (lambda: _jpeg(int(40 + 4 * self.t) % 255)))


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    table = Table(tmp_path)
    yield table
    table.store.close()


@pytest.fixture
def server(table: Table) -> Iterator[WebServer]:
    web = serve(table.session, "127.0.0.1", 0, announce=lambda text: None,
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
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(
        service=Service(executable_path="/usr/bin/chromedriver"), options=options
    )
    browser.set_page_load_timeout(20)
    yield browser
    browser.quit()


@pytest.fixture(autouse=True)
def no_script_errors(driver: WebDriver) -> Iterator[None]:
    """Every test fails on a JavaScript error or a blocked (CSP) resource in the console.
    Let through: answers the page expects (a 404 for a move without a photo, the 409 of a
    refused control), which Chromium logs as failed loads, and the event stream's
    reconnection attempts once a test's server has been shut down."""
    driver.get("about:blank")
    driver.get_log("browser")
    yield
    expected = ("Failed to load resource", "ERR_CONNECTION_REFUSED")
    errors = [entry["message"] for entry in driver.get_log("browser")
              if entry["level"] == "SEVERE"
              and not any(text in entry["message"] for text in expected)]
    driver.get("about:blank")
    assert errors == []


def wait_for(check: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
    return waiting.wait_for(check, timeout, what, interval=0.05)


def phone_sized(driver: WebDriver) -> None:
    """The window as narrow as a phone's, once the page is laid out at that width."""
    driver.set_window_size(390, 1400)
    wait_for(lambda: driver.execute_script("return window.innerWidth") <= 390,
             what="the phone-sized layout")


def shot(driver: WebDriver, name: str) -> None:
    OUTPUT.mkdir(exist_ok=True)
    driver.save_screenshot(str(OUTPUT / f"web-{name}.png"))


def save_readme_picture(driver: WebDriver) -> None:
    """The game page at half size, for the README."""
    picture = cv2.imdecode(np.frombuffer(driver.get_screenshot_as_png(), np.uint8),
                           cv2.IMREAD_COLOR)
    assert picture is not None and picture.shape[1] >= 640
    height, width = picture.shape[:2]
    small = cv2.resize(picture, (width // 2, height // 2), interpolation=cv2.INTER_AREA)
    README_PICTURE.parent.mkdir(exist_ok=True)
    assert cv2.imwrite(str(README_PICTURE), small, [cv2.IMWRITE_PNG_COMPRESSION, 9])


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
                                            table: Table) -> None:
    for move in ("c3,d4", "swap", "f6,g6", "e2,e3"):
        table.make(move)
    driver.get(server.url)
    wait_for(lambda: tiles(driver) == {"c3", "d4", "f6", "g6", "e2", "e3"}, what="the board")
    wait_for(lambda: driver.execute_script(
        "return document.getElementById('link-status').dataset.status") == "live",
        what="the event stream")
    table.make("h8,h9")
    wait_for(lambda: {"h8", "h9"} <= tiles(driver), what="the new move drawn")
    assert attrs(driver, "#board [data-last]", "data-last") == {"h8", "h9"}
    assert "h8,h9" in driver.find_element(By.ID, "events").text
    table.make("a1,a3")  # light plays a legal pair; then dark breaks the distance rule
    table.make("f7,g7")
    flagged = wait_for(lambda: attrs(driver, "[data-flag-cell]", "data-flag-cell"),
                       what="flag marks")
    assert {"f7", "g7"} <= flagged
    flag_text = driver.find_element(By.ID, "flags").text
    assert "island" in flag_text and "round" in flag_text and "void" in flag_text
    driver.find_element(By.ID, "show-placeable").click()
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "[data-placeable]"),
             what="placeable cells")
    shot(driver, "game")
    save_readme_picture(driver)
    phone_sized(driver)
    shot(driver, "game-phone")
    driver.set_window_size(1280, 1000)


def test_pressing_pass_sends_the_control_and_draws_the_result(
    driver: WebDriver, server: WebServer, table: Table, web_example_game: Game
) -> None:
    for played in web_example_game.moves:
        if table.game.pass_allowed():
            break
        table.make(played.move)
    assert table.game.pass_allowed()
    before = len(table.game.moves)
    driver.get(server.url)
    button = wait_for(lambda: (b := driver.find_element(By.ID, "btn-pass")).is_enabled() and b,
                      what="an enabled pass button")
    button.click()
    wait_for(lambda: driver.execute_script("return document.body.dataset.moves")
             == str(before + 1), what="the pass drawn")
    assert str(table.game.moves[-1].move) == "pass"
    assert "done" in driver.find_element(By.ID, "control-result").text


def test_undo_and_a_refused_override(driver: WebDriver, server: WebServer,
                                     table: Table) -> None:
    table.make("c3,d4")
    driver.get(server.url)
    wait_for(lambda: tiles(driver) == {"c3", "d4"}, what="the board")
    driver.find_element(By.ID, "btn-undo").click()
    wait_for(lambda: driver.execute_script("return document.body.dataset.moves") == "0",
             what="the undone move")
    assert table.game.moves == []
    driver.find_element(By.CSS_SELECTOR, "#controls details summary").click()
    field = driver.find_element(By.CSS_SELECTOR, "#override-cell [name=cell]")
    field.send_keys("z99")
    driver.find_element(By.CSS_SELECTOR, "#override-cell button").click()
    result = driver.find_element(By.ID, "control-result")
    wait_for(lambda: "not a cell" in result.text, what="the error message")


def test_replaying_a_recorded_game(driver: WebDriver, server: WebServer, table: Table,
                                   web_example_game: Game) -> None:
    for played in web_example_game.moves:
        table.make(played.move)
    assert table.game.is_over()
    driver.get(server.url)
    wait_for(lambda: "wins" in driver.find_element(By.ID, "banner").text, what="the winner")
    shot(driver, "game-over")
    driver.get(server.url + "games")
    link = wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "[data-game='1'] a"),
                    what="the game list")
    assert "Carla v Dino" in driver.find_element(By.ID, "games").text
    shot(driver, "games")
    link[0].click()
    label = wait_for(lambda: driver.find_element(By.ID, "ply-label").get_attribute("data-ply"),
                     what="the replay")
    assert int(label) == len(web_example_game.moves)
    assert tiles(driver) == names_on(web_example_game)
    driver.find_element(By.ID, "first").click()
    wait_for(lambda: tiles(driver) == set(), what="the empty board")
    for _ in range(10):
        driver.find_element(By.ID, "next").click()
    wait_for(lambda: driver.find_element(By.ID, "ply-label").get_attribute("data-ply") == "10",
             what="move 10")
    replayed = Game()
    for played in web_example_game.moves[:10]:
        replayed.push(played.move)
    assert tiles(driver) == names_on(replayed)
    wait_for(lambda: driver.find_element(By.ID, "snapshot").is_displayed(), what="the photo")
    shot(driver, "replay")


def test_camera_page(driver: WebDriver, server: WebServer) -> None:
    driver.get(server.url + "camera")
    wait_for(lambda: driver.execute_script(
        "const i = document.getElementById('camera'); return i.complete && i.naturalWidth"),
        what="the camera picture")
    wait_for(lambda: driver.find_element(By.ID, "camera-status").text.startswith("ok"),
             what="the camera status")
    shot(driver, "camera")


def test_calibration_page_says_why_there_is_nothing_to_calibrate(driver: WebDriver,
                                                                 server: WebServer) -> None:
    driver.get(server.url + "calibration")  # the session has no camera reader
    message = driver.find_element(By.ID, "calib-message")
    wait_for(lambda: "no calibration yet" in message.text, what="the explanation")
    assert not driver.find_element(By.ID, "calib-form").is_displayed()
    shot(driver, "calibration-unavailable")


def test_calibration_page_drag_a_corner_and_save(driver: WebDriver) -> None:
    live = CalibratableFake()
    live.jpeg = _jpeg(200)
    web = serve(live, "127.0.0.1", 0, announce=lambda text: None)
    try:
        driver.get(web.url + "calibration")
        corners = wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "[data-corner]"),
                           what="the corners")
        assert len(corners) == 4
        assert attrs(driver, "[data-reading='a1']", "data-value") == {"light"}
        webdriver.ActionChains(driver).drag_and_drop_by_offset(corners[0], 30, 20).perform()
        driver.find_element(By.ID, "calib-save").click()
        wait_for(lambda: live.calibration_data is not None, what="the saved calibration")
        assert live.calibration_data is not None
        moved = live.calibration_data["corners"][0]
        assert moved != [100, 80] and moved[0] > 100 and moved[1] > 80
        shot(driver, "calibration")
    finally:
        web.shutdown()


def test_the_host_screen_shows_the_control_link_as_a_qr_code(driver: WebDriver,
                                                             table: Table) -> None:
    said: list[str] = []
    web = serve(table.session, "127.0.0.1", 0, token="tok-for-the-test", announce=said.append)
    try:
        assert f"controls link: {web.url}?token=tok-for-the-test" in said
        driver.get(web.url)
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, ".host-link svg"),
                 what="the QR code")
        link = driver.find_element(By.CSS_SELECTOR, ".host-link a").text
        assert link == f"{web.url}?token=tok-for-the-test"
        driver.execute_script("document.querySelector('.host-link').scrollIntoView()")
        picture = driver.find_element(By.CSS_SELECTOR, ".host-link svg").screenshot_as_png
        image = cv2.imdecode(np.frombuffer(picture, np.uint8), cv2.IMREAD_GRAYSCALE)
        image = cv2.threshold(image, 128, 255, cv2.THRESH_BINARY)[1]
        image = cv2.resize(image, None, fx=2, fy=2, interpolation=cv2.INTER_NEAREST)
        text, _points, _ = cv2.QRCodeDetector().detectAndDecode(image)
        assert text == link
        shot(driver, "game-host-qr")
    finally:
        web.shutdown()


def test_a_new_game_with_player_names_from_the_page(driver: WebDriver, server: WebServer,
                                                    table: Table) -> None:
    table.make("c3,d4")
    driver.get(server.url)
    wait_for(lambda: tiles(driver) == {"c3", "d4"}, what="the board")
    boxes = driver.find_elements(By.CSS_SELECTOR, "#controls details summary")
    boxes[1].click()
    form = driver.find_element(By.ID, "new-game")
    form.find_element(By.NAME, "light").send_keys("Elena")
    form.find_element(By.NAME, "dark").send_keys("Fritz")
    form.find_element(By.NAME, "board").send_keys("12")
    form.find_element(By.TAG_NAME, "button").click()
    wait_for(lambda: "Elena" in driver.find_element(By.ID, "turn").text, what="the new game")
    assert tiles(driver) == set()
    assert table.session.tags["Light"] == "Elena" and table.session.tags["Dark"] == "Fritz"
    assert table.session.table.size == 12
    assert driver.execute_script(
        "return document.querySelectorAll('#board [data-cell]').length") == 144


def _see(table: Table) -> None:
    """The camera sees the table's pieces as they now lie."""
    table.t += 1.0
    table.session.feed(Reading(table.t, BoardView.of(table.tiles, table.bridges)))


def _a_game_with_a_flag_corrected_and_a_move_by_override(table: Table) -> None:
    for move in ("c3,d4", "swap", "f6,g6", "a1,a2", "h6,i6", "a4,a5"):
        table.make(move)
    table.make("e6,j6")  # dark: a group of six, flagged
    assert table.game.flags
    for cell in ("e6", "j6"):  # dark takes them back: corrected
        del table.tiles[cell]
    _see(table)
    assert not table.game.flags
    for cell in ("j8", "j9"):  # the camera misses dark's next tiles: the players enter them
        table.session.control("override", {"cell": cell, "value": "dark"})
    assert str(table.game.moves[-1].move) == "j8,j9"


def test_the_events_card_rebuilds_the_history_from_the_record_after_a_reload(
    driver: WebDriver, server: WebServer, table: Table
) -> None:
    _a_game_with_a_flag_corrected_and_a_move_by_override(table)
    table.session.set_camera_status("occluded")
    table.session.set_camera_status("ok")
    driver.get(server.url)
    events = driver.find_element(By.ID, "events")
    wait_for(lambda: "Corrected" in events.text, what="the history from the record")
    lines = events.text.splitlines()
    assert any(line.startswith("⚠ 7. Dark (Dino) e6,j6, flagged") for line in lines)
    assert any("e6,j6 taken back (a group of five or more tiles)" in line for line in lines)
    assert "7. Dark (Dino) j8,j9 (entered by override)" in lines
    assert not any(line.lower().startswith("camera") for line in lines)
    assert driver.find_element(By.ID, "camera-line").text.startswith("Camera: ok")
    table.session.set_camera_status("occluded")
    wait_for(lambda: "covers the board" in driver.find_element(By.ID, "camera-line").text,
             what="the camera line")
    assert not any(line.lower().startswith("camera") for line in events.text.splitlines())
    driver.execute_script("document.getElementById('events').scrollIntoView()")
    shot(driver, "game-events")


def test_the_replay_tells_the_game_in_sentences_with_its_winner(
    driver: WebDriver, server: WebServer, table: Table
) -> None:
    _a_game_with_a_flag_corrected_and_a_move_by_override(table)
    table.session.control("end_game", {})
    driver.get(server.url + f"games/{table.session.game_id}")
    moves = driver.find_element(By.ID, "moves")
    wait_for(lambda: "j8,j9" in moves.text, what="the moves")
    items = driver.execute_script(
        "return [...document.querySelectorAll('#moves > li')].map((li) => li.innerText);")
    attempt = next(item for item in items if "e6,j6" in item)
    assert attempt.startswith("7. Dark (Dino) e6,j6 ⚠")
    assert "Flagged: tiles on e6,j6 would make a group of 6 dark tiles" in attempt
    assert "Corrected: e6,j6 taken back" in attempt
    before = items[items.index(attempt) - 1]
    assert before.startswith("6. Light (Carla) a4,a5") and "Corrected" not in before
    assert items[-1].startswith("7. Dark (Dino) j8,j9 (entered by override)")
    assert "Dark (Dino) wins on points: 1 – 0 (ended from the controls)." in \
        items[-1].replace("\u00a0", " ")
    text = moves.text
    assert "_" not in text and not any(line.rstrip().endswith(":") for line in text.splitlines())
    assert driver.find_element(By.ID, "result").text.startswith("Dark (Dino) wins on points")
    shot(driver, "replay-story")
    driver.set_window_size(390, 1400)
    try:
        wait_for(lambda: driver.execute_script(
            "const page = document.documentElement;"
            "return page.scrollWidth <= page.clientWidth"),
            what="the replay page within a phone's width")
        driver.execute_script("document.getElementById('moves').scrollIntoView()")
        shot(driver, "replay-story-phone")
    finally:
        driver.set_window_size(1280, 1000)


def test_overrides_are_listed_and_dropped_from_the_page(driver: WebDriver, server: WebServer,
                                                      table: Table) -> None:
    table.make("c3,d4")
    driver.get(server.url)
    wait_for(lambda: tiles(driver) == {"c3", "d4"}, what="the board")
    assert not driver.find_element(By.ID, "overrides-card").is_displayed()
    driver.find_element(By.CSS_SELECTOR, "#controls details summary").click()
    driver.find_element(By.CSS_SELECTOR, "#override-cell [name=cell]").send_keys("j9")
    driver.find_element(By.CSS_SELECTOR, "#override-cell [name=value]").send_keys("dark")
    driver.find_element(By.CSS_SELECTOR, "#override-cell button").click()
    listed = wait_for(lambda: driver.execute_script(
        "const li = document.querySelector(\"[data-override='cell:j9']\");"
        "return li && li.innerText;"), what="the override listed")
    assert listed.startswith("j9 is a dark tile")
    shot(driver, "game-overrides")

    def press_drop() -> bool:  # the list is redrawn on each event: press the current button
        try:
            driver.find_element(By.CSS_SELECTOR, "[data-drop='cell:j9']").click()
        except StaleElementReferenceException:
            return False
        return True

    wait_for(press_drop, what="the Drop button pressed")
    wait_for(lambda: not driver.find_element(By.ID, "overrides-card").is_displayed(),
             what="the override gone")
    assert table.session.table.overrides == {}


def test_after_the_end_the_controls_that_cannot_act_are_disabled(
    driver: WebDriver, server: WebServer, table: Table
) -> None:
    for move in ("c3,d4", "swap", "f6,g6", "a1,a3", "h6,i6"):
        table.make(move)
    driver.get(server.url)
    wait_for(lambda: len(tiles(driver)) == 8, what="the board")
    assert driver.find_element(By.ID, "btn-undo").is_enabled()
    driver.find_element(By.ID, "btn-end").click()
    driver.switch_to.alert.accept()
    banner = driver.find_element(By.ID, "banner")
    wait_for(lambda: "wins" in banner.text, what="the end banner")
    assert banner.text.replace("\u00a0", " ").startswith("Dark (Dino) wins on points: 1 – 0")
    for control in ("btn-confirm", "btn-undo", "btn-swap", "btn-pass", "btn-end",
                    "show-placeable"):
        assert not driver.find_element(By.ID, control).is_enabled(), control
    groups = driver.find_element(By.ID, "groups").text
    assert "Dark: 1 island = 1 point" in groups and "(s)" not in groups
    status = driver.execute_script(
        "return fetch('/api/control/undo', {method: 'POST', headers: "
        "{'Content-Type': 'application/json'}, body: '{}'})"
        ".then((r) => r.json().then((b) => [r.status, b.error]));")
    assert status == [409, "the game was ended from the controls, so its moves are final: "
                      "start a new game"]
    shot(driver, "game-ended")
    phone_sized(driver)
    shot(driver, "game-ended-phone")
    driver.set_window_size(1280, 1000)


def test_the_games_list_fits_its_card_on_a_phone(driver: WebDriver, server: WebServer,
                                                 table: Table) -> None:
    table.session.control("new_game", {"light": "Maximiliane", "dark": "Bartholomew"})
    table.make("c3,d4")
    driver.set_window_size(390, 900)
    try:
        driver.get(server.url + "games")
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "[data-game='2'] a"),
                 what="the game list")
        boxes = driver.execute_script("""
            const card = document.querySelector('main .card').getBoundingClientRect();
            const buttons = [...document.querySelectorAll('#games a.button')]
              .map((a) => a.getBoundingClientRect().right);
            const page = document.documentElement;
            return [card.right, Math.max(...buttons), page.scrollWidth, page.clientWidth];""")
        card_right, button_right, page_width, window_width = boxes
        shot(driver, "games-phone")
        assert button_right <= card_right
        assert page_width <= window_width
    finally:
        driver.set_window_size(1280, 1000)


def test_the_camera_status_says_the_video_ended_on_both_pages(
    driver: WebDriver, server: WebServer, table: Table
) -> None:
    table.make("c3,d4")
    driver.get(server.url + "camera")
    status = driver.find_element(By.ID, "camera-status")
    wait_for(lambda: status.text.startswith("ok"), what="the camera status")
    table.session.camera_ended("demo.mp4 has ended")
    wait_for(lambda: status.text.startswith("the video has ended (demo.mp4 has ended"),
             what="the end of the video")  # then "; no frames for 4 s)" once 3 s have passed
    driver.get(server.url)
    line = driver.find_element(By.ID, "camera-line")
    wait_for(lambda: line.text.startswith("Camera: the video has ended (demo.mp4 has ended"),
             what="the camera line")
    assert "fps" not in line.text


def test_the_games_page_shows_the_standings(driver: WebDriver, server: WebServer,
                                            table: Table, web_example_game: Game) -> None:
    for played in web_example_game.moves:
        table.make(played.move)
    outcome = web_example_game.outcome()
    assert outcome is not None and outcome.winner is not None
    winner, loser = ("Carla", "Dino") if outcome.winner.value == "light" else ("Dino", "Carla")
    driver.get(server.url + "games")
    rows = wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#standings tbody tr"),
                    what="the standings")
    assert [r.text.split() for r in rows] == [["1", winner, "1", "1", "0", "0", "1"],
                                              ["2", loser, "1", "0", "0", "1", "0"]]
    assert not driver.find_element(By.ID, "standings-empty").is_displayed()


def test_a_game_page_told_to_slow_down_waits_and_draws_the_move(
    driver: WebDriver, table: Table
) -> None:
    web = serve(table.session, "127.0.0.1", 0, announce=lambda text: None,
                config={"RATE_LIMIT": (0.5, 3)})  # the page, its events and its first state
    try:
        driver.get(web.url)
        wait_for(lambda: driver.execute_script(
            "return document.getElementById('link-status').dataset.status") == "live",
            what="the event stream")
        wait_for(lambda: driver.execute_script("return document.body.dataset.moves") == "0",
                 what="the first state")
        table.make("c3,d4")  # its refetch is refused (429, Retry-After), then retried
        wait_for(lambda: tiles(driver) == {"c3", "d4"}, timeout=8.0, what="the move drawn")
        assert "Cannot load" not in driver.find_element(By.ID, "notice").text
    finally:
        web.shutdown()


def test_a_camera_event_is_shown_on_the_game_page_without_asking_for_the_state(
    driver: WebDriver, table: Table
) -> None:
    web = serve(table.session, "127.0.0.1", 0, announce=lambda text: None,
                config={"RATE_LIMIT": (0.05, 3)})  # a refetch would wait 20 s
    try:
        driver.get(web.url)
        wait_for(lambda: driver.execute_script(
            "return document.getElementById('link-status').dataset.status") == "live",
            what="the event stream")
        wait_for(lambda: driver.execute_script("return document.body.dataset.moves") == "0",
                 what="the first state")
        table.session.set_camera_status("occluded")
        line = driver.find_element(By.ID, "camera-line")
        wait_for(lambda: "covers the board" in line.text, timeout=3.0, what="the camera status")
        table.session.set_camera_status("ok")
        wait_for(lambda: line.text.startswith("Camera: ok"), timeout=3.0,
                 what="the camera back")
    finally:
        web.shutdown()


def test_turns_seen_at_once_are_asked_about_and_confirmed_from_the_page(
    driver: WebDriver, server: WebServer, table: Table
) -> None:
    from ponte.live.settle import BoardView, Reading

    for move in ("a1,a2", "j9,j10"):
        table.make(move)
    driver.get(server.url)
    wait_for(lambda: tiles(driver) == {"a1", "a2", "j9", "j10"}, what="the board")
    three = {**table.tiles, "e5": "light", "f6": "light", "g8": "light", "i6": "light",
             "c7": "dark", "c8": "dark"}  # light, dark, light: which light pair first?
    table.session.feed(Reading(table.t + 1.0, BoardView.of(three)))
    note = wait_for(lambda: "seen at once" in (t := driver.find_element(By.ID, "notice").text)
                    and t, what="the catch-up note")
    assert note.startswith("Three turns seen at once: confirm")
    driver.find_element(By.ID, "btn-confirm").click()
    wait_for(lambda: driver.execute_script("return document.body.dataset.moves") == "5",
             what="the three turns recorded")
    assert "seen at once" not in driver.find_element(By.ID, "notice").text
    assert table.game.flags == []
