"""Bytes to lines, as PROTOCOL.md section 1 defines a line.

The framer is pure and incremental: it sees chunks exactly as ``read()`` returned them
and must give the same events however the bytes were split, because a serial line
splits data wherever the UART's FIFO or the USB adapter's timer happens to fire.

Three rules shape the code:

- LF, CR LF and a lone CR all end a line. Every CR and every LF ends a line, and the
  empty line between the CR and the LF of a CR LF is dropped like any empty line. So a
  line ends at its CR (its time of arrival is the CR's, not the next chunk's), and a
  CR LF split across two chunks needs no state carried from one chunk to the next.
- Memory is capped: at most ``max_line`` bytes are ever buffered. A longer line is
  reported once, when its first excess byte arrives, and the rest of it is dropped
  unseen up to the next line end. Reporting at that moment (not at the line end) is
  what keeps the events identical for every chunking, and lets a line that never ends
  be reported at all.
- A line holding any byte outside 0x20-0x7E (TAB reads as a blank) becomes a
  :class:`MalformedLine`, never a :class:`Line`: terminal escape sequences and line
  noise must not reach the record parser.

Work is done per line with ``re``, ``bytes.translate`` and slicing, never per byte in
Python, so a 115200 baud line costs next to nothing.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from serialref.errors import ConfigError, escape

__all__ = ["MAX_LINE", "FrameEvent", "Line", "LineFramer", "MalformedLine"]

LOGGER = logging.getLogger(__name__)

MAX_LINE = 4096
"""Longest line accepted, in bytes, terminator excluded (PROTOCOL.md section 1)."""

PREVIEW_BYTES = 80
"""How much of a bad line is kept for the log: enough to recognise it, never a flood."""

_LINE_END = re.compile(rb"[\r\n]")
_NOT_PRINTABLE = re.compile(rb"[^\x20-\x7e\t]")
_TAB_TO_BLANK = bytes.maketrans(b"\t", b" ")


@dataclass(frozen=True, slots=True)
class Line:
    """A complete line of printable ASCII: TAB already a blank, no terminator, never empty."""

    text: str


@dataclass(frozen=True, slots=True)
class MalformedLine:
    """A line that must not be acted on; ``preview`` is already escaped for logging."""

    reason: str
    preview: str
    length: int


FrameEvent = Line | MalformedLine


class LineFramer:
    """Turns chunks of bytes into :data:`FrameEvent` objects, one chunk at a time."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        if max_line < 1:
            raise ConfigError("max_line", f"must be at least 1, not {max_line!r}")
        self._max_line = max_line
        self._partial = bytearray()
        self._discarding = False

    def feed(self, data: bytes) -> list[FrameEvent]:
        """Add one chunk; return the events for every line that ended (or overflowed) in it."""
        start = 0
        events: list[FrameEvent] = []
        for line_end in _LINE_END.finditer(data):
            self._append(data, start, line_end.start(), events)
            self._end_line(events)
            start = line_end.end()
        self._append(data, start, len(data), events)
        return events

    def _append(self, data: bytes, start: int, stop: int, events: list[FrameEvent]) -> None:
        """Buffer ``data[start:stop]`` as part of the current line, or overflow it."""
        if self._discarding or start == stop:
            return
        room = self._max_line - len(self._partial)
        if stop - start <= room:
            self._partial += data[start:stop]
            return
        seen = self._partial + data[start : start + room + 1]
        events.append(
            MalformedLine(
                reason=f"line too long (more than {self._max_line} bytes)",
                preview=escape(bytes(seen[:PREVIEW_BYTES])),
                length=len(seen),
            )
        )
        self._partial.clear()
        self._discarding = True

    def _end_line(self, events: list[FrameEvent]) -> None:
        """A line end arrived: emit what the current line turned out to be and start afresh."""
        line = bytes(self._partial)
        self._partial.clear()
        if self._discarding:
            self._discarding = False
            return
        if not line:
            return
        bad = _NOT_PRINTABLE.search(line)
        if bad is None:
            events.append(Line(line.translate(_TAB_TO_BLANK).decode("ascii")))
            return
        events.append(
            MalformedLine(
                reason=f"byte 0x{line[bad.start()]:02x} at column {bad.start() + 1}"
                " is not printable ASCII",
                preview=escape(line[:PREVIEW_BYTES]),
                length=len(line),
            )
        )
