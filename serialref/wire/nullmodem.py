"""Null-modem cables in software: pseudo-terminal pairs that stand in for serial cables.

A :class:`NullModemCable` joins two pty pairs like a crossed cable, so that two separate
programs (a referee and a player's client) can each open one end; with a baud rate it
paces each direction like a UART. :func:`open_raw_pty` gives one raw pty pair. The
demo, a tournament's players started on cables of their own and TCP seats run on them,
and users' tests reach them through :mod:`serialref.testing`.

Both sides of every pseudo-terminal are put in raw mode with echo off: a pty left in its
default cooked mode would echo the referee's records back to it and turn CR into LF,
which no real cable does. The cable keeps its own descriptor of each slave open, so a
program that closes and reopens its port finds the line as a cable would leave it
(input that arrived meanwhile is discarded by pyserial's ``open()``), and the master
never reports an error just because nobody has the port open at the moment.
"""

from __future__ import annotations

import errno
import logging
import os
import select
import threading
import time
import tty
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

from serialref.errors import ConfigError, ProgrammingError

__all__ = ["NullModemCable", "null_modem_cable", "open_raw_pty"]

LOGGER = logging.getLogger(__name__)

_READ_SIZE = 4096
_RELAY_BUFFER = 4096
"""Bytes the relay holds per direction before it stops reading the sender (back-pressure)."""
_BITS_PER_CHAR = 10
"""Start bit, eight data bits, stop bit: 8N1, the wire profile's default framing."""
_SIDES = ("a", "b")


def open_raw_pty() -> tuple[int, int, str]:
    """A pty pair in raw mode, echo off on both sides: (master fd, slave fd, slave path)."""
    master, slave = os.openpty()
    try:
        for fd in (master, slave):
            tty.setraw(fd)
        return master, slave, os.ttyname(slave)
    except BaseException:
        os.close(master)
        os.close(slave)
        raise


class _RelayDirection:
    """Bytes on their way to one side, paced like a UART when the cable has a baud rate."""

    def __init__(self, char_time: float | None) -> None:
        self.pending = bytearray()
        self.char_time = char_time
        self.head_due = 0.0  # when the first pending byte has been "transmitted"

    def add(self, data: bytes, now: float) -> None:
        if not self.pending and self.char_time is not None:
            self.head_due = now + self.char_time
        self.pending += data

    def due(self, now: float) -> int:
        """How many pending bytes have finished their transmission by ``now``."""
        if self.char_time is None:
            return len(self.pending)
        if now < self.head_due:
            return 0
        return min(len(self.pending), 1 + int((now - self.head_due) / self.char_time))

    def delivered(self, count: int) -> None:
        del self.pending[:count]
        if self.char_time is not None:
            self.head_due += count * self.char_time


class NullModemCable:
    """Two pty pairs joined like a crossed cable by a relay thread: A's TX is B's RX and back.

    The relay waits in ``select`` on both masters and a wake-up pipe, so an idle cable
    costs no CPU. With a baud rate it paces each direction at 10 bits per character;
    with none it copies as fast as the ptys allow.
    """

    def __init__(self, *, baudrate: int | None = None) -> None:
        if baudrate is not None and baudrate <= 0:
            raise ConfigError("baudrate", f"must be positive, not {baudrate!r}")
        self.baudrate = baudrate
        char_time = None if baudrate is None else _BITS_PER_CHAR / baudrate
        self._masters: dict[str, int] = {}
        self._slaves: dict[str, int] = {}
        self._paths: dict[str, str] = {}
        self._toward = {side: _RelayDirection(char_time) for side in _SIDES}
        self._requests: list[tuple[Callable[[], None], threading.Event]] = []
        self._requests_lock = threading.Lock()
        self._relay_running = False
        self._stopping = False
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        try:
            for side in _SIDES:
                master, slave, path = open_raw_pty()
                os.set_blocking(master, False)
                self._masters[side], self._slaves[side], self._paths[side] = master, slave, path
        except BaseException:
            self._close_fds()
            raise
        self.path_a = self._paths["a"]
        self.path_b = self._paths["b"]
        self._relay = threading.Thread(
            target=self._run_relay, name="serialref-null-modem", daemon=True
        )
        self._relay_running = True
        self._relay.start()

    def inject_noise(self, toward: str, data: bytes) -> None:
        """Make ``data`` arrive on side ``toward`` ("a" or "b") as if from the line."""
        self._check_side(toward)
        self._submit(lambda: self._inject(toward, data))

    def hang_up(self, side: str) -> None:
        """Drop side ``side``: the program there sees a hang-up; returns once it has happened."""
        self._check_side(side)
        self._submit(lambda: self._drop_side(side)).wait()
        with self._requests_lock:
            if not self._relay_running:
                raise ProgrammingError("the null-modem relay stopped before the hang-up")

    def close(self) -> None:
        """Stop the relay and release every descriptor; idempotent."""
        with self._requests_lock:
            self._stopping = True
            running = self._relay_running
        if running:
            self._wake()
            self._relay.join()
        self._close_fds()

    def _check_side(self, side: str) -> None:
        if side not in _SIDES:
            raise ConfigError("side", f"must be 'a' or 'b', not {side!r}")

    def _submit(self, action: Callable[[], None]) -> threading.Event:
        """Run ``action`` on the relay thread, which alone touches the ptys and buffers."""
        done = threading.Event()
        with self._requests_lock:
            if not self._relay_running or self._stopping:
                raise ProgrammingError("the null-modem cable is closed")
            self._requests.append((action, done))
        self._wake()
        return done

    def _wake(self) -> None:
        with suppress(BlockingIOError):
            os.write(self._wake_w, b"!")

    def _run_relay(self) -> None:
        try:
            while self._relay_step():
                pass
        except Exception:
            LOGGER.exception("null-modem relay failed")
        finally:
            with self._requests_lock:
                self._relay_running = False
                requests, self._requests = self._requests, []
            for _, done in requests:
                done.set()

    def _relay_step(self) -> bool:
        """One ``select`` and what it found; False once the cable is closing."""
        now = time.monotonic()
        readable = [self._wake_r]
        writable = []
        timeout: float | None = None
        for side, master in self._masters.items():
            other = self._toward["b" if side == "a" else "a"]
            if len(other.pending) < _RELAY_BUFFER:
                readable.append(master)
            toward = self._toward[side]
            if toward.pending:
                if toward.due(now):
                    writable.append(master)
                else:
                    wait = toward.head_due - now
                    timeout = wait if timeout is None else min(timeout, wait)
        ready_r, ready_w, _ = select.select(readable, writable, [], timeout)
        if self._wake_r in ready_r and not self._serve_requests():
            return False
        now = time.monotonic()
        for side, master in list(self._masters.items()):
            if master in ready_r:
                self._copy_from(side, now)
            if master in ready_w and side in self._masters:
                self._deliver_to(side, now)
        return True

    def _serve_requests(self) -> bool:
        os.read(self._wake_r, _READ_SIZE)
        with self._requests_lock:
            requests, self._requests = self._requests, []
            stopping = self._stopping
        for action, done in requests:
            action()
            done.set()
        return not stopping

    def _copy_from(self, side: str, now: float) -> None:
        try:
            data = os.read(self._masters[side], _READ_SIZE)
        except BlockingIOError:
            return
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            data = b""
        if not data:
            self._drop_side(side)
            return
        other = "b" if side == "a" else "a"
        if other in self._masters:
            self._toward[other].add(data, now)

    def _deliver_to(self, side: str, now: float) -> None:
        direction = self._toward[side]
        try:
            written = os.write(self._masters[side], direction.pending[: direction.due(now)])
        except BlockingIOError:
            return
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            self._drop_side(side)
            return
        direction.delivered(written)

    def _inject(self, toward: str, data: bytes) -> None:
        if toward in self._masters:  # a side that hung up hears nothing more
            self._toward[toward].add(data, time.monotonic())

    def _drop_side(self, side: str) -> None:
        for fds in (self._masters, self._slaves):
            fd = fds.pop(side, None)
            if fd is not None:
                os.close(fd)
        self._toward[side].pending.clear()

    def _close_fds(self) -> None:
        """Close whatever is still open; only called once no relay thread runs."""
        for side in _SIDES:
            self._drop_side(side)
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1


@contextmanager
def null_modem_cable(*, baudrate: int | None = None) -> Iterator[NullModemCable]:
    """Two port paths joined like a crossed cable; ``baudrate`` paces it like a UART."""
    cable = NullModemCable(baudrate=baudrate)
    try:
        yield cable
    finally:
        cable.close()
