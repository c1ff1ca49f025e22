"""The live web board: its two answers, its event stream, and the page in a real browser."""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest
from matchevents import CRAZYHOUSE_MATE, FOOLS_MATE, played_match, untimed_game

from serialref.events import (
    GameEnded,
    GameStarted,
    MatchEvent,
    MatchStarted,
    MovePlayed,
    SupervisorCommand,
)
from serialref.observers import feed as feed_module
from serialref.observers.web import WebFeed, WebObserver
from serialref.rules import find_rules
from serialref.wire.address import Address

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def started() -> GameStarted:
    return GameStarted(game=3, white_port="b", black_port="a", fen=chess.STARTING_FEN,
                       tags={"White": "Stockfish <b>16</b>", "Black": "GNU Chess",
                             "Event": "Test", "TimeControl": "300+2"})  # fmt: skip


def moves(sans: list[str]) -> Iterator[MovePlayed]:
    board = chess.Board()
    for ply, san in enumerate(sans, start=1):
        move = board.parse_san(san)
        board.push(move)
        yield MovePlayed(game=3, ply=ply, san=san, uci=move.uci(), elapsed=1.5,
                         remaining=(300 - ply * 0.75, 301 - ply * 0.5), consumed=(0, 0),
                         moves_made=(0, 0), fen=board.fen(),
                         analysis={"ce": str(20 + ply), "pv": "Nf3 Nc6", "acn": "9"})  # fmt: skip


def message(data: bytes) -> dict[str, object]:
    assert data.startswith(b"data: ") and data.endswith(b"\n\n")
    decoded: dict[str, object] = json.loads(data[6:])
    return decoded


def test_the_page_the_stream_and_nothing_else() -> None:
    feed = WebFeed()
    page, stays = feed.answer(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert page.startswith(b"HTTP/1.1 200 OK\r\n") and b"EventSource" in page and not stays
    stream, stays = feed.answer(b"GET /events HTTP/1.1\r\n\r\n")
    assert b"Content-Type: text/event-stream" in stream and stays
    assert feed.answer(b"GET /../etc/passwd HTTP/1.1\r\n\r\n")[0].startswith(b"HTTP/1.1 404")
    assert feed.answer(b"POST /events HTTP/1.1\r\n\r\n")[0].startswith(b"HTTP/1.1 405")


def after(feed: WebFeed, event: MatchEvent) -> dict[str, object]:
    """The state the page gets once ``event`` changed it (coalesced: sent soon, whole)."""
    assert feed.update(event) is None
    return message(feed.greeting())


def test_every_message_is_the_whole_game() -> None:
    feed = WebFeed()
    assert feed.update(MatchStarted(games=2, time_control="300+2", ports=("a", "b"))) == b""
    assert after(feed, started())["clocks"] == [300, 300]
    *_, state = (after(feed, move) for move in moves(["e4", "e5", "Nf3"]))
    board = chess.Board()
    for san in ("e4", "e5", "Nf3"):
        board.push_san(san)
    assert state["fen"] == board.fen()
    assert state["moves"] == ["e4", "e5", "Nf3"]
    assert state["running"] == "black"
    assert state["analysis"] == [{"ce": "23", "pv": "Nf3 Nc6"}, {"ce": "22", "pv": "Nf3 Nc6"}]
    assert "<svg" in str(state["svg"])
    paused = after(feed, SupervisorCommand(command="pause", args=(), uid=0, game=3))
    assert paused["paused"] is True and paused["running"] is None
    ended = after(feed, GameEnded(game=3, result="1-0", termination="adjudication",
                                  reason="adjudicated", fen=board.fen(), consumed=(0, 0)))
    assert ended["result"] == "1-0" and ended["running"] is None


def test_a_browser_connecting_gets_the_game_at_once() -> None:
    with WebObserver(Address("127.0.0.1", 0)) as server:
        server.handle(started())
        with socket.create_connection(server.address, timeout=5) as browser:
            browser.sendall(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
            data = b""
            while b"\n\ndata: " not in data or not data.endswith(b"\n\n"):
                chunk = browser.recv(65536)
                assert chunk
                data += chunk
        assert b"HTTP/1.1 200 OK" in data and b'"game": 3' in data


def test_a_client_that_never_sends_its_request_is_let_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(feed_module, "REQUEST_TIMEOUT", 0.2)
    with WebObserver(Address("127.0.0.1", 0)) as server:
        with socket.create_connection(server.address, timeout=5) as silent:
            assert silent.recv(1) == b""  # the server closed it: its slot is free again
        assert server.clients == 0


@pytest.fixture
def chromium() -> Iterator[object]:
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip("Debian's chromium and chromium-driver are not installed")
    webdriver = pytest.importorskip("selenium.webdriver", reason="pip install selenium")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1000,820"):  # fmt: skip
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()


def test_the_page_in_chromium_follows_the_game(chromium: object, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver: object = chromium
    sans = ["e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6"]
    board = chess.Board()
    with WebObserver(Address("127.0.0.1", 0)) as server:
        server.handle(MatchStarted(games=2, time_control="300+2", ports=("a", "b")))
        server.handle(started())
        driver.get(f"http://127.0.0.1:{server.address.port}/")  # type: ignore[attr-defined]
        wait = WebDriverWait(driver, 10)
        shown = lambda d: d.find_element(By.ID, "board").get_attribute("data-fen")  # noqa: E731
        wait.until(lambda d: shown(d) == board.fen())
        for move in moves(sans):
            server.handle(move)
            board.push_san(move.san)
        wait.until(lambda d: shown(d) == board.fen())
        page = driver.find_element  # type: ignore[attr-defined]
        assert page(By.ID, "white-name").text == "Stockfish <b>16</b>"  # text, never markup
        assert page(By.ID, "moves").text.startswith("1. e4 c5 2. Nf3 d6")
        assert page(By.ID, "white-analysis").text == "ce 29 pv Nf3 Nc6"
        assert page(By.ID, "white-clock").get_attribute("class") == "clock running"
        assert len(page(By.ID, "board").find_elements(By.CSS_SELECTOR, "svg use")) >= len(
            board.piece_map())  # fmt: skip
        server.handle(GameEnded(game=3, result="1/2-1/2", termination="adjudication",
                                reason="drawn by the arbiter", fen=board.fen(),
                                consumed=(0, 0)))  # fmt: skip
        wait.until(lambda d: d.find_element(By.ID, "result").text
                   == "1/2-1/2 (drawn by the arbiter)")  # fmt: skip
        artifacts = Path(os.environ.get("SERIALREF_TEST_ARTIFACTS", tmp_path))
        artifacts.mkdir(parents=True, exist_ok=True)
        assert driver.save_screenshot(str(artifacts / "web-board.png"))  # type: ignore[attr-defined]


def test_a_match_as_the_referee_publishes_it() -> None:
    feed = WebFeed()
    for event in untimed_game():
        feed.update(event)
    state = message(feed.greeting())
    assert state["moves"] == list(FOOLS_MATE)
    assert state["clocks"] == [None, None] and state["running"] is None
    assert state["result"] == "0-1" and state["names"] == ["Alpha", "Beta"]


def test_a_variant_game_is_shown_on_its_own_board() -> None:
    feed = WebFeed()
    crazyhouse = find_rules("crazyhouse")
    for event in played_match("60+1", games=[CRAZYHOUSE_MATE], rules=crazyhouse):
        feed.update(event)
    state = message(feed.greeting())
    assert state["moves"] == list(CRAZYHOUSE_MATE)
    assert state["result"] == "0-1"
    assert crazyhouse.board(str(state["fen"])).piece_at(chess.F2) == chess.Piece.from_symbol("p")


def test_an_events_stream_carries_every_board_and_drops_an_ended_one() -> None:
    feed = WebFeed(event="Club cup")
    for board in (2, 5):
        feed.update(started(), board)
    assert feed.update(next(moves(["e4"])), 5) is None  # coalesced: the whole event, soon
    state = message(feed.greeting())
    assert state["event"] == "Club cup"
    boards = state["boards"]
    assert isinstance(boards, list)
    assert [(b["board"], b["moves"]) for b in boards] == [(2, []), (5, ["e4"])]
    assert feed.leave(2) is None
    remaining = message(feed.greeting())["boards"]
    assert isinstance(remaining, list) and [b["board"] for b in remaining] == [5]


def test_the_event_page_in_chromium_shows_every_board(chromium: object, tmp_path: Path) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver: object = chromium
    with WebObserver(Address("127.0.0.1", 0), event="Club cup") as server:
        first, second = server.board(1), server.board(2)
        for board in (first, second):
            board.handle(MatchStarted(games=2, time_control="300+2", ports=("a", "b")))
            board.handle(started())
        after = chess.Board()
        for move in moves(["d4", "d5", "c4"]):
            second.handle(move)
            after.push_san(move.san)
        driver.get(f"http://127.0.0.1:{server.address.port}/")  # type: ignore[attr-defined]
        # The page redraws a board's section as its feed moves: an element read while
        # it is replaced is stale, and read again.
        wait = WebDriverWait(driver, 10, ignored_exceptions=(StaleElementReferenceException,))

        def fens(d: object) -> dict[str, str]:
            sections = d.find_elements(By.CSS_SELECTOR, "#boards section")  # type: ignore[attr-defined]
            return {s.get_attribute("data-board"): s.get_attribute("data-fen") for s in sections}

        wait.until(lambda d: fens(d) == {"1": chess.STARTING_FEN, "2": after.fen()})
        page = driver.find_element  # type: ignore[attr-defined]
        assert page(By.ID, "title").text == "Club cup"

        def names(d: object) -> list[str]:
            boards = d.find_element(By.ID, "boards")  # type: ignore[attr-defined]
            return [n.text for n in boards.find_elements(By.CSS_SELECTOR, ".name")]

        # Text, never markup.
        assert wait.until(lambda d: names(d).count("Stockfish <b>16</b>") == 2)
        first.close()  # board 1's pairing has ended: it leaves the page
        wait.until(lambda d: fens(d) == {"2": after.fen()})
        artifacts = Path(os.environ.get("SERIALREF_TEST_ARTIFACTS", tmp_path))
        artifacts.mkdir(parents=True, exist_ok=True)
        assert driver.save_screenshot(str(artifacts / "web-event.png"))  # type: ignore[attr-defined]
