"""An event's one control socket and feeds over the real sockets: every board is there.

Four paced built-in players, two boards at once, in process: ``serialref ctl`` lists
both boards, refuses a command that names none, pauses and adjudicates the board it
names; the Style 12 feed carries each board's lines under its board number; the web
board's stream carries every board; ``abort`` with no board stops the event in order.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from processes import wait_for

from serialref.cli import EXIT_OK, EXIT_REJECTED, main
from serialref.control.client import send_request
from serialref.control.protocol import Request
from serialref.errors import ControlError
from serialref.observers.web import WebObserver
from serialref.tournament.config import PlayerConfig, TournamentConfig
from serialref.tournament.pairings import TournamentFormat
from serialref.tournament.runner import TournamentRunner
from serialref.wire.address import Address

TIMEOUT = 30.0
SETTINGS = {"tc": "300+1", "reset_delay": 0.05, "conclude_delay": 0.05}


@contextmanager
def running_event(tmp_path: Path) -> Iterator[tuple[TournamentRunner, Path, list[bool]]]:
    players = tuple(PlayerConfig(f"P{i}", player="random", client_options=("--seed", str(i),
                                                                           "--pace", "40"))
                    for i in range(1, 5))  # fmt: skip
    path = tmp_path / "ctl.sock"
    config = TournamentConfig("Audience cup", TournamentFormat.ROUND_ROBIN, players,
                              tmp_path / "event", games=1, concurrency=2,
                              match_settings=SETTINGS, control_socket=path,
                              style12=Address("127.0.0.1", 0),
                              web=Address("127.0.0.1", 0))  # fmt: skip
    runner = TournamentRunner(config)
    result: list[bool] = []
    thread = threading.Thread(target=lambda: result.append(runner.run()))
    thread.start()
    try:
        yield runner, path, result
    finally:
        runner.request_stop("test over")
        thread.join(TIMEOUT)
        assert not thread.is_alive()


def status(path: Path, board: int | None = None) -> Mapping[str, Any] | None:
    try:
        reply = send_request(path, Request("status", (), board))
    except ControlError:
        return None
    return reply.status if reply.ok else None


def both_boards_playing(path: Path) -> list[int] | None:
    now = status(path)
    if now is None or len(now["boards"]) != 2:
        return None
    if not all(board["game"] and board["game"]["ply"] >= 2 for board in now["boards"]):
        return None
    return [board["board"] for board in now["boards"]]


def test_one_socket_and_one_feed_of_each_kind_show_and_steer_every_board(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_event(tmp_path) as (runner, path, result):
        boards = wait_for(lambda: both_boards_playing(path), "two boards in play")
        style12, web = (feed.address for feed in runner.audience.feeds)
        assert isinstance(runner.audience.feeds[1], WebObserver)

        # status lists both boards; a command that names none is refused, naming them.
        assert main(["ctl", "--socket", str(path), "status"]) == EXIT_OK
        shown = capsys.readouterr().out
        assert "event: Audience cup, 2 board(s) being played" in shown
        assert all(f"board {n}: P" in shown for n in boards)
        assert main(["ctl", "--socket", str(path), "pause"]) == EXIT_REJECTED
        refused = capsys.readouterr().err
        assert "name a board with --board N" in refused and str(boards[0]) in refused
        assert main(["ctl", "--socket", str(path), "--board", "99", "pause"]) == EXIT_REJECTED
        assert "no board 99 is being played" in capsys.readouterr().err

        # pause names one board: only its match is paused.
        first, second = boards
        assert main(["ctl", "--socket", str(path), "--board", str(first), "pause"]) == EXIT_OK
        capsys.readouterr()
        now = status(path)
        assert now is not None
        paused = {board["board"]: board["match"]["paused"] for board in now["boards"]}
        assert paused == {first: True, second: False}

        # Style 12: every board's position at once, each under its board number.
        with socket.create_connection((style12.host, style12.port), timeout=TIMEOUT) as feed:
            lines = read_until(feed, lambda text: len(game_numbers(text)) >= 2)
        assert game_numbers(lines) >= {first, second}

        # The web board's stream: every board, each with its number and position.
        message = first_web_message(web)
        assert message["event"] == "Audience cup"
        assert {board["board"] for board in message["boards"]} == {first, second}
        assert all(board["fen"] and "<svg" in board["html"] for board in message["boards"])

        # adjudicate names the other board: its game ends as the supervisor said.
        assert main(["ctl", "--socket", str(path), "--board", str(second), "adjudicate",
                     "0-1", "by the arbiter"]) == EXIT_OK  # fmt: skip
        pgn = runner.config.directory / f"pairing-{second:03d}.pgn"
        wait_for(lambda: pgn.exists() and "adjudication" in pgn.read_text(encoding="utf-8"),
                 "the adjudicated game in its PGN")  # fmt: skip
        assert '[Result "0-1"]' in pgn.read_text(encoding="utf-8")

        # abort with no board ends every board and the event, in order.
        assert main(["ctl", "--socket", str(path), "abort", "power cut"]) == EXIT_OK
        wait_for(lambda: result, "the event to stop")
    assert result == [False]
    assert not path.exists()


def game_numbers(text: str) -> set[int]:
    """The game number field (the 17th) of every Style 12 line in ``text``."""
    return {int(line.split()[16]) for line in text.splitlines() if line.startswith("<12> ")}


def read_until(connection: socket.socket, enough: Callable[[str], bool]) -> str:
    data = b""
    while not enough(data.decode("ascii", "replace")):
        chunk = connection.recv(65536)
        assert chunk, "the feed closed"
        data += chunk
    return data.decode("ascii")


def first_web_message(address: Address) -> dict[str, Any]:
    with socket.create_connection((address.host, address.port), timeout=TIMEOUT) as client:
        client.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        text = read_until(client, lambda seen: re.search(r"^data: .*\n\n", seen, re.M) is not None)
    found = re.search(r"^data: (.*)$", text, re.M)
    assert found is not None
    message: dict[str, Any] = json.loads(found.group(1))
    return message
