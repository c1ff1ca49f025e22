"""A UCI engine's output read on a thread of its own, so that a search costs one wake-up.

An engine prints a line for every step of its search: Stockfish at 3,000 nodes a move
writes some ten ``info`` lines in five to seven separate writes before its ``bestmove``.
Read on the client's event loop, each write is a turn of the loop (an ``epoll`` wait,
the loop's own bookkeeping, the pipe transport, the protocol): about 65 microseconds of
CPU each on the 2-core development machine, against 12 for a blocking ``read`` on a
thread (``bench/client_cost.py`` measures the whole bridge). Nobody reads those lines but
the last with a score, its variation and the ``bestmove``.

So once the engine plays its first search through python-chess, :class:`SearchReader`
takes its standard output over: python-chess's pipe transport stops reading it, and a
thread reads it with blocking reads. While a search is in flight
(:meth:`SearchReader.expect_answer` until its ``bestmove``), the thread keeps the latest
``info`` line with a score, the latest line after it and the latest with a variation in
the search's :class:`SearchLines`, and wakes the event loop once, with the ``bestmove``.
Every other line (``readyok``, a refusal, anything printed between searches) is handed
to the loop as it comes, in order, for python-chess's protocol to read as before.

When the engine's output ends (it quit, crashed or was killed), the thread hands the
pipe back to python-chess's transport, which then sees the end itself and reports the
process's exit as always.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import os
import threading
from collections.abc import Callable

from chess.engine import EngineError, PlayResult

__all__ = ["AnswerReader", "SearchLines", "SearchReader"]

LOGGER = logging.getLogger(__name__)

AnswerReader = Callable[["SearchLines", str], PlayResult]
"""Makes a search's result of its kept lines and its ``bestmove`` line, or raises
python-chess's ``EngineError``."""

READ_SIZE = 65536
"""Bytes asked for per read: more than an engine writes between two reads."""

HAND_OVERS = 2
"""Hand-overs the event loop may have yet to take before the thread reads on.

An engine that floods the client with lines outside a search is read no faster
than the loop takes them: the thread waits, the pipe fills and the engine waits
for it, as when the loop read the pipe itself. So at most this many reads' lines
wait for the loop (a read's 64 kB of one-letter lines make 1.4 MB of line objects).
"""


class SearchLines:
    """One search's progress as the reader keeps it, and its answer.

    ``scored`` is the latest ``info`` line with a score, ``after`` the latest ``info``
    line after it (python-chess would have merged both into the search's information),
    ``variation`` the latest with a ``pv``. ``answer`` gets what ``read`` makes of the
    ``bestmove`` line and these, or the error it raises; ``ended`` is called right after.
    """

    __slots__ = ("after", "answer", "ended", "read", "scored", "variation")

    def __init__(
        self, answer: asyncio.Future[PlayResult], read: AnswerReader, ended: Callable[[], None]
    ) -> None:
        self.answer = answer
        self.read = read
        self.ended = ended
        self.scored = b""
        self.after = b""
        self.variation = b""

    def note(self, line: bytes) -> None:
        """Keep ``line``, an ``info`` line, if it is one of those the search may need."""
        if b" score " in line:
            self.scored, self.after = line, b""
        elif self.scored:
            self.after = line
        if b" pv " in line:
            self.variation = line

    def info_lines(self) -> list[str]:
        """The ``info`` lines to read the search's information from, oldest first."""
        return [line.decode("utf-8", "replace") for line in (self.scored, self.after) if line]

    def variation_line(self) -> str:
        """The latest ``info`` line with a variation, ``""`` if none came yet."""
        return self.variation.decode("utf-8", "replace")


class SearchReader:
    """Reads an engine's standard output on a thread (module docstring).

    ``deliver`` is called on the event loop with each line that is no part of a search
    in flight; ``max_line`` bytes of a line are kept, and ``cut`` is called (on the
    loop) when a line was longer. ``pending``: a partial line already read.
    """

    def __init__(
        self,
        pipe: asyncio.ReadTransport,
        *,
        deliver: Callable[[str], None],
        cut: Callable[[], None],
        max_line: int,
        pending: bytes = b"",
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._pipe = pipe
        self._deliver = deliver
        self._cut = cut
        self._max_line = max_line
        self._search: SearchLines | None = None
        self._room = threading.BoundedSemaphore(HAND_OVERS)
        pipe.pause_reading()
        # A descriptor of the reader's own: python-chess's transport may close its one
        # while the thread still reads (the thread ends at the end of the output).
        self._fd = os.dup(pipe.get_extra_info("pipe").fileno())
        os.set_blocking(self._fd, True)
        self._thread = threading.Thread(
            target=self._read, args=(pending,), name="engine output", daemon=True
        )
        self._thread.start()

    @property
    def searching(self) -> SearchLines | None:
        """The search in flight, until its ``bestmove`` was read."""
        return self._search

    def expect_answer(self, read: AnswerReader, ended: Callable[[], None]) -> SearchLines:
        """A search starts now (before its ``go`` is written): its lines are kept back,
        ``read`` makes its answer of them and its ``bestmove`` line, and ``ended`` is
        called once the answer (or the engine's end) is there: in the same turn of the
        event loop, a turn earlier than the answer's own callbacks."""
        search = self._search = SearchLines(self._loop.create_future(), read, ended)
        return search

    def engine_ended(self, error: Exception) -> None:
        """The engine process ended: the search in flight, if any, fails with ``error``."""
        search, self._search = self._search, None
        if search is not None and not search.answer.done():
            search.answer.set_exception(error)
            search.ended()

    # -- on the reader's thread -----------------------------------------------------

    def _read(self, pending: bytes) -> None:
        fd = self._fd
        # One buffer for every read: a fresh 64 kB for each, cut down to the few hundred
        # bytes read, left the thread's malloc arena in pieces that grew 1.2 MB of
        # resident memory every thousand moves.
        buffer = memoryview(bytearray(READ_SIZE))
        try:
            while count := _read_into(fd, buffer):
                lines = buffer[:count].tobytes().split(b"\n")
                lines[0] = pending + lines[0]
                pending = lines.pop()
                if len(pending) > self._max_line:
                    pending = pending[: self._max_line]
                    self._hand_over([_Mark.CUT])
                events = self._sort(lines)
                if events:
                    self._hand_over(events)
        finally:
            os.set_blocking(fd, False)  # the transport reads the pipe again, without waiting
            os.close(fd)
            self._hand_over([_Mark.ENDED])

    def _sort(self, lines: list[bytes]) -> list[_Event]:
        """What the loop must hear of ``lines``: lines to pass on, and an answered search."""
        events: list[_Event] = []
        for whole in lines:
            if len(whole) > self._max_line:
                events.append(_Mark.CUT)
            line = whole[: self._max_line].removesuffix(b"\r")
            search = self._search
            if search is not None:
                if line.startswith(b"info"):
                    search.note(line)
                    continue
                if line.startswith(b"bestmove"):
                    self._search = None
                    events.append((search, line))
                    continue
            events.append(line)
        return events

    def _hand_over(self, events: list[_Event]) -> None:
        while not self._room.acquire(timeout=1.0):
            if self._loop.is_closed():
                return
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody listens
            self._loop.call_soon_threadsafe(self._arrived, events)

    # -- on the event loop ------------------------------------------------------------

    def _arrived(self, events: list[_Event]) -> None:
        self._room.release()
        for event in events:
            if isinstance(event, bytes):
                self._deliver(event.decode("utf-8", "replace"))
            elif isinstance(event, tuple):
                search, line = event
                if not search.answer.done():
                    _answer(search, line.decode("utf-8", "replace"))
            elif event is _Mark.CUT:
                self._cut()
            elif not self._pipe.is_closing():  # _Mark.ENDED
                self._pipe.resume_reading()


class _Mark(enum.Enum):
    """What the thread tells the loop beside lines: a line was cut, the output ended."""

    CUT = "cut"
    ENDED = "ended"


_Event = bytes | tuple[SearchLines, bytes] | _Mark
"""A line to pass on, a search and its ``bestmove`` line, or a mark."""


def _answer(search: SearchLines, line: str) -> None:
    try:
        search.answer.set_result(search.read(search, line))
    except EngineError as exc:
        search.answer.set_exception(exc)
    search.ended()


def _read_into(fd: int, buffer: memoryview) -> int:
    """Read the next bytes of the output into ``buffer``: their count, 0 at its end (or
    when it cannot be read)."""
    try:
        return os.readv(fd, [buffer])
    except OSError as exc:
        LOGGER.debug("reading the engine's output failed: %s", exc)
        return 0
