"""What users import for their own tests: a scripted peer on a cable, instant players.

Importable without pytest. :func:`null_modem` gives the code under test a port path
and the test a :class:`Peer` on the other end of the "cable" (a raw pty pair, see
:mod:`serialref.wire.nullmodem`); :meth:`Peer.from_serial_port` drives a real cable
instead. :func:`answer_instantly` plays as a player that answers every ``respond`` at
once, and :func:`quiet_game` gives it a long game that does not end by itself.
:func:`null_modem_cable` and :class:`NullModemCable`, which join two programs, are the
product's own (:mod:`serialref.wire.nullmodem`); they are handed on from here, where
users' tests have always found them.
"""

from __future__ import annotations

import os
import random
import select
import time
import unittest
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import chess

from serialref import records
from serialref.epd.operations import Operation
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import LineLostError, RecordError, escape
from serialref.wire.framing import Line, LineFramer
from serialref.wire.nullmodem import NullModemCable, null_modem_cable, open_raw_pty

__all__ = [
    "NullModemCable",
    "Peer",
    "answer_instantly",
    "null_modem",
    "null_modem_cable",
    "quiet_game",
]

_READ_SIZE = 4096


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
