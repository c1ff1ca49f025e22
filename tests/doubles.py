"""Test doubles for the referee: a clock moved by hand, ports that keep what is sent, and
listeners that keep (or note, or fail on) the events they are handed."""

from __future__ import annotations

from typing import TypeVar

from serialref import records
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.errors import RecorderError
from serialref.events import MatchEvent

Event = TypeVar("Event", bound=MatchEvent)


class FakeClock:
    """A monotonic clock that moves only when a test moves :attr:`now`."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class FakePorts:
    """The players' ports (:class:`~serialref.referee.host.PlayerPorts`) as a list of the
    lines sent: each one reaches its player at once, at the clock's time, unless its
    port is in :attr:`hold` (its records wait: the referee hears when they leave)."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.sent: list[tuple[str, str]] = []
        self.hold: set[str] = set()

    def send(self, port: str, text: str, *, notify: bool = False) -> float | None:
        self.sent.append((port, text))
        return None if port in self.hold else self.clock.now

    def waiting(self, port: str) -> bool:
        return False

    def lines(self, port: str) -> list[str]:
        """What ``port``'s player got, in order."""
        return [text for sent_port, text in self.sent if sent_port == port]

    def commands(self, port: str) -> list[str]:
        """The ``refcom`` of each record ``port``'s player got."""
        return [records.referee_command(parse_record(text)).value for text in self.lines(port)]

    def last(self, port: str) -> EpdRecord:
        """The last record ``port``'s player got."""
        return parse_record(self.lines(port)[-1])


class EventRecorder:
    """A recorder (or an observer) that keeps every event it is handed."""

    def __init__(self) -> None:
        self.events: list[MatchEvent] = []

    def handle(self, event: MatchEvent) -> None:
        self.events.append(event)

    def sync(self) -> None:
        """Nothing to make durable."""

    def close(self) -> None:
        """Nothing to release."""

    def of(self, kind: type[Event]) -> list[Event]:
        """The events of one kind, in order."""
        return [event for event in self.events if isinstance(event, kind)]


class Witness:
    """A recorder or an observer that notes what it is given in a log shared by all.

    It fails, as a journal that cannot be written does, on the ``fail_on``-th event it is
    handled (0: never) or on every event of the type ``fail_on``; with ``fail_sync`` its
    sync fails.
    """

    def __init__(
        self,
        name: str,
        log: list[tuple[str, object]],
        *,
        fail_on: int | type[MatchEvent] = 0,
        error: Exception | None = None,
        fail_sync: bool = False,
    ) -> None:
        self.name = name
        self.log = log
        self.fail_on = fail_on
        self.error = error or RecorderError(f"cannot write {name}: No space left on device")
        self.fail_sync = fail_sync
        self.handled = 0

    def handle(self, event: MatchEvent) -> None:
        self.handled += 1
        if self.fail_on == self.handled or (
            isinstance(self.fail_on, type) and isinstance(event, self.fail_on)
        ):
            raise self.error
        self.log.append((self.name, event))

    def sync(self) -> None:
        if self.fail_sync:
            raise RecorderError(f"cannot sync {self.name}: Input/output error")
        self.log.append((self.name, "sync"))

    def close(self) -> None:
        """Nothing to release."""

    def __repr__(self) -> str:
        return f"<{self.name}>"
