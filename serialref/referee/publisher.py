"""Where the referee's events go: its recorders, in order, then its observers.

A recorder's failure (the journal cannot be written) stops the match: the publisher
stops recording at once, so that nothing reaches the record after a gap, and hands the
failure to the match, which tells the players (PROTOCOL.md 7). An observer's failure
costs only that observer: it is logged and sees no more of the match.

Lines the referee acts on are recorded one by one, each once the referee has acted on
it: a reply's entry is written after the ``respond`` that relays its move has left, so
the opponent's clock does not wait for the journal. The entry keeps its place all the
same, because any other entry (the respond's own, first of all) writes it first. Lines
it ignores (noise, stale or out-of-turn replies), and any other line a player can
repeat at will and the referee only records (a fault outside a game, a ``sign_on``
held by its pace), are recorded a few per second per port, then counted
(:class:`serialref.referee.session.IgnoredLines`), so a flood costs bounded space.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from serialref.errors import RecorderError
from serialref.events import (
    LineReceived,
    LinesIgnored,
    MatchEvent,
    MatchListener,
    Recorder,
    RecordSent,
)
from serialref.referee.session import IgnoredLines
from serialref.referee.settings import PORTS

__all__ = ["Publisher"]

LOGGER = logging.getLogger(__name__)


class Publisher:
    """Publishes events to recorders and observers; records lines within limits."""

    def __init__(
        self,
        recorders: Sequence[Recorder],
        observers: Sequence[MatchListener],
        *,
        wall_clock: Callable[[], float],
        on_storage_failure: Callable[[RecorderError], None],
    ) -> None:
        self._recorders = list(recorders)
        self._observers = list(observers)
        self._wall = wall_clock
        self._on_storage_failure = on_storage_failure
        self._ignored_lines = {port: IgnoredLines() for port in PORTS}
        self._held: LineReceived | None = None

    def publish(self, event: MatchEvent) -> None:
        """Recorders first, in order; a recorder that fails stops the recording."""
        self.release_held()
        self._deliver(event)

    def _deliver(self, event: MatchEvent) -> None:
        for recorder in self._recorders:
            try:
                recorder.handle(event)
            except RecorderError as exc:
                self._failed(exc)
                raise
        for observer in tuple(self._observers):
            try:
                observer.handle(event)
            except Exception:
                LOGGER.exception("an observer failed; it sees no more of the match: %r", observer)
                self._observers.remove(observer)

    def sync(self) -> None:
        """Make what the recorders wrote in the step just handled durable."""
        self.release_held()
        for recorder in self._recorders:
            try:
                recorder.sync()
            except RecorderError as exc:
                self._failed(exc)
                raise

    def sent(self, port: str, text: str, left_at: float, *, queued: bool) -> None:
        """Record a line sent to ``port``: it left at ``left_at``, or was ``queued`` then."""
        self.publish(
            RecordSent(port=port, text=text, wall=self._wall(), left_at=left_at, queued=queued)
        )

    def received(self, port: str, text: str, at: float) -> None:
        """Record a line the referee acts on: held until :meth:`release_held`, or until
        any other event is published, whichever comes first."""
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
        """Publish the line held by :meth:`received`, if any (the line has been acted on)."""
        held, self._held = self._held, None
        if held is not None:
            self._deliver(held)

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

    def _failed(self, exc: RecorderError) -> None:
        """Nothing more is recorded (the record would have a gap); the match is told."""
        self._recorders = []
        self._on_storage_failure(exc)
