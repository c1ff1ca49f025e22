"""A port as a stream of line events: one reader thread per port, writes from the caller.

The referee owns every state machine on one thread and waits on a single queue with a
timeout equal to its next deadline. Each port therefore gets a thread that does nothing
but block in ``read()``, frame the bytes and put past-tense events on that queue; it
never touches referee state, so no locks are needed above this layer.

A line's time of arrival is taken once per chunk, as soon as ``read()`` returns, because
a move's clock stops at the arrival of the reply's line end (PROTOCOL.md section 5).
"""

from __future__ import annotations

import logging
import queue
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

from serialref.errors import ConfigError, FramingError, LineLostError, SerialrefError, escape
from serialref.framing import MAX_LINE, Line, LineFramer
from serialref.transport import SerialTransport

__all__ = ["LineReceived", "LinkEvent", "LinkLost", "MalformedLineReceived", "PortLink"]

LOGGER = logging.getLogger(__name__)

_NEWLINES = (b"\r\n", b"\n")
_PRINTABLE_LINE = re.compile(r"[\x20-\x7e]+")


@dataclass(frozen=True, slots=True)
class LineReceived:
    """A printable line arrived on ``port``; ``at`` is the clock when its line end arrived."""

    port: str
    text: str
    at: float


@dataclass(frozen=True, slots=True)
class MalformedLineReceived:
    """A line that must be ignored (too long or not printable); ``preview`` is escaped."""

    port: str
    reason: str
    preview: str
    at: float


@dataclass(frozen=True, slots=True)
class LinkLost:
    """The line went away (hang-up, unplug); the reader has ended and sends nothing more."""

    port: str
    reason: str
    at: float


LinkEvent = LineReceived | MalformedLineReceived | LinkLost


class PortLink:
    """Reads lines from one port into a shared event queue and writes lines to it."""

    def __init__(
        self,
        port: str,
        transport: SerialTransport,
        events: queue.SimpleQueue[Any] | queue.Queue[Any],
        *,
        newline: bytes = b"\r\n",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if newline not in _NEWLINES:
            raise ConfigError("newline", f"must be CR LF or LF, not {escape(newline)!r}")
        self.port = port
        self.transport = transport
        self._events = events
        self._newline = newline
        self._clock = clock
        self._reader: threading.Thread | None = None
        self._closed = False

    def start(self) -> None:
        """Start the reader thread; events arrive on the queue until :meth:`close` or a hang-up."""
        if self._reader is not None:
            raise SerialrefError(f"the link on port {self.port!r} is already started")
        self._reader = threading.Thread(
            target=self._read_lines, name=f"serialref-reader-{self.port}", daemon=True
        )
        self._reader.start()

    def send_line(self, text: str) -> float:
        """Send one line with the configured line end; returns the time it had left the port.

        Only a non-empty line of printable ASCII may be sent: the wire profile forbids
        anything else, and some clients end their session on the first line they cannot
        read, so a bad line here is our bug and is refused before it reaches the wire.
        """
        if len(text) > MAX_LINE or not _PRINTABLE_LINE.fullmatch(text):
            raise FramingError(
                f"refusing to send {text!r}: a line must be 1 to {MAX_LINE} printable ASCII"
                " characters",
                port=self.port,
                raw=text,
            )
        return self.transport.write(text.encode("ascii") + self._newline)

    def close(self) -> None:
        """Stop the reader, wait for it, close the port. Idempotent; fine if never started."""
        if self._closed:
            return
        self._closed = True
        self.transport.cancel_read()
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join()
        self.transport.close()

    def _read_lines(self) -> None:
        framer = LineFramer()
        try:
            while data := self.transport.read():
                at = self._clock()
                for event in framer.feed(data):
                    if isinstance(event, Line):
                        self._events.put(LineReceived(self.port, event.text, at))
                    else:
                        LOGGER.warning(
                            "port %s: ignored a malformed line: %s: %s",
                            self.port,
                            event.reason,
                            event.preview,
                        )
                        self._events.put(
                            MalformedLineReceived(self.port, event.reason, event.preview, at)
                        )
        except LineLostError as exc:
            LOGGER.warning("port %s: %s", self.port, exc)
            self._events.put(LinkLost(self.port, str(exc), self._clock()))
        except Exception as exc:
            # A bug here must not leave the referee waiting forever for a line that
            # cannot come: report the port as lost, with the traceback in the log.
            LOGGER.exception("port %s: reader failed", self.port)
            self._events.put(LinkLost(self.port, f"reader failed: {exc!r}", self._clock()))

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
