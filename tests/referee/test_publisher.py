"""The publisher: recorders in order and their failure stops the record; observers may fail."""

from __future__ import annotations

import logging

import chess
import pytest

from serialref.errors import RecorderError
from serialref.happenings import (
    LineReceived,
    LinesIgnored,
    MatchEvent,
    MovePlayed,
    PgnAppended,
    RecordSent,
    RefereeStalled,
)
from serialref.referee.publisher import Publisher

WALL = 1_795_000_000.0


class Listener:
    """A recorder or an observer that notes what it is given in a log shared by all."""

    def __init__(self, name: str, log: list[tuple[str, object]], *, fail_on: int = 0,
                 error: Exception | None = None, fail_sync: bool = False) -> None:  # fmt: skip
        self.name = name
        self.log = log
        self.fail_on = fail_on  # the n-th event handled raises ``error`` (0: never)
        self.error = error or RecorderError(f"cannot write {name}: No space left on device")
        self.fail_sync = fail_sync
        self.handled = 0

    def handle(self, event: MatchEvent) -> None:
        self.handled += 1
        if self.handled == self.fail_on:
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


class Harness:
    def __init__(self, recorders: int = 2, observers: int = 2) -> None:
        self.log: list[tuple[str, object]] = []
        self.failures: list[RecorderError] = []
        self.unrecorded: list[MatchEvent | None] = []
        self.recorders = [Listener(f"recorder{n}", self.log) for n in range(1, recorders + 1)]
        self.observers = [Listener(f"observer{n}", self.log) for n in range(1, observers + 1)]
        self.publisher = Publisher(
            self.recorders, self.observers, wall_clock=lambda: WALL,
            on_storage_failure=self._failed,
        )  # fmt: skip

    def _failed(self, error: RecorderError, unrecorded: MatchEvent | None) -> None:
        self.failures.append(error)
        self.unrecorded.append(unrecorded)

    def order(self) -> list[str]:
        return [name for name, _ in self.log]

    def events(self, name: str = "recorder1") -> list[object]:
        return [event for who, event in self.log if who == name]


EVENT = RefereeStalled(seconds=2.0)
NEXT = PgnAppended(game=1)


def test_recorders_first_in_order_then_observers() -> None:
    harness = Harness()
    harness.publisher.publish(EVENT)
    assert harness.log == [
        ("recorder1", EVENT), ("recorder2", EVENT), ("observer1", EVENT), ("observer2", EVENT),
    ]  # fmt: skip


def test_sync_syncs_every_recorder_in_order_and_no_observer() -> None:
    harness = Harness()
    harness.publisher.sync()
    assert harness.log == [("recorder1", "sync"), ("recorder2", "sync")]


def test_a_recorder_error_stops_recording_and_reaches_the_handler() -> None:
    harness = Harness()
    harness.recorders[0].fail_on = 2
    harness.publisher.publish(EVENT)
    with pytest.raises(RecorderError, match="cannot write recorder1") as caught:
        harness.publisher.publish(NEXT)
    assert harness.failures == [caught.value]
    # The event that failed reached no one after the failing recorder: the record
    # must not hold a later event without the earlier one.
    assert harness.order() == ["recorder1", "recorder2", "observer1", "observer2"]
    harness.publisher.publish(EVENT)
    harness.publisher.sync()
    assert harness.log[4:] == [("observer1", EVENT), ("observer2", EVENT)]
    assert len(harness.failures) == 1


def test_a_failing_sync_stops_recording_and_reaches_the_handler() -> None:
    harness = Harness()
    harness.recorders[1].fail_sync = True
    with pytest.raises(RecorderError, match="cannot sync recorder2") as caught:
        harness.publisher.sync()
    assert harness.failures == [caught.value]
    harness.publisher.publish(EVENT)
    assert harness.order() == ["recorder1", "observer1", "observer2"]


def test_a_failing_observer_is_logged_and_detached(caplog: pytest.LogCaptureFixture) -> None:
    harness = Harness()
    harness.observers[0].fail_on = 1
    harness.observers[0].error = OverflowError("cannot convert float infinity to integer")
    with caplog.at_level(logging.ERROR, logger="serialref.referee.publisher"):
        harness.publisher.publish(EVENT)
        harness.publisher.publish(NEXT)
    assert harness.order() == ["recorder1", "recorder2", "observer2"] * 2
    assert harness.observers[0].handled == 1
    assert harness.failures == []
    (record,) = caplog.records
    assert record.getMessage() == "an observer failed; it sees no more of the match: <observer1>"
    assert record.exc_info is not None and isinstance(record.exc_info[1], OverflowError)


def test_an_observer_raising_a_recorder_error_is_only_detached() -> None:
    harness = Harness()
    harness.observers[1].fail_on = 1
    harness.publisher.publish(EVENT)
    harness.publisher.publish(NEXT)
    assert harness.failures == []
    assert harness.events("observer2") == []
    assert harness.events("recorder2") == [EVENT, NEXT]


def test_a_line_acted_on_is_recorded_with_the_wall_time_once_released() -> None:
    harness = Harness(recorders=1, observers=0)
    harness.publisher.received("a", "refreq sign_on;", 12.5)
    assert harness.events() == []
    harness.publisher.release_held()
    harness.publisher.release_held()
    assert harness.events() == [LineReceived(port="a", text="refreq sign_on;", wall=WALL, at=12.5)]


def test_a_held_line_keeps_its_place_before_any_later_event() -> None:
    harness = Harness(recorders=1, observers=1)
    harness.publisher.received("a", "refreq reply; sm e4;", 12.5)
    harness.publisher.publish(EVENT)
    harness.publisher.received("b", "refreq sign_off;", 13.0)
    harness.publisher.received("a", "refreq sign_off;", 13.5)
    harness.publisher.sync()
    line = LineReceived(port="a", text="refreq reply; sm e4;", wall=WALL, at=12.5)
    off_b = LineReceived(port="b", text="refreq sign_off;", wall=WALL, at=13.0)
    off_a = LineReceived(port="a", text="refreq sign_off;", wall=WALL, at=13.5)
    assert harness.events() == [line, EVENT, off_b, off_a, "sync"]
    assert harness.events("observer1") == [line, EVENT, off_b, off_a]


MOVE = MovePlayed(
    game=1, ply=1, san="e4", uci="e2e4", elapsed=2.5, remaining=(58.5, 60.0),
    consumed=(2.5, 0.0), moves_made=(1, 0), fen=chess.Board("4k3/8/8/8/4P3/8/8/4K3 b - e3").fen(),
)  # fmt: skip


def test_a_move_is_recorded_at_once_and_observed_with_the_next_event() -> None:
    harness = Harness(recorders=1, observers=1)
    harness.publisher.received("a", "refreq reply; sm e4;", 12.5)
    harness.publisher.publish(MOVE)
    line = LineReceived(port="a", text="refreq reply; sm e4;", wall=WALL, at=12.5)
    assert harness.log == [("recorder1", line), ("recorder1", MOVE)]
    harness.publisher.publish(NEXT)
    assert harness.events("observer1") == [line, MOVE, NEXT]
    harness.publisher.publish(MOVE)
    harness.publisher.sync()
    assert harness.log[-2:] == [("observer1", MOVE), ("recorder1", "sync")]


@pytest.mark.parametrize("failing", [1, 2], ids=["its line", "the move"])
def test_a_move_that_cannot_be_recorded_is_named_and_observed_by_no_one(failing: int) -> None:
    harness = Harness(recorders=1, observers=1)
    harness.recorders[0].fail_on = failing
    harness.publisher.received("a", "refreq reply; sm e4;", 12.5)
    with pytest.raises(RecorderError):
        harness.publisher.publish(MOVE)
    assert harness.unrecorded == [MOVE]
    harness.publisher.sync()
    assert MOVE not in harness.events("observer1")


def test_a_failing_sync_names_no_event() -> None:
    harness = Harness(recorders=1, observers=0)
    harness.recorders[0].fail_sync = True
    with pytest.raises(RecorderError):
        harness.publisher.sync()
    assert harness.unrecorded == [None]


def test_ignored_lines_are_recorded_a_few_per_second_then_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    harness = Harness(recorders=1, observers=0)
    with caplog.at_level(logging.WARNING, logger="serialref.referee.publisher"):
        for n in range(12):
            harness.publisher.ignored("a", f"noise {n}", 10.0 + n * 0.01, "reply out of turn")
        harness.publisher.ignored("a", "later", 11.5, "reply out of turn")
    assert harness.events() == [
        *(LineReceived(port="a", text=f"noise {n}", wall=WALL, at=10.0 + n * 0.01,
                       note="ignored: reply out of turn") for n in range(5)),
        LinesIgnored(port="a", count=7),
        LineReceived(port="a", text="later", wall=WALL, at=11.5, note="ignored: reply out of turn"),
    ]  # fmt: skip
    assert [record.getMessage() for record in caplog.records].count(
        "port a: ignored: reply out of turn"
    ) == 6
    assert "port a: 7 more lines ignored and not recorded one by one" in caplog.text


def test_each_port_has_its_own_allowance() -> None:
    harness = Harness(recorders=1, observers=0)
    for port in "ab":
        for n in range(6):
            harness.publisher.ignored(port, f"{port}{n}", 1.0, "stale")
    texts = [event.text for event in harness.events() if isinstance(event, LineReceived)]
    assert texts == ["a0", "a1", "a2", "a3", "a4", "b0", "b1", "b2", "b3", "b4"]
    harness.publisher.count_left_out()
    assert harness.events()[-2:] == [LinesIgnored("a", 1), LinesIgnored("b", 1)]
    harness.publisher.count_left_out()  # reported once
    assert len(harness.events()) == 12


def test_malformed_lines_share_the_allowance_and_are_marked() -> None:
    harness = Harness(recorders=1, observers=0)
    for n in range(5):
        harness.publisher.ignored("b", f"stale {n}", 3.0, "stale")
    harness.publisher.malformed("b", "line too long", "xxxx...", 3.1)
    harness.publisher.malformed("a", "not printable", "\\x1b[2J", 3.2)
    assert harness.events()[-1] == LineReceived(
        port="a", text="\\x1b[2J", wall=WALL, at=3.2, malformed=True, note="not printable"
    )
    assert all(
        event.port == "b" and not event.malformed
        for event in harness.events()[:-1] if isinstance(event, LineReceived)
    )  # fmt: skip
    harness.publisher.count_left_out()
    assert harness.events()[-1] == LinesIgnored("b", 1)


def test_nothing_left_out_reports_nothing() -> None:
    harness = Harness(recorders=1, observers=0)
    harness.publisher.ignored("a", "once", 1.0, "stale")
    harness.publisher.count_left_out()
    assert [type(event) for event in harness.events()] == [LineReceived]


def test_a_line_the_referee_only_records_shares_the_allowance_with_its_note(
    caplog: pytest.LogCaptureFixture,
) -> None:
    harness = Harness(recorders=1, observers=0)
    with caplog.at_level(logging.WARNING, logger="serialref.referee.publisher"):
        harness.publisher.repeated("a", "sign_on", 1.0, "held: within the pause")
        admitted = [harness.publisher.admits("a", 1.0) for _ in range(5)]
    assert admitted == [True, True, True, True, False]
    assert harness.events() == [
        LineReceived(port="a", text="sign_on", wall=WALL, at=1.0, note="held: within the pause")
    ]
    assert "port a: held: within the pause" in caplog.text
    harness.publisher.count_left_out()
    assert harness.events()[-1] == LinesIgnored("a", 1)


def test_a_line_sent_is_recorded_with_when_it_left() -> None:
    harness = Harness(recorders=1, observers=0)
    harness.publisher.sent("b", "refcom reset", 4.5, queued=True)
    assert harness.events() == [
        RecordSent(port="b", text="refcom reset", wall=WALL, left_at=4.5, queued=True)
    ]
