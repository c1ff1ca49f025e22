"""What users import for their own tests (serialref.testing): the Peer, quiet games, cables."""

from __future__ import annotations

import os
import time
import unittest
from typing import TYPE_CHECKING

import chess
import pytest
import serial

from serialref import testing
from serialref.errors import LineLostError
from serialref.testing import Peer, null_modem, quiet_game
from serialref.wire import nullmodem
from serialref.wire.transport import SerialTransport

if TYPE_CHECKING:
    from doubles import ReadExactly


def test_users_tests_find_the_cable_where_they_always_did() -> None:
    assert testing.null_modem_cable is nullmodem.null_modem_cable
    assert testing.NullModemCable is nullmodem.NullModemCable


# --- null_modem and Peer -----------------------------------------------------------------


def test_null_modem_gives_a_tty_path_that_disappears_afterwards() -> None:
    with null_modem() as (path, peer):
        assert isinstance(peer, Peer)
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        try:
            assert os.isatty(fd)
        finally:
            os.close(fd)
    assert not os.path.exists(path)


def test_both_directions_are_raw(null_modem: tuple[str, Peer]) -> None:
    """No echo, no CR/LF translation: the bytes that go in are the bytes that come out."""
    path, peer = null_modem
    with serial.serial_for_url(path, timeout=5) as port:
        peer.send_bytes(b"a\rb\nc\r\n\x03\x1a")
        assert port.read(9) == b"a\rb\nc\r\n\x03\x1a"
        port.write(b"x\ry\r\n")
        port.flush()
        assert peer.read_line() == "x"
        assert peer.read_line() == "y"
        port.timeout = 0.2
        assert port.read(1) == b""  # nothing the peer sent was echoed back


def test_read_line_accepts_every_line_end_and_skips_empty_lines(
    null_modem: tuple[str, Peer],
) -> None:
    path, peer = null_modem
    with SerialTransport.open(path) as transport:
        transport.write(b"\r\none\rtwo\nthree\r\n\r\n\nfour\r")
        assert [peer.read_line() for _ in range(4)] == ["one", "two", "three", "four"]


def test_send_line_uses_the_given_newline(
    null_modem: tuple[str, Peer], read_exactly: ReadExactly
) -> None:
    path, peer = null_modem
    with SerialTransport.open(path) as transport:
        peer.send_line("refreq sign_on")
        peer.send_line("refreq sign_off", newline=b"\n")
        assert read_exactly(transport, 32) == b"refreq sign_on\r\nrefreq sign_off\n"


def test_read_line_timeout_names_what_arrived(null_modem: tuple[str, Peer]) -> None:
    path, peer = null_modem
    with SerialTransport.open(path) as transport:
        transport.write(b"done\r\nrefcom res")
        assert peer.read_line() == "done"
        with pytest.raises(TimeoutError, match="refcom res"):
            peer.read_line(timeout=0.2)


def test_read_line_timeout_when_nothing_arrived(null_modem: tuple[str, Peer]) -> None:
    _, peer = null_modem
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="nothing"):
        peer.read_line(timeout=0.1)
    assert time.monotonic() - started >= 0.1


def test_read_line_fails_on_a_malformed_line(null_modem: tuple[str, Peer]) -> None:
    path, peer = null_modem
    with SerialTransport.open(path) as transport:
        transport.write(b"\x1b[2J\r\n")
        with pytest.raises(AssertionError, match=r"not printable.*\\x1b\[2J"):
            peer.read_line()


def test_peer_hang_up_is_seen_by_the_port_user(
    null_modem: tuple[str, Peer], read_exactly: ReadExactly
) -> None:
    path, peer = null_modem
    with SerialTransport.open(path) as transport:
        peer.hang_up()
        with pytest.raises(LineLostError):
            read_exactly(transport, 1)
    with pytest.raises(LineLostError, match="hung up"):
        peer.send_line("too late")


def test_peer_over_a_pyserial_port(null_modem: tuple[str, Peer]) -> None:
    """The real-cable mode of conftest: a Peer driving a pyserial port instead of a pty master."""
    path, far_end = null_modem
    peer = Peer.from_serial_port(serial.serial_for_url(path, exclusive=True))
    try:
        far_end.send_line("refcom reset")
        assert peer.read_line() == "refcom reset"
        peer.send_line("refreq sign_on")
        assert far_end.read_line() == "refreq sign_on"
        with pytest.raises(TimeoutError):
            peer.read_line(timeout=0.1)
        with pytest.raises(unittest.SkipTest):
            peer.hang_up()
    finally:
        peer.close()
        peer.close()


def test_expect_checks_the_refcom_kind(null_modem: tuple[str, Peer]) -> None:
    path, peer = null_modem
    start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
    with SerialTransport.open(path) as transport:
        transport.write(f"{start} refcom reset;\r\n{start} refcom inform;\r\n".encode())
        record = peer.expect("reset")
        assert record.identifier("refcom") == "reset"
        with pytest.raises(AssertionError, match=r"expected refcom respond.*refcom inform"):
            peer.expect("respond")
        transport.write(b"not epd at all\r\n")
        with pytest.raises(AssertionError, match="not epd at all"):
            peer.expect("reset")


def test_a_quiet_game_is_legal_and_never_ends_early() -> None:
    line = quiet_game(60, seed=3)
    board = chess.Board()
    for uci in line:
        assert not board.is_game_over(claim_draw=True)
        board.push_uci(uci)
    assert len(line) == 60 and quiet_game(60, seed=3) == line
