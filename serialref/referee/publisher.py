"""Where the referee's events go: its recorders, in order, then its observers.

A recorder's failure (the journal cannot be written) stops the match: the publisher
stops recording at once, so that nothing reaches the record after a gap, and hands the
failure to the match, which tells the players (PROTOCOL.md 7). An observer's failure
costs only that observer: it is logged and sees no more of the match.

A move is recorded ahead of the record that tells another party of it (write-ahead,
PROTOCOL.md 7): the game publishes it, after the line that played it, before the
opponent's ``respond`` leaves, and the recorders write both at once; the observers (the
audience's feeds, the control socket, the standby's replicator) see them only with the
next event published (the ``respond``'s own, first of all), so the ``respond`` waits
for no observer, and the sync the game asks for right after the ``respond`` makes them
durable. A recorder that fails there names the move it could not take, so the match
can tell the players the position before it.

A line the referee acts on is held until the next entry is recorded, which writes the
line first, or until the referee is done with the line: each entry keeps its place
after the line that caused it. Lines it ignores (noise, stale or out-of-turn replies),
and any other line a player can repeat at will and the referee only records (a fault
outside a game, a ``sign_on`` held by its pace), are recorded a few per second per port,
then counted
(:class:`serialref.referee.session.IgnoredLines`), so a flood costs bounded space.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from serialref.errors import RecorderError
from serialref.happenings import (
    Infraction,
    LineReceived,
    LinesIgnored,
    MatchEvent,
    MatchListener,
    MovePlayed,
    Recorder,
    RecordSent,
)
from serialref.referee.session import IgnoredLines
from serialref.referee.settings import PORTS

__all__ = ["Publisher"]

LOGGER = logging.getLogger(__name__)

_RECORDED_AHEAD = (MovePlayed,)
"""Events recorded ahead of the record that tells the players of them (write-ahead)."""


class Publisher:
    """Publishes events to recorders and observers; records lines within limits.

    ``on_storage_failure`` is handed a recorder's error and the event it kept out of the
    record (None when a sync failed).
    """

    def __init__(
        self,
        recorders: Sequence[Recorder],
        observers: Sequence[MatchListener],
        *,
        wall_clock: Callable[[], float],
        on_storage_failure: Callable[[RecorderError, MatchEvent | None], None],
    ) -> None:
        self._recorders = list(recorders)
        self._observers = list(observers)
        self._wall = wall_clock
        self._on_storage_failure = on_storage_failure
        self._ignored_lines = {port: IgnoredLines() for port in PORTS}
        self._held: LineReceived | None = None
        self._unobserved: list[MatchEvent] = []  # recorded, not yet observed

    def publish(self, event: MatchEvent) -> None:
        """Recorders first, in order, after the line held by :meth:`received`; then the
        observers, except for a move, which they see with the next event published (or
        at :meth:`release_held`). A recorder that fails stops the recording."""
        held, self._held = self._held, None
        if held is not None:
            self._record(held, on_behalf_of=event)
        self._record(event, on_behalf_of=event)
        if not isinstance(event, _RECORDED_AHEAD):
            self._observe()

    def _record(self, event: MatchEvent, *, on_behalf_of: MatchEvent) -> None:
        """Every recorder in order; the observers' turn comes in :meth:`_observe`.

        A failure names ``on_behalf_of``: the event the caller wanted recorded, which
        the record now lacks even when the line held before it is what failed.
        """
        for recorder in self._recorders:
            try:
                recorder.handle(event)
            except RecorderError as exc:
                self._failed(exc, on_behalf_of)
                raise
        self._unobserved.append(event)

    def _observe(self) -> None:
        """Hand the observers what was recorded since they last saw the record."""
        unobserved, self._unobserved = self._unobserved, []
        for event in unobserved:
            for observer in tuple(self._observers):
                try:
                    observer.handle(event)
                except Exception:
                    LOGGER.exception(
                        "an observer failed; it sees no more of the match: %r", observer
                    )
                    self._observers.remove(observer)

    def sync(self) -> None:
        """Make what the recorders wrote in the step just handled durable."""
        self.release_held()
        for recorder in self._recorders:
            try:
                recorder.sync()
            except RecorderError as exc:
                self._failed(exc, None)
                raise

    def sent(self, port: str, text: str, left_at: float, *, queued: bool) -> None:
        """Record a line sent to ``port``: it left at ``left_at``, or was ``queued`` then."""
        self.publish(
            RecordSent(port=port, text=text, wall=self._wall(), left_at=left_at, queued=queued)
        )

    def received(self, port: str, text: str, at: float) -> None:
        """Record a line the referee acts on: held until :meth:`release_held`, or until
        any other event is recorded, whichever comes first."""
        self.release_held()
        self._held = LineReceived(port=port, text=text, wall=self._wall(), at=at)

    @contextmanager
    def acting_on_line(self) -> Iterator[None]:
        """While the referee acts on a line: the line is recorded at the latest on leaving,
        even when acting on it failed."""
        try:
            yield
        finally:
            self.release_held()

    def release_held(self) -> None:
        """Record the line held by :meth:`received`, if any (the line has been acted on),
        and let the observers see what was recorded ahead of them."""
        held, self._held = self._held, None
        if held is not None:
            self._record(held, on_behalf_of=held)
        self._observe()

    def fault(self, port: str, name: str, reason: str, text: str, at: float) -> None:
        """Record a player's ``fault`` (8.2.1), the line and the infraction it reports."""
        self.received(port, text, at)
        LOGGER.error("port %s: player %s reports a fault: %s", port, name, reason)
        self.publish(Infraction(port=port, reason=f"player fault: {reason}", text=text))

    def ignored(self, port: str, text: str, at: float, reason: str) -> None:
        """Record a line the referee does not act on: a few per second, then a count."""
        self.repeated(port, text, at, f"ignored: {reason}")

    def repeated(self, port: str, text: str, at: float, note: str) -> None:
        """Record a line the referee does not act on now, with ``note`` saying why: a few
        per second, then a count."""
        if self.admits(port, at):
            LOGGER.warning("port %s: %s", port, note)
            self.publish(LineReceived(port=port, text=text, wall=self._wall(), at=at, note=note))

    def malformed(self, port: str, reason: str, preview: str, at: float) -> None:
        """Record line noise (already escaped) within the same limits."""
        if self.admits(port, at):
            LOGGER.warning("port %s: ignored a malformed line (%s): %s", port, reason, preview)
            self.publish(
                LineReceived(
                    port=port, text=preview, wall=self._wall(), at=at, malformed=True, note=reason
                )
            )

    def count_left_out(self) -> None:
        """Report the ignored lines not recorded one by one (at a game's or the match's end)."""
        for port in PORTS:
            self._report_left_out(port, self._ignored_lines[port].flush())

    def admits(self, port: str, at: float) -> bool:
        """Whether one more line a player can repeat at will, arrived at ``at``, is recorded
        one by one; if not, it is counted."""
        admitted, left_out = self._ignored_lines[port].admit(at)
        self._report_left_out(port, left_out)
        return admitted

    def _report_left_out(self, port: str, count: int) -> None:
        if count:
            LOGGER.warning("port %s: %d more lines ignored and not recorded one by one", port,
                           count)  # fmt: skip
            self.publish(LinesIgnored(port=port, count=count))

    def _failed(self, exc: RecorderError, unrecorded: MatchEvent | None) -> None:
        """Nothing more is recorded (the record would have a gap); the match is told."""
        self._recorders = []
        self._on_storage_failure(exc, unrecorded)
