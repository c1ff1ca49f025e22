"""The live web board: its answers, its event stream, the page it draws, and that page in a
real browser, with and without JavaScript, for standard chess and the variants."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import chess
import pytest
from matchevents import CRAZYHOUSE_MATE, FOOLS_MATE, played_match, untimed_game
from processes import wait_for

from serialref.happenings import (
    GameEnded,
    GameStarted,
    MatchEnded,
    MatchEvent,
    MatchStarted,
    MovePlayed,
    PlayerSignedOn,
    SupervisorCommand,
)
from serialref.observers import feed as feed_module
from serialref.observers.diagram import _CHECK, _COLOURS, _DROP, _LAST_MOVE, _LINE
from serialref.observers.web import WebFeed, WebObserver
from serialref.observers.webpage import score_text, variant_title
from serialref.rules import find_rules
from serialref.rules.squares import square_name, squares_of
from serialref.wire.address import Address

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
WINDOW = (1100, 1000)
HAS_PYFFISH = importlib.util.find_spec("pyffish") is not None


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


def variant_game(variant: str, ucis: Sequence[str]) -> tuple[list[MatchEvent], chess.Board]:
    """A game of ``variant`` as the referee publishes it, up to the last of ``ucis``."""
    rules = find_rules(variant)
    tags = {"White": "Alpha", "Black": "Beta", "Event": "Test", "TimeControl": "300+2"}
    if not rules.standard:
        tags["Variant"] = rules.pgn_name
    events: list[MatchEvent] = [
        MatchStarted(games=2, time_control="300+2", ports=("a", "b")),
        PlayerSignedOn(port="a", name="Alpha"),
        PlayerSignedOn(port="b", name="Beta"),
        GameStarted(game=1, white_port="a", black_port="b", fen=rules.starting_fen, tags=tags),
    ]
    board = rules.board()
    for ply, uci in enumerate(ucis, start=1):
        move = board.parse_uci(uci)
        san = board.san(move)
        board.push(move)
        ce = "32762" if ply % 2 else "-41"  # White: a mate in three; Black: -0.41
        events.append(MovePlayed(game=1, ply=ply, san=san, uci=uci, elapsed=2.0,
                                 remaining=(290.0, 280.0), consumed=(0, 0), moves_made=(0, 0),
                                 fen=board.fen(), analysis={"ce": ce, "pv": san}))  # fmt: skip
    return events, board


VARIANT_GAMES = {
    "standard": "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3 a7a6",
    "crazyhouse": "e2e4 d7d5 e4d5 g8f6 b1c3 f6d5 c3d5 d8d5 N@c5",
    "xiangqi": "h3h10 i10h10 b1c3 b8e8",
    "shogi": "c3c4 g7g6 b2h8 g9h8 B@e5",
    "capablanca": "e2e4 e7e5 i1h3 c8d6",
}


def message(data: bytes) -> dict[str, object]:
    assert data.startswith(b"data: ") and data.endswith(b"\n\n")
    decoded: dict[str, object] = json.loads(data[6:])
    return decoded


def page_of(feed: WebFeed) -> str:
    response, stays = feed.answer(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert response.startswith(b"HTTP/1.1 200 OK\r\n") and not stays
    return response.split(b"\r\n\r\n", 1)[1].decode()


def test_the_page_the_stream_and_nothing_else() -> None:
    feed = WebFeed()
    assert "EventSource" in page_of(feed)
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
    assert state["scores"] == ["+0.23", "+0.22"]
    assert state["variant"] == "Standard chess" and state["title"] == "Game 3 - Test"
    html = str(state["html"])
    assert html.count('class="piece"') == 32 and 'data-square="f3" data-piece="N"' in html
    assert "Stockfish &lt;b&gt;16&lt;/b&gt;" in html  # text, never markup
    paused = after(feed, SupervisorCommand(command="pause", args=(), uid=0, game=3))
    assert paused["paused"] is True and paused["running"] is None
    ended = after(feed, GameEnded(game=3, result="1-0", termination="adjudication",
                                  reason="adjudicated", fen=board.fen(), consumed=(0, 0)))
    assert ended["result"] == "1-0" and ended["running"] is None


@pytest.mark.parametrize(
    ("ce", "text"),
    [("32", "+0.32"), ("-150", "-1.50"), ("0", "+0.00"), ("32000", "+320.00"),
     ("32766", "#1"), ("32762", "#3"), ("-32761", "#-3"), ("-32767", "#-0"),
     ("-32768", ""), ("x", ""), ("", "")],
)  # fmt: skip
def test_scores_are_written_as_testers_write_them(ce: str, text: str) -> None:
    assert score_text(ce) == text


def test_the_page_holds_the_game_without_script() -> None:
    """``GET /`` is the game as it stands: board, players, clocks, scores, moves, FEN."""
    feed = WebFeed()
    feed.update(MatchStarted(games=2, time_control="300+2", ports=("a", "b")))
    feed.update(started())
    board = chess.Board()
    for move in moves(["e4", "c5", "Nf3"]):
        feed.update(move)
        board.push_uci(move.uci)
    page = page_of(feed)
    assert f'data-fen="{board.fen()}"' in page and f">{board.fen()}</div>" in page
    assert page.count('class="piece"') == 32 and 'id="white-knight"' in page  # pictures in it
    assert '<h1 id="title">Game 3 - Test</h1>' in page
    assert "Stockfish &lt;b&gt;16&lt;/b&gt;" in page and "<b>16" not in page
    assert '<span class="score">+0.23</span>' in page
    assert '<span class="clock" data-seconds="297.8">4:57</span>' in page  # White's, stopped
    assert re.search(r'"clock running" data-seconds="299\.[45]">4:59<', page)  # Black's runs
    assert '<span class="number">1.</span> <span class="move">e4</span>' in page
    assert '<span class="move last">Nf3</span>' in page


def test_the_end_of_the_match_is_shown_and_the_last_message_says_the_feed_closed() -> None:
    feed = WebFeed()
    for event in played_match("60+1"):
        feed.update(event)
    state = message(feed.greeting())
    assert state["over"] == "Match over: Alpha 0, Beta 1" and state["running"] is None
    assert "Match over: Alpha 0, Beta 1" in page_of(feed)
    last = message(feed.farewell())
    assert last["closed"] and last["over"] == state["over"]


def test_a_black_first_or_very_long_game_is_numbered_from_its_start() -> None:
    feed = WebFeed()
    fen = "4k3/8/8/8/8/8/8/4K2R b K - 0 40"
    tags = {"White": "A", "Black": "B", "FEN": fen, "SetUp": "1"}
    feed.update(GameStarted(game=1, white_port="a", black_port="b", fen=fen, tags=tags))
    board = chess.Board(fen)
    for ply, uci in enumerate(["e8d8", "e1f1", "d8e8"], start=1):
        move = chess.Move.from_uci(uci)
        san = board.san(move)
        board.push(move)
        feed.update(MovePlayed(game=1, ply=ply, san=san, uci=uci, elapsed=1, remaining=(1, 1),
                               consumed=(0, 0), moves_made=(0, 0), fen=board.fen()))  # fmt: skip
    html = str(message(feed.greeting())["html"])
    assert '<span class="number">40...</span> <span class="move">Kd8</span>' in html
    assert '<span class="number">41.</span> <span class="move">Kf1</span>' in html


def test_a_match_as_the_referee_publishes_it() -> None:
    feed = WebFeed()
    for event in untimed_game():
        feed.update(event)
    state = message(feed.greeting())
    assert state["moves"] == list(FOOLS_MATE)
    assert state["clocks"] == [None, None] and state["running"] is None
    assert state["result"] == "0-1" and state["names"] == ["Alpha", "Beta"]


def test_a_crazyhouse_game_shows_its_hands_and_its_drop() -> None:
    feed = WebFeed()
    crazyhouse = find_rules("crazyhouse")
    held = ""
    for event in played_match("60+1", games=[CRAZYHOUSE_MATE], rules=crazyhouse):
        feed.update(event)
        if isinstance(event, MovePlayed) and event.san == "Nxg4":
            held = str(message(feed.greeting())["html"])
    assert '<g class="hand" data-side="black">' in held
    assert '<g class="held" data-piece="p" data-count="1">' in held  # Black took a pawn
    state = message(feed.greeting())
    assert state["moves"] == list(CRAZYHOUSE_MATE)
    assert state["result"] == "0-1" and state["variant"] == "Crazyhouse"
    assert crazyhouse.board(str(state["fen"])).piece_at(chess.F2) == chess.Piece.from_symbol("p")
    html = str(state["html"])
    assert '<rect class="last-drop" data-square="f2"' in html and "last-move" not in html
    assert '<g class="hand" data-side="white">' in html and "held" not in html  # dropped
    assert '<rect class="check" data-square="e1"' in html


def test_a_three_check_game_shows_the_checks_still_to_give() -> None:
    events, _ = variant_game("3check", ["e2e4", "f7f5", "d1h5"])
    feed = WebFeed()
    for event in events:
        feed.update(event)
    html = str(message(feed.greeting())["html"])
    assert "Checks to give: Alpha 2, Beta 3" in html
    assert '<rect class="check" data-square="e8"' in html


@pytest.mark.skipif(not HAS_PYFFISH, reason="the fairy variants need pyffish")
@pytest.mark.parametrize("variant", ["xiangqi", "shogi", "capablanca"])
def test_a_fairy_game_is_drawn_on_its_own_board(variant: str) -> None:
    events, board = variant_game(variant, VARIANT_GAMES[variant].split())
    feed = WebFeed()
    for event in events:
        feed.update(event)
    html = str(message(feed.greeting())["html"])
    squares = squares_of(board)
    assert f'data-files="{squares.files}" data-ranks="{squares.ranks}"' in html
    assert html.count('<g class="piece"') == len(squares.pieces)


def test_python_chess_s_variants_are_drawn_without_pyffish() -> None:
    """Only the fairy variants need Fairy-Stockfish: the others' page is drawn without it."""
    script = (
        "import sys\n"
        "sys.modules['pyffish'] = None  # importing it fails\n"
        "from observers.test_web import VARIANT_GAMES, WebFeed, message, variant_game\n"
        "for variant in ('standard', 'crazyhouse'):\n"
        "    events, board = variant_game(variant, VARIANT_GAMES[variant].split())\n"
        "    feed = WebFeed()\n"
        "    for event in events:\n"
        "        feed.update(event)\n"
        "    state = message(feed.greeting())\n"
        "    assert state['fen'] == board.fen() and 'class=\"piece\"' in state['html']\n"
        "assert 'pyffish' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
    )
    subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[1], check=True,
                   timeout=60)  # fmt: skip


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


def test_a_subscriber_is_told_when_the_feed_closes() -> None:
    with socket.socket() as browser:
        with WebObserver(Address("127.0.0.1", 0)) as server:
            server.handle(started())
            browser.settimeout(5)
            browser.connect(server.address)
            browser.sendall(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
            data = b""
            while b"\n\ndata: " not in data or not data.endswith(b"\n\n"):  # the game, first
                data += browser.recv(65536)
        while chunk := browser.recv(65536):  # then what the closing feed sent, to the end
            data += chunk
    *_, last = data.split(b"\n\n")[:-1]
    assert json.loads(last.removeprefix(b"data: "))["closed"]


def test_a_client_that_never_sends_its_request_is_let_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(feed_module, "REQUEST_TIMEOUT", 0.2)
    with WebObserver(Address("127.0.0.1", 0)) as server:
        with socket.create_connection(server.address, timeout=5) as silent:
            assert silent.recv(1) == b""  # the server closed it: its slot is free again
        assert server.clients == 0


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
    assert [b["title"] for b in boards] == ["Board 2, game 3", "Board 5, game 3"]
    assert feed.leave(2) is None
    remaining = message(feed.greeting())["boards"]
    assert isinstance(remaining, list) and [b["board"] for b in remaining] == [5]


# ----------------------------------------------------------------- in a browser


def browser(*, javascript: bool = True) -> object:
    """Debian's headless chromium through chromium-driver (selenium)."""
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip("Debian's chromium and chromium-driver are not installed")
    webdriver = pytest.importorskip("selenium.webdriver", reason="pip install selenium")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={WINDOW[0]},{WINDOW[1]}"):  # fmt: skip
        options.add_argument(flag)
    if not javascript:
        options.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2}
        )
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    return webdriver.Chrome(options=options, service=service)


@pytest.fixture
def chromium() -> Iterator[object]:
    driver = browser()
    try:
        yield driver
    finally:
        driver.quit()  # type: ignore[attr-defined]


@pytest.fixture
def chromium_without_javascript() -> Iterator[object]:
    driver = browser(javascript=False)
    try:
        yield driver
    finally:
        driver.quit()  # type: ignore[attr-defined]


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    """Where screenshots are kept: ``$SERIALREF_TEST_ARTIFACTS``, else the test's folder."""
    folder = Path(os.environ.get("SERIALREF_TEST_ARTIFACTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def painted_cells(png: bytes, surface: dict[str, float], files: int, ranks: int,
                  drawing: str, zoom: float) -> set[tuple[int, int]]:  # fmt: skip
    """The cells of the board whose middle shows more than the board's own colours.

    A cell's middle (its inner 60%) is read from the screenshot; a pixel is the board's
    when it lies near a blend of two of the board's colours (squares, lines, the
    highlights), as antialiasing makes them. A piece covers far more than the lines do.
    """
    image_module = pytest.importorskip("PIL.Image", reason="pip install pillow")
    numpy = pytest.importorskip("numpy")
    image = numpy.asarray(image_module.open(io.BytesIO(png)).convert("RGB"), dtype=float)
    colours = numpy.array([_rgb(c) for c in (*_COLOURS[drawing], _LAST_MOVE, _DROP, _CHECK,
                                             _LINE)], dtype=float)  # fmt: skip
    starts = numpy.repeat(colours, len(colours), axis=0)
    spans = numpy.tile(colours, (len(colours), 1)) - starts
    width, height = surface["width"] / files, surface["height"] / ranks
    painted = set()
    for file in range(files):
        for rank in range(ranks):
            left = surface["x"] + (file + 0.2) * width
            top = surface["y"] + (ranks - 1 - rank + 0.2) * height
            region = image[round(top * zoom):round((top + 0.6 * height) * zoom),
                           round(left * zoom):round((left + 0.6 * width) * zoom)].reshape(-1, 3)
            offsets = region[:, None, :] - starts[None, :, :]
            lengths = numpy.maximum((spans**2).sum(axis=1), 1e-9)
            along = numpy.clip((offsets * spans[None]).sum(axis=2) / lengths, 0, 1)
            nearest = starts[None] + along[:, :, None] * spans[None]
            distance = numpy.sqrt(((region[:, None, :] - nearest) ** 2).sum(axis=2)).min(axis=1)
            if (distance > 30).mean() > 0.12:
                painted.add((file, rank))
    return painted


def served(server: WebObserver) -> dict[str, object]:
    """The state the server serves now: its stream's first message."""
    with socket.create_connection(server.address, timeout=5) as client:
        client.sendall(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        data = b""
        while b"\n\ndata: " not in data or not data.endswith(b"\n\n"):
            chunk = client.recv(65536)
            assert chunk, "the feed closed"
            data += chunk
    return message(data[data.index(b"data: ") :])


def test_every_variant_s_board_is_in_the_page_itself(
    chromium_without_javascript: object, artifacts: Path
) -> None:
    """Without JavaScript the page shows each variant's board, hands and last move, drawn.

    Checked in the DOM (every piece on its square, the hands' counts, the drop, the
    scores) and in the screenshot: exactly the cells where pieces stand show more than
    the board's own colours.
    """
    from selenium.webdriver.common.by import By

    driver: object = chromium_without_javascript
    find = driver.find_element  # type: ignore[attr-defined]
    find_all = driver.find_elements  # type: ignore[attr-defined]
    for variant, ucis in VARIANT_GAMES.items():
        rules = find_rules(variant)
        if rules.fairy and not HAS_PYFFISH:
            continue
        events, board = variant_game(variant, ucis.split())
        squares = squares_of(board)
        with WebObserver(Address("127.0.0.1", 0)) as server:
            for event in events:
                server.handle(event)
            fen = board.fen()
            wait_for(lambda: served(server)["fen"] == fen, "the last move")  # noqa: B023
            driver.get(f"http://127.0.0.1:{server.address.port}/")  # type: ignore[attr-defined]
            png = driver.get_screenshot_as_png()  # type: ignore[attr-defined]
        (artifacts / f"web-{variant}.png").write_bytes(png)
        pieces = {p.get_attribute("data-square"): p.get_attribute("data-piece")
                  for p in find_all(By.CSS_SELECTOR, "g.piece")}  # fmt: skip
        assert pieces == {square_name(s): p for s, p in squares.pieces.items()}, variant
        assert find(By.CSS_SELECTOR, ".variant").text == variant_title(rules)
        assert find(By.ID, "title").text == "Game 1 - Test"
        assert find(By.CSS_SELECTOR, ".fen").text == board.fen()
        assert sorted(s.text for s in find_all(By.CSS_SELECTOR, ".score")) == ["#3", "-0.41"]
        held = {(h.find_element(By.XPATH, "..").get_attribute("data-side"),
                 h.get_attribute("data-piece"), h.get_attribute("data-count"))
                for h in find_all(By.CSS_SELECTOR, "g.held")}  # fmt: skip
        white, black = squares.hands or ("", "")
        hands = {("white", p, str(white.count(p))) for p in white}
        assert held == hands | {("black", p, str(black.count(p))) for p in black}, variant
        last = ucis.split()[-1]
        if "@" in last:
            assert find(By.CSS_SELECTOR, "rect.last-drop").get_attribute("data-square") == last[2:]
            assert not find_all(By.CSS_SELECTOR, "rect.last-move")
        else:
            marked = find_all(By.CSS_SELECTOR, "rect.last-move")
            assert {m.get_attribute("data-square") for m in marked} == {last[:2], last[2:4]}
        surface = find(By.CSS_SELECTOR, "svg.board rect.surface").rect
        zoom = driver.execute_script("return window.devicePixelRatio")  # type: ignore[attr-defined]
        painted = painted_cells(png, surface, squares.files, squares.ranks, rules.drawing, zoom)
        assert painted == set(squares.pieces), variant


def test_a_plain_headless_screenshot_shows_the_board(tmp_path: Path) -> None:
    """``chromium --headless --screenshot URL``, nothing else: the board is in the picture."""
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed")
    image_module = pytest.importorskip("PIL.Image", reason="pip install pillow")
    shot = tmp_path / "plain.png"
    with WebObserver(Address("127.0.0.1", 0)) as server:
        server.handle(MatchStarted(games=2, time_control="300+2", ports=("a", "b")))
        server.handle(started())
        for move in moves(["e4", "c5"]):
            server.handle(move)
        subprocess.run(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--screenshot={shot}",
             f"http://127.0.0.1:{server.address.port}/"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    numpy = pytest.importorskip("numpy")
    with image_module.open(shot) as image:
        pixels = numpy.asarray(image.convert("RGB"))
    dark = int((pixels == _rgb(_COLOURS["chess"][1])).all(axis=2).sum())
    assert dark > 20 * 40 * 40  # most of 32 dark squares of some 55 pixels a side


def test_the_page_in_chromium_follows_the_game(chromium: object, artifacts: Path) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver: object = chromium
    sans = ["e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6"]
    board = chess.Board()
    wait = WebDriverWait(driver, 10, ignored_exceptions=(StaleElementReferenceException,))
    page = driver.find_element  # type: ignore[attr-defined]
    shown = lambda d: d.find_element(By.CSS_SELECTOR, "section.game").get_attribute("data-fen")  # noqa: E731
    with WebObserver(Address("127.0.0.1", 0)) as server:
        server.handle(MatchStarted(games=2, time_control="300+2", ports=("a", "b")))
        server.handle(PlayerSignedOn(port="a", name="GNU Chess"))
        server.handle(PlayerSignedOn(port="b", name="Stockfish"))
        server.handle(started())
        driver.get(f"http://127.0.0.1:{server.address.port}/")  # type: ignore[attr-defined]
        wait.until(lambda d: shown(d) == board.fen())
        for move in moves(sans):
            server.handle(move)
            board.push_san(move.san)
        wait.until(lambda d: shown(d) == board.fen())
        names = [n.text for n in driver.find_elements(By.CSS_SELECTOR, ".name")]  # type: ignore[attr-defined]
        assert names == ["GNU Chess", "Stockfish <b>16</b>"]  # Black above; text, never markup
        assert page(By.CSS_SELECTOR, ".moves").text.startswith("1. e4 c5 2. Nf3 d6")
        assert page(By.CSS_SELECTOR, ".player.white .score").text == "+0.29"
        assert page(By.CSS_SELECTOR, ".pv.white").text == "Nf3 Nc6"
        clock = page(By.CSS_SELECTOR, ".player.white .clock")
        assert clock.get_attribute("class") == "clock running"
        drawn = page(By.CSS_SELECTOR, "svg.board").find_elements(By.CSS_SELECTOR, "g.piece")
        assert len(drawn) == len(board.piece_map())
        server.handle(GameEnded(game=3, result="1/2-1/2", termination="adjudication",
                                reason="drawn by the arbiter", fen=board.fen(),
                                consumed=(0, 0)))  # fmt: skip
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, ".result").text
                   == "1/2-1/2 (drawn by the arbiter)")  # fmt: skip
        server.handle(MatchEnded(complete=True, score=(0.5, 0.5)))
        over = "Match over: GNU Chess 0.5, Stockfish 0.5"
        wait.until(lambda d: d.find_element(By.ID, "status").text == over)
        assert driver.save_screenshot(str(artifacts / "web-board.png"))  # type: ignore[attr-defined]
    # The referee closed the feed: the page says so and stops reconnecting.
    wait.until(lambda d: d.find_element(By.ID, "status").text
               == "The referee has closed the feed.")  # fmt: skip
    assert driver.execute_script("return events.readyState") == 2  # type: ignore[attr-defined]


def test_a_long_game_s_moves_scroll_with_the_newest_in_view(chromium: object) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver: object = chromium
    shuffle = ["Nf3", "Nf6", "Ng1", "Ng8"] * 60  # 240 plies
    with WebObserver(Address("127.0.0.1", 0)) as server:
        server.handle(started())
        for move in moves(shuffle):
            server.handle(move)
        driver.get(f"http://127.0.0.1:{server.address.port}/")  # type: ignore[attr-defined]
        WebDriverWait(driver, 10).until(
            lambda d: len(d.find_elements(By.CSS_SELECTOR, ".moves .move")) == len(shuffle))
        # Read at once: the page may put a new section in place between two reads.
        first, height, shown, newest_in_view = driver.execute_script(  # type: ignore[attr-defined]
            """const box = document.querySelector(".moves"), b = box.getBoundingClientRect();
            const last = box.querySelector(".move.last").getBoundingClientRect();
            return [box.querySelector(".number").textContent, box.scrollHeight,
                    box.clientHeight, b.top <= last.top && last.bottom <= b.bottom];""")
    assert first == "1."  # nothing cut off ...
    assert height > 2 * shown  # ... the list scrolls ...
    assert newest_in_view  # ... and shows the newest move


def test_the_event_page_in_chromium_shows_every_board(chromium: object, artifacts: Path) -> None:
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
        # The page redraws the boards as the feed moves: an element read while it is
        # replaced is stale, and read again.
        wait = WebDriverWait(driver, 10, ignored_exceptions=(StaleElementReferenceException,))

        def fens(d: object) -> dict[str, str]:
            sections = d.find_elements(By.CSS_SELECTOR, "section.game")  # type: ignore[attr-defined]
            return {s.get_attribute("data-board"): s.get_attribute("data-fen") for s in sections}

        wait.until(lambda d: fens(d) == {"1": chess.STARTING_FEN, "2": after.fen()})
        page = driver.find_element  # type: ignore[attr-defined]
        assert page(By.ID, "title").text == "Club cup"

        def names(d: object) -> list[str]:
            return [n.text for n in d.find_elements(By.CSS_SELECTOR, "#games .name")]  # type: ignore[attr-defined]

        # Text, never markup.
        assert wait.until(lambda d: names(d).count("Stockfish <b>16</b>") == 2)
        first.close()  # board 1's pairing has ended: it leaves the page
        wait.until(lambda d: fens(d) == {"2": after.fen()})
        assert driver.save_screenshot(str(artifacts / "web-event.png"))  # type: ignore[attr-defined]
