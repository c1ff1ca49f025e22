"""The log's reminder of a player the referee waits for: when, how often, and for whom."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterator

import chess
import pytest
from doubles import SteppedClock

from serialref import records
from serialref.epd.writer import format_record
from serialref.referee import reminder
from serialref.referee.daemon import PortPlan, RefereeDaemon
from serialref.referee.reminder import FIRST_REMINDER, LONGEST_INTERVAL, SignOnReminder
from serialref.referee.settings import MatchSettings
from serialref.testing import null_modem
from serialref.timecontrol import TimeControl

WAIT = 5.0


def test_reminders_come_at_doubling_intervals_up_to_a_limit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=reminder.__name__)
    clock = SteppedClock()
    reminding = SignOnReminder({"a": "/dev/serialref/a", "b": "/dev/serialref/b"}, clock)
    assert reminding.due(waiting=False) is None
    start = clock.now
    assert reminding.due(waiting=True) == start + FIRST_REMINDER
    clock.now = start + FIRST_REMINDER - 0.01
    reminding.remind(["b"])
    assert caplog.messages == []
    intervals = []
    for _ in range(8):
        due = reminding.due(waiting=True)
        assert due is not None
        clock.now = due
        reminding.remind(["b"])
        next_due = reminding.due(waiting=True)
        assert next_due is not None
        intervals.append(next_due - due)
    assert intervals == [20.0, 40.0, 80.0, 160.0, 300.0, 300.0, 300.0, 300.0]
    assert max(intervals) == LONGEST_INTERVAL
    assert caplog.messages == ["waiting for player B on /dev/serialref/b (not signed on)"] * 8


def test_a_wait_that_ended_starts_the_next_from_the_first_interval() -> None:
    clock = SteppedClock()
    reminding = SignOnReminder({"a": "port-a", "b": "port-b"}, clock)
    reminding.due(waiting=True)
    clock.now += FIRST_REMINDER
    reminding.remind(["a", "b"])
    assert reminding.due(waiting=False) is None  # both signed on
    clock.now += 3600
    assert reminding.due(waiting=True) == clock.now + FIRST_REMINDER


class LogLines(logging.Handler):
    """The reminder's log lines, for a test to await."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: queue.SimpleQueue[str] = queue.SimpleQueue()

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.put(record.getMessage())


@pytest.fixture
def log_lines() -> Iterator[LogLines]:
    handler = LogLines()
    logger = logging.getLogger(reminder.__name__)
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_a_referee_names_the_player_it_waits_for_and_its_port(
    monkeypatch: pytest.MonkeyPatch, log_lines: LogLines
) -> None:
    monkeypatch.setattr(reminder, "FIRST_REMINDER", 0.05)
    with null_modem() as (path_a, peer_a), null_modem() as (path_b, _):
        ready = threading.Event()
        settings = MatchSettings(time_control=TimeControl.parse("60+1"))
        daemon = RefereeDaemon(settings, [PortPlan("a", path_a), PortPlan("b", path_b)],
                               on_ready=ready.set)  # fmt: skip
        runner = threading.Thread(target=daemon.run, name="test-referee")
        runner.start()
        try:
            assert ready.wait(WAIT)
            peer_a.send_line(format_record(records.sign_on(chess.Board(), "Alpha")))
            peer_a.expect("reset")
            # The referee's thread wrote every earlier reminder before it sent the reset.
            while not log_lines.lines.empty():
                log_lines.lines.get()
            after_sign_on = log_lines.lines.get(timeout=WAIT)
        finally:
            daemon.request_stop("test over")
            runner.join(WAIT)
    assert not runner.is_alive()
    assert after_sign_on == f"waiting for player B on {path_b} (not signed on)"
