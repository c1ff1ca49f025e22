"""A text stream an observer writes to, which can fail without failing the match.

Observers share stdout with whoever reads it: ``serialref run | head`` closes the pipe,
a terminal goes away with its SSH session. Such a failure must not reach the referee,
which is still keeping two clocks, so the first one is logged and the observer falls
silent. Text is made safe to show here too: names and reasons can come from a player
(``tcsi``, a fault's ``c0``) or a configuration file, and a control character in them
must not drive the terminal.
"""

from __future__ import annotations

import logging
from typing import TextIO

from serialref.errors import escape

__all__ = ["ObserverOutput", "printable"]

LOGGER = logging.getLogger(__name__)


class ObserverOutput:
    """Writes and flushes whole pieces of text until the stream fails once."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._failed = False

    def write(self, text: str) -> None:
        if self._failed:
            return
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError) as exc:  # ValueError: the stream was closed
            self._failed = True
            LOGGER.warning("%s: output stopped: %s", _name(self._stream), exc)

    def flush(self) -> None:
        self.write("")


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on (ESC, CR, ...) escaped."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else escape(char) for char in text)


def _name(stream: TextIO) -> str:
    return str(getattr(stream, "name", "output"))
