"""The standby's side of replication: a validated copy of the primary's journal.

:class:`JournalMirror` listens for primaries, and copies the journal of the one
that proved the key into its own file, returning once that primary has been
silent for ``takeover_after`` seconds. Everything it accepts has passed three
gates: the handshake (:mod:`serialref.standby.channel`), each frame's tag, and the
entry checks of :class:`~serialref.standby.validation.JournalValidator`. What
fails a gate is logged with the peer's address and drops that connection only.

Connections that have not proved the key yet (*newcomers*) are served alongside
the primary's, in the same ``select`` loop, without blocking: each may send a
fixed number of bytes and must finish its handshake within
``handshake_timeout``, and at most ``max_newcomers`` wait at a time. Accepting goes
through an :class:`~serialref.wire.acceptor.Acceptor`: out of descriptors, the listener
is left alone for a moment instead of being tried again at full speed, and refusals are
logged once per window with a count. Nothing
about the mirror is said to a newcomer, nothing it sends is written, and it
cannot end or delay the primary's connection. Only a peer that proves the key
replaces the primary (a primary that restarted reconnects before its old
connection is known to be dead).
"""

from __future__ import annotations

import enum
import hashlib
import logging
import math
import os
import select
import socket
import struct
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from serialref.errors import ConfigError, ProtocolError, recorder_error
from serialref.recorders.filemode import private_file
from serialref.recorders.journal import cut_torn_tail, set_aside
from serialref.standby.channel import (
    MAX_PAYLOAD,
    PRIMARY_GREETING_SIZE,
    TAG_SIZE,
    Channel,
    FrameKind,
    Side,
    new_nonce,
    read_primary_greeting,
    read_primary_proof,
    standby_answer,
)
from serialref.standby.validation import JournalValidator
from serialref.wire.acceptor import PLAYER_RESERVE, Acceptor
from serialref.wire.address import format_address, parse_address

__all__ = ["HANDSHAKE_TIMEOUT", "LOOPBACK", "MAX_NEWCOMERS", "TAKEOVER_AFTER", "JournalMirror"]

LOGGER = logging.getLogger(__name__)

TAKEOVER_AFTER = 3.0
"""Seconds of silence after which the standby takes over (``--takeover-after``)."""

HANDSHAKE_TIMEOUT = 2.0
"""Seconds a newcomer has to prove the key from its connection on."""

LOOPBACK = "127.0.0.1"
"""Where a standby given only a port listens: this machine alone."""

MAX_NEWCOMERS = 8
"""Connections that may be in their handshake at once; more are closed on arrival."""

_MIRROR_STATE = struct.Struct(">Q32s")
_OFFSET = struct.Struct(">Q")
_RECEIVE = 65536


class _Outcome(enum.Enum):
    """How a spell of mirroring ended."""

    SILENT = "the primary fell silent"
    HEARD = "a primary was heard"
    TIME_UP = "the time given is up"
    STOPPED = "stop() was called"


@dataclass(eq=False)
class _Newcomer:
    """A connection in its handshake: what it sent so far, and the challenges once known."""

    sock: socket.socket
    peer: str
    deadline: float
    received: bytearray = field(default_factory=bytearray)
    nonce_p: bytes = b""
    nonce_s: bytes = b""  # set once answered: then its proof is awaited


@dataclass(eq=False)
class _PrimaryLink:
    """The connection of the primary that proved the key."""

    sock: socket.socket
    peer: str
    channel: Channel
    started: bool = False  # it said where its entries start


class JournalMirror:
    """The standby's copy of the primary's journal, kept on a listening socket.

    The socket is bound at construction, so ``address`` tells the bound port
    when port 0 was asked for; a bare port listens on :data:`LOOPBACK`. The
    file already there is checked entry by entry first; one that fails is set
    aside (``MIRROR.replaced-N``) and the primary sends its journal again from
    the start. Only whole, checked entries reach the file, each batch flushed
    and ``fsync``-ed before the next is read, which covers every move entry as
    the primary's own journal does.
    """

    def __init__(
        self,
        address: str,
        journal: Path,
        key: bytes,
        *,
        takeover_after: float = TAKEOVER_AFTER,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
        max_newcomers: int = MAX_NEWCOMERS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not takeover_after > 0:
            raise ConfigError("takeover_after", f"expected seconds > 0, got {takeover_after!r}")
        host, port = parse_address(address, default_host=LOOPBACK, any_port=True)
        self.journal = journal
        self._key = key
        self._takeover_after = takeover_after
        self._handshake_timeout = handshake_timeout
        self._max_newcomers = max_newcomers
        self._clock = clock
        self._link: _PrimaryLink | None = None
        self._newcomers: list[_Newcomer] = []
        self._stopped = False
        self._validator, self._digest, self._size = _load(journal)
        with ExitStack() as stack:
            try:
                self._file = stack.enter_context(open(journal, "ab", opener=private_file))
            except OSError as exc:
                raise recorder_error("open", journal, exc) from exc
            try:
                family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                            flags=socket.AI_PASSIVE)[0][0]  # fmt: skip
                self._listener = stack.enter_context(
                    socket.create_server((host, port), family=family)
                )
            except OSError as exc:
                raise ConfigError(
                    "address", f"cannot listen on {address!r}: {exc.strerror or exc}"
                ) from exc
            self._wake_r, self._wake_w = socket.socketpair()
            stack.pop_all()
        self._acceptor = Acceptor(self._listener, "standby", reserve=PLAYER_RESERVE,
                                  logger=LOGGER, clock=clock)  # fmt: skip
        bound = self._listener.getsockname()
        self.address = format_address(bound[0], bound[1])
        LOGGER.info("standby listening on %s, mirroring to %s (%d bytes so far)",
                    self.address, journal, self._size)  # fmt: skip

    def __enter__(self) -> JournalMirror:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def wait_for_silence(self) -> bool:
        """Mirror until a primary heard during this call has been silent ``takeover_after`` s.

        A standby started alone waits for a primary for as long as it takes: it
        cannot tell a primary that is not up yet from one that died, and a match
        it has never heard of is not its to start. Only a primary that proved the
        key and said where its entries start counts as heard. Returns True on
        silence, False when :meth:`stop` was called. A mirror that cannot be
        written raises :class:`~serialref.errors.RecorderError`.
        """
        return self._mirror(until=None) is _Outcome.SILENT

    def mirror_for(self, seconds: float) -> bool:
        """Mirror for up to ``seconds``; True as soon as a primary is heard.

        A takeover waiting for busy ports spends its pauses here: a primary that
        was only cut off for a while (a network hiccup) is heard again, and its
        mirror stays current instead of going stale while the standby waits.
        """
        return self._mirror(until=self._clock() + seconds) is _Outcome.HEARD

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called; every later wait then returns at once."""
        return self._stopped

    def stop(self) -> None:
        """End the current and every later wait (from any thread or a signal handler)."""
        try:
            self._wake_w.send(b"!")
        except OSError:  # closed already: nothing waits any more
            LOGGER.debug("stop() after close()")

    def close(self) -> None:
        """Release the sockets and the file; idempotent."""
        self._drop_link()
        for newcomer in self._newcomers:
            newcomer.sock.close()
        self._newcomers.clear()
        for closable in (self._listener, self._wake_r, self._wake_w, self._file):
            closable.close()

    def _mirror(self, *, until: float | None) -> _Outcome:
        """Take connections and entries until silence (``until`` None) or until ``until``."""
        heard_at: float | None = None
        while not self._stopped:
            now = self._clock()
            self._expire_newcomers(now)
            timeout: float | None
            if until is not None:
                if heard_at is not None:
                    return _Outcome.HEARD
                if now >= until:
                    return _Outcome.TIME_UP
                timeout = until - now
            elif heard_at is not None:
                timeout = heard_at + self._takeover_after - now
                if timeout <= 0:
                    LOGGER.warning("the primary has been silent for %.1f s", self._takeover_after)
                    self._drop_link()
                    return _Outcome.SILENT
            else:
                timeout = None
            first_deadline = min([self._acceptor.due(), *(n.deadline for n in self._newcomers)])
            if not math.isinf(first_deadline):
                first_deadline -= now
                timeout = first_deadline if timeout is None else min(timeout, first_deadline)
            link = self._link
            newcomers = {newcomer.sock: newcomer for newcomer in self._newcomers}
            listening = [] if self._acceptor.paused else [self._listener]
            watched = [*listening, self._wake_r, *newcomers, *([link.sock] if link else [])]
            wait = None if timeout is None else max(timeout, 0.0)
            ready, _, _ = select.select(watched, [], [], wait)
            if self._wake_r in ready:
                self._wake_r.recv(64)
                self._stopped = True
            if link is not None and link.sock in ready and self._receive(link):
                heard_at = self._clock()
            for sock in ready:
                if sock in newcomers:
                    self._hear_newcomer(newcomers[sock])
            if self._listener in ready:
                self._accept()
            self._acceptor.log.settle()
        return _Outcome.STOPPED

    # ------------------------------------------------------------ newcomers

    def _accept(self) -> None:
        accepted = self._acceptor.accept()
        if accepted is None:
            return
        sock, peer = accepted
        if len(self._newcomers) >= self._max_newcomers:
            self._acceptor.log.note("crowd", f"peer {peer}: refused, {len(self._newcomers)} "
                                    "connections are in their handshake already")  # fmt: skip
            sock.close()
            return
        self._newcomers.append(_Newcomer(sock, peer, self._clock() + self._handshake_timeout))
        LOGGER.debug("peer %s connected", peer)

    def _expire_newcomers(self, now: float) -> None:
        for newcomer in [late for late in self._newcomers if late.deadline <= now]:
            self._drop_newcomer(newcomer, f"no handshake within {self._handshake_timeout:.1f} s")

    def _hear_newcomer(self, newcomer: _Newcomer) -> None:
        """Read what the handshake's step allows, no more; answer, or promote, or drop."""
        expected = TAG_SIZE if newcomer.nonce_s else PRIMARY_GREETING_SIZE
        try:
            data = newcomer.sock.recv(expected - len(newcomer.received))
        except BlockingIOError:
            return
        except OSError as exc:
            self._drop_newcomer(newcomer, str(exc))
            return
        if not data:
            self._drop_newcomer(newcomer, "closed the connection during the handshake")
            return
        newcomer.received += data
        try:
            if not newcomer.nonce_s:
                nonce_p = read_primary_greeting(bytes(newcomer.received))
                if nonce_p is not None:
                    newcomer.nonce_p, newcomer.nonce_s = nonce_p, new_nonce()
                    newcomer.received.clear()
                    _send_small(newcomer.sock,
                                standby_answer(self._key, nonce_p, newcomer.nonce_s))  # fmt: skip
                return
            if len(newcomer.received) < TAG_SIZE:
                return
            read_primary_proof(
                self._key, newcomer.nonce_p, newcomer.nonce_s, bytes(newcomer.received)
            )
            channel = Channel(
                self._key, newcomer.nonce_p, newcomer.nonce_s, side=Side.STANDBY,
                max_payload=MAX_PAYLOAD,
            )  # fmt: skip
            state = _MIRROR_STATE.pack(self._size, self._digest.digest())
            _send_small(newcomer.sock, channel.seal(FrameKind.MIRROR, state))
        except (ProtocolError, OSError) as exc:
            self._drop_newcomer(newcomer, _problem(exc))
            return
        self._newcomers.remove(newcomer)
        if self._link is not None:
            LOGGER.warning("primary %s proved the key: it replaces %s", newcomer.peer,
                           self._link.peer)  # fmt: skip
            self._drop_link()
        else:
            LOGGER.info("primary %s proved the key", newcomer.peer)
        self._link = _PrimaryLink(newcomer.sock, newcomer.peer, channel)

    def _drop_newcomer(self, newcomer: _Newcomer, problem: str) -> None:
        self._acceptor.log.note("handshake failed", f"peer {newcomer.peer}: {problem}; closed")
        newcomer.sock.close()
        self._newcomers.remove(newcomer)

    # ------------------------------------------------------------ the primary

    def _receive(self, link: _PrimaryLink) -> bool:
        """Take what arrived; True when the primary was heard (it said where it starts).

        A closed, broken or misbehaving connection is dropped, and with it the
        unfinished frame it may have left. A mirror that cannot be written is not
        the connection's fault: that :class:`RecorderError` goes up to the caller.
        """
        try:
            data = link.sock.recv(_RECEIVE)
        except BlockingIOError:
            return False
        except OSError as exc:
            data, problem = b"", str(exc)
        else:
            problem = "connection closed"
        if data:
            link.channel.feed(data)
            try:
                return self._take_frames(link)
            except ProtocolError as exc:
                problem = _problem(exc)
        if link.channel.unfinished:
            problem += f"; dropped the {link.channel.unfinished} bytes of an unfinished frame"
        LOGGER.warning("primary %s: %s", link.peer, problem)
        self._drop_link()
        return False

    def _take_frames(self, link: _PrimaryLink) -> bool:
        heard = False
        while (frame := link.channel.next_frame()) is not None:
            if not link.started:
                if frame.kind is not FrameKind.START or len(frame.payload) != _OFFSET.size:
                    raise ProtocolError(f"expected where the entries start, got {frame.kind.name}")
                self._start_at(link, _OFFSET.unpack(frame.payload)[0])
            elif frame.kind is FrameKind.ENTRIES:
                self._take_entries(frame.payload)
            elif frame.kind is not FrameKind.HEARTBEAT:
                raise ProtocolError(f"a {frame.kind.name} frame from the primary")
            heard = True
        return heard

    def _start_at(self, link: _PrimaryLink, offset: int) -> None:
        if offset not in (0, self._size):
            raise ProtocolError(f"the primary starts at byte {offset}, the mirror has {self._size}")
        if offset == 0 and self._size:
            self._set_mirror_aside("it is not a copy of the primary's journal")
        link.started = True
        LOGGER.info("primary %s: mirroring from byte %d", link.peer, offset)

    def _take_entries(self, payload: bytes) -> None:
        """Write the entries that pass their checks; the first that fails ends the batch."""
        if not payload.endswith(b"\n"):
            raise ProtocolError("entries that do not end a line", raw=payload[-80:])
        start = 0
        try:
            while start < len(payload):
                end = payload.index(b"\n", start)
                self._validator.check(payload[start:end])
                start = end + 1
        finally:
            self._append(payload[:start])

    def _set_mirror_aside(self, why: str) -> None:
        self._file.close()
        try:
            aside = set_aside(self.journal, "replaced")
            self._file = open(self.journal, "ab", opener=private_file)  # noqa: SIM115 - till close()
        except OSError as exc:
            raise recorder_error("replace", self.journal, exc) from exc
        LOGGER.warning("%s: %s; kept it as %s", self.journal, why, aside)
        self._validator, self._digest, self._size = JournalValidator(), hashlib.sha256(), 0

    def _append(self, data: bytes) -> None:
        if not data:
            return
        try:
            self._file.write(data)
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as exc:
            raise recorder_error("write", self.journal, exc) from exc
        self._digest.update(data)
        self._size += len(data)

    def _drop_link(self) -> None:
        if self._link is not None:
            self._link.sock.close()
            self._link = None


def _load(path: Path) -> tuple[JournalValidator, hashlib._Hash, int]:
    """Check the mirror already on disk; its validator, digest and size.

    A line cut by the standby's own crash is cut off. A mirror with an entry
    that fails its checks is set aside whole: nothing in it can be trusted to
    resume from, and the primary sends its journal again.
    """
    validator = JournalValidator()
    try:
        if path.is_file():
            cut_torn_tail(path)
        data = path.read_bytes() if path.is_file() else b""
        for number, line in enumerate(data.split(b"\n")[:-1], start=1):
            try:
                validator.check(line)
            except ProtocolError as exc:
                aside = set_aside(path, "replaced")
                LOGGER.warning("%s, line %d: %s; kept it as %s and start an empty mirror",
                               path, number, _problem(exc), aside)  # fmt: skip
                return JournalValidator(), hashlib.sha256(), 0
    except OSError as exc:
        raise recorder_error("check", path, exc) from exc
    return validator, hashlib.sha256(data), len(data)


def _send_small(sock: socket.socket, data: bytes) -> None:
    """Send a handshake message on a non-blocking socket: one that does not fit is a dead peer."""
    if sock.send(data) != len(data):
        raise OSError("the peer does not read")


def _problem(exc: ProtocolError | OSError) -> str:
    raw = exc.raw if isinstance(exc, ProtocolError) else ""
    return f"{exc} ({raw})" if raw else str(exc)
