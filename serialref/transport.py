"""Bytes in and out of one port, through pyserial's URL handlers.

Every port is opened with :func:`serial.serial_for_url`, so device paths, ``socket://``,
``rfc2217://``, ``loop://`` and ``spy://`` all work without code of ours. This module is
the one place that meets pyserial's exceptions (and the bare ``termios.error`` its
``flush()`` can raise on a hang-up): they leave it as :class:`PortOpenError` with a hint
the user can act on, or as :class:`LineLostError`.

Reading blocks in ``select`` (pyserial's POSIX backend) and is woken from another thread
with pyserial's ``cancel_read``, so an idle port costs no CPU. Backends without
``cancel_read`` (``socket://``, ``rfc2217://``) are read with a 0.2 s timeout instead and
the wait is resumed after each timeout: a cancel then takes effect within 0.2 s, at the
price of five wake-ups a second on those ports only.

pyserial's ``open()`` discards input already waiting on the port, so a player that spoke
before the referee opened its port has lost that line; the wire profile's ``sign_on``
retry covers this.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import termios
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import serial

from serialref.errors import ConfigError, LineLostError, PortOpenError

__all__ = ["PortSettings", "SerialTransport"]

LOGGER = logging.getLogger(__name__)

CANCEL_FALLBACK_TIMEOUT = 0.2
"""Read timeout, in seconds, on backends that cannot wake a blocked read."""

_PARITIES = ("N", "E", "O", "M", "S")
_STOPBITS = (1, 1.5, 2)
_LINE_DELAYS = ("auto", "on", "off")

# Linux device numbers of pseudo-terminals: Unix98 slaves (136-143), BSD-style masters
# and slaves (2, 3), and /dev/ptmx (5:2). None of them has a line rate.
_PTY_MAJORS = frozenset(range(136, 144)) | {2, 3}
_PTMX = (5, 2)

_MISSING = frozenset({errno.ENOENT, errno.ENODEV, errno.ENXIO})
_FORBIDDEN = frozenset({errno.EACCES, errno.EPERM})
_BUSY = frozenset({errno.EBUSY, errno.EAGAIN, errno.EWOULDBLOCK})

_LINE_ERRORS = (serial.SerialException, termios.error, OSError)


@dataclass(frozen=True, slots=True)
class PortSettings:
    """How one port is framed on the wire; the defaults are the wire profile's 9600 8N1."""

    baudrate: int = 9600
    bytesize: int = 8
    parity: str = "N"
    stopbits: float = 1
    rtscts: bool = False
    xonxoff: bool = False
    line_delay: str = "auto"
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
        if self.line_delay not in _LINE_DELAYS:
            raise ConfigError(
                "line_delay", f"must be one of {', '.join(_LINE_DELAYS)}, not {self.line_delay!r}"
            )
        if self.write_timeout <= 0:
            raise ConfigError("write_timeout", f"must be positive, not {self.write_timeout!r}")

    def transmission_time(self, nbytes: int) -> float:
        """Seconds the line needs for ``nbytes`` characters: start, data, parity and stop bits."""
        bits_per_char = 1 + self.bytesize + (0 if self.parity == "N" else 1) + self.stopbits
        return bits_per_char * nbytes / self.baudrate


class SerialTransport:
    """One open port: blocking whole-chunk reads, drained writes, clean cancel and close.

    One thread may read while another writes, cancels or closes; ``close()`` waits for
    a blocked ``read()`` to let go of the port before closing it, so no file descriptor
    is closed under a running ``select``.
    """

    def __init__(self, url: str, settings: PortSettings, port: Any) -> None:
        """Wrap an already open pyserial port; use :meth:`open` rather than this."""
        self.url = url
        self.settings = settings
        self._port = port
        self._is_serial_line = _is_uart(port)
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
        LOGGER.info(
            "opened %r (%s)", url, "serial line" if transport.is_serial_line else "no line rate"
        )
        return transport

    @property
    def is_serial_line(self) -> bool:
        """True for a real UART or USB-serial adapter; False for a pty or a network URL."""
        return self._is_serial_line

    @property
    def applies_line_delay(self) -> bool:
        """Whether a reply's own transmission time is subtracted from the clock (section 5)."""
        if self.settings.line_delay == "auto":
            return self._is_serial_line
        return self.settings.line_delay == "on"

    def write(self, data: bytes) -> float:
        """Write all of ``data`` and wait until it has left; returns ``time.monotonic()`` then.

        The clock of a move starts when the ``respond`` record has left the referee, so the
        time returned is taken after the drain, not after the write call.
        """
        with self._write_lock:
            try:
                self._port.write(data)
                self._port.flush()
            except serial.SerialTimeoutException as exc:
                raise LineLostError(
                    f"{self.url!r}: write timed out after {self.settings.write_timeout} s"
                    " (is flow control holding the line?)"
                ) from exc
            except _LINE_ERRORS as exc:
                raise LineLostError(f"{self.url!r}: line lost while writing: {exc}") from exc
            return time.monotonic()

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
    return f"cannot open {url!r}: {exc}"
