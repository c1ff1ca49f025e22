"""A TCP server that feeds the audience off the referee's thread (Style 12, the web board).

The referee hands each event to :meth:`FeedServer.handle`, which only puts it on a queue
and wakes the feed's own thread: formatting and sending cost the referee nothing but
that. The feed's thread turns the event into bytes once (:class:`Feed`) and appends
them to every subscriber's outgoing buffer. The buffers are bounded: a client that does
not read fills its buffer and is dropped, and so is one that takes nothing of what waits
for it for :data:`WRITE_TIMEOUT` seconds, so a stuck observer costs bounded memory and
never slows the match, nor the other observers. Clients are bounded in number, in all
and from one host, and accepting goes through an
:class:`~serialref.wire.acceptor.Acceptor`: a full descriptor table pauses the listener
instead of spinning on it, and the referee's own descriptors are never taken.

An event's feed serves every board: each board gets a listener of its own
(:meth:`FeedServer.board`), whose events reach the feed with the board's number, and
whose closing tells the feed the board has ended.

A feed either talks at once (Style 12: the position, then a line per move) or first
reads one request (HTTP): :meth:`Feed.answer` then says what to send and whether the
client stays subscribed (the web board's event stream) or is closed (its page).
"""

from __future__ import annotations

import logging
import math
import os
import queue
import selectors
import socket
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol

from serialref.errors import ControlError
from serialref.happenings import MatchEvent
from serialref.wire.acceptor import AUDIENCE_RESERVE, Acceptor
from serialref.wire.address import Address, format_address

__all__ = [
    "MAX_BUFFERED",
    "MAX_CLIENTS",
    "MAX_CLIENTS_PER_HOST",
    "REQUEST_TIMEOUT",
    "WRITE_TIMEOUT",
    "Feed",
    "FeedServer",
]

LOGGER = logging.getLogger(__name__)

MAX_BUFFERED = 256 * 1024
"""Bytes waiting for one client beyond which it is dropped (thousands of Style 12 lines)."""

MAX_CLIENTS = 512
"""Clients served at once; more are turned away."""

MAX_CLIENTS_PER_HOST = 128
"""Clients from one host served at once: one host cannot take every place."""

WRITE_TIMEOUT = 10.0
"""Seconds a client may take nothing while bytes wait for it before it is dropped."""

MAX_QUEUED = 4096
"""Events waiting for the feed's thread beyond which new ones are dropped (and counted)."""

_SEND_BUFFER = 64 * 1024  # the kernel's share of a client's backlog, bounded too

_MAX_REQUEST = 8192

REQUEST_TIMEOUT = 10.0
"""Seconds a web client has to send its request; a silent one would hold a slot for good."""

_BATCH = 0.02
"""Seconds the feed's thread lets events gather after it sent some: at the pace of
instant players it then wakes once for many moves, not once a move, and takes the
interpreter from the referee's thread that much less often."""


class Feed(Protocol):
    """What a feed sends: per event, to a new client, and (HTTP) in answer to a request."""

    wants_request: bool
    """Whether a client sends a request first (HTTP) before it is answered."""

    events: tuple[type, ...]
    """The events it follows; the referee's thread does not even queue the others."""

    min_interval: float
    """Seconds between two whole states sent for ``update``'s ``None`` (coalesced)."""

    def update(self, event: MatchEvent, board: int | None = None) -> bytes | None:
        """The bytes every subscriber gets for ``event``; ``None``: the whole state, soon.

        ``board`` is the event's board the event comes from (``None``: the lone match).
        ``None`` lets a feed whose every message is the whole state (the web board) send
        one per :attr:`min_interval` however fast the moves come, the latest one.
        """
        ...

    def leave(self, board: int) -> bytes | None:
        """The board has ended: what subscribers get (as for :meth:`update`)."""
        ...

    def greeting(self) -> bytes:
        """What a new subscriber gets at once: the game as it stands."""
        ...

    def answer(self, request: bytes) -> tuple[bytes, bool]:
        """The response to ``request`` and whether the client then subscribes."""
        ...

    def farewell(self) -> bytes:
        """What every subscriber is sent as the feed closes: the page learns it is over."""
        ...


_Item = tuple[int | None, MatchEvent | None]
"""An event of a board (``None``: the lone match), or ``(board, None)``: the board ended."""

_END: _Item = (None, None)
"""Queued by :meth:`FeedServer.close`: the feed's thread ends."""


class _BoardListener:
    """One board's events into an event-wide feed (a ``MatchListener``)."""

    def __init__(self, server: FeedServer, number: int) -> None:
        self._server = server
        self._number = number

    def handle(self, event: MatchEvent) -> None:
        self._server.queue_event(self._number, event)

    def close(self) -> None:
        """The board has ended: the feed stops showing it."""
        self._server.queue_event(self._number, None)


@dataclass
class _Client:
    """A connected client: what it is owed, its request (HTTP), and its deadlines."""

    connection: socket.socket
    subscribed: bool
    pending: bytearray = field(default_factory=bytearray)
    request: bytearray = field(default_factory=bytearray)
    host: str = ""
    closing: bool = False  # close once ``pending`` is sent (a page, not a stream)
    request_due: float = math.inf  # dropped if its request is not whole by then
    waiting_since: float = math.inf  # since when bytes wait for it with none taken

    def deadline(self) -> float:
        """When it is dropped unless it sends its request or takes what waits for it."""
        return min(self.request_due, self.waiting_since + WRITE_TIMEOUT)


class FeedServer:
    """Serves one :class:`Feed` at ``address`` on a thread of its own, as a match listener."""

    def __init__(self, feed: Feed, address: Address, *, name: str) -> None:
        self._feed = feed
        self._name = name
        self._events: queue.Queue[_Item] = queue.Queue(MAX_QUEUED)
        self._followed = feed.events
        self.dropped_events = 0
        self._state_due: float | None = None  # when the coalesced whole state goes out
        self._state_sent = -math.inf
        self._published = -math.inf  # when the queue was last emptied
        self._clients: dict[int, _Client] = {}
        try:
            self._listener = socket.create_server(
                (address.host, address.port), backlog=64, reuse_port=False
            )
        except OSError as exc:
            raise ControlError(
                f"{name}: cannot listen on {address}: {exc.strerror or exc}"
            ) from exc
        if feed.wants_request:  # handed over once the request has come: silent ones cost nothing
            self._listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT,
                                      math.ceil(REQUEST_TIMEOUT))  # fmt: skip
        self._acceptor = Acceptor(self._listener, name, reserve=AUDIENCE_RESERVE, logger=LOGGER)
        host, port = self._listener.getsockname()[:2]
        self.address = Address(host, port)
        self._wake_reader, self._wake_writer = os.pipe()
        os.set_blocking(self._wake_writer, False)
        os.set_blocking(self._wake_reader, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._wake_reader, selectors.EVENT_READ)
        self._thread = threading.Thread(target=self._run, name=name)
        self._thread.start()
        LOGGER.info("%s: serving on %s", name, format_address(host, port))

    def __enter__(self) -> FeedServer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def clients(self) -> int:
        """Clients connected now (read from another thread: a moment's count)."""
        return len(self._clients)

    def handle(self, event: MatchEvent) -> None:
        """Queue ``event`` of the lone match for the feed's thread; all the referee pays."""
        self.queue_event(None, event)

    def board(self, number: int) -> _BoardListener:
        """The listener of an event's board ``number``: closing it says the board ended."""
        return _BoardListener(self, number)

    def queue_event(self, board: int | None, event: MatchEvent | None) -> None:
        """Queue ``event`` of ``board`` (``None``: the board has ended) for the feed's thread.

        Should the feed's thread fall that far behind, the event is dropped rather than
        held: every feed sends whole positions, so the next move puts it right.
        """
        if event is not None and not isinstance(event, self._followed):
            return
        try:
            self._events.put_nowait((board, event))
        except queue.Full:
            self.dropped_events += 1
            return
        self._wake()

    def close(self) -> None:
        """Stop serving: every client is closed, the thread ends."""
        if not self._thread.is_alive():
            return
        self._events.put(_END)  # waits for room: the thread is taking events
        self._wake()
        self._thread.join()
        for client in list(self._clients.values()):
            self._drop(client)
        self._acceptor.log.close()
        self._selector.close()
        self._listener.close()
        os.close(self._wake_reader)
        os.close(self._wake_writer)

    # ------------------------------------------------------------- its thread

    def _wake(self) -> None:
        with suppress(BlockingIOError, OSError):
            os.write(self._wake_writer, b"\0")

    def _run(self) -> None:
        while True:
            self._watch_listener()
            due = min((c.deadline() for c in self._clients.values()), default=math.inf)
            due = min(due, self._acceptor.due())
            if self._state_due is not None:
                due = min(due, self._state_due)
            timeout = None if math.isinf(due) else max(0.0, due - time.monotonic())
            ready_keys = self._selector.select(timeout)
            self._drop_late_clients()
            self._acceptor.log.settle()
            if self._state_due is not None and time.monotonic() >= self._state_due:
                self._state_due = None
                self._state_sent = time.monotonic()
                self._broadcast(self._feed.greeting())
            for key, ready in ready_keys:
                if key.fileobj is self._listener:
                    self._accept()
                elif key.fileobj == self._wake_reader:
                    gathering = self._published + _BATCH - time.monotonic()
                    if gathering > 0:
                        time.sleep(gathering)
                    with suppress(BlockingIOError):
                        os.read(self._wake_reader, 4096)
                    self._published = time.monotonic()
                    if not self._publish_queued():
                        return
                else:
                    self._serve(key.data, ready)

    def _publish_queued(self) -> bool:
        """Send every queued event; False once :meth:`close` asked the thread to end."""
        while True:
            try:
                item = self._events.get_nowait()
            except queue.Empty:
                return True
            if item is _END:
                self._broadcast(self._feed.farewell())  # what fits in the socket's buffer now
                return False
            board, event = item
            try:
                if event is not None:
                    data = self._feed.update(event, board)
                else:
                    data = None if board is None else self._feed.leave(board)
            except Exception:
                LOGGER.exception("%s: could not format %r", self._name, event)
                continue
            if data is None:
                if self._state_due is None:
                    self._state_due = self._state_sent + self._feed.min_interval
            else:
                self._broadcast(data)

    def _broadcast(self, data: bytes) -> None:
        if data:
            for client in list(self._clients.values()):
                if client.subscribed:
                    self._send(client, data)

    def _watch_listener(self) -> None:
        """Watch the listener unless the acceptor pauses it (no descriptor to spare)."""
        watched = self._listener in self._selector.get_map()
        if self._acceptor.paused == watched:
            if watched:
                self._selector.unregister(self._listener)
            else:
                self._selector.register(self._listener, selectors.EVENT_READ)

    def _accept(self) -> None:
        accepted = self._acceptor.accept()
        if accepted is None:
            return
        connection, peer = accepted
        host = peer.rsplit(":", 1)[0]
        if len(self._clients) >= MAX_CLIENTS:
            connection.close()
            self._acceptor.log.note("too many clients", f"{self._name}: {MAX_CLIENTS} clients: "
                                    f"{peer} turned away")  # fmt: skip
            return
        if sum(client.host == host for client in self._clients.values()) >= MAX_CLIENTS_PER_HOST:
            connection.close()
            self._acceptor.log.note("too many from one host", f"{self._name}: "
                                    f"{MAX_CLIENTS_PER_HOST} clients from {host}: {peer} "
                                    "turned away")  # fmt: skip
            return
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _SEND_BUFFER)
        client = _Client(connection, subscribed=not self._feed.wants_request, host=host)
        if not client.subscribed:
            client.request_due = time.monotonic() + REQUEST_TIMEOUT
        self._clients[connection.fileno()] = client
        self._selector.register(connection, selectors.EVENT_READ, client)
        if client.subscribed:
            self._send(client, self._feed.greeting())

    def _drop_late_clients(self) -> None:
        """Drop the clients whose request is late or that took nothing for the write timeout."""
        now = time.monotonic()
        for client in [c for c in self._clients.values() if c.deadline() <= now]:
            self._drop(client)

    def _serve(self, client: _Client, ready: int) -> None:
        if ready & selectors.EVENT_READ:
            try:
                data = client.connection.recv(4096)
            except OSError:
                data = b""
            if not data:
                self._drop(client)
                return
            if not client.subscribed and not client.closing:
                self._take_request(client, data)
        if ready & selectors.EVENT_WRITE and client.connection.fileno() in self._clients:
            self._send(client, b"")

    def _take_request(self, client: _Client, data: bytes) -> None:
        client.request += data
        if b"\r\n\r\n" not in client.request:
            if len(client.request) > _MAX_REQUEST:
                self._drop(client)
            return
        client.request_due = math.inf
        response, subscribe = self._feed.answer(bytes(client.request))
        client.subscribed, client.closing = subscribe, not subscribe
        self._send(client, response)

    def _send(self, client: _Client, data: bytes) -> None:
        """Add ``data`` to what the client is owed and send what it takes now."""
        client.pending += data
        if len(client.pending) > MAX_BUFFERED:
            self._acceptor.log.note("not reading", f"{self._name}: a client that does not read "
                                    "was dropped")  # fmt: skip
            self._drop(client)
            return
        try:
            sent = client.connection.send(client.pending) if client.pending else 0
        except BlockingIOError:
            sent = 0
        except OSError:
            self._drop(client)
            return
        del client.pending[:sent]
        if sent or math.isinf(client.waiting_since):
            client.waiting_since = time.monotonic() if client.pending else math.inf
        if not client.pending and client.closing:
            self._drop(client)
            return
        mask = selectors.EVENT_READ | (selectors.EVENT_WRITE if client.pending else 0)
        self._selector.modify(client.connection, mask, client)

    def _drop(self, client: _Client) -> None:
        fd = client.connection.fileno()
        if self._clients.pop(fd, None) is None:
            return
        with suppress(KeyError, ValueError):
            self._selector.unregister(client.connection)
        client.connection.close()
