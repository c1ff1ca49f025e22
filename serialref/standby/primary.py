"""The primary's side of replication: its journal file, streamed to the standby as it grows.

Why the primary sends its journal *file* rather than encoding events itself: the
mirror then is byte for byte the primary's journal, including what was written
before this process started. A primary restarted by systemd resumes its match
from its journal, and its standby must hold the start of that match too. The
file is also the only buffer: nothing piles up in memory while the standby is
away, and :meth:`JournalReplicator.handle` just wakes the sender thread.

Once both sides have proved the key (:mod:`serialref.standby.channel`), the
standby tells where its mirror ends (size and SHA-256) and the primary answers
where its entries continue: at that size when its journal starts with exactly
those bytes, else at byte 0 (the mirror is of another match or another file,
and the standby sets it aside). A standby restarted while the primary runs, or
a primary reconnecting, so continues where the mirror ends, and the mirror is
never emptied by a reconnect (it may be the only copy left).
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path

from serialref.errors import ProtocolError
from serialref.happenings import MatchEvent
from serialref.standby.channel import (
    MAX_PAYLOAD,
    STANDBY_ANSWER_SIZE,
    Channel,
    Frame,
    FrameKind,
    Side,
    new_nonce,
    primary_greeting,
    primary_proof,
    read_standby_answer,
)
from serialref.wire.address import parse_address
from serialref.wire.backoff import Backoff

__all__ = ["HEARTBEAT_INTERVAL", "IO_TIMEOUT", "JournalReplicator"]

LOGGER = logging.getLogger(__name__)

HEARTBEAT_INTERVAL = 0.5
"""Seconds of quiet after which the primary sends a heartbeat."""

IO_TIMEOUT = 2.0
"""Seconds a connect, the whole handshake or one send may take before the link counts as broken."""

_MIRROR_STATE = struct.Struct(">Q32s")
_OFFSET = struct.Struct(">Q")


class JournalReplicator:
    """Streams the primary's journal and a heartbeat to a standby; a ``MatchListener``.

    List it after the :class:`~serialref.recorders.journal.JournalRecorder` (as
    ``run_referee``'s ``extra_listeners`` are), so that the entry an event wakes
    it for is already in the file. Everything that can wait or fail happens on a
    background thread: :meth:`handle` only sets an event, so a standby that is
    absent, slow, gone or an impostor never stalls or stops the referee. The
    thread starts at the first event, so a referee that fails before its match
    starts leaves no thread behind.

    The heartbeat comes from that thread, not from the referee's: it says the
    process is alive. A referee hung inside a live process is the systemd
    watchdog's to kill, and then the heartbeat stops too.
    """

    def __init__(
        self,
        address: str,
        journal: Path,
        key: bytes,
        *,
        heartbeat_interval: float = HEARTBEAT_INTERVAL,
        io_timeout: float = IO_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._address = address
        self._host, self._port = parse_address(address, key="replicate")
        self._journal = journal
        self._key = key
        self._heartbeat_interval = heartbeat_interval
        self._io_timeout = io_timeout
        self._clock = clock
        self._grew = threading.Event()
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None

    def handle(self, event: MatchEvent) -> None:
        """The journal may have grown: wake the sender (starting it at the first event)."""
        if self._thread is None and not self._closing.is_set():
            self._thread = threading.Thread(
                target=self._run, name="serialref-replicator", daemon=True
            )
            self._thread.start()
        self._grew.set()

    def close(self) -> None:
        """Send what the standby still lacks, then stop and join the thread.

        Sending the last entries matters: a standby that saw ``MatchEnded`` of a
        complete match does not take it over. A link that is down gets one more
        connection attempt (at most the I/O timeout for the connect, and again for the
        handshake) before the replicator gives up.
        """
        self._closing.set()
        self._grew.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        backoff = Backoff()
        pause = backoff.pause()
        reported = False  # a failure was logged as a warning; repeat at debug level
        while True:
            # Once close() was called, one attempt more: a link that broke as the match
            # ended must still bring the standby the last entries, or it would take over
            # a complete match, which it cannot tell from one cut short.
            last_attempt = self._closing.is_set()
            try:
                with socket.create_connection(
                    (self._host, self._port), timeout=self._io_timeout
                ) as connection:
                    # Each frame leaves at once: Nagle's algorithm would hold a move's
                    # entries back until the previous frame is acknowledged.
                    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    channel, offset = self._handshake(connection)
                    LOGGER.info("replicating %s to %s from byte %d",
                                self._journal, self._address, offset)  # fmt: skip
                    backoff.reset()
                    reported = False
                    self._stream(connection, channel, offset)
                    return
            except (OSError, ProtocolError) as exc:
                LOGGER.log(
                    logging.DEBUG if reported else logging.WARNING,
                    "standby %s: %s; trying again in %.1f s",
                    self._address, exc, pause,
                )  # fmt: skip
                reported = True
            if last_attempt:
                return
            self._closing.wait(pause)
            pause = backoff.pause()

    def _handshake(self, connection: socket.socket) -> tuple[Channel, int]:
        """Prove the key both ways, learn where the mirror ends, answer where entries continue."""
        deadline = self._clock() + self._io_timeout
        nonce_p = new_nonce()
        connection.sendall(primary_greeting(nonce_p))
        answer = _receive_exactly(connection, STANDBY_ANSWER_SIZE, deadline, self._clock)
        nonce_s = read_standby_answer(self._key, nonce_p, answer)
        connection.sendall(primary_proof(self._key, nonce_p, nonce_s))
        channel = Channel(
            self._key, nonce_p, nonce_s, side=Side.PRIMARY, max_payload=_MIRROR_STATE.size
        )
        frame = _receive_frame(connection, channel, deadline, self._clock)
        if frame.kind is not FrameKind.MIRROR or len(frame.payload) != _MIRROR_STATE.size:
            raise ProtocolError(f"expected the mirror's size and digest, got {frame.kind.name}")
        size, digest = _MIRROR_STATE.unpack(frame.payload)
        if self._journal_starts_with(size, digest):
            offset = size
        else:
            offset = 0
            if size:
                LOGGER.warning("standby %s: its mirror is not a copy of %s; sending it all again",
                               self._address, self._journal)  # fmt: skip
        connection.sendall(channel.seal(FrameKind.START, _OFFSET.pack(offset)))
        connection.settimeout(self._io_timeout)
        return channel, offset

    def _journal_starts_with(self, size: int, digest: bytes) -> bool:
        """Whether the journal's first ``size`` bytes hash to ``digest`` (the mirror's)."""
        prefix = hashlib.sha256()
        try:
            with self._journal.open("rb") as journal:
                left = size
                while left:
                    chunk = journal.read(min(left, MAX_PAYLOAD))
                    if not chunk:
                        return False
                    prefix.update(chunk)
                    left -= len(chunk)
        except FileNotFoundError:
            if size:
                return False
        return prefix.digest() == digest

    def _stream(self, connection: socket.socket, channel: Channel, offset: int) -> None:
        """Send new whole lines as they appear, and a heartbeat when quiet, until closed."""
        last_sent = self._clock()
        while True:
            data = self._complete_lines(offset)
            if data:
                connection.sendall(channel.seal(FrameKind.ENTRIES, data))
                offset += len(data)
                last_sent = self._clock()
                continue
            if self._closing.is_set():
                return
            now = self._clock()
            due = last_sent + self._heartbeat_interval
            if now >= due:
                connection.sendall(channel.seal(FrameKind.HEARTBEAT))
                last_sent = now
            elif self._grew.wait(due - now):
                self._grew.clear()

    def _complete_lines(self, offset: int) -> bytes:
        """Whole journal lines from ``offset`` on (at most ``MAX_PAYLOAD`` bytes of them)."""
        try:
            with self._journal.open("rb") as journal:
                size = journal.seek(0, os.SEEK_END)
                if size < offset:
                    raise ProtocolError(f"{self._journal} shrank below the {offset} bytes sent")
                journal.seek(offset)
                data = journal.read(MAX_PAYLOAD)
        except FileNotFoundError:
            if offset:
                raise
            return b""
        end = data.rfind(b"\n") + 1
        if end == 0 and len(data) == MAX_PAYLOAD:
            raise ProtocolError(f"{self._journal}: an entry at byte {offset} is over 1 MiB")
        return data[:end]


def _receive_exactly(
    connection: socket.socket, size: int, deadline: float, clock: Callable[[], float]
) -> bytes:
    """``size`` bytes, all by ``deadline``: a standby that trickles is as broken as a silent one."""
    data = b""
    while len(data) < size:
        connection.settimeout(max(deadline - clock(), 0.001))
        try:
            chunk = connection.recv(size - len(data))
        except TimeoutError:
            raise ProtocolError("no answer to the handshake in time") from None
        if not chunk:
            raise ProtocolError("the standby closed the connection during the handshake")
        data += chunk
    return data


def _receive_frame(
    connection: socket.socket, channel: Channel, deadline: float, clock: Callable[[], float]
) -> Frame:
    """The standby's one frame (its mirror's state), by ``deadline``."""
    while True:
        connection.settimeout(max(deadline - clock(), 0.001))
        try:
            chunk = connection.recv(256)
        except TimeoutError:
            raise ProtocolError("no mirror state from the standby in time") from None
        if not chunk:
            raise ProtocolError("the standby closed the connection during the handshake")
        channel.feed(chunk)
        frame = channel.next_frame()
        if frame is not None:
            return frame
