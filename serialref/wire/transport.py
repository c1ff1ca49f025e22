"""Bytes in and out of one port, through pyserial's URL handlers.

Every port is opened with :func:`serial.serial_for_url`, so device paths, ``socket://``,
``rfc2217://``, ``loop://`` and ``spy://`` all work without code of ours. This module is
the one place that meets pyserial's exceptions (and the bare ``termios.error`` its
``flush()`` can raise on a hang-up): they leave it as :class:`PortOpenError` with a hint
the user can act on, or as :class:`LineLostError`.

A port is read in one of two ways. A port whose bytes come straight from a file
descriptor (pyserial's POSIX ``Serial``: device paths and ptys) exposes it through
:meth:`SerialTransport.fileno`, so that the referee can wait on all its ports in one
``select`` loop on its own thread and take the bytes with :meth:`SerialTransport.read_nowait`:
one system call per chunk instead of pyserial's ``select``, ``read``, ``ioctl``,
``select``, ``read``, and no thread hand-over. Writes on those ports are ``os.write`` and
``tcdrain`` as well, skipping the ``select`` pyserial makes after every write.

Every other backend (``loop://``, ``socket://``, ``rfc2217://``, ``spy://``) needs
pyserial's own processing, so it is read by a thread blocked in :meth:`SerialTransport.read`,
which is also how the player client reads. That wait is woken from another thread with
pyserial's ``cancel_read``, so an idle port costs no CPU. Backends without
``cancel_read`` (``socket://``, ``rfc2217://``) are read with a 0.2 s timeout instead and
the wait is resumed after each timeout: a cancel then takes effect within 0.2 s, at the
price of five wake-ups a second on those ports only.

``tcdrain`` is not restarted by Python after a signal (PEP 475 covers ``os`` calls, not
``termios``), so an interrupted drain is retried here rather than taken for a lost line.

pyserial's ``open()`` discards input already waiting on the port, so a player that spoke
before the referee opened its port has lost that line; the wire profile's ``sign_on``
retry covers this.
"""

from __future__ import annotations

import enum
import errno
import logging
import os
import select
import stat
import termios
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import serial

from serialref.errors import ConfigError, LineLostError, PortOpenError, ProgrammingError

__all__ = ["LineDelay", "PortSettings", "SerialTransport"]

LOGGER = logging.getLogger(__name__)

CANCEL_FALLBACK_TIMEOUT = 0.2
"""Read timeout, in seconds, on backends that cannot wake a blocked read."""

_PARITIES = ("N", "E", "O", "M", "S")
_STOPBITS = (1, 1.5, 2)


class LineDelay(enum.StrEnum):
    """Whether the line's own time is allowed on the players' clocks (PROTOCOL.md 5)."""

    AUTO = "auto"  # on a real serial line, not on a pseudo-terminal or network port
    ON = "on"
    OFF = "off"

# Linux device numbers of pseudo-terminals: Unix98 slaves (136-143), BSD-style masters
# and slaves (2, 3), and /dev/ptmx (5:2). None of them has a line rate.
_PTY_MAJORS = frozenset(range(136, 144)) | {2, 3}
_PTMX = (5, 2)

_MISSING = frozenset({errno.ENOENT, errno.ENODEV, errno.ENXIO})
_FORBIDDEN = frozenset({errno.EACCES, errno.EPERM})
_BUSY = frozenset({errno.EBUSY, errno.EAGAIN, errno.EWOULDBLOCK})

_LINE_ERRORS = (serial.SerialException, termios.error, OSError)

_READ_SIZE = 4096
"""Bytes asked for per ``os.read``; a full chunk means more may be waiting."""
_READINESS = select.POLLIN | select.POLLHUP | select.POLLERR


@dataclass(frozen=True, slots=True)
class PortSettings:
    """How one port is framed on the wire; the defaults are the wire profile's 9600 8N1."""

    baudrate: int = 9600
    bytesize: int = 8
    parity: str = "N"
    stopbits: float = 1
    rtscts: bool = False
    xonxoff: bool = False
    line_delay: LineDelay = LineDelay.AUTO
    write_timeout: float = 10.0

    def __post_init__(self) -> None:
        if self.baudrate <= 0:
            raise ConfigError("baudrate", f"must be positive, not {self.baudrate!r}")
        if not 5 <= self.bytesize <= 8:
            raise ConfigError("bytesize", f"must be 5 to 8, not {self.bytesize!r}")
        if self.parity not in _PARITIES:
            raise ConfigError(
                "parity", f"must be one of {', '.join(_PARITIES)}, not {self.parity!r}"
            )
        if self.stopbits not in _STOPBITS:
            raise ConfigError("stopbits", f"must be 1, 1.5 or 2, not {self.stopbits!r}")
        try:
            object.__setattr__(self, "line_delay", LineDelay(self.line_delay))
        except ValueError:
            choices = ", ".join(LineDelay)
            raise ConfigError(
                "line_delay", f"must be one of {choices}, not {self.line_delay!r}"
            ) from None
        if self.write_timeout <= 0:
            raise ConfigError("write_timeout", f"must be positive, not {self.write_timeout!r}")

    def transmission_time(self, nbytes: int) -> float:
        """Seconds the line needs for ``nbytes`` characters: start, data, parity and stop bits."""
        bits_per_char = 1 + self.bytesize + (0 if self.parity == "N" else 1) + self.stopbits
        return bits_per_char * nbytes / self.baudrate


class SerialTransport:
    """One open port: whole-chunk reads (blocking or polled), drained writes, clean close.

    A port with a :meth:`fileno` can be read with :meth:`read_nowait` from a caller's own
    ``select`` loop; every port can be read with the blocking :meth:`read`. One thread may
    read while another writes, cancels or closes; ``close()`` waits for a blocked ``read()``
    to let go of the port before closing it, so no file descriptor is closed under a
    running ``select``.
    """

    def __init__(self, url: str, settings: PortSettings, port: Any) -> None:
        """Wrap an already open pyserial port; use :meth:`open` rather than this."""
        self.url = url
        self.settings = settings
        self._port = port
        self._is_serial_line = _is_uart(port)
        self._fd = _direct_descriptor(port)
        self._can_cancel = hasattr(port, "cancel_read")
        self._read_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._cancel_requested = False
        self._closed = False

    @classmethod
    def open(cls, url: str, settings: PortSettings = PortSettings()) -> SerialTransport:
        """Open ``url`` exclusively; a :class:`PortOpenError` tells the user what to do."""
        try:
            port = serial.serial_for_url(
                url,
                do_not_open=True,
                baudrate=settings.baudrate,
                bytesize=settings.bytesize,
                parity=settings.parity,
                stopbits=settings.stopbits,
                rtscts=settings.rtscts,
                xonxoff=settings.xonxoff,
                write_timeout=settings.write_timeout,
                exclusive=True,
            )
            if not hasattr(port, "cancel_read"):
                port.timeout = CANCEL_FALLBACK_TIMEOUT
            port.open()
        except (*_LINE_ERRORS, ValueError) as exc:
            raise PortOpenError(_open_failure_message(url, exc)) from exc
        transport = cls(url, settings, port)
        kind = (
            f"a serial line at {settings.baudrate} baud"
            if transport.is_serial_line
            else "a pseudo-terminal or network port"
        )
        allowance = (
            f"line time at {settings.baudrate} baud is not charged to the players"
            if transport.applies_line_delay
            else "no line time is taken off the clocks"
        )
        LOGGER.info("opened %r (%s; %s)", url, kind, allowance)
        return transport

    @property
    def is_serial_line(self) -> bool:
        """True for a real UART or USB-serial adapter; False for a pty or a network URL."""
        return self._is_serial_line

    @property
    def applies_line_delay(self) -> bool:
        """Whether a reply's own transmission time is subtracted from the clock (section 5)."""
        if self.settings.line_delay is LineDelay.AUTO:
            return self._is_serial_line
        return self.settings.line_delay is LineDelay.ON

    def fileno(self) -> int | None:
        """The descriptor to wait on before :meth:`read_nowait`; None if bytes need pyserial.

        Only pyserial's POSIX ``Serial`` itself (device paths, ptys) reads straight from its
        descriptor; URL backends and subclasses such as ``spy://`` process the bytes in
        Python and must be read with :meth:`read` instead. None once the port is closed.
        """
        return None if self._closed else self._fd

    def read_nowait(self) -> bytes:
        """Everything waiting now, ``b""`` when nothing is; never blocks.

        Call it when :meth:`fileno` is ready to read. pyserial leaves the tty at
        ``VMIN = 0``, so an empty ``os.read`` means either "nothing yet" (a spurious wake-up)
        or a hang-up; an empty read after the descriptor was seen ready is the hang-up.
        """
        with self._read_lock:
            fd = self.fileno()
            if fd is None:
                raise ProgrammingError(
                    f"{self.url!r}: read_nowait() needs a port read straight from its descriptor"
                    " and still open; read this one with read()"
                )
            try:
                data = _read_waiting(fd)
            except OSError as exc:
                raise LineLostError(f"{self.url!r}: line lost: {exc}") from exc
            if data is None:
                raise LineLostError(
                    f"{self.url!r}: line lost: the port reports data to read but returned none"
                    " (hang-up or cable unplugged)"
                )
            return data

    def write_nowait(self, data: bytes) -> int:
        """Hand the port what it takes now, without waiting; returns how many bytes it took.

        For ports read with :meth:`read_nowait` (their descriptor is non-blocking): a
        port whose output buffer is full (a player that does not read, flow control
        holding the line) takes nothing, and the caller keeps the rest for later.
        """
        fd = self.fileno()
        if fd is None:
            raise ProgrammingError(
                f"{self.url!r}: write_nowait() needs a port written straight to its descriptor"
                " and still open; write this one with write()"
            )
        try:
            return os.write(fd, data)
        except BlockingIOError:
            return 0
        except OSError as exc:
            raise LineLostError(f"{self.url!r}: line lost while writing: {exc}") from exc

    def write(self, data: bytes) -> float:
        """Write all of ``data`` and wait until it has left; returns ``time.monotonic()`` then.

        The clock of a move starts when the ``respond`` record has left the referee, so the
        time returned is taken after the drain, not after the write call.
        """
        with self._write_lock:
            try:
                if self._fd is not None and not self._closed:
                    self._write_to_descriptor(self._fd, data)
                    _retry_interrupted(termios.tcdrain, self._fd)
                else:
                    self._port.write(data)
                    _retry_interrupted(self._port.flush)
            except serial.SerialTimeoutException as exc:
                raise LineLostError(
                    f"{self.url!r}: write timed out after {self.settings.write_timeout} s"
                    " (is flow control holding the line?)"
                ) from exc
            except _LINE_ERRORS as exc:
                raise LineLostError(f"{self.url!r}: line lost while writing: {exc}") from exc
            return time.monotonic()

    def _write_to_descriptor(self, fd: int, data: bytes) -> None:
        """``os.write`` until all is written; waits for room within ``write_timeout``.

        The descriptor is non-blocking (pyserial opens it so): a full output buffer, which
        flow control can cause, gives a partial write or EAGAIN rather than a hang. A timeout
        is pyserial's own exception, so both write paths fail alike.
        """
        deadline = time.monotonic() + self.settings.write_timeout
        pending = memoryview(data)
        while pending:
            try:
                written = os.write(fd, pending)
            except BlockingIOError:
                written = 0
            pending = pending[written:]
            if not pending:
                return
            left = deadline - time.monotonic()
            room = select.poll()
            room.register(fd, select.POLLOUT)
            if left <= 0 or not room.poll(left * 1000):
                raise serial.SerialTimeoutException("Write timeout")

    def read(self) -> bytes:
        """Block until at least one byte arrives; return everything waiting.

        Returns ``b""`` only after :meth:`cancel_read` or :meth:`close`. A cancel that
        arrives while no read is blocked is kept for the next read, so it is never lost.
        """
        with self._read_lock:
            while True:
                if self._take_cancel():
                    return b""
                try:
                    first: bytes = self._port.read(1)
                    if not first:
                        continue  # woken by a cancel or, on fallback backends, the timeout
                    waiting: int = self._port.in_waiting
                    rest: bytes = self._port.read(waiting) if waiting else b""
                    return first + rest
                except _LINE_ERRORS as exc:
                    raise LineLostError(f"{self.url!r}: line lost: {exc}") from exc

    def cancel_read(self) -> None:
        """Make a blocked (or the next) :meth:`read` return ``b""``; callable from any thread."""
        with self._state_lock:
            if self._closed:
                return
            self._cancel_requested = True
            if self._can_cancel:
                self._port.cancel_read()

    def close(self) -> None:
        """Close the port; wakes a blocked reader first. Idempotent."""
        with self._state_lock:
            if self._closed:
                return
            self._closed = True
            if self._can_cancel:
                self._port.cancel_read()
        with self._read_lock:
            try:
                self._port.close()
            except _LINE_ERRORS as exc:
                LOGGER.debug("closing %r: %s", self.url, exc)
        LOGGER.info("closed %r", self.url)

    def _take_cancel(self) -> bool:
        with self._state_lock:
            if self._closed:
                return True
            cancelled, self._cancel_requested = self._cancel_requested, False
            return cancelled

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SerialTransport({self.url!r}, {self.settings!r})"


def _direct_descriptor(port: Any) -> int | None:
    """The descriptor of a port whose bytes are exactly what ``os.read`` returns, if any."""
    if os.name != "posix" or type(port) is not serial.Serial:
        return None
    fd: int = port.fileno()
    return fd


def _read_waiting(fd: int) -> bytes | None:
    """Everything waiting on ``fd``: ``b""`` for nothing, None for a hang-up."""
    data = _read_chunk(fd)
    if not data:
        if not _ready_to_read(fd):
            return b""
        data = _read_chunk(fd)  # seen ready first: empty now is the hang-up
        if not data:
            return None
    if len(data) < _READ_SIZE:
        return data
    chunks = [data]
    while len(data) == _READ_SIZE:
        data = _read_chunk(fd)
        chunks.append(data)
    return b"".join(chunks)


def _read_chunk(fd: int) -> bytes:
    """What one ``os.read`` gives; ``b""`` for EAGAIN too (ttys give ``b""`` themselves)."""
    try:
        return os.read(fd, _READ_SIZE)
    except BlockingIOError:
        return b""


def _ready_to_read(fd: int) -> bool:
    """Whether ``fd`` has data or a hang-up to report right now (no waiting)."""
    readiness = select.poll()
    readiness.register(fd, _READINESS)
    return bool(readiness.poll(0))


def _retry_interrupted(call: Any, *args: Any) -> None:
    """Run a ``termios`` call again after EINTR: PEP 475 restarts ``os`` calls, not these."""
    while True:
        try:
            call(*args)
        except termios.error as exc:
            if _errno_of(exc) != errno.EINTR:
                raise
            LOGGER.debug("%s interrupted by a signal; retrying", getattr(call, "__name__", call))
        else:
            return


def _is_uart(port: Any) -> bool:
    """A character device that is not a pseudo-terminal: it has a line rate."""
    try:
        mode = os.fstat(port.fileno())
    except (OSError, ValueError):  # no file descriptor: a URL backend (loop://, rfc2217://)
        return False
    if not stat.S_ISCHR(mode.st_mode):
        return False
    device = (os.major(mode.st_rdev), os.minor(mode.st_rdev))
    return device[0] not in _PTY_MAJORS and device != _PTMX


def _errno_of(exc: BaseException) -> int | None:
    """The errno behind a pyserial error, which often hides it in the chained exception."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno is not None:
            return seen.errno
        if isinstance(seen, termios.error) and seen.args and isinstance(seen.args[0], int):
            return seen.args[0]
        seen = seen.__cause__ or seen.__context__
    return None


def _open_failure_message(url: str, exc: BaseException) -> str:
    code = _errno_of(exc)
    path = url.split("://", 1)[-1]
    if isinstance(exc, ValueError):
        return (
            f"cannot open {url!r}: {exc}; use a device path such as /dev/ttyUSB0 or a URL such as"
            " socket://host:port, rfc2217://host:port or loop://"
        )
    if code in _MISSING:
        return (
            f"cannot open {url!r}: no such device; check the cable and the USB adapter,"
            " and list the ports with `serialref ports`"
        )
    if code in _FORBIDDEN:
        return (
            f"cannot open {url!r}: permission denied; add your user to the `dialout` group"
            " (`sudo usermod -aG dialout $USER`) and log in again"
        )
    if code in _BUSY:
        return (
            f"cannot open {url!r}: the port is busy, another program holds it;"
            f" find it with `fuser -v {path}` or `lsof {path}`"
        )
    if code == errno.ENOTTY:
        return f"cannot open {url!r}: not a serial port; list the ports with `serialref ports`"
    # pyserial's own message repeats the errno and the path: the reason alone is enough.
    return f"cannot open {url!r}: {os.strerror(code) if code else exc}"
