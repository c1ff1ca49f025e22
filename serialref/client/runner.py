"""``serialref client``: a player on a serial port, until the referee disconnects.

One thread does everything the session needs: it waits on the port's event queue with
a timeout equal to the session's next deadline (so an idle client uses no CPU), feeds
each line to the :class:`~serialref.client.session.PlayerSession`, lets the player
think, and writes the answer. The port's reader thread only frames lines.

When the line goes away (USB unplugged, the far end hung up) the same port is opened
again with a growing pause (0.2 s doubling to 5 s) until it is back, and the client
signs on again; the referee answers with its restore (PROTOCOL.md 6: reset, inform, one
execute per move), which rebuilds the session's game with its history.

The client's own log (``log_path``, else stderr) shows every line in and out with a
timestamp, escaped, and everything the session had to ignore.
"""

from __future__ import annotations

import logging
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from serialref.client.players import Player
from serialref.client.session import PlayerSession, SessionOutput
from serialref.errors import LineLostError, PortOpenError, RecorderError, escape
from serialref.link import LineReceived, LinkEvent, LinkLost, MalformedLineReceived, PortLink
from serialref.transport import PortSettings, SerialTransport

__all__ = [
    "EXIT_DISCONNECTED",
    "EXIT_STOPPED",
    "REOPEN_FIRST_PAUSE",
    "REOPEN_MAX_PAUSE",
    "run_client",
]

LOGGER = logging.getLogger(__name__)

EXIT_DISCONNECTED = 0
"""The referee sent ``disconnect``: the event is over."""

EXIT_STOPPED = 0
"""SIGTERM or SIGINT: the client signed off (if the line allowed) and stopped.

Zero as well: being stopped by the operator or a service manager is a normal end,
and the referee records the sign-off in its own journal.
"""

REOPEN_FIRST_PAUSE = 0.2
"""Seconds before the first attempt to reopen a lost port."""

REOPEN_MAX_PAUSE = 5.0
"""The pause between reopen attempts doubles up to this many seconds."""

_LOG_FORMAT = "%(asctime)s.%(msecs)03d %(levelname)s %(name)s: %(message)s"
_LOG_DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
_CLIENT_LOGGER = "serialref.client"


def run_client(
    url: str,
    player: Player,
    *,
    settings: PortSettings = PortSettings(),  # noqa: B008 - frozen, so sharing is safe
    newline: bytes = b"\r\n",
    name: str | None = None,
    log_path: Path | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Play on the port ``url`` until the referee disconnects; returns the exit code.

    ``name`` goes into the sign-on's ``tcsi`` (default: the player's own name). A
    port that cannot be opened at the start raises
    :class:`~serialref.errors.PortOpenError`; later the client waits for it instead.
    The player is closed on the way out, whatever happens. A log file that cannot be
    written raises :class:`~serialref.errors.RecorderError` before the port is opened.
    """
    try:
        with _client_log(log_path), _stop_signals_interrupt():
            client = _Client(
                url, player, settings=settings, newline=newline, name=name, clock=clock
            )
            return client.run()
    finally:
        player.close()


class _Client:
    """The event loop around one session and the port link it currently speaks on."""

    def __init__(
        self,
        url: str,
        player: Player,
        *,
        settings: PortSettings,
        newline: bytes,
        name: str | None,
        clock: Callable[[], float],
    ) -> None:
        self._url = url
        self._settings = settings
        self._newline = newline
        self._clock = clock
        self._session = PlayerSession(player, name=name, clock=clock)
        self._link: PortLink | None = None
        self._events: queue.SimpleQueue[LinkEvent] = queue.SimpleQueue()

    def run(self) -> int:
        self._connect()
        try:
            self._send(self._session.sign_on())
            while not self._session.finished:
                self._handle(self._next_event())
            return EXIT_DISCONNECTED
        except KeyboardInterrupt:
            LOGGER.warning("stopped by a signal: signing off")
            self._sign_off()
            return EXIT_STOPPED
        finally:
            self._disconnect()

    def _handle(self, event: LinkEvent | None) -> None:
        if event is None:
            self._send(self._session.deadline_passed())
        elif isinstance(event, LineReceived):
            LOGGER.debug("<- %s", escape(event.text))
            self._send(self._session.line_received(event.text))
        elif isinstance(event, MalformedLineReceived):
            LOGGER.warning("<- ignored a malformed line (%s): %s", event.reason, event.preview)
        else:
            self._reconnect(event.reason)

    def _next_event(self) -> LinkEvent | None:
        """The next event, or None when the session's deadline came first."""
        deadline = self._session.next_deadline()
        timeout = None if deadline is None else max(0.0, deadline - self._clock())
        try:
            return self._events.get(timeout=timeout)
        except queue.Empty:
            return None

    def _send(self, output: SessionOutput) -> None:
        for line in output.lines:
            if self._link is None:
                return
            LOGGER.debug("-> %s", escape(line))
            try:
                self._link.send_line(line)
            except LineLostError as exc:
                # The reader sees the same hang-up, but a write can notice first; either
                # way one LinkLost on this link's queue leads to one reconnect.
                self._events.put(LinkLost(self._url, str(exc), self._clock()))
                return

    def _connect(self) -> None:
        transport = SerialTransport.open(self._url, self._settings)
        # A fresh queue per link: whatever the old reader still reports is dropped with it.
        self._events = queue.SimpleQueue()
        self._link = PortLink(
            self._url, transport, self._events, newline=self._newline, clock=self._clock
        )
        self._link.start()

    def _disconnect(self) -> None:
        if self._link is not None:
            self._link.close()
            self._link = None

    def _reconnect(self, reason: str) -> None:
        """Wait for the port to come back, then sign on again (the referee restores the game)."""
        LOGGER.error("line lost (%s): reopening %r until it is back", reason, self._url)
        self._disconnect()
        pause = REOPEN_FIRST_PAUSE
        while True:
            time.sleep(pause)
            try:
                self._connect()
            except PortOpenError as exc:
                LOGGER.info("%s; next attempt in %.1f s", exc, min(pause * 2, REOPEN_MAX_PAUSE))
                pause = min(pause * 2, REOPEN_MAX_PAUSE)
                continue
            LOGGER.warning("line back on %r: signing on again", self._url)
            self._send(self._session.sign_on())
            return

    def _sign_off(self) -> None:
        try:
            self._send(self._session.sign_off())
        except KeyboardInterrupt:
            LOGGER.warning("stopped again while signing off: leaving without it")


@contextmanager
def _client_log(log_path: Path | None) -> Iterator[None]:
    """Send the client's whole log, debug level included, to ``log_path``; stderr gets
    what ``--log-level`` asks for, as with every verb (the transcript with ``debug``).

    The client logger stops propagating meanwhile, so the root handlers (set up by the
    command line) do not print its records a second time.
    """
    logger = logging.getLogger(_CLIENT_LOGGER)
    formatter = logging.Formatter(_LOG_FORMAT, _LOG_DATE_FORMAT)
    handlers: list[logging.Handler] = []
    transcript: logging.Handler
    if log_path is None:
        transcript = logging.StreamHandler(sys.stderr)
    else:
        try:
            transcript = logging.FileHandler(log_path, encoding="ascii", errors="backslashreplace")
        except OSError as exc:
            raise RecorderError(
                f"cannot write the client log {str(log_path)!r}: {exc.strerror or exc}"
            ) from exc
    stderr_level = logging.getLogger().getEffectiveLevel()
    transcript.setLevel(stderr_level if log_path is None else logging.DEBUG)
    handlers.append(transcript)
    if log_path is not None:
        operator = logging.StreamHandler(sys.stderr)
        operator.setLevel(stderr_level)
        handlers.append(operator)
    saved = (logger.level, logger.propagate)
    for handler in handlers:
        handler.setFormatter(formatter)
        logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        yield
    finally:
        for handler in handlers:
            logger.removeHandler(handler)
            handler.close()
        logger.setLevel(saved[0])
        logger.propagate = saved[1]


@contextmanager
def _stop_signals_interrupt() -> Iterator[None]:
    """Make SIGTERM behave like SIGINT (KeyboardInterrupt), so both sign off cleanly.

    Signal handlers can only be set on the main thread; elsewhere (tests running the
    client in a thread) the process's own handling stays as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)
