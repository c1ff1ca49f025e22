"""SerialTransport and PortSettings over pty pairs, loop:// and socket://."""

from __future__ import annotations

import errno
import os
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import serial
import serial.serialposix

from serialref.errors import ConfigError, LineLostError, PortOpenError
from serialref.testing import Peer
from serialref.transport import PortSettings, SerialTransport

if TYPE_CHECKING:
    from conftest import ReadExactly


@pytest.fixture
def port_and_peer(null_modem: tuple[str, Peer]) -> Iterator[tuple[SerialTransport, Peer]]:
    path, peer = null_modem
    with SerialTransport.open(path) as transport:
        yield transport, peer


def read_in_thread(transport: SerialTransport) -> tuple[threading.Thread, list[Any]]:
    """Start a blocked read; the list receives its result or its exception."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(transport.read())
        except LineLostError as exc:
            outcome.append(exc)

    reader = threading.Thread(target=run, name="test-reader")
    reader.start()
    return reader, outcome


# --- PortSettings ---------------------------------------------------------------------


def test_default_settings_are_the_wire_profile() -> None:
    settings = PortSettings()
    assert (settings.baudrate, settings.bytesize, settings.parity, settings.stopbits) == (
        9600,
        8,
        "N",
        1,
    )
    assert not settings.rtscts
    assert not settings.xonxoff
    assert settings.line_delay == "auto"


@pytest.mark.parametrize(
    ("settings", "nbytes", "seconds"),
    [
        (PortSettings(), 96, 10 * 96 / 9600),
        (PortSettings(baudrate=1200, bytesize=7, parity="E", stopbits=2), 12, 11 * 12 / 1200),
        (PortSettings(baudrate=300, bytesize=5, stopbits=1.5), 3, 7.5 * 3 / 300),
    ],
    ids=["8N1", "7E2", "5N1.5"],
)
def test_transmission_time_counts_every_bit(
    settings: PortSettings, nbytes: int, seconds: float
) -> None:
    assert settings.transmission_time(nbytes) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("baudrate", 0),
        ("bytesize", 9),
        ("bytesize", 4),
        ("parity", "X"),
        ("stopbits", 3),
        ("line_delay", "sometimes"),
        ("write_timeout", 0),
    ],
)
def test_bad_settings_name_their_key(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=field):
        PortSettings(**{field: value})  # type: ignore[arg-type]


# --- open ------------------------------------------------------------------------------


def test_missing_device_says_check_the_cable(tmp_path: Path) -> None:
    with pytest.raises(PortOpenError, match=r"no such device.*serialref ports"):
        SerialTransport.open(str(tmp_path / "ttyUSB9"))


def test_busy_port_says_another_program_holds_it(null_modem: tuple[str, Peer]) -> None:
    path, _ = null_modem
    with SerialTransport.open(path), pytest.raises(PortOpenError, match=r"busy.*fuser") as caught:
        SerialTransport.open(path)
    assert path in str(caught.value)


def test_permission_denied_says_join_dialout(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(url: str, **_: object) -> None:
        raise serial.SerialException(
            errno.EACCES, f"could not open port {url}: [Errno 13] Permission denied: {url!r}"
        )

    monkeypatch.setattr(serial, "serial_for_url", refuse)
    with pytest.raises(PortOpenError, match=r"permission denied.*dialout.*log in again"):
        SerialTransport.open("/dev/ttyUSB0")


def test_unknown_url_scheme_lists_the_known_ones() -> None:
    with pytest.raises(PortOpenError, match=r"'nosuch://x'.*socket://"):
        SerialTransport.open("nosuch://x")


def test_a_plain_file_is_not_a_serial_port(tmp_path: Path) -> None:
    plain = tmp_path / "notes.txt"
    plain.write_text("")
    with pytest.raises(PortOpenError, match="not a serial port"):
        SerialTransport.open(str(plain))


def test_open_failure_keeps_the_cause(tmp_path: Path) -> None:
    with pytest.raises(PortOpenError) as caught:
        SerialTransport.open(str(tmp_path / "missing"))
    assert isinstance(caught.value.__cause__, serial.SerialException)


# --- line kind ---------------------------------------------------------------------------


def test_a_pty_is_not_a_serial_line(port_and_peer: tuple[SerialTransport, Peer]) -> None:
    transport, _ = port_and_peer
    assert not transport.is_serial_line
    assert not transport.applies_line_delay


def test_loop_url_is_not_a_serial_line() -> None:
    with SerialTransport.open("loop://") as transport:
        assert not transport.is_serial_line


def test_a_character_device_that_is_no_pty_counts_as_a_serial_line() -> None:
    """/dev/null stands in for a UART: what matters is the device number, not the driver."""

    class CharacterDevice:
        def __init__(self) -> None:
            self.fd = os.open(os.devnull, os.O_RDWR)

        def fileno(self) -> int:
            return self.fd

        def close(self) -> None:
            os.close(self.fd)

    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    with SerialTransport("/dev/ttyS9", PortSettings(), CharacterDevice()) as transport:
        assert transport.is_serial_line
        assert transport.applies_line_delay


@pytest.mark.parametrize(("line_delay", "applies"), [("on", True), ("off", False), ("auto", False)])
def test_line_delay_setting_overrides_auto(line_delay: str, applies: bool) -> None:
    with SerialTransport.open("loop://", PortSettings(line_delay=line_delay)) as transport:
        assert transport.applies_line_delay is applies


# --- read and write ---------------------------------------------------------------------


def test_write_reaches_the_peer(port_and_peer: tuple[SerialTransport, Peer]) -> None:
    transport, peer = port_and_peer
    transport.write(b"refcom reset\r\n")
    assert peer.read_line() == "refcom reset"


def test_open_discards_what_was_already_waiting(
    null_modem: tuple[str, Peer], read_exactly: ReadExactly
) -> None:
    """pyserial flushes input on open: a line sent before the port was opened is lost."""
    path, peer = null_modem
    peer.send_bytes(b"early\r\n")
    with SerialTransport.open(path) as transport:
        peer.send_bytes(b"late\r\n")
        assert read_exactly(transport, 6) == b"late\r\n"


def test_read_returns_everything_waiting() -> None:
    with SerialTransport.open("loop://") as transport:
        for part in (b"one\r\n", b"two", b"\r\n"):
            transport.write(part)
        assert transport.read() == b"one\r\ntwo\r\n"


def test_read_passes_bytes_untouched(
    port_and_peer: tuple[SerialTransport, Peer], read_exactly: ReadExactly
) -> None:
    transport, peer = port_and_peer
    noise = bytes(range(256))
    peer.send_bytes(noise)
    assert read_exactly(transport, len(noise)) == noise


def test_write_returns_the_time_after_the_drain(
    port_and_peer: tuple[SerialTransport, Peer], monkeypatch: pytest.MonkeyPatch
) -> None:
    transport, peer = port_and_peer
    drained_at: list[float] = []
    original_flush = serial.serialposix.Serial.flush

    def timed_flush(port: serial.serialposix.Serial) -> None:
        original_flush(port)
        drained_at.append(time.monotonic())

    monkeypatch.setattr(serial.serialposix.Serial, "flush", timed_flush)
    left_at = transport.write(b"x\n")
    assert len(drained_at) == 1
    assert drained_at[0] <= left_at <= time.monotonic()
    assert peer.read_line() == "x"


def test_cancel_wakes_a_blocked_read(
    port_and_peer: tuple[SerialTransport, Peer], read_exactly: ReadExactly
) -> None:
    transport, peer = port_and_peer
    reader, outcome = read_in_thread(transport)
    transport.cancel_read()
    reader.join(5)
    assert outcome == [b""]
    peer.send_bytes(b"still works")
    assert read_exactly(transport, 11) == b"still works"


def test_a_cancel_before_the_read_is_not_lost(
    port_and_peer: tuple[SerialTransport, Peer], read_exactly: ReadExactly
) -> None:
    transport, peer = port_and_peer
    transport.cancel_read()
    reader, outcome = read_in_thread(transport)
    reader.join(5)
    assert outcome == [b""]
    peer.send_bytes(b"next")
    assert read_exactly(transport, 4) == b"next"


def test_close_wakes_a_blocked_read(port_and_peer: tuple[SerialTransport, Peer]) -> None:
    transport, _ = port_and_peer
    reader, outcome = read_in_thread(transport)
    transport.close()
    reader.join(5)
    assert outcome == [b""]
    reader, outcome = read_in_thread(transport)
    reader.join(5)
    assert outcome == [b""]


def test_close_is_idempotent(null_modem: tuple[str, Peer]) -> None:
    path, _ = null_modem
    transport = SerialTransport.open(path)
    transport.close()
    transport.close()
    transport.cancel_read()
    with SerialTransport.open(path):  # the port is free again
        pass


def test_hang_up_makes_read_raise_line_lost(port_and_peer: tuple[SerialTransport, Peer]) -> None:
    transport, peer = port_and_peer
    reader, outcome = read_in_thread(transport)
    peer.hang_up()
    reader.join(5)
    assert len(outcome) == 1
    assert isinstance(outcome[0], LineLostError)
    assert isinstance(outcome[0].__cause__, serial.SerialException)


def test_write_after_hang_up_raises_line_lost(
    port_and_peer: tuple[SerialTransport, Peer],
) -> None:
    transport, peer = port_and_peer
    peer.hang_up()
    with pytest.raises(LineLostError, match="line lost while writing"):
        transport.write(b"refcom respond\r\n")


def test_loop_url_round_trip_and_cancel() -> None:
    with SerialTransport.open("loop://") as transport:
        transport.write(b"echo\r\n")
        assert transport.read() == b"echo\r\n"  # loop:// delivers the write at once
        reader, outcome = read_in_thread(transport)
        transport.cancel_read()
        reader.join(5)
        assert outcome == [b""]


# --- a backend without cancel_read: socket:// --------------------------------------------


@pytest.fixture
def tcp_pair() -> Iterator[tuple[SerialTransport, socket.socket]]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        host, port = server.getsockname()
        with SerialTransport.open(f"socket://{host}:{port}") as transport:
            connection, _ = server.accept()
            with connection:
                yield transport, connection


def test_socket_url_round_trip(
    tcp_pair: tuple[SerialTransport, socket.socket], read_exactly: ReadExactly
) -> None:
    transport, connection = tcp_pair
    assert not transport.is_serial_line
    connection.sendall(b"refreq sign_on\r\n")
    assert read_exactly(transport, 16) == b"refreq sign_on\r\n"
    transport.write(b"reset\r\n")
    assert connection.recv(100) == b"reset\r\n"


def test_socket_url_cancel_falls_back_to_the_read_timeout(
    tcp_pair: tuple[SerialTransport, socket.socket],
) -> None:
    transport, _ = tcp_pair
    reader, outcome = read_in_thread(transport)
    transport.cancel_read()
    reader.join(5)
    assert outcome == [b""]


def test_socket_url_peer_gone_is_line_lost(
    tcp_pair: tuple[SerialTransport, socket.socket],
) -> None:
    transport, connection = tcp_pair
    connection.shutdown(socket.SHUT_RDWR)
    reader, outcome = read_in_thread(transport)
    reader.join(5)
    assert len(outcome) == 1
    assert isinstance(outcome[0], LineLostError)
