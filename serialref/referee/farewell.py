"""How a match takes leave of its players: in order, or because its journal failed.

A match that is complete or stopped (SIGTERM, SIGINT, SIGHUP, the supervisor's abort)
tells every player still signed on ``disconnect`` with the current position (8.1.2). A
match whose journal cannot be written stops at once (PROTOCOL.md 7): nothing more can be
recorded, and a game that went on unrecorded could not be continued, so every player
first gets a ``fault`` naming :data:`STORAGE_FAILURE`, with the position a restart
continues from, then ``disconnect``. Either way no seat takes another record.
"""

from __future__ import annotations

from collections.abc import Mapping

from serialref import records
from serialref.referee.host import RefereeHost
from serialref.referee.session import PortSession

__all__ = ["STORAGE_FAILURE", "disconnect_all"]

STORAGE_FAILURE = "referee storage failure"
"""The ``c0`` of the ``fault`` every player gets when the journal cannot be written."""


def disconnect_all(
    host: RefereeHost,
    sessions: Mapping[str, PortSession],
    position: records.Position,
    *,
    fault: str | None = None,
) -> None:
    """``disconnect`` in ``position`` to every player signed on, after a ``fault`` naming
    why, when there is one; every seat is disconnected from now on."""
    for port, session in sessions.items():
        if session.signed_on:
            if fault is not None:
                host.send(port, records.fault(position, fault))
            host.send(port, records.disconnect(position))
        session.note_disconnect()
