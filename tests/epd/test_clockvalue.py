"""The clock basetype of spec 5.2.7 both ways."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref.epd.clockvalue import clock_text, parse_clock
from serialref.errors import RecordError


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "000:00:00:00"), (59, "000:00:00:59"), (3661, "000:01:01:01"),
     (86400 * 999 + 86399, "999:23:59:59")],
)
def test_clock_text_and_parse_clock_agree(seconds: int, text: str) -> None:
    assert clock_text(seconds) == text
    assert parse_clock(text) == seconds


def test_parse_clock_accepts_four_day_digits() -> None:
    assert parse_clock("1000:00:00:01") == 1000 * 86400 + 1


@pytest.mark.parametrize("seconds", [-1, 1000 * 86400])
def test_clock_text_refuses_what_spec_5_2_7_cannot_write(seconds: int) -> None:
    with pytest.raises(RecordError, match="cannot be written as a clock value"):
        clock_text(seconds)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("00:00:00:00", "is not DDD:HH:MM:SS"),
        ("000:00:00", "is not DDD:HH:MM:SS"),
        ("x", "is not DDD:HH:MM:SS"),
        ("\x1b[2J", r"'\\\\x1b\[2J' is not DDD:HH:MM:SS"),
        ("000:00:60:00", "out of range"),
        ("000:00:00:60", "out of range"),
        ("000:24:00:00", "out of range"),
    ],
)
def test_parse_clock_rejects_other_forms(text: str, reason: str) -> None:
    with pytest.raises(RecordError, match=reason):
        parse_clock(text)


@given(st.integers(min_value=0, max_value=1000 * 86400 - 1))
def test_clock_round_trip(seconds: int) -> None:
    assert parse_clock(clock_text(seconds)) == seconds
