"""TCP seats: a player connecting to the event takes the seat its sign_on names, or is refused.

Everything here is real (sockets on 127.0.0.1, pseudo-terminals), without a referee: the
test reads and writes the seat's pty as the referee would.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack

import chess
import pytest

from serialref import records
from serialref.epd.writer import format_record
from serialref.tournament.config import PlayerConfig
from serialref.tournament.tcpseats import TcpSeats
from serialref.wire import seatrelay
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
        assert read_until(referee_end, b"\n") == sign_on("Beta")  # the token stays out
        os.write(referee_end, b"reset record\r\n")
        player.settimeout(WAIT)
        assert player.recv(100) == b"reset record\r\n"
        player.sendall(sign_on("Beta", "s3cret")[:40])  # a later sign_on, in two pieces
        player.sendall(sign_on("Beta", "s3cret")[40:])
        assert read_until(referee_end, b"\n") == sign_on("Beta")


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


def fill_seat(referee_end: int) -> int:
    """Write to a seat until it takes no more for a second (whoever relays it stopped reading)."""
    os.set_blocking(referee_end, False)
    written = 0
    line = b"x" * 1022 + b"\r\n"
    while written < 64 * 2**20:
        _, writable, _ = select.select([], [referee_end], [], 1.0)
        if not writable:
            return written
        try:
            written += os.write(referee_end, line)
        except BlockingIOError:
            continue
    raise AssertionError("the seat took 64 MiB: nothing held it back")


def test_a_player_that_does_not_read_holds_up_no_other_seat_on_its_address(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    """Evil (its own valid token, a small receive buffer) reads nothing while the referee
    writes to it; Good, on the same address, is served all along, Evil is dropped after
    the write timeout, and the listener closes at once."""
    monkeypatch.setattr(seatrelay, "WRITE_TIMEOUT", 1.0)
    evil = PlayerConfig("Evil", seat="listen://127.0.0.1:0", token="evil-token")
    good = PlayerConfig("Good", seat="listen://127.0.0.1:0", token="good-token")
    tcp = TcpSeats([evil, good])
    with ExitStack() as stack:
        listening = ExitStack()
        listening.enter_context(tcp.listening())
        stack.callback(listening.close)  # after the players' sockets: it never hangs then
        ends = {}
        for player in (evil, good):
            path = stack.enter_context(tcp.seat(player))
            ends[player.name] = os.open(path, os.O_RDWR | os.O_NOCTTY)
            stack.callback(os.close, ends[player.name])
        address = parse_address(tcp.connect_url(evil).removeprefix("socket://"))
        evil_socket = stack.enter_context(socket.socket())
        evil_socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        evil_socket.connect(address)
        evil_socket.sendall(sign_on("Evil", "evil-token"))
        read_until(ends["Evil"], b"\n")
        good_socket = stack.enter_context(connect(tcp, good))
        good_socket.sendall(sign_on("Good", "good-token"))
        read_until(ends["Good"], b"\n")

        assert fill_seat(ends["Evil"]) > 0  # restores and resets for a player that reads nothing
        os.write(ends["Good"], b"respond to Good\r\n")
        good_socket.settimeout(WAIT)
        assert good_socket.recv(100) == b"respond to Good\r\n"
        good_socket.sendall(b"reply Nf3\r\n")
        assert read_until(ends["Good"], b"\n") == b"reply Nf3\r\n"

        evil_socket.settimeout(WAIT)
        while evil_socket.recv(65536):  # what it was sent, then the end: it was dropped
            pass
        assert "read nothing for 1 s" in caplog.text
        closing = threading.Thread(target=listening.close)
        closing.start()
        closing.join(WAIT)
        assert not closing.is_alive(), "the listener did not close"


def test_a_name_in_another_alphabet_takes_its_seat_by_its_ascii_form() -> None:
    muller = PlayerConfig("Müller", seat="listen://127.0.0.1:0")
    tcp = TcpSeats([muller, PlayerConfig("Øster", seat="listen://127.0.0.1:0")])
    with tcp.listening(), tcp.seat(muller) as path, ExitStack() as stack:
        referee_end = os.open(path, os.O_RDWR | os.O_NOCTTY)
        stack.callback(os.close, referee_end)
        player = stack.enter_context(connect(tcp, muller))
        player.sendall(sign_on("Müller"))  # as serialref client --name Müller sends it
        assert b'tcsi "" "Muller";' in read_until(referee_end, b"\n")
