"""Null-modem test harness: pseudo-terminal pairs that stand in for serial cables.

Importable by users' own tests (no pytest needed). :func:`null_modem` gives the code
under test a port path and the test a :class:`Peer` on the other end of the "cable";
:func:`null_modem_cable` joins two paths so that two separate programs (a referee and a
player client) can each open one.

Both sides of every pseudo-terminal are put in raw mode with echo off: a pty left in its
default cooked mode would echo the referee's records back to it and turn CR into LF,
which no real cable does. The harness keeps its own descriptor of each slave open, so a
program that closes and reopens its port finds the line as a cable would leave it
(input that arrived meanwhile is discarded by pyserial's ``open()``), and the master
never reports an error just because nobody has the port open at the moment.
"""

from __future__ import annotations

import errno
import logging
import os
import random
import select
import threading
import time
import unittest
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, Protocol

import chess

from serialref import records
from serialref.epd.operations import Operation
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import ConfigError, LineLostError, ProgrammingError, RecordError, escape
from serialref.wire.framing import Line, LineFramer
from serialref.wire.seatlistener import open_raw_pty

__all__ = [
    "NullModemCable",
    "Peer",
    "answer_instantly",
    "null_modem",
    "null_modem_cable",
    "quiet_game",
]

LOGGER = logging.getLogger(__name__)

_READ_SIZE = 4096
_RELAY_BUFFER = 4096
"""Bytes the relay holds per direction before it stops reading the sender (back-pressure)."""
_BITS_PER_CHAR = 10
"""Start bit, eight data bits, stop bit: 8N1, the wire profile's default framing."""
_SIDES = ("a", "b")




class _PeerChannel(Protocol):
    """The far end of the cable as the peer sees it: raw bytes with a timeout."""

    def receive(self, timeout: float) -> bytes: ...  # b"" when nothing arrived in time
    def send(self, data: bytes) -> None: ...
    def hang_up(self) -> None: ...
    def close(self) -> None: ...


class _PtyMasterChannel:
    """The master side of a pty pair; closing it is a hang-up for the slave's user."""

    def __init__(self, master: int, slave: int) -> None:
        self._master: int | None = master
        self._slave: int | None = slave

    def receive(self, timeout: float) -> bytes:
        master = self._open_master()
        ready, _, _ = select.select([master], [], [], max(timeout, 0.0))
        return os.read(master, _READ_SIZE) if ready else b""

    def send(self, data: bytes) -> None:
        master = self._open_master()
        view = memoryview(data)
        while view:
            view = view[os.write(master, view) :]

    def hang_up(self) -> None:
        self.close()

    def close(self) -> None:
        for fd in (self._master, self._slave):
            if fd is not None:
                os.close(fd)
        self._master = self._slave = None

    def _open_master(self) -> int:
        if self._master is None:
            raise LineLostError("the peer has hung up; it can no longer send or receive")
        return self._master


class _SerialPortChannel:
    """A real port (pyserial object), for running the suite over a real null-modem cable."""

    def __init__(self, port: Any) -> None:
        self._port = port

    def receive(self, timeout: float) -> bytes:
        self._port.timeout = max(timeout, 0.0)
        data: bytes = self._port.read(1)
        waiting: int = self._port.in_waiting if data else 0
        return data + self._port.read(waiting) if waiting else data

    def send(self, data: bytes) -> None:
        self._port.write(data)
        self._port.flush()

    def hang_up(self) -> None:
        # unittest.SkipTest, not pytest.skip: both pytest and unittest report it as a skip,
        # and this module must not need pytest.
        raise unittest.SkipTest("a real cable cannot be hung up from software")

    def close(self) -> None:
        self._port.close()


class Peer:
    """A scripted program at the far end of the cable: sends lines, reads and checks lines."""

    def __init__(self, channel: _PeerChannel) -> None:
        """Use :func:`null_modem` or :meth:`from_serial_port` rather than this."""
        self._channel = channel
        self._framer = LineFramer()
        self._lines: deque[str] = deque()
        self._unfinished = bytearray()
        self._closed = False

    @classmethod
    def from_serial_port(cls, port: Any) -> Peer:
        """A peer driving an open pyserial port, e.g. the far end of a real null-modem cable.

        The peer owns the port and closes it; :meth:`hang_up` raises
        :class:`unittest.SkipTest`, which pytest and unittest report as a skipped test.
        """
        return cls(_SerialPortChannel(port))

    def send_line(self, text: str, newline: bytes = b"\r\n") -> None:
        """Send ``text`` and a line end exactly as given, unchecked, so tests can misbehave."""
        self._channel.send(text.encode("ascii") + newline)

    def send_bytes(self, data: bytes) -> None:
        """Send raw bytes: noise, split lines, bare terminators."""
        self._channel.send(data)

    def read_line(self, timeout: float = 5.0) -> str:
        """The next non-empty line (LF, CR LF or CR ended), waiting at most ``timeout`` s.

        Raises :class:`TimeoutError` naming what arrived of an unfinished line, and
        :class:`AssertionError` for a line that is not printable ASCII: the referee must
        never send one.
        """
        deadline = time.monotonic() + timeout
        while not self._lines:
            remaining = deadline - time.monotonic()
            data = self._channel.receive(remaining) if remaining > 0 else b""
            if not data:
                received = escape(bytes(self._unfinished)) if self._unfinished else "nothing"
                raise TimeoutError(
                    f"no complete line within {timeout} s; received since the last line: {received}"
                )
            self._take(data)
        return self._lines.popleft()

    def expect(self, refcom: str, timeout: float = 5.0) -> EpdRecord:
        """Read the next line and check that it is a ``refcom`` record of kind ``refcom``."""
        line = self.read_line(timeout)
        try:
            record = parse_record(line)
            kind = record.identifier("refcom")
        except RecordError as exc:
            raise AssertionError(f"expected refcom {refcom}, received {line!r}: {exc}") from exc
        if kind != refcom:
            raise AssertionError(f"expected refcom {refcom}, received {line!r}")
        return record

    def hang_up(self) -> None:
        """Drop the line: the port's user sees a hang-up (read error or end of file)."""
        self._channel.hang_up()

    def close(self) -> None:
        """Release the far end; idempotent."""
        if not self._closed:
            self._closed = True
            self._channel.close()

    def _take(self, data: bytes) -> None:
        for event in self._framer.feed(data):
            if not isinstance(event, Line):
                raise AssertionError(f"received a malformed line ({event.reason}): {event.preview}")
            self._lines.append(event.text)
        last_end = max(data.rfind(b"\r"), data.rfind(b"\n"))
        if last_end >= 0:
            self._unfinished.clear()
        self._unfinished += data[last_end + 1 :][-_READ_SIZE:]
        del self._unfinished[:-_READ_SIZE]


def quiet_game(plies: int, seed: int = 19) -> list[str]:
    """A seeded line of ``plies`` legal moves (UCI) in which the game does not end by itself.

    For scripted players that must play a long game: no mate, stalemate, repetition or
    fifty-move draw cuts it short.
    """
    board = chess.Board()
    choices = random.Random(seed)
    line: list[str] = []
    while len(line) < plies:
        move = choices.choice(sorted(board.legal_moves, key=chess.Move.uci))
        board.push(move)
        if board.is_game_over(claim_draw=True):
            board.pop()
            continue
        line.append(move.uci())
    return line


def answer_instantly(
    peer: Peer, moves: Sequence[str], *extra: Operation, timeout: float = 30.0
) -> list[str]:
    """Play as an instant player until ``disconnect``; the replies sent, in order.

    Each ``respond`` is answered at once with the move ``moves`` gives for that ply
    (UCI, counted from the start of the game) and the ``extra`` operations, and with a
    resignation once ``moves`` has no move for the ply. Sign on first.
    """
    replies: list[str] = []
    while True:
        record = parse_record(peer.read_line(timeout))
        command = records.referee_command(record)
        if command is records.Refcom.DISCONNECT:
            return replies
        if command is not records.Refcom.RESPOND:
            continue
        board = record.board()
        if "sm" in record:
            board.push(record.move("sm", board))
        if board.ply() < len(moves):
            reply = records.reply(board, chess.Move.from_uci(moves[board.ply()]), *extra)
        else:
            reply = records.reply(board, None, Operation("resign"), *extra)
        text = format_record(reply)
        peer.send_line(text)
        replies.append(text)


@contextmanager
def null_modem() -> Iterator[tuple[str, Peer]]:
    """A pty pair: yields the port path for the code under test and a :class:`Peer` for the test."""
    master, slave, path = open_raw_pty()
    peer = Peer(_PtyMasterChannel(master, slave))
    try:
        yield path, peer
    finally:
        peer.close()


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
