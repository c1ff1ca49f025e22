"""TCP seats: a listening address where players connect, each taken to its seat's line.

The spec's tournament referee is a mediator that "uses IP" and to which "the chessplaying
programs connect ... as TCP/IP clients". A :class:`SeatListener` accepts those
connections on one address (``listen://HOST:PORT``) and reads the first line of each, the
player's ``sign_on``; its owner decides from that line and the peer's address which
seat the connection takes (or refuses it, and why). From then on bytes are relayed both
ways between the connection and the seat's pseudo-terminal (:class:`SeatRelay`), whose
other end the referee opens like any serial port: the referee, its framing, its
timestamps and its reconnect logic stay exactly those of a serial seat. A player that
connects again takes its seat back (the old connection is closed); one that goes away
leaves the seat waiting for it.

One thread serves the listener and every connection, waiting in one ``select`` (with a
wake-up pipe for :meth:`release` and :meth:`close`), so an idle seat costs no CPU; no
socket or pty is ever written in a way that waits, so no peer can hold that thread.

Anyone who can reach the address can connect, so what a stranger can hold is bounded:
connections that have not yet sent their first line (*newcomers*) are at most
:data:`MAX_NEWCOMERS`, at most :data:`MAX_NEWCOMERS_PER_HOST` from one host, and each has
:data:`HANDSHAKE_TIMEOUT` seconds. A host over its own limit has its new connection
closed at once. Over the total, the new one is kept and the oldest newcomer of the host
with the most is closed instead, so that hosts flooding together cannot keep a player
on another host from signing on. Refusals are logged and
recorded a few per :data:`REFUSALS_WINDOW`, the rest counted by kind.
"""

from __future__ import annotations

import logging
import math
import os
import selectors
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass

from serialref.errors import PortOpenError, escape
from serialref.wire.acceptor import PLAYER_RESERVE, Acceptor
from serialref.wire.address import Address, format_address
from serialref.wire.framing import MAX_LINE
from serialref.wire.ratelimit import BurstLimit
from serialref.wire.seatrelay import Scrub, SeatRelay

__all__ = [
    "HANDSHAKE_TIMEOUT",
    "MAX_NEWCOMERS",
    "MAX_NEWCOMERS_PER_HOST",
    "REFUSALS_WINDOW",
    "Admission",
    "Refusal",
    "SeatListener",
]

LOGGER = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT = 10.0
"""Seconds a new connection has to send its first line (its ``sign_on``)."""

MAX_NEWCOMERS = 64
"""Connections that have not sent their first line yet, from all hosts together."""

MAX_NEWCOMERS_PER_HOST = 8
"""Connections that have not sent their first line yet, from one host."""

REFUSALS_WINDOW = 10.0
"""Seconds in which a few refusals are logged and recorded one by one, the rest counted."""

_REFUSALS_TOLD = 5
_BACKLOG = 1024  # connections the kernel holds (silent ones, unaccepted: see TCP_DEFER_ACCEPT)
_READ_SIZE = 4096


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a connection is refused: ``kind`` (a fixed word, for counts) and the reason in full."""

    kind: str
    reason: str


Admission = Callable[[bytes, str], "int | Refusal"]
"""Decides a connection's seat from its first line and the peer's host: a pty master, or why not."""

Record = Callable[[dict[str, object]], None]
"""Where refusals are recorded (an event's journal), as JSON-ready entries."""


@dataclass(eq=False)
class _Newcomer:
    """A connection that has not yet sent its first line."""

    connection: socket.socket
    peer: str
    host: str
    deadline: float
    received: bytes = b""


class SeatListener:
    """Accepts players on ``address`` and relays each admitted one to its seat's pty."""

    def __init__(self, address: Address, admit: Admission, *,
                 scrub: Scrub = bytes, record: Record | None = None,
                 handshake_timeout: float = HANDSHAKE_TIMEOUT) -> None:  # fmt: skip
        self.address = address
        self._admit = admit
        self._scrub = scrub
        self._record = record
        self._handshake_timeout = handshake_timeout
        self._server: socket.socket | None = None
        self._acceptor: Acceptor | None = None
        self._thread: threading.Thread | None = None
        self._wake_r, self._wake_w = -1, -1
        self._newcomers: dict[socket.socket, _Newcomer] = {}
        self._relays: dict[int, SeatRelay] = {}  # by the seat's pty master
        self._requests: list[int] = []  # masters to let go of
        self._done: dict[int, threading.Event] = {}
        self._lock = threading.Lock()
        self._stopping = False
        self._refusals = BurstLimit(_REFUSALS_TOLD, REFUSALS_WINDOW)
        self._refused_unsaid: Counter[str] = Counter()

    @property
    def port(self) -> int:
        """The port listened on (the one the system chose, for 0)."""
        return self._server.getsockname()[1] if self._server is not None else self.address.port

    def __str__(self) -> str:
        return format_address(self.address.host, self.port)

    def start(self) -> None:
        """Listen; a busy or forbidden address is a PortOpenError naming it."""
        try:
            server = socket.create_server((self.address.host, self.address.port),
                                          backlog=_BACKLOG, reuse_port=False)  # fmt: skip
        except OSError as exc:
            raise PortOpenError(f"cannot listen on {self.address}: {exc.strerror or exc}") from exc
        # A player speaks first (its sign_on): the kernel hands over a connection only once
        # it has sent something, so strangers that connect and say nothing cost nothing here.
        server.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT,
                          math.ceil(self._handshake_timeout))  # fmt: skip
        self._server = server
        self._acceptor = Acceptor(server, f"seats on {self}", reserve=PLAYER_RESERVE,
                                  logger=LOGGER)  # fmt: skip
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._thread = threading.Thread(target=self._serve, name=f"seats {self}", daemon=True)
        self._thread.start()
        LOGGER.info("listening for players on %s", self)

    def release(self, master: int) -> None:
        """Close the connection relayed to ``master`` and forget it (before it is closed)."""
        if self._thread is None or not self._thread.is_alive():
            return
        done = threading.Event()
        with self._lock:
            self._requests.append(master)
            self._done[master] = done
        self._wake()
        done.wait(timeout=5.0)

    def close(self) -> None:
        """Stop listening and drop every connection."""
        self._stopping = True
        self._wake()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1
        if self._server is not None:
            self._server.close()
            self._server = None

    # ------------------------------------------------------------------ thread

    def _wake(self) -> None:
        with suppress(BlockingIOError, OSError):
            if self._wake_w >= 0:
                os.write(self._wake_w, b"\0")

    def _serve(self) -> None:
        assert self._server is not None and self._acceptor is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._wake_r, selectors.EVENT_READ, "wake")
            try:
                while not self._stopping:
                    self._step(selector, self._server, self._acceptor)
            finally:
                for relay in self._relays.values():
                    relay.connection.close()
                for connection in self._newcomers:
                    connection.close()
                self._newcomers.clear()
                self._relays.clear()
                self._acceptor.log.close()
                self._tell_refusals_counted(self._refusals.flush())

    def _step(self, selector: selectors.BaseSelector, server: socket.socket,
              acceptor: Acceptor) -> None:  # fmt: skip
        listening = server in selector.get_map()
        if acceptor.paused == listening:
            if listening:
                selector.unregister(server)
            else:
                selector.register(server, selectors.EVENT_READ, "accept")
        timeout = self._next_deadline(acceptor) - time.monotonic()
        for key, events in selector.select(None if math.isinf(timeout) else max(0.0, timeout)):
            if key.data == "accept":
                self._accept(selector, acceptor)
            elif key.data == "wake":
                with suppress(BlockingIOError):
                    os.read(self._wake_r, _READ_SIZE)
                self._take_requests(selector)
            elif isinstance(key.data, _Newcomer):
                self._handshake(selector, key.data)
            elif isinstance(key.data, SeatRelay):
                self._serve_relay(selector, key.data, key.fileobj, events)
        self._expire(selector)
        acceptor.log.settle()
        if self._refusals.owed_at() <= time.monotonic():
            self._tell_refusals_counted(self._refusals.window_over(time.monotonic()))

    def _next_deadline(self, acceptor: Acceptor) -> float:
        deadlines = [acceptor.due(), self._refusals.owed_at()]
        deadlines += [newcomer.deadline for newcomer in self._newcomers.values()]
        deadlines += [d for r in self._relays.values() if (d := r.write_deadline()) is not None]
        return min(deadlines)

    def _expire(self, selector: selectors.BaseSelector) -> None:
        now = time.monotonic()
        for newcomer in [n for n in self._newcomers.values() if now >= n.deadline]:
            self._refuse(selector, newcomer, Refusal(
                "silent", f"no sign_on within {self._handshake_timeout:g} s"))  # fmt: skip
        for relay in list(self._relays.values()):
            deadline = relay.write_deadline()
            if deadline is not None and now >= deadline:
                LOGGER.warning("player at %s: dropped: it read nothing for %g s; its seat "
                               "waits for it", relay.peer, relay.write_timeout)  # fmt: skip
                self._drop_relay(selector, relay)

    # ---------------------------------------------------------------- newcomers

    def _accept(self, selector: selectors.BaseSelector, acceptor: Acceptor) -> None:
        accepted = acceptor.accept()
        if accepted is None:
            return
        connection, peer = accepted
        host = peer.rsplit(":", 1)[0].strip("[]")
        newcomer = _Newcomer(connection, peer, host, time.monotonic() + self._handshake_timeout)
        if sum(n.host == host for n in self._newcomers.values()) >= MAX_NEWCOMERS_PER_HOST:
            crowd = f"{MAX_NEWCOMERS_PER_HOST} connections from {host} wait to sign on"
            self._refuse(selector, newcomer, Refusal("crowd", crowd))
            return
        if len(self._newcomers) >= MAX_NEWCOMERS:
            by_host = Counter(n.host for n in self._newcomers.values())
            busiest = by_host.most_common(1)[0][0]
            oldest = next(n for n in self._newcomers.values() if n.host == busiest)
            self._refuse(selector, oldest, Refusal(
                "crowd", f"{MAX_NEWCOMERS} newer connections wait to sign on"))  # fmt: skip
        self._newcomers[connection] = newcomer
        selector.register(connection, selectors.EVENT_READ, newcomer)

    def _handshake(self, selector: selectors.BaseSelector, newcomer: _Newcomer) -> None:
        try:
            data = newcomer.connection.recv(_READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._close_newcomer(selector, newcomer)
            return
        newcomer.received += data
        end = newcomer.received.find(b"\n")
        if end < 0 and len(newcomer.received) <= MAX_LINE:
            return
        line = newcomer.received[: end if end >= 0 else MAX_LINE].rstrip(b"\r")
        decision = self._admit(line, newcomer.host)
        if isinstance(decision, Refusal):
            self._refuse(selector, newcomer, decision)
            return
        self._close_newcomer(selector, newcomer, keep_open=True)
        old = self._relays.get(decision)
        if old is not None:  # the player connected again: the new line wins
            self._drop_relay(selector, old)
        relay = SeatRelay(newcomer.connection, newcomer.peer, decision, self._scrub)
        self._relays[decision] = relay
        LOGGER.info("player at %s: took its seat", newcomer.peer)
        relay.pass_on(newcomer.received)
        self._watch(selector, relay)

    def _close_newcomer(self, selector: selectors.BaseSelector, newcomer: _Newcomer, *,
                        keep_open: bool = False) -> None:  # fmt: skip
        if self._newcomers.pop(newcomer.connection, None) is not None:
            selector.unregister(newcomer.connection)
        if not keep_open:
            newcomer.connection.close()

    def _refuse(self, selector: selectors.BaseSelector, newcomer: _Newcomer,
                refusal: Refusal) -> None:  # fmt: skip
        now = time.monotonic()
        told, left_out = self._refusals.admit(now)
        self._tell_refusals_counted(left_out)
        if told:
            reason = escape(refusal.reason)
            LOGGER.warning("player at %s: refused: %s", newcomer.peer, reason)
            if self._record is not None:
                self._record({"refused": newcomer.peer, "reason": reason})
        else:
            self._refused_unsaid[refusal.kind] += 1
        self._close_newcomer(selector, newcomer)  # once told: the peer learns nothing sooner

    def _tell_refusals_counted(self, count: int) -> None:
        if not count:
            return
        kinds = ", ".join(f"{n} {kind}" for kind, n in self._refused_unsaid.most_common())
        self._refused_unsaid.clear()
        LOGGER.warning("seats on %s: %d more connections refused (%s)", self, count, kinds)
        if self._record is not None:
            self._record({"refused_more": count, "kinds": kinds, "seconds": REFUSALS_WINDOW})

    # ------------------------------------------------------------------ relays

    def _serve_relay(self, selector: selectors.BaseSelector, relay: SeatRelay,
                     source: object, events: int) -> None:  # fmt: skip
        if relay.master not in self._relays or self._relays[relay.master] is not relay:
            return  # dropped earlier in this round
        alive = True
        if source is relay.connection:
            if events & selectors.EVENT_READ:
                alive = relay.hear_player()
                if not alive:
                    LOGGER.info("player at %s: its connection closed; its seat waits for it",
                                relay.peer)  # fmt: skip
            if alive and events & selectors.EVENT_WRITE:
                alive = relay.feed_player(time.monotonic())
        else:
            if events & selectors.EVENT_WRITE:
                relay.feed_seat()
            if events & selectors.EVENT_READ:
                alive = relay.hear_seat(time.monotonic())
        if alive:
            self._watch(selector, relay)
        else:
            self._drop_relay(selector, relay)

    def _watch(self, selector: selectors.BaseSelector, relay: SeatRelay) -> None:
        """Watch both ends of ``relay`` for what each can do now (nothing: not at all)."""
        for fileobj, events in ((relay.connection, relay.connection_events()),
                                (relay.master, relay.master_events())):  # fmt: skip
            watched = fileobj in selector.get_map()
            if events and watched:
                selector.modify(fileobj, events, relay)
            elif events:
                selector.register(fileobj, events, relay)
            elif watched:
                selector.unregister(fileobj)

    def _drop_relay(self, selector: selectors.BaseSelector, relay: SeatRelay) -> None:
        del self._relays[relay.master]
        for fileobj in (relay.connection, relay.master):
            if fileobj in selector.get_map():
                selector.unregister(fileobj)
        relay.connection.close()

    def _take_requests(self, selector: selectors.BaseSelector) -> None:
        with self._lock:
            requests, self._requests = self._requests, []
            done = [self._done.pop(master) for master in requests]
        for master in requests:
            relay = self._relays.get(master)
            if relay is not None:
                self._drop_relay(selector, relay)
        for event in done:
            event.set()
