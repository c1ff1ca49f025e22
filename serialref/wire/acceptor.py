"""Accepting connections without spinning, dying, or taking the referee's last descriptors.

Every server of the referee (TCP seats, the audience's feeds, the control socket, the
standby's listener) accepts through an :class:`Acceptor`, because ``accept()`` fails in
ways a naive loop handles badly:

- The process or the system is out of descriptors (``EMFILE``, ``ENFILE``) or the
  kernel out of buffers (``ENOBUFS``, ``ENOMEM``). The connection stays in the backlog,
  so the listener stays readable and a loop that simply tries again spins at full CPU
  (and logs each try). The acceptor pauses instead: the server leaves the listener out
  of its ``select`` until :attr:`Acceptor.paused_until`. Connections wait in the
  backlog meanwhile, or are turned away by the kernel once it is full.
- The peer gave up before it was accepted (``ECONNABORTED``, ``EPROTO``, a firewall's
  ``EPERM``): nothing to do but carry on.
- Peers never hold the referee's last descriptors. Descriptors are handed out lowest
  first, so every descriptor below a new connection's is in use; one numbered at or
  above the soft limit less the server's reserve is closed at once. Every peer's
  descriptor is then below that line, so peers of that kind together hold at most the
  limit less the reserve. The reserves rank the peers: the audience
  (:data:`AUDIENCE_RESERVE`) stops first, then players and strangers at the seats
  (:data:`PLAYER_RESERVE`), then the supervisor (:data:`SUPERVISOR_RESERVE`), and the
  last descriptors are the referee's own: the journal, the PGN file and a pairing's
  ports always find one, and ``ctl status`` answers under any audience.

Each kind of trouble is logged a few times per :data:`~serialref.wire.ratelimit.LOG_WINDOW`
with a count of the rest (:class:`~serialref.wire.ratelimit.CountedLog`).
"""

from __future__ import annotations

import errno
import logging
import math
import resource
import socket
import time
from collections.abc import Callable

from serialref.wire.address import format_address
from serialref.wire.ratelimit import CountedLog

__all__ = [
    "AUDIENCE_RESERVE",
    "PAUSE",
    "PLAYER_RESERVE",
    "SUPERVISOR_RESERVE",
    "Acceptor",
    "descriptor_ceiling",
]

LOGGER = logging.getLogger(__name__)

AUDIENCE_RESERVE = 256
"""Descriptors never given to the audience (Style 12, web): the players', the supervisor's
and the referee's own."""

PLAYER_RESERVE = 128
"""Descriptors never given to a connection at a seat (or the standby's listener)."""

SUPERVISOR_RESERVE = 32
"""Descriptors never given to a control client: the referee's own (files, ports, players)."""

PAUSE = 1.0
"""Seconds a listener is left alone after the system ran out of descriptors or buffers."""

_OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


def descriptor_ceiling(reserve: int) -> int:
    """The lowest descriptor number a peer's connection may not have (see the module doc).

    The reserve is at most half the soft limit, so a low limit still leaves peers
    some; no ceiling when the process has no limit.
    """
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 2**31
    return soft - min(reserve, soft // 2)


class Acceptor:
    """Accepts on a listener for a server named ``name``, leaving ``reserve`` descriptors.

    ``logger`` is the server's own: its warnings read as the server's.
    """

    def __init__(self, listener: socket.socket, name: str, *, reserve: int,
                 logger: logging.Logger = LOGGER,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        listener.setblocking(False)
        self._listener = listener
        self._reserve = reserve
        self._name = name
        self._clock = clock
        self.log = CountedLog(logger, name, clock=clock)
        """Where the server logs its own refusals too, counted alike."""
        self.paused_until = -math.inf
        """While the clock is before this, the server does not watch the listener."""

    @property
    def paused(self) -> bool:
        return self._clock() < self.paused_until

    def accept(self) -> tuple[socket.socket, str] | None:
        """A new connection (non-blocking) and its peer's ``HOST:PORT``, or None.

        None when nothing was waiting, the peer had gone, or the process has no
        descriptor to spare (then :attr:`paused_until` tells when to try again).
        """
        try:
            connection, peer = self._listener.accept()
        except (BlockingIOError, InterruptedError):
            return None
        except OSError as exc:
            if exc.errno in _OUT_OF_RESOURCES:
                self.paused_until = self._clock() + PAUSE
                self.log.note(f"accept failed ({errno.errorcode.get(exc.errno or 0, '?')})",
                              f"{self._name}: cannot accept connections: {exc.strerror}; "
                              f"waiting {PAUSE:g} s")  # fmt: skip
            return None
        if connection.fileno() >= descriptor_ceiling(self._reserve):
            connection.close()
            self.log.note("no descriptor to spare",
                          f"{self._name}: refused a connection: the descriptors left are for "
                          "others (raise LimitNOFILE, ulimit -n, for more)")  # fmt: skip
            return None
        connection.setblocking(False)
        return connection, _peer_text(peer)

    def due(self) -> float:
        """The next moment the server must wake for: the pause's end or a count owed."""
        pause = self.paused_until if self.paused else math.inf
        return min(pause, self.log.due())


def _peer_text(peer: object) -> str:
    """``HOST:PORT`` of an internet peer; a Unix socket's peer has no name worth showing."""
    if isinstance(peer, tuple) and len(peer) >= 2:
        return format_address(str(peer[0]), int(peer[1]))
    return "a local client"
