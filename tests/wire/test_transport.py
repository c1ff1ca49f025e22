"""SerialTransport and PortSettings over pty pairs, loop:// and socket://."""

from __future__ import annotations

import errno
import os
import select
import socket
import stat
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import serial

from serialref.errors import (
    ConfigError,
    LineLostError,
    PortOpenError,
    ProgrammingError,
)
from serialref.testing import Peer
from serialref.wire.transport import PortSettings, SerialTransport

if TYPE_CHECKING:
    from doubles import ReadExactly

READ_TIMEOUT = 5.0


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
    original_drain = termios.tcdrain

    def timed_drain(fd: int) -> None:
        original_drain(fd)
        drained_at.append(time.monotonic())

    monkeypatch.setattr(termios, "tcdrain", timed_drain)
    left_at = transport.write(b"x\n")
    assert len(drained_at) == 1
    assert drained_at[0] <= left_at <= time.monotonic()
    assert peer.read_line() == "x"


@pytest.fixture(params=["", "spy://"], ids=["descriptor", "pyserial"])
def either_write_path(
    request: pytest.FixtureRequest, null_modem: tuple[str, Peer]
) -> Iterator[tuple[SerialTransport, Peer]]:
    """A pty written with os.write + tcdrain, or through pyserial (spy:// wraps the same pty)."""
    path, peer = null_modem
    with SerialTransport.open(request.param + path) as transport:
        assert (transport.fileno() is None) is bool(request.param)
        yield transport, peer


def interrupt_first_drain(monkeypatch: pytest.MonkeyPatch, code: int) -> list[int]:
    """Make the next tcdrain fail with ``code`` once, as a signal does; returns the calls."""
    calls: list[int] = []
    original_drain = termios.tcdrain

    def drain(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 1:
            raise termios.error(code, os.strerror(code))
        original_drain(fd)

    monkeypatch.setattr(termios, "tcdrain", drain)
    return calls


def test_a_drain_interrupted_by_a_signal_is_retried(
    either_write_path: tuple[SerialTransport, Peer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """PEP 475 does not cover termios: an EINTR from tcdrain must not drop the player."""
    transport, peer = either_write_path
    calls = interrupt_first_drain(monkeypatch, errno.EINTR)
    transport.write(b"refcom respond\r\n")
    assert len(calls) == 2
    assert peer.read_line() == "refcom respond"


def test_a_drain_that_fails_otherwise_is_line_lost(
    either_write_path: tuple[SerialTransport, Peer], monkeypatch: pytest.MonkeyPatch
) -> None:
    transport, _ = either_write_path
    calls = interrupt_first_drain(monkeypatch, errno.EIO)
    with pytest.raises(LineLostError, match="line lost while writing") as caught:
        transport.write(b"refcom respond\r\n")
    assert len(calls) == 1
    assert isinstance(caught.value.__cause__, termios.error)


def test_partial_and_refused_writes_are_resumed(
    port_and_peer: tuple[SerialTransport, Peer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full output buffer (flow control) gives EAGAIN or a short write: the rest follows."""
    transport, peer = port_and_peer
    original_write = os.write
    attempts: list[int] = []

    def one_byte_at_a_time(fd: int, data: bytes) -> int:
        attempts.append(len(data))
        if len(attempts) == 2:
            raise BlockingIOError(errno.EAGAIN, "output buffer full")
        return original_write(fd, bytes(data[:1]))

    with monkeypatch.context() as patch:  # os.write itself: undone before the port closes
        patch.setattr(os, "write", one_byte_at_a_time)
        transport.write(b"e2e4\r\n")
    assert attempts == [6, 5, 5, 4, 3, 2, 1]
    assert peer.read_line() == "e2e4"


def test_a_write_that_never_finds_room_times_out(
    null_modem: tuple[str, Peer], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = null_modem

    def refuse(fd: int, data: bytes) -> int:
        raise BlockingIOError(errno.EAGAIN, "output buffer full")

    transport = SerialTransport.open(path, PortSettings(write_timeout=0.05))
    with transport, monkeypatch.context() as patch, pytest.raises(LineLostError, match="timed out"):
        patch.setattr(os, "write", refuse)
        transport.write(b"refcom respond\r\n")


# --- polled reads: fileno and read_nowait -------------------------------------------------


def wait_readable(transport: SerialTransport) -> None:
    fd = transport.fileno()
    assert fd is not None
    ready, _, _ = select.select([fd], [], [], READ_TIMEOUT)
    assert ready, f"nothing to read within {READ_TIMEOUT} s"


def test_a_pty_is_read_straight_from_its_descriptor(
    port_and_peer: tuple[SerialTransport, Peer],
) -> None:
    transport, _ = port_and_peer
    fd = transport.fileno()
    assert fd is not None
    assert os.isatty(fd)
    transport.close()
    assert transport.fileno() is None


def test_loop_url_has_no_descriptor_to_poll() -> None:
    with SerialTransport.open("loop://") as transport:
        assert transport.fileno() is None
        with pytest.raises(ProgrammingError, match="read"):
            transport.read_nowait()


def test_socket_url_has_no_descriptor_to_poll(
    tcp_pair: tuple[SerialTransport, socket.socket],
) -> None:
    transport, _ = tcp_pair
    assert transport.fileno() is None


def test_read_nowait_with_nothing_waiting_is_empty(
    port_and_peer: tuple[SerialTransport, Peer],
) -> None:
    """pyserial leaves VMIN at 0, so os.read says b"" here; that is no hang-up."""
    transport, peer = port_and_peer
    assert transport.read_nowait() == b""
    peer.send_bytes(b"after\r\n")
    wait_readable(transport)
    assert transport.read_nowait() == b"after\r\n"


def test_read_nowait_returns_everything_waiting(
    port_and_peer: tuple[SerialTransport, Peer], monkeypatch: pytest.MonkeyPatch
) -> None:
    transport, peer = port_and_peer
    monkeypatch.setattr("serialref.wire.transport._READ_SIZE", 4)  # several chunks for one call
    peer.send_bytes(b"one\r\ntwo\r\n")
    wait_readable(transport)
    assert transport.read_nowait() == b"one\r\ntwo\r\n"
    assert transport.read_nowait() == b""


def test_read_nowait_passes_bytes_untouched(port_and_peer: tuple[SerialTransport, Peer]) -> None:
    transport, peer = port_and_peer
    noise = bytes(range(256))
    peer.send_bytes(noise)
    received = b""
    while len(received) < len(noise):
        wait_readable(transport)
        received += transport.read_nowait()
    assert received == noise


def test_hang_up_makes_read_nowait_raise_line_lost(
    port_and_peer: tuple[SerialTransport, Peer],
) -> None:
    transport, peer = port_and_peer
    peer.hang_up()
    wait_readable(transport)
    with pytest.raises(LineLostError, match=r"line lost: .*hang-up"):
        transport.read_nowait()


def test_a_read_error_is_line_lost(
    port_and_peer: tuple[SerialTransport, Peer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A USB adapter pulled out makes read fail with EIO (or ENXIO) rather than say EOF."""
    transport, _ = port_and_peer

    def unplugged(fd: int, size: int) -> bytes:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    lost = pytest.raises(LineLostError, match=os.strerror(errno.EIO))
    with monkeypatch.context() as patch, lost as caught:
        patch.setattr(os, "read", unplugged)
        transport.read_nowait()
    assert isinstance(caught.value.__cause__, OSError)


def test_read_nowait_after_close_is_refused(port_and_peer: tuple[SerialTransport, Peer]) -> None:
    transport, _ = port_and_peer
    transport.close()
    with pytest.raises(ProgrammingError, match="still open"):
        transport.read_nowait()


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
