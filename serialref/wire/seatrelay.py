"""One admitted player's connection joined to its seat's pseudo-terminal, both ways, never blocking.

The :class:`~serialref.wire.seatlistener.SeatListener`'s one thread serves every seat
of its address, so nothing it does for one player may wait on that player: both ends
are non-blocking, and what one end does not take at once waits in a bounded buffer.

- Towards the player: what the referee writes to the seat is read from the pty's
  master only while the player's buffer has room. A player that does not read thus
  fills its buffer, then the pty, and the referee's own write timeout makes that port
  lost (PROTOCOL.md 7); the relay, for its part, drops a connection that took nothing
  for :data:`WRITE_TIMEOUT` seconds while bytes waited for it. The other seats are
  served all along.
- Towards the seat: a player's bytes wait only while the pty is full (the referee's
  thread stalled); the connection is not read meanwhile, so it is held back, not the
  other players. Each line is handed to ``scrub`` first (an event's seats take their
  tokens out, so a token never reaches the journal); a line longer than
  :data:`~serialref.wire.framing.MAX_LINE` goes on unscrubbed past that point, as the
  referee discards it anyway.
"""

from __future__ import annotations

import os
import re
import selectors
import socket
from collections.abc import Callable

from serialref.wire.framing import MAX_LINE

__all__ = ["MAX_BUFFERED", "WRITE_TIMEOUT", "SeatRelay"]

WRITE_TIMEOUT = 10.0
"""Seconds a player's connection may take nothing while bytes wait for it (as a port's)."""

MAX_BUFFERED = 64 * 1024
"""Bytes held for one end that does not take them; beyond it that end's source is not read."""

_READ_SIZE = 4096
_LAST_LINE_END = re.compile(rb"[\r\n](?=[^\r\n]*\Z)")

Scrub = Callable[[bytes], bytes]
"""Rewrites complete lines (with their terminators) from the player before the seat sees them."""


class SeatRelay:
    """Bytes between ``connection`` (a player at ``peer``) and its seat's pty ``master``."""

    def __init__(self, connection: socket.socket, peer: str, master: int, scrub: Scrub) -> None:
        connection.setblocking(False)
        os.set_blocking(master, False)
        self.connection = connection
        self.peer = peer
        self.master = master
        self._scrub = scrub
        self._to_player = bytearray()
        self._to_seat = bytearray()
        self._partial = bytearray()  # the start of a line from the player, not yet ended
        self.write_timeout = WRITE_TIMEOUT
        self.waiting_since: float | None = None
        """Since when bytes have waited for the player with none taken (None: none wait)."""

    # ------------------------------------------------------------ what to watch

    def connection_events(self) -> int:
        """The ``selectors`` events the connection is watched for now."""
        read = selectors.EVENT_READ if not self._to_seat else 0
        return read | (selectors.EVENT_WRITE if self._to_player else 0)

    def master_events(self) -> int:
        """The ``selectors`` events the seat's master is watched for now."""
        read = selectors.EVENT_READ if len(self._to_player) < MAX_BUFFERED else 0
        return read | (selectors.EVENT_WRITE if self._to_seat else 0)

    def write_deadline(self) -> float | None:
        """When the player has taken nothing for its write timeout (None: nothing waits)."""
        return None if self.waiting_since is None else self.waiting_since + self.write_timeout

    # ------------------------------------------------------------ the player's side

    def hear_player(self) -> bool:
        """Read what the player sent and pass it on; False once the connection is closed."""
        try:
            data = self.connection.recv(_READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            data = b""
        if not data:
            return False
        self.pass_on(data)
        return True

    def pass_on(self, data: bytes) -> None:
        """Bytes from the player towards the seat: whole lines scrubbed, the rest held."""
        self._partial += data
        end = _LAST_LINE_END.search(self._partial)
        cut = end.end() if end is not None else 0
        if cut == 0 and len(self._partial) > MAX_LINE:
            cut = len(self._partial)  # too long to be a record: the referee drops it unread
        if cut:
            self._to_seat += self._scrub(bytes(self._partial[:cut]))
            del self._partial[:cut]
            self.feed_seat()

    def feed_seat(self) -> None:
        """Write what waits for the seat, as much as the pty takes now."""
        if not self._to_seat:
            return
        try:
            written = os.write(self.master, self._to_seat)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # the seat's board has gone: the bytes have nowhere to go
            written = len(self._to_seat)
        del self._to_seat[:written]

    # ------------------------------------------------------------ the seat's side

    def hear_seat(self, now: float) -> bool:
        """Read what the referee wrote to the seat and send it; False: the player is gone."""
        try:
            data = os.read(self.master, _READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return True  # the seat is being closed: its board has ended
        self._to_player += data
        return self.feed_player(now)

    def feed_player(self, now: float) -> bool:
        """Send what waits for the player, as much as it takes now; False: it is gone."""
        if not self._to_player:
            return True
        try:
            sent = self.connection.send(self._to_player)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            return False
        del self._to_player[:sent]
        if sent or self.waiting_since is None:
            self.waiting_since = now if self._to_player else None
        return True
