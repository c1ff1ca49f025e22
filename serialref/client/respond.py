"""The referee's ``respond`` read without the EPD reader.

A ``respond`` arrives for every move the client plays, always in the same normalised
form (PROTOCOL.md 2 and 3): the position, then ``cc``, ``ccms``, ``draw_offer`` if there
is one, ``fmvn``, ``hmvc``, ``refcom respond`` and ``sm`` (none for a game's first move
or after a restore). :func:`read_respond` picks those out of exactly that form with one
pattern; a referee that writes no ``ccms`` is read the same way. Any other line, or
anything in it that would need a closer look, gives ``None``, and the session reads the
line with the general EPD reader, which also explains what is wrong with it. The
position is not checked here: the session compares it with its own, which is valid by
construction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from serialref.client.clocks import ReportedClocks
from serialref.epd.clockvalue import parse_clock
from serialref.errors import RecordError
from serialref.records import CONSUMED_MS

__all__ = ["RespondLine", "read_respond"]

_RESPOND = re.compile(
    r"(?P<position>[^ ]+ [wb] [^ ]+ [^ ]+) cc (?P<white>[0-9:]+) (?P<black>[0-9:]+);"
    r"(?: ccms (?P<white_ms>[0-9]{1,12}) (?P<black_ms>[0-9]{1,12});)?"
    r"(?P<offer> draw_offer;)? fmvn (?P<fmvn>[1-9][0-9]{0,8}); hmvc (?P<hmvc>[0-9]{1,9});"
    r" refcom respond;(?: sm (?P<sm>[A-Za-z0-9=+#-]+);)?"
)


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
