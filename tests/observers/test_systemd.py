"""systemd's STATUS= line follows the game and the move in progress."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest
from matchevents import FOOLS_MATE, played_match, untimed_game

from serialref.appliance.notify import SystemdNotifier
from serialref.happenings import GameEnded, GameStarted, MatchEvent, MovePlayed
from serialref.observers.systemd import SystemdStatusObserver


class StatusLines:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.closed = False

    def status(self, text: str) -> None:
        self.lines.append(text)

    def close(self) -> None:
        self.closed = True


def feed(observer: SystemdStatusObserver, events: list[MatchEvent]) -> None:
    for event in events:
        observer.handle(event)
    observer.close()


def test_an_untimed_game_shows_each_move_and_the_result() -> None:
    status = StatusLines()
    feed(SystemdStatusObserver(status), untimed_game())
    assert status.lines == [
        "game 1: Alpha - Beta",
        "game 1: Alpha - Beta, ply 1 f3",
        "game 1: Alpha - Beta, ply 2 e5",
        "game 1: Alpha - Beta, ply 3 g4",
        "game 1: Alpha - Beta, ply 4 Qh4#",
        "game 1 ended 0-1 (Black mates)",
    ]
    assert status.closed


def test_the_second_game_names_its_own_colours() -> None:
    status = StatusLines()
    feed(SystemdStatusObserver(status), played_match("60+1", games=(FOOLS_MATE, FOOLS_MATE)))
    assert status.lines[6:8] == ["game 2: Beta - Alpha", "game 2: Beta - Alpha, ply 1 f3"]
    assert status.lines[-1] == "game 2 ended 0-1 (Black mates)"


def test_a_resumed_game_names_its_number_before_its_first_move() -> None:
    # A referee resuming from its journal publishes no GameStarted for the game in progress.
    status = StatusLines()
    move = MovePlayed(game=3, ply=12, san="Nf3", uci="g1f3", elapsed=1.0,
                      remaining=(float("inf"),) * 2, consumed=(9.0, 8.0), moves_made=(6, 6),
                      fen=chess.STARTING_FEN)  # fmt: skip
    feed(SystemdStatusObserver(status), [move])
    assert status.lines == ["game 3, ply 12 Nf3"]


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """A datagram socket standing in for systemd's, and its path."""
    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(path)
        server.settimeout(5.0)
        yield server, path


def test_through_sd_notify_a_hostile_name_cannot_add_assignments(
    notify_socket: tuple[socket.socket, str],
) -> None:
    server, path = notify_socket
    observer = SystemdStatusObserver(SystemdNotifier({"NOTIFY_SOCKET": path}))
    tags = {"White": "Evil\nSTOPPING=1", "Black": "Beta\x1b[2J"}
    feed(observer, [
        GameStarted(1, "a", "b", chess.STARTING_FEN, tags),
        GameEnded(1, "*", "emergency", "player fault: \x07", chess.STARTING_FEN, (0.0, 0.0)),
    ])  # fmt: skip
    assert server.recv(4096) == b"STATUS=game 1: Evil\\nSTOPPING=1 - Beta\\x1b[2J"
    assert server.recv(4096) == b"STATUS=game 1 ended * (player fault: \\x07)"
