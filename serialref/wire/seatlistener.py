"""TCP seats: a listening address where players connect, each taken to its seat's line.

The spec's tournament referee is a mediator that "uses IP" and to which "the chessplaying
programs connect ... as TCP/IP clients". A :class:`SeatListener` accepts those
connections on one address (``listen://HOST:PORT``) and reads the first line of each, the
player's ``sign_on``; its owner decides from that line and the peer's address which
seat the connection takes (or refuses it, with the reason logged). From then on bytes
are relayed both ways between the connection and the seat's pseudo-terminal, whose
other end the referee opens like any serial port: the referee, its framing, its
timestamps and its reconnect logic stay exactly those of a serial seat. A player that
connects again takes its seat back (the old connection is closed); one that goes away
leaves the seat waiting for it.

One thread serves the listener and every connection, waiting in one ``select`` (with a
wake-up pipe for :meth:`release` and :meth:`close`), so an idle seat costs no CPU.
"""

from __future__ import annotations

import logging
import os
import selectors
import socket
import threading
import time
import tty
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass

from serialref.errors import PortOpenError, escape
from serialref.wire.address import Address, format_address
from serialref.wire.framing import MAX_LINE

__all__ = ["HANDSHAKE_TIMEOUT", "Admission", "SeatListener", "open_raw_pty"]

LOGGER = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT = 10.0
"""Seconds a new connection has to send its first line (its ``sign_on``)."""

_READ_SIZE = 4096

Admission = Callable[[bytes, str], "int | str"]
"""Decides a connection's seat from its first line and the peer's host: a pty master, or why not."""


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


@dataclass
class _Pending:
    """A connection that has not yet sent its first line."""

    peer: str
    deadline: float
    received: bytes = b""


class SeatListener:
    """Accepts players on ``address`` and relays each admitted one to its seat's pty."""

    def __init__(self, address: Address, admit: Admission, *,
                 handshake_timeout: float = HANDSHAKE_TIMEOUT) -> None:  # fmt: skip
        self.address = address
        self._admit = admit
        self._handshake_timeout = handshake_timeout
        self._server: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._wake_r, self._wake_w = -1, -1
        self._pending: dict[socket.socket, _Pending] = {}
        self._relays: dict[socket.socket, int] = {}  # connection -> seat's pty master
        self._requests: list[int] = []  # masters to let go of
        self._done: dict[int, threading.Event] = {}
        self._lock = threading.Lock()
        self._stopping = False

    @property
    def port(self) -> int:
        """The port listened on (the one the system chose, for port 0)."""
        return self._server.getsockname()[1] if self._server is not None else self.address.port

    def __str__(self) -> str:
        return format_address(self.address.host, self.port)

    def start(self) -> None:
        """Listen; a busy or forbidden address is a PortOpenError naming it."""
        try:
            server = socket.create_server((self.address.host, self.address.port), reuse_port=False)
        except OSError as exc:
            raise PortOpenError(f"cannot listen on {self.address}: {exc.strerror or exc}") from exc
        server.setblocking(False)
        self._server = server
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
        assert self._server is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._server, selectors.EVENT_READ, "accept")
            selector.register(self._wake_r, selectors.EVENT_READ, "wake")
            try:
                while not self._stopping:
                    self._step(selector)
            finally:
                for connection in [*self._pending, *self._relays]:
                    connection.close()
                self._pending.clear()
                self._relays.clear()

    def _step(self, selector: selectors.BaseSelector) -> None:
        now = time.monotonic()
        deadline = min((p.deadline for p in self._pending.values()), default=None)
        timeout = None if deadline is None else max(0.0, deadline - now)
        for key, _ in selector.select(timeout):
            if key.data == "accept":
                self._accept(selector)
            elif key.data == "wake":
                with suppress(BlockingIOError):
                    os.read(self._wake_r, _READ_SIZE)
                self._take_requests(selector)
            elif key.data == "master":
                self._from_seat(selector, key.fd)
            elif isinstance(key.fileobj, socket.socket) and key.fileobj in self._pending:
                self._handshake(selector, key.fileobj)
            elif isinstance(key.fileobj, socket.socket) and key.fileobj in self._relays:
                self._to_seat(selector, key.fileobj)
        now = time.monotonic()
        for connection, pending in list(self._pending.items()):
            if now >= pending.deadline:
                LOGGER.warning("player at %s: refused: no sign_on within %.0f s", pending.peer,
                               self._handshake_timeout)  # fmt: skip
                self._drop(selector, connection)

    def _accept(self, selector: selectors.BaseSelector) -> None:
        assert self._server is not None
        try:
            connection, peer = self._server.accept()
        except (BlockingIOError, InterruptedError):
            return
        connection.setblocking(True)
        deadline = time.monotonic() + self._handshake_timeout
        self._pending[connection] = _Pending(format_address(str(peer[0]), int(peer[1])), deadline)
        selector.register(connection, selectors.EVENT_READ, "player")

    def _handshake(self, selector: selectors.BaseSelector, connection: socket.socket) -> None:
        pending = self._pending[connection]
        try:
            data = connection.recv(_READ_SIZE)
        except OSError:
            data = b""
        if not data:
            self._drop(selector, connection)
            return
        pending.received += data
        end = pending.received.find(b"\n")
        if end < 0 and len(pending.received) <= MAX_LINE:
            return
        line = pending.received[: end if end >= 0 else MAX_LINE].rstrip(b"\r")
        decision = self._admit(line, pending.peer.rsplit(":", 1)[0].strip("[]"))
        if isinstance(decision, str):
            LOGGER.warning("player at %s: refused: %s", pending.peer, escape(decision))
            self._drop(selector, connection)
            return
        del self._pending[connection]
        for other, master in list(self._relays.items()):
            if master == decision:  # the player connected again: the new line wins
                self._drop(selector, other)
        if decision not in self._relays.values():
            selector.register(decision, selectors.EVENT_READ, "master")
        self._relays[connection] = decision
        LOGGER.info("player at %s: took its seat", pending.peer)
        self._write(decision, pending.received)

    def _to_seat(self, selector: selectors.BaseSelector, connection: socket.socket) -> None:
        try:
            data = connection.recv(_READ_SIZE)
        except OSError:
            data = b""
        if not data:
            LOGGER.info("a player's connection closed; its seat waits for it")
            self._drop(selector, connection)
            return
        self._write(self._relays[connection], data)

    def _from_seat(self, selector: selectors.BaseSelector, master: int) -> None:
        try:
            data = os.read(master, _READ_SIZE)
        except OSError:
            data = b""
        for connection, target in list(self._relays.items()):
            if target == master:
                try:
                    connection.sendall(data)
                except OSError:
                    self._drop(selector, connection)

    @staticmethod
    def _write(master: int, data: bytes) -> None:
        with suppress(OSError):  # the seat's board has gone: the bytes have nowhere to go
            os.write(master, data)

    def _drop(self, selector: selectors.BaseSelector, connection: socket.socket) -> None:
        self._pending.pop(connection, None)
        master = self._relays.pop(connection, None)
        selector.unregister(connection)
        connection.close()
        if master is not None and master not in self._relays.values():
            selector.unregister(master)

    def _take_requests(self, selector: selectors.BaseSelector) -> None:
        with self._lock:
            requests, self._requests = self._requests, []
            done = [self._done.pop(master) for master in requests]
        for master in requests:
            for connection, target in list(self._relays.items()):
                if target == master:
                    self._drop(selector, connection)
        for event in done:
            event.set()
