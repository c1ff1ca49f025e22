"""``serialref client``: a player on a serial port, match after match.

One asyncio event loop does everything. The port is read on the loop itself when its
transport has a file descriptor (device paths and ptys: ``loop.add_reader``, so a line
goes from the port to the session with no thread hand-over); backends that only
pyserial can read (``socket://``, ``rfc2217://``, ``loop://``) get the link's reader
thread, whose events come over with ``call_soon_threadsafe``. The player thinks in a
task on the same loop, so the port is read while an engine searches: a ``conclude``,
``reset``, ``disconnect`` or newer ``respond`` cancels the search at once, and the
session drops any answer that no longer belongs to the referee's current request.
python-chess's engine API is asyncio, so driving it on the client's own loop costs no
thread hand-over per call (``SimpleEngine`` runs its loop on a second thread and pays
two thread switches per call); a UCI engine's lines during a search within a game are
read on a thread of their own, which hands the loop one event per move
(:mod:`serialref.client.searchreader`). The one blocking call is the drained
write of a record, which at 9600 baud takes about 0.1 s on a real line: nothing else
needs the loop meanwhile, since the engine's output waits in its pipe.

The player thinks on one request at a time: a search that was cancelled is wound down
(the engine told to stop and its late answer awaited) before the next one starts.

When the line goes away (USB unplugged, the far end hung up) the same port is opened
again with a growing pause (0.2 s doubling to 5 s) until it is back, and the client
signs on again; the referee answers with its restore (PROTOCOL.md 6: reset, inform, one
execute per move), which rebuilds the session's game with its history.

The client stays on its line when the referee disconnects, and signs on every 5 s
until a referee answers (PROTOCOL.md 4): the next pairing of an event, or a referee
started again after an orderly stop, finds it there. With ``once`` it ends at
``disconnect`` instead, as a player that the event itself starts and ends does.

Logging: the client logs what a person wants at INFO (signed on, each game started
and ended, engine restarts) and the transcript of every line in and out, timestamped
and escaped, at DEBUG. With ``log_path`` the whole DEBUG transcript goes to that file
while the configured level still governs stderr.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from serialref.client.clocks import SAFETY_MARGIN
from serialref.client.players import Player, ThinkRequest
from serialref.client.session import PlayerSession, SessionOutput
from serialref.errors import EngineError, LineLostError, PortOpenError, RecorderError, escape
from serialref.recorders.filemode import private_file
from serialref.wire.backoff import Backoff
from serialref.wire.link import LineRead, LinkEvent, MalformedLineRead, PortLink
from serialref.wire.transport import PortSettings, SerialTransport

__all__ = [
    "EXIT_DISCONNECTED",
    "EXIT_STOPPED",
    "REPLY_BYTES",
    "run_client",
]

LOGGER = logging.getLogger(__name__)

EXIT_DISCONNECTED = 0
"""The referee sent ``disconnect`` to a client that plays ``once``."""

EXIT_STOPPED = 0
"""SIGTERM or SIGINT: the client signed off (if the line allowed) and stopped.

Zero as well: being stopped by the operator or a service manager is a normal end,
and the referee records the sign-off in its own journal.
"""

REPLY_BYTES = 256
"""A long ``reply`` (position, analysis, a principal variation) with its line end."""

_SHUTDOWN_GRACE = 5.0
"""Seconds a cancelled search may take to wind down when the client stops."""

_LOG_FORMAT = "%(asctime)s.%(msecs)03d %(levelname)s %(name)s: %(message)s"
_LOG_DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
_LOGGED_PACKAGES = ("serialref", "chess.engine")


def run_client(
    url: str,
    player: Player,
    *,
    settings: PortSettings = PortSettings(),  # noqa: B008 - frozen, so sharing is safe
    newline: bytes = b"\r\n",
    name: str | None = None,
    log_path: Path | None = None,
    clock: Callable[[], float] = time.monotonic,
    token: str | None = None,
    once: bool = False,
) -> int:
    """Play on the port ``url`` until stopped by a signal; returns the exit code.

    With ``once`` the client returns when the referee disconnects; without, it stays on
    the line for the referee's next match. ``name`` goes into the sign-on's ``tcsi``
    (default: the player's own name), ``token`` into its ``token`` operation (a TCP
    seat's). The player is started before the port is opened, so a missing engine fails first. A
    port that cannot be opened at the start raises
    :class:`~serialref.errors.PortOpenError`; later the client waits for it instead.
    The player is closed on the way out, whatever happens. A log file that cannot be
    written raises :class:`~serialref.errors.RecorderError` before anything starts.
    """
    return asyncio.run(
        _play(url, player, settings=settings, newline=newline, name=name, log_path=log_path,
              clock=clock, token=token, once=once)
    )


async def _play(
    url: str,
    player: Player,
    *,
    settings: PortSettings,
    newline: bytes,
    name: str | None,
    log_path: Path | None,
    clock: Callable[[], float],
    token: str | None,
    once: bool,
) -> int:
    try:
        with _client_log(log_path):
            await player.start()
            client = _Client(
                url, player, settings=settings, newline=newline, name=name, clock=clock,
                token=token, once=once,
            )
            return await client.run()
    finally:
        await player.close()


class _Client:
    """The session, the port link it currently speaks on, and the player's thinking."""

    def __init__(
        self,
        url: str,
        player: Player,
        *,
        settings: PortSettings,
        newline: bytes,
        name: str | None,
        clock: Callable[[], float],
        token: str | None = None,
        once: bool = False,
    ) -> None:
        self._url = url
        self._token = token
        self._once = once
        self._player = player
        self._settings = settings
        self._newline = newline
        self._clock = clock
        self._name = name if name is not None else player.name
        self._session: PlayerSession | None = None
        self._loop = asyncio.get_running_loop()
        self._done: asyncio.Future[bool] = self._loop.create_future()
        self._link: PortLink | None = None
        self._watched_fd: int | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._thinking: asyncio.Task[None] | None = None
        # Every task of the player's (thinking, getting ready) until it ends.
        self._player_tasks: set[asyncio.Task[None]] = set()
        self._player_turn = asyncio.Lock()
        self._sign_on_timer: asyncio.TimerHandle | None = None

    async def run(self) -> int:
        """Sign on, then play until a stop signal (sign off), or ``disconnect`` with ``once``."""
        self._connect()
        with self._stop_signals():
            try:
                self._apply(self._active_session().sign_on())
                stopped_by_signal = await self._done
                if stopped_by_signal:
                    LOGGER.warning("stopped by a signal: signing off")
                    self._apply(self._active_session().sign_off())
                return EXIT_STOPPED if stopped_by_signal else EXIT_DISCONNECTED
            finally:
                await self._wind_down()

    # -- events ---------------------------------------------------------------------

    def _handle(self, link: PortLink, event: LinkEvent) -> None:
        """One event of ``link``; events of a link already replaced are dropped."""
        if link is not self._link:
            return
        if isinstance(event, LineRead):
            if LOGGER.isEnabledFor(logging.DEBUG):
                LOGGER.debug("<- %s", escape(event.text))
            self._apply(self._active_session().line_received(event.text, event.at))
        elif isinstance(event, MalformedLineRead):
            LOGGER.warning("<- ignored a malformed line (%s): %s", event.reason, event.preview)
        else:
            self._line_lost(event.reason)

    def _apply(self, output: SessionOutput) -> None:
        """Carry out what the session asks, in its order: stop, send, prepare, think, finish."""
        if output.stop:
            self._stop_thinking()
        for line in output.lines:
            self._send(line)
        if output.new_game is not None:
            self._keep(self._loop.create_task(self._get_ready(output.new_game)))
        if output.lines and output.think is None:
            # The referee has its answer: what the next record needs is worked out now,
            # while the opponent thinks, rather than when that record has arrived.
            self._loop.call_soon(self._active_session().prepare)
        if output.think is not None:
            self._thinking = self._keep(self._loop.create_task(self._think(output.think)))
            # What the reply needs is worked out while the player thinks rather than
            # once its answer has come. Callbacks run in the order they were queued:
            # queued from behind the think task's first step, the preparation comes
            # after the step that task queues to start the engine's search.
            self._loop.call_soon(self._loop.call_soon, self._active_session().prepare)
        if output.finished and not self._done.done():
            self._done.set_result(False)
        self._schedule_sign_on_retry()

    def _send(self, line: str) -> None:
        link = self._link
        if link is None:
            return
        if LOGGER.isEnabledFor(logging.DEBUG):  # the transcript keeps no seat's token
            shown = line.replace(self._token, "<token>") if self._token else line
            LOGGER.debug("-> %s", escape(shown))
        try:
            link.send_line(line)
        except LineLostError as exc:
            # The reader sees the same hang-up, but a write can notice first; either way
            # the link is replaced once, and its later events are dropped.
            self._line_lost(str(exc))

    def _schedule_sign_on_retry(self) -> None:
        if self._sign_on_timer is not None:
            self._sign_on_timer.cancel()
            self._sign_on_timer = None
        deadline = self._active_session().next_deadline()
        if deadline is not None and not self._done.done():
            delay = max(0.0, deadline - self._clock())
            self._sign_on_timer = self._loop.call_later(delay, self._sign_on_retry_due)

    def _sign_on_retry_due(self) -> None:
        self._sign_on_timer = None
        self._apply(self._active_session().deadline_passed())

    def _active_session(self) -> PlayerSession:
        if self._session is None:
            self._session = PlayerSession(
                self._name, port=self._url, once=self._once, clock=self._clock,
                safety_margin=self._safety_margin(), token=self._token,
            )
        return self._session

    def _safety_margin(self) -> float:
        """Jitter and engine stop time, plus a respond's and a reply's line time on a UART."""
        link = self._link
        if link is None or not link.transport.is_serial_line:
            return SAFETY_MARGIN
        return SAFETY_MARGIN + self._settings.transmission_time(2 * REPLY_BYTES)

    # -- thinking -------------------------------------------------------------------

    def _keep(self, task: asyncio.Task[None]) -> asyncio.Task[None]:
        """Hold ``task`` (the loop keeps only weak references) until it ends."""
        self._player_tasks.add(task)
        task.add_done_callback(self._player_tasks.discard)
        return task

    async def _get_ready(self, game: object) -> None:
        """Let the player prepare a new game while the referee's reset delay runs."""
        async with self._player_turn:
            try:
                await self._player.new_game(game)
            except EngineError as exc:
                LOGGER.warning("the player could not get ready for the new game: %s", exc)

    async def _think(self, request: ThinkRequest) -> None:
        """Let the player answer ``request``, one search at a time; recover a failure."""
        async with self._player_turn:
            try:
                decision = await self._player.think(request)
            except EngineError as exc:
                await self._recover(request, str(exc))
                return
            except Exception as exc:
                # A bug of ours: the referee hears of a fault rather than waiting for a
                # reply that cannot come, and the log has the traceback.
                LOGGER.exception("the player failed unexpectedly")
                self._apply(self._active_session().player_lost(f"internal error: {exc!r}"))
                return
            self._apply(self._active_session().decision_made(request, decision))

    async def _recover(self, request: ThinkRequest, reason: str) -> None:
        LOGGER.error("player failed: %s: restarting it", reason)
        try:
            await self._player.restart()
        except EngineError as exc:
            self._apply(self._active_session().player_lost(f"{reason}; restart failed: {exc}"))
            return
        self._apply(self._active_session().player_restarted(request))

    def _stop_thinking(self) -> None:
        thinking = self._thinking
        if thinking is not None and thinking is not asyncio.current_task():
            thinking.cancel()

    async def _wind_down(self) -> None:
        """Cancel any search, let it end, close the port; the player is closed by the caller."""
        if self._sign_on_timer is not None:
            self._sign_on_timer.cancel()
        if self._reconnecting is not None:
            self._reconnecting.cancel()
            with suppress(asyncio.CancelledError):
                await self._reconnecting
        self._stop_thinking()
        if self._player_tasks:
            await asyncio.wait(self._player_tasks, timeout=_SHUTDOWN_GRACE)
        self._disconnect()

    # -- the port -------------------------------------------------------------------

    def _connect(self) -> None:
        transport = SerialTransport.open(self._url, self._settings)
        sink = _LoopSink(self._loop, self._handle)
        link = PortLink(self._url, transport, sink, newline=self._newline, clock=self._clock)
        sink.link = link
        self._link = link
        fd = link.fileno()
        if fd is None:
            link.start()
        else:
            self._loop.add_reader(fd, self._read_port, link)
            self._watched_fd = fd

    def _read_port(self, link: PortLink) -> None:
        for event in link.read_events():
            self._handle(link, event)

    def _disconnect(self) -> None:
        if self._watched_fd is not None:
            self._loop.remove_reader(self._watched_fd)
            self._watched_fd = None
        if self._link is not None:
            self._link.close()
            self._link = None

    def _line_lost(self, reason: str) -> None:
        if self._link is None or self._done.done():
            return
        LOGGER.error("line lost (%s): reopening %r until it is back", reason, self._url)
        self._disconnect()
        self._reconnecting = self._loop.create_task(self._reconnect())

    async def _reconnect(self) -> None:
        """Wait for the port to come back, then sign on again (the referee restores the game)."""
        backoff = Backoff()
        pause = backoff.pause()
        while True:
            await asyncio.sleep(pause)
            try:
                self._connect()
            except PortOpenError as exc:
                pause = backoff.pause()
                LOGGER.info("%s; next attempt in %.1f s", exc, pause)
                continue
            LOGGER.warning("line back on %r: signing on again", self._url)
            self._reconnecting = None
            self._apply(self._active_session().sign_on())
            return

    @contextmanager
    def _stop_signals(self) -> Iterator[None]:
        """SIGTERM and SIGINT end the run with a sign-off (main thread only).

        Elsewhere (tests running the client in a thread) the process's own handling of
        signals stays as it is.
        """
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        for signum in (signal.SIGTERM, signal.SIGINT):
            self._loop.add_signal_handler(signum, self._stop_signal_received)
        try:
            yield
        finally:
            for signum in (signal.SIGTERM, signal.SIGINT):
                self._loop.remove_signal_handler(signum)

    def _stop_signal_received(self) -> None:
        if not self._done.done():
            self._done.set_result(True)


class _LoopSink:
    """Where a link's reader thread puts its events: handed to the loop's thread."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, handle: Callable[[PortLink, LinkEvent], None]
    ) -> None:
        self._loop = loop
        self._handle = handle
        self.link: PortLink | None = None

    def put(self, item: LinkEvent, /) -> None:
        """Called on the reader thread; the event is handled on the loop."""
        link = self.link
        if link is not None and not self._loop.is_closed():
            with suppress(RuntimeError):  # the loop closed in between: nothing to do
                self._loop.call_soon_threadsafe(self._handle, link, item)


@contextmanager
def _client_log(log_path: Path | None) -> Iterator[None]:
    """With ``log_path``, the whole transcript (DEBUG) goes to that file.

    The loggers stop propagating meanwhile and hand the root handlers only what is at
    or above the level the command line configured, so stderr shows what it would
    without the file and the transcript is not printed twice.
    """
    if log_path is None:
        yield
        return
    try:
        open(log_path, "ab", opener=private_file).close()  # made 0640 before logging opens it
        transcript = logging.FileHandler(log_path, encoding="ascii", errors="backslashreplace")
    except OSError as exc:
        raise RecorderError(
            f"cannot write the client log {str(log_path)!r}: {exc.strerror or exc}"
        ) from exc
    threshold = logging.getLogger().getEffectiveLevel()
    transcript.setFormatter(logging.Formatter(_LOG_FORMAT, _LOG_DATE_FORMAT))
    forward = _ForwardToRoot(threshold)
    loggers = [logging.getLogger(name) for name in _LOGGED_PACKAGES]
    saved = [(logger.level, logger.propagate) for logger in loggers]
    for logger in loggers:
        logger.addHandler(transcript)
        logger.addHandler(forward)
        logger.propagate = False
    # The package's own transcript is what the file is for; python-chess's per-line
    # engine dialogue costs CPU on every line, so it is there only when asked for.
    loggers[0].setLevel(logging.DEBUG)
    try:
        yield
    finally:
        for logger, (level, propagate) in zip(loggers, saved, strict=True):
            logger.removeHandler(transcript)
            logger.removeHandler(forward)
            logger.setLevel(level)
            logger.propagate = propagate
        transcript.close()


class _ForwardToRoot(logging.Handler):
    """Passes records at or above the configured level on to the root logger's handlers."""

    def emit(self, record: logging.LogRecord) -> None:
        """Hand ``record`` to the root logger (whose handlers format it as usual)."""
        logging.getLogger().handle(record)
