"""``serialref watch``: the screen drawn from the control socket's status, keys sent as commands."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chess
import pytest

from serialref.control.protocol import Reply, decode_request, encode_reply
from serialref.watch.view import board_text, game_text, port_text

pytest.importorskip("textual", reason="pip install textual (serialref[watch])")

from serialref.watch.app import WatchApp

BOARD = chess.Board()
for _san in ["e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6", "Be3", "e5"]:
    BOARD.push_san(_san)

STATUS: dict[str, Any] = {
    "match": {"state": "in game", "games": 4, "games_done": 1, "score": [1.0, 0.0],
              "paused": False, "event": "Club night", "time_control": "900+5"},
    "game": {"number": 2, "state": "playing", "white_port": "b", "ply": 12, "fen": BOARD.fen(),
             "turn": "white", "clocks": [812.4, 790.15], "running": "white",
             "moves": ["e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6",
                       "Be3", "e5"]},
    "ports": {
        "a": {"name": "GNU Chess 6.2.9", "state": "idle", "recent": [
            {"to": True, "text": "... refcom respond; cc 87 101; sm Be3;", "wall": 0},
            {"to": False, "text": "... refreq reply; sm e5; ce 21; pv Nf3 Nc6;", "wall": 0}]},
        "b": {"name": "Stockfish 16\x1b[2J", "state": "to move", "recent": [
            {"to": True, "text": "... refcom respond; cc 87 109; sm e5;", "wall": 0}]},
    },
}  # fmt: skip


class FakeReferee:
    """A control socket that answers every request with STATUS and keeps what it was sent."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.requests: list[tuple[str, tuple[str, ...]]] = []
        self.boards: list[int | None] = []
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(path))
        self._listener.listen(8)
        self._thread = threading.Thread(target=self._serve)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            connection, _ = self._listener.accept()
            with connection:
                data = connection.recv(65536)
                if not data:
                    return  # close() says goodbye with an empty connection
                request = decode_request(data.split(b"\n")[0])
                self.boards.append(request.board)
                if request.command != "status":
                    self.requests.append((request.command, request.args))
                connection.sendall(encode_reply(Reply(True, STATUS)))

    def close(self) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as goodbye:
            goodbye.connect(str(self.path))
        self._thread.join()
        self._listener.close()


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[FakeReferee]:
    fake = FakeReferee(tmp_path / "control.sock")
    yield fake
    fake.close()


def test_the_view_shows_the_board_clocks_and_lines_safely() -> None:
    assert board_text(STATUS).splitlines()[0] == "8  r n b q k b . r"
    game = game_text(STATUS)
    assert "White     0:13:32.4  Stockfish 16\\x1b[2J (port B)  <" in game
    assert "Black     0:13:10.1  GNU Chess 6.2.9 (port A)" in game
    assert "6. Be3 e5" in game
    assert port_text(STATUS, "a").splitlines()[2].startswith("<- ... refreq reply; sm e5;")


def test_keys_send_commands_and_the_irreversible_ones_ask_first(
    referee: FakeReferee, tmp_path: Path
) -> None:
    async def session() -> None:
        app = WatchApp(referee.path)
        async with app.run_test(size=(110, 34)) as pilot:
            for _ in range(200):
                if app.status:
                    break
                await pilot.pause(0.01)
            assert app.status["game"]["number"] == 2
            await pilot.press("p", "w", "B")
            await pilot.press("x", "z")  # abort asks first; anything but y cancels it
            await pilot.press("n", "y")
            await pilot.press("1", "y")
            for _ in range(200):
                if len(referee.requests) >= 5:
                    break
                await pilot.pause(0.01)
            artifacts = Path(os.environ.get("SERIALREF_TEST_ARTIFACTS", tmp_path))
            artifacts.mkdir(parents=True, exist_ok=True)
            app.save_screenshot("watch.svg", str(artifacts))
            await pilot.press("q")

    asyncio.run(session())
    assert referee.requests == [
        ("pause", ()), ("add-time", ("white", "60")), ("restore", ("b",)),
        ("restart-game", ()), ("adjudicate", ("1-0", "adjudicated by the supervisor")),
    ]  # fmt: skip


def test_a_board_of_an_event_is_named_in_every_request(referee: FakeReferee) -> None:
    async def session() -> None:
        app = WatchApp(referee.path, board=3)
        async with app.run_test(size=(110, 34)) as pilot:
            for _ in range(200):
                if app.status:
                    break
                await pilot.pause(0.01)
            await pilot.press("p")
            for _ in range(200):
                if referee.requests:
                    break
                await pilot.pause(0.01)
            await pilot.press("q")

    asyncio.run(session())
    assert referee.requests == [("pause", ())]
    assert referee.boards and set(referee.boards) == {3}


def test_a_variant_position_is_drawn_on_its_own_board() -> None:
    fen = "rnbqkb1r/pp1ppppp/8/2p1N3/5Pn1/8/PPPPPp1P/RNBQKB1R[] w KQkq - 2 5"
    lines = board_text({"game": {"fen": fen, "variant": "crazyhouse"}}).splitlines()
    assert lines[6] == "2  P P P P P p . P"
