"""The referee's clocks as its records tell them, and its ``respond`` read without the EPD reader.

A ``respond`` arrives for every move the client plays, always in the same normalised
form (PROTOCOL.md 2 and 3): the position, then ``cc``, ``ccms``, ``draw_offer`` if there
is one, ``fmvn``, ``hmvc``, ``refcom respond`` and ``sm`` (none for a game's first move
or after a restore). :func:`read_respond` picks those out of exactly that form with one
pattern; a referee that writes no ``ccms`` is read the same way. Any other line, or
anything in it that would need a closer look, gives ``None``, and the session reads the
line with the general EPD reader, which also explains what is wrong with it. The
position is not checked here: the session compares it with its own, which is valid by
construction.

:class:`ReportedClocks` is what the client knows of the clocks: the time each side has
consumed, from ``ccms`` when the referee sends it (PROTOCOL.md 2), from ``cc`` only when
it does not, with what the rounding may hide.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import NamedTuple

from serialref.epd.clockvalue import parse_clock
from serialref.epd.record import EpdRecord
from serialref.errors import RecordError
from serialref.records import CONSUMED_MS, consumed_ms

__all__ = ["ReportedClocks", "RespondLine", "read_respond", "reported_clocks"]

LOGGER = logging.getLogger(__name__)

_RESPOND = re.compile(
    r"(?P<position>[^ ]+ [wb] [^ ]+ [^ ]+) cc (?P<white>[0-9:]+) (?P<black>[0-9:]+);"
    r"(?: ccms (?P<white_ms>[0-9]{1,12}) (?P<black_ms>[0-9]{1,12});)?"
    r"(?P<offer> draw_offer;)? fmvn (?P<fmvn>[1-9][0-9]{0,8}); hmvc (?P<hmvc>[0-9]{1,9});"
    r" refcom respond;(?: sm (?P<sm>[A-Za-z0-9=+#-]+);)?"
)


class ReportedClocks(NamedTuple):
    """The time each side has consumed as the referee reported it, and how exactly.

    ``consumed_ms`` is (White, Black) in whole milliseconds. ``rounding_ms`` is the
    most the report can understate a side's time: none worth counting for ``ccms``
    (less than a millisecond, well inside the safety margin), up to a second for a
    referee that sends ``cc`` alone. A tuple, because one is made for every move.
    """

    consumed_ms: tuple[int, int] = (0, 0)
    rounding_ms: int = 0

    @classmethod
    def from_cc(cls, seconds: tuple[int, int]) -> ReportedClocks:
        """The clocks of a record with ``cc`` alone (whole seconds, rounded down, spec 6.6)."""
        return cls((seconds[0] * 1000, seconds[1] * 1000), 1000)

    def most_consumed(self, index: int) -> float:
        """Seconds side ``index`` (0 White, 1 Black) may have consumed: the worst case."""
        return (self.consumed_ms[index] + self.rounding_ms) / 1000


def reported_clocks(record: EpdRecord) -> ReportedClocks | None:
    """The clocks a referee record carries (``ccms``, else ``cc``), or None if it has none.

    A ``ccms`` that cannot be read is logged and the record's ``cc`` counts instead,
    as for a referee that sends no ``ccms``. The strict parser has already checked
    ``cc``.
    """
    if "ccms" in record:
        try:
            return ReportedClocks(consumed_ms(record))
        except RecordError as exc:
            LOGGER.warning("ignored the referee's ccms: %s; its cc counts", exc)
    if "cc" in record:
        return ReportedClocks.from_cc(record.clock_pair("cc"))
    return None


@dataclass(frozen=True, slots=True)
class RespondLine:
    """What a ``respond`` says: ``position`` is its four position fields as written."""

    position: str
    clocks: ReportedClocks
    fullmove: int
    halfmove: int
    san: str | None
    draw_offer: bool


def read_respond(text: str) -> RespondLine | None:
    """The ``respond`` in ``text`` if it has the referee's own form, else ``None``."""
    match = _RESPOND.fullmatch(text)
    if match is None:
        return None
    try:
        seconds = (parse_clock(match["white"]), parse_clock(match["black"]))
    except RecordError:
        return None
    white_ms = match["white_ms"]
    if white_ms is None:
        clocks = ReportedClocks.from_cc(seconds)
    else:
        clocks = ReportedClocks((int(white_ms), int(match["black_ms"])))
        if max(clocks.consumed_ms) >= CONSUMED_MS.stop:
            return None
    return RespondLine(
        position=match["position"],
        clocks=clocks,
        fullmove=int(match["fmvn"]),
        halfmove=int(match["hmvc"]),
        san=match["sm"],
        draw_offer=match["offer"] is not None,
    )
