"""serialref.wire.ratelimit: a few occurrences told one by one, the rest counted once."""

from __future__ import annotations

import logging
import math

import pytest
from doubles import SteppedClock

from serialref.wire.ratelimit import BurstLimit, CountedLog


def test_a_burst_is_told_the_rest_counted_when_the_next_window_starts() -> None:
    limit = BurstLimit(burst=2, window=1.0)
    assert [limit.admit(10.0 + i / 10) for i in range(5)] == [
        (True, 0), (True, 0), (False, 0), (False, 0), (False, 0)
    ]  # fmt: skip
    assert limit.owed_at() == 11.0
    assert limit.admit(11.2) == (True, 3)
    assert limit.owed_at() == math.inf and limit.flush() == 0


def test_a_flood_costs_a_few_lines_and_one_count_even_when_it_stops(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = SteppedClock(100.0)
    log = CountedLog(logging.getLogger("test.flood"), "seats", burst=2, window=10.0, clock=clock)
    caplog.set_level(logging.WARNING)
    told = [log.note("wrong token", f"guess {n}") for n in range(1000)]
    log.note("silent", "a silent one")  # another kind has a share of its own
    assert told.count(True) == 2 and log.due() == 110.0
    clock.now = 110.0
    log.settle()
    assert [r.getMessage() for r in caplog.records] == [
        "guess 0", "guess 1", "a silent one",
        "seats: wrong token: 998 more in the last 10 s",
    ]  # fmt: skip
    assert log.due() == math.inf
