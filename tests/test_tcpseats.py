"""TCP seats: a player connecting to the event takes the seat its sign_on names, or is refused.

Everything here is real (sockets on 127.0.0.1, pseudo-terminals), without a referee: the
test reads and writes the seat's pty as the referee would.
"""

from __future__ import annotations

import logging
import os
import select
import socket
from collections.abc import Iterator
from contextlib import ExitStack

import chess
import pytest

from serialref import records
from serialref.epd.writer import format_record
from serialref.event.config import PlayerConfig
from serialref.event.tcpseats import TcpSeats
from serialref.wire.address import parse_address

WAIT = 5.0


def sign_on(name: str, token: str | None = None) -> bytes:
    return (format_record(records.sign_on(chess.Board(), name, token=token)) + "\r\n").encode()


def read_until(fd: int, wanted: bytes) -> bytes:
    received = b""
    while wanted not in received:
        ready, _, _ = select.select([fd], [], [], WAIT)
        assert ready, f"timed out waiting for {wanted!r}; got {received!r}"
        received += os.read(fd, 4096)
    return received


def closed_by_peer(connection: socket.socket) -> bool:
    connection.settimeout(WAIT)
    return connection.recv(100) == b""


@pytest.fixture
def seats() -> Iterator[tuple[TcpSeats, dict[str, PlayerConfig]]]:
    players = {
        "Beta": PlayerConfig("Beta", seat="listen://127.0.0.1:0", token="s3cret"),
        "Gamma": PlayerConfig("Gamma", seat="listen://127.0.0.1:0", address="10.9.9.9"),
        "Delta": PlayerConfig("Delta", seat="listen://127.0.0.1:0"),
    }
    tcp = TcpSeats(list(players.values()))
    with tcp.listening():
        yield tcp, players


def connect(tcp: TcpSeats, player: PlayerConfig) -> socket.socket:
    address = parse_address(tcp.connect_url(player).removeprefix("socket://"))
    return socket.create_connection(address, timeout=WAIT)


def test_a_player_with_its_token_takes_its_seat_and_talks_both_ways(
    seats: tuple[TcpSeats, dict[str, PlayerConfig]],
) -> None:
    tcp, players = seats
    with tcp.seat(players["Beta"]) as path, ExitStack() as stack:
        referee_end = os.open(path, os.O_RDWR | os.O_NOCTTY)
        stack.callback(os.close, referee_end)
        player = stack.enter_context(connect(tcp, players["Beta"]))
        player.sendall(sign_on("Beta", "s3cret"))
        assert b'token "s3cret"' in read_until(referee_end, b"\n")
        os.write(referee_end, b"reset record\r\n")
        player.settimeout(WAIT)
        assert player.recv(100) == b"reset record\r\n"


@pytest.mark.parametrize(
    ("who", "line", "reason"),
    [
        ("Beta", sign_on("Beta", "guess"), "seat 'Beta': token mismatch"),
        ("Beta", sign_on("Beta"), "seat 'Beta': token mismatch"),
        ("Gamma", sign_on("Gamma"), "seat 'Gamma' is bound to 10.9.9.9, not 127.0.0.1"),
        ("Delta", sign_on("Nobody"), "no seat here for 'Nobody' (sign_on's tcsi names the player)"),
        ("Delta", b"hello\r\n", "not a player's EPD record"),
    ],
)
def test_a_wrong_player_is_refused_with_a_clear_log_line(
    seats: tuple[TcpSeats, dict[str, PlayerConfig]], caplog: pytest.LogCaptureFixture,
    who: str, line: bytes, reason: str,
) -> None:  # fmt: skip
    tcp, players = seats
    caplog.set_level(logging.WARNING)
    with tcp.seat(players[who]), connect(tcp, players[who]) as player:
        player.sendall(line)
        assert closed_by_peer(player)
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(refused) == 1 and refused[0].endswith(reason), refused


def test_a_player_whose_board_is_not_being_played_is_refused(
    seats: tuple[TcpSeats, dict[str, PlayerConfig]], caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    tcp, players = seats
    with connect(tcp, players["Delta"]) as player:
        player.sendall(sign_on("Delta"))
        assert closed_by_peer(player)
    assert "no board of this player is being played now" in caplog.text


def test_a_player_that_connects_again_takes_its_seat_back(
    seats: tuple[TcpSeats, dict[str, PlayerConfig]],
) -> None:
    tcp, players = seats
    with tcp.seat(players["Delta"]) as path, ExitStack() as stack:
        referee_end = os.open(path, os.O_RDWR | os.O_NOCTTY)
        stack.callback(os.close, referee_end)
        first = stack.enter_context(connect(tcp, players["Delta"]))
        first.sendall(sign_on("Delta"))
        read_until(referee_end, b"\n")
        second = stack.enter_context(connect(tcp, players["Delta"]))
        second.sendall(sign_on("Delta"))
        read_until(referee_end, b"\n")
        assert closed_by_peer(first)
        os.write(referee_end, b"to the new line\r\n")
        second.settimeout(WAIT)
        assert second.recv(100) == b"to the new line\r\n"


def test_a_name_in_another_alphabet_takes_its_seat_by_its_ascii_form() -> None:
    muller = PlayerConfig("Müller", seat="listen://127.0.0.1:0")
    tcp = TcpSeats([muller, PlayerConfig("Øster", seat="listen://127.0.0.1:0")])
    with tcp.listening(), tcp.seat(muller) as path, ExitStack() as stack:
        referee_end = os.open(path, os.O_RDWR | os.O_NOCTTY)
        stack.callback(os.close, referee_end)
        player = stack.enter_context(connect(tcp, muller))
        player.sendall(sign_on("Müller"))  # as serialref client --name Müller sends it
        assert b'tcsi "" "Muller";' in read_until(referee_end, b"\n")
