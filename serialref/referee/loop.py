"""The referee's event loop: one ``select`` for every board, its timers and its stalls.

One thread waits in a single ``select`` with ``timeout = earliest deadline - now`` over
the ports of every board being played (one for ``serialref run``, ``concurrency`` for
``serialref event``), so it uses no CPU while players think and a reply goes from its
port to its board's referee with no thread hand-over. Everything else (ports without a
descriptor, signal handlers, the supervisor's socket, an event adding a board) hands
work over through a queue whose ``put`` also writes a byte to a wake-up pipe in that
``select``.

The loop also notices when it did not run: while any board is in a game it never
waits longer than :data:`HEARTBEAT`, so a ``select`` that returns much later than asked
(SIGSTOP, a suspended machine), or handling that took too long (a disk that stalls an
``fsync``), is a stall, and every board charges it to no one (PROTOCOL.md 7): the
boards share the thread, so a stall is never one player's doing.

A board that fails (its recorder cannot write, a port cannot be opened) is ended and
handed its error; the other boards play on.
"""

from __future__ import annotations

import logging
import os
import queue
import selectors
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Protocol

from serialref.errors import ProgrammingError

LOGGER = logging.getLogger(__name__)

__all__ = [
    "HEARTBEAT",
    "STALL_THRESHOLD",
    "LoopBoard",
    "RefereeLoop",
    "Watched",
    "stop_signals",
]

HEARTBEAT = 0.5
"""Longest wait, in seconds, while a game is under way: the loop's proof it is running."""

STALL_THRESHOLD = 0.5
"""Seconds beyond what the loop expected after which it counts as not having run."""

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
"""Signals that stop the match (or the event) in order (PROTOCOL.md 7)."""


class LoopBoard(Protocol):
    """What the loop drives: one board's referee and ports.

    Every method is called on the loop's thread; ``begin`` once when the board joins,
    ``end`` once when it is done or failed (``error``), after which the loop forgets it.
    """

    @property
    def done(self) -> bool: ...

    @property
    def in_game(self) -> bool: ...

    def begin(self) -> None: ...

    def next_deadline(self) -> float | None:
        """When ``on_timer`` is due: an absolute time that only the loop's calls change.

        The loop asks again only after the board handled an event, ran its timer or a
        stall, its port had room to write, or work was handed over.
        """
        ...

    def handle(self, event: object) -> None: ...

    def on_timer(self) -> None: ...

    def settle(self) -> None:
        """Make the records of the step just handled durable."""
        ...

    def on_stall(self, since: float, until: float) -> None: ...

    def end(self, error: Exception | None) -> None: ...


class Watched(Protocol):
    """A board's port the selector waits on."""

    @property
    def board(self) -> LoopBoard: ...

    def ready(self, readable: bool, writable: bool) -> list[object]:
        """The events the port has now that the selector says it is ready."""
        ...


_Item = tuple[LoopBoard | None, object]
"""A handed-over event for a board, or (None, a callable) to run on the loop's thread."""


class RefereeLoop:
    """One thread's ``select`` over the ports of every board, with timers and stall detection.

    :meth:`put`, :meth:`call` and :meth:`add` may be called from any thread and from
    signal handlers: the item goes on a ``SimpleQueue`` (reentrant) and a byte into a
    non-blocking pipe, so a flood of stop requests never blocks a signal handler (a full
    pipe already means "wake up"). The lock is reentrant because a signal handler may
    interrupt a ``put`` on the same thread; it keeps a ``put`` from writing to a pipe
    that :meth:`run` has just closed (whose descriptor number may be reused).
    """

    _WAKE_UP_DRAIN = 4096

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_idle: Callable[[], None] | None = None,
        idle_interval: float | None = None,
    ) -> None:
        self._clock = clock
        self._handed_over: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._wake_up_lock = threading.RLock()
        self._wake_up_fd: int | None = None
        self._selector: selectors.BaseSelector | None = None
        self._boards: list[LoopBoard] = []
        # Each board's next deadline, kept until something happens to the board: a line
        # trickling in a few bytes a read (a UART's FIFO, a paced cable) wakes the loop
        # dozens of times a line, and none of those reads changes any board's deadline.
        self._deadlines: dict[int, float | None] = {}
        self._on_idle = on_idle
        self._idle_interval = idle_interval
        # The watchdog is fed from the loop itself, so a stuck referee stops feeding it.
        self._next_idle = clock() if on_idle is not None and idle_interval else None

    # ------------------------------------------------------- from any thread

    def put(self, board: LoopBoard, event: object) -> None:
        """Hand an event to a board on the loop's thread; safe from any thread and signal."""
        self._hand_over((board, event))

    def call(self, work: Callable[[], None]) -> None:
        """Run ``work`` on the loop's thread between two steps; safe from any thread."""
        self._hand_over((None, work))

    def add(self, board: LoopBoard) -> None:
        """Let a board join the loop (it begins on the loop's thread); safe from any thread."""
        self.call(lambda: self._begin(board))

    # ------------------------------------------------------ the loop's thread

    @property
    def boards(self) -> Sequence[LoopBoard]:
        """The boards being played now (read on the loop's thread)."""
        return tuple(self._boards)

    def run(self, boards: Sequence[LoopBoard] = (), *, stay: Callable[[], bool] = bool) -> None:
        """Play ``boards`` and those added later until none is left and ``stay()`` is false.

        ``stay`` is asked after every step; whoever makes it false calls :meth:`call`
        (or :meth:`put`) to wake the loop up. Boards still playing when the loop is left
        by an exception are ended before it propagates.
        """
        with self._opened():
            try:
                for board in boards:
                    self._begin(board)
                while self._boards or stay():
                    self.step()
            finally:
                for board in list(self._boards):
                    self._end(board, None)

    def step(self) -> None:
        """Wait for the earliest deadline or event, then handle what came."""
        for playing in self._boards:
            if id(playing) not in self._deadlines:
                self._deadlines[id(playing)] = playing.next_deadline()
        due = dict(self._deadlines)
        deadline = min((d for d in (*due.values(), self._next_idle) if d is not None),
                       default=None)  # fmt: skip
        waited_from = self._clock()
        timeout = None if deadline is None else max(0.0, deadline - waited_from)
        if any(board.in_game for board in self._boards):
            timeout = HEARTBEAT if timeout is None else min(timeout, HEARTBEAT)
        items = self.wait(timeout)
        woke = self._clock()
        if timeout is not None and woke - waited_from > timeout + STALL_THRESHOLD:
            self._stalled(waited_from, woke)
        for board, event in items:
            if board is None:
                self._run_work(event)
            elif not board.done and board in self._boards:
                self._guarded(board, board.handle, event)
        # Timers run when a deadline is due, whether or not lines came: noise on one port
        # must not hold off the other player's flag, and a line arriving a few bytes at a
        # time (a UART's FIFO, a paced relay) must not run them for every few bytes.
        now = self._clock()
        for board in list(self._boards):
            board_deadline = due.get(id(board))
            if not board.done and board_deadline is not None and now >= board_deadline:
                self._deadlines.pop(id(board), None)
                self._guarded(board, board.on_timer)
            if not board.done:
                # What the step recorded becomes durable before the loop waits again.
                self._guarded(board, board.settle)
        handled = self._clock()
        if handled - woke > STALL_THRESHOLD:
            self._stalled(woke, handled)
        for board in list(self._boards):
            if board.done:
                self._end(board, None)
        if self._next_idle is not None and handled >= self._next_idle:
            self._next_idle = handled + (self._idle_interval or 0.0)
            if self._on_idle is not None:
                self._on_idle()

    def wait(self, timeout: float | None) -> list[_Item]:
        """What came within ``timeout`` seconds; empty when it passed without anything.

        Every ready port is read (and written) before anything is handled, so a line's
        arrival time is not delayed by the work (writes, journal fsync) another port's
        line causes.
        """
        items: list[_Item] = []
        for key, ready in self._open_selector().select(timeout):
            watched: Watched | None = key.data
            if watched is None:
                items.extend(self._take_handed_over(key.fd))
                self._deadlines.clear()  # handed-over work may change any board
                continue
            readable = bool(ready & selectors.EVENT_READ)
            writable = bool(ready & selectors.EVENT_WRITE)
            events = watched.ready(readable, writable)
            if events or writable:  # only a part of a line read leaves the board as it was
                self._deadlines.pop(id(watched.board), None)
            items.extend((watched.board, event) for event in events)
        return items

    def watch(self, fd: int, watched: Watched, *, writes: bool = False) -> None:
        """Wait on a port's descriptor from now on (also for room to write, with ``writes``)."""
        self._open_selector().register(fd, _mask(writes), watched)

    def rewatch(self, fd: int, watched: Watched, *, writes: bool) -> None:
        """Change whether the loop also wakes when the port has room for more."""
        if self._selector is not None:
            self._selector.modify(fd, _mask(writes), watched)

    def unwatch(self, fd: int) -> None:
        """Stop waiting on a port's descriptor (before it is closed)."""
        if self._selector is not None:
            self._selector.unregister(fd)

    # --------------------------------------------------------------- private

    def _begin(self, board: LoopBoard) -> None:
        self._boards.append(board)
        self._guarded(board, board.begin)

    def _end(self, board: LoopBoard, error: Exception | None) -> None:
        if board in self._boards:
            self._boards.remove(board)
            self._deadlines.pop(id(board), None)
            board.end(error)

    def _guarded(self, board: LoopBoard, work: Callable[..., None], *args: object) -> None:
        """Run one board's work; an error ends that board (handed the error), not the loop."""
        try:
            work(*args)
        except Exception as exc:  # handed to the board's owner, which reports or raises it
            self._end(board, exc)

    def _run_work(self, work: object) -> None:
        if not callable(work):
            raise ProgrammingError(f"not work for the loop: {work!r}")
        work()

    def _stalled(self, since: float, until: float) -> None:
        self._deadlines.clear()
        for board in list(self._boards):
            if not board.done:
                self._guarded(board, board.on_stall, since, until)

    def _hand_over(self, item: _Item) -> None:
        self._handed_over.put(item)
        self._wake_up()

    @contextmanager
    def _opened(self) -> Iterator[None]:
        """The selector and the wake-up pipe, for as long as the loop runs."""
        with selectors.DefaultSelector() as selector:
            wake_up_reader, wake_up_writer = os.pipe()
            try:
                for fd in (wake_up_reader, wake_up_writer):
                    os.set_blocking(fd, False)
                selector.register(wake_up_reader, selectors.EVENT_READ)
                self._selector = selector
                with self._wake_up_lock:
                    self._wake_up_fd = wake_up_writer
                self._wake_up()  # anything put before the loop existed is taken at once
                yield
            finally:
                with self._wake_up_lock:
                    self._wake_up_fd = None
                self._selector = None
                os.close(wake_up_reader)
                os.close(wake_up_writer)

    def _take_handed_over(self, wake_up_reader: int) -> list[_Item]:
        # Empty the pipe before the queue: a put after this read writes a fresh byte.
        with suppress(BlockingIOError):
            os.read(wake_up_reader, self._WAKE_UP_DRAIN)
        items: list[_Item] = []
        while True:
            try:
                items.append(self._handed_over.get_nowait())
            except queue.Empty:
                return items

    def _wake_up(self) -> None:
        with self._wake_up_lock:
            if self._wake_up_fd is None:
                return
            with suppress(BlockingIOError):  # a full pipe: the loop is due to wake up anyway
                os.write(self._wake_up_fd, b"\0")

    def _open_selector(self) -> selectors.BaseSelector:
        if self._selector is None:
            raise ProgrammingError("the referee's event loop is not running")
        return self._selector


def _mask(writes: bool) -> int:
    return selectors.EVENT_READ | (selectors.EVENT_WRITE if writes else 0)


@contextmanager
def stop_signals(request_stop: Callable[[str], None]) -> Iterator[None]:
    """SIGTERM, SIGINT and SIGHUP ask for an orderly stop while the block runs.

    Only the main thread can take signals; elsewhere (a test) the caller's owner
    handles them.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        request_stop(f"received {signal.Signals(signum).name}")

    previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
