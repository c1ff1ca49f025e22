"""The line router: what a player's line is, and who acts on it (EPD spec 8.2).

Every line the board reads from a port comes here, time-stamped, on the referee's
thread. The router reads it as a player's request and hands it to whoever holds the
seats (a :class:`SeatHolder`): the game while one runs, which alone changes a seat's
state then, and the match between games. It decides itself only what needs no holder:
a line that is no request, and a request from a port nobody is signed on at, are
recorded as ignored; a ``sign_on`` that comes faster than any program restarts is
held until its pause is over (:class:`~serialref.referee.session.SignOnPace`), and
answered then; line noise is recorded within limits (PROTOCOL.md 1, 7). A player told
``disconnect`` is heard no more (8.1.2).

A port's other events come the same way: its line went away (the player is gone), or a
record it could not take at once has left (a move's clock may start).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Protocol

from serialref import records
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.errors import RecordError, UnexpectedRecordError
from serialref.records import Refreq
from serialref.referee.host import PlayerPorts
from serialref.referee.publisher import Publisher
from serialref.referee.session import PortSession

__all__ = ["LineRouter", "SeatHolder"]

LOGGER = logging.getLogger(__name__)


class SeatHolder(Protocol):
    """Who acts on what the players send: the game while one runs, the match between games."""

    def player_signed_on(self, port: str, name: str | None, /) -> object:
        """8.2.4: a ``sign_on`` was answered; ``name`` is the one the player gave."""
        ...

    def reply_received(self, port: str, record: EpdRecord, text: str, at: float, /) -> object:
        """8.2.2: a ``reply`` from a player that is signed on; its line end came at ``at``."""
        ...

    def player_signed_off(self, port: str, /) -> object:
        """8.2.3: a player that was signed on left with ``sign_off``."""
        ...

    def line_lost(self, port: str, reason: str, /) -> object:
        """The line of a player that was signed on went away."""
        ...

    def fault_reported(self, port: str, reason: str, text: str, at: float, /) -> object:
        """8.2.1: a player that is signed on reports a fault it cannot recover from."""
        ...

    def record_left(self, port: str, at: float, /) -> object:
        """A record the port could not take at once has left; it can have arrived at ``at``."""
        ...


class LineRouter:
    """Reads the players' lines and hands each to :attr:`holder`."""

    def __init__(
        self,
        sessions: Mapping[str, PortSession],
        publisher: Publisher,
        ports: PlayerPorts,
        holder: SeatHolder,
    ) -> None:
        self.holder = holder
        self._sessions = sessions
        self._publisher = publisher
        self._ports = ports

    def on_line(self, port: str, text: str, at: float) -> None:
        """A line arrived on ``port``; its line end came at ``at``."""
        session = self._sessions[port]
        if session.disconnected:
            return
        with self._publisher.acting_on_line():
            try:
                record = parse_record(text)
                request = records.player_request(record)
            except (RecordError, UnexpectedRecordError) as exc:
                self._publisher.ignored(port, text, at, f"not a player request: {exc}")
                return
            if request is Refreq.SIGN_ON:
                waits = session.sign_on_waits(record, at, unread=self._ports.waiting(port))
                if waits:
                    self._publisher.repeated(port, text, at, waits)
                    return
                self._publisher.received(port, text, at)
                self.holder.player_signed_on(port, _name_given(record))
            elif not session.signed_on:
                self._publisher.ignored(
                    port, text, at, f"{request.value} from a player that is not signed on"
                )
            elif request is Refreq.REPLY:
                self.holder.reply_received(port, record, text, at)
            elif request is Refreq.SIGN_OFF:
                self._publisher.received(port, text, at)
                self.holder.player_signed_off(port)
            else:
                reason = " ".join(record.operand_texts("c0")) or "no reason given"
                self.holder.fault_reported(port, reason, text, at)

    def on_malformed(self, port: str, reason: str, preview: str, at: float) -> None:
        """Line noise: logged and counted within limits, never acted on (PROTOCOL.md 1, 7)."""
        self._publisher.malformed(port, reason, preview, at)

    def on_line_lost(self, port: str, reason: str) -> None:
        """The port's line went away; the game and the clocks go on."""
        session = self._sessions[port]
        session.sign_ons.drop()  # a sign_on held from before is nobody's now
        if not session.signed_on:
            return
        LOGGER.warning("port %s: line lost (%s)", port, reason)
        self.holder.line_lost(port, reason)

    def on_record_left(self, port: str, at: float) -> None:
        """A record the port could not take at once has left; it can have arrived at ``at``."""
        self.holder.record_left(port, at)

    def next_deadline(self) -> float | None:
        """When a held ``sign_on`` is answered, the earliest first; None when none is held."""
        dues = [session.sign_ons.due() for session in self._sessions.values()]
        return min((due for due in dues if due is not None), default=None)

    def on_timer(self, now: float) -> None:
        """Answer the ``sign_on`` each port holds, once its pause is over."""
        for port, session in self._sessions.items():
            held = session.sign_ons.release(now)
            if held is not None:
                self.holder.player_signed_on(port, _name_given(held))


def _name_given(sign_on: EpdRecord) -> str | None:
    """The program name a ``sign_on`` gives (its ``tcsi``), in the form it takes on the line."""
    name = records.sign_on_identity(sign_on).name
    return None if name is None else records.tag_value(name)
