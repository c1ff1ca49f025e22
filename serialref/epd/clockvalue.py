"""The clock basetype of spec 5.2.7, ``DDD:HH:MM:SS``, both ways.

Apart from the record because the builders of ``cc`` operations
(:mod:`serialref.records`) write clock values from the referee's seconds, with no
record to read them from; the record's ``clock_pair`` reads them back.
"""

from __future__ import annotations

import re

from serialref.errors import RecordError, escape

__all__ = ["MAX_CLOCK_SECONDS", "clock_text", "parse_clock"]

_CLOCK_RE = re.compile(r"([0-9]{3,4}):([0-9]{2}):([0-9]{2}):([0-9]{2})")
MAX_CLOCK_SECONDS = 1000 * 86400 - 1
"""``999:23:59:59``, the largest clock value of spec 5.2.7."""


def parse_clock(text: str) -> int:
    """Seconds from a clock value ``DDD:HH:MM:SS`` (spec 5.2.7; four day digits accepted)."""
    match = _CLOCK_RE.fullmatch(text)
    if match is None:
        raise RecordError(f"clock value {escape(text)!r} is not DDD:HH:MM:SS")
    days, hours, minutes, seconds = (int(part) for part in match.groups())
    if hours > 23 or minutes > 59 or seconds > 59:
        raise RecordError(
            f"clock value {text!r} is out of range (hours 00-23, minutes and seconds 00-59)"
        )
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def clock_text(seconds: int) -> str:
    """The clock value ``DDD:HH:MM:SS`` of ``seconds``; spec 5.2.7 stops at 999 days."""
    if not 0 <= seconds <= MAX_CLOCK_SECONDS:
        raise RecordError(
            f"{seconds} seconds cannot be written as a clock value (0 to {MAX_CLOCK_SECONDS})"
        )
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    days, hour = divmod(hours, 24)
    return f"{days:03d}:{hour:02d}:{minute:02d}:{second:02d}"
