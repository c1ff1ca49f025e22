"""What a long analysis run shows while it works, and the line it ends with.

On a terminal one status line is redrawn in place (positions done, solved so far,
rate, time left), at most :data:`REDRAW_INTERVAL` apart so that a fast run does not
spend its time printing; anywhere else (a log, a CI job) nothing is printed until
the final summary, which always comes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

__all__ = ["REDRAW_INTERVAL", "Progress", "Tally"]

REDRAW_INTERVAL = 0.2
"""Seconds between two redraws of the status line."""


@dataclass(slots=True)
class Tally:
    """The counts of one run."""

    total: int
    done: int = 0
    searched: int = 0
    bad: int = 0
    failed: int = 0
    judged: int = 0
    solved: int = 0
    seconds: float = 0.0

    def add(self, *, searched: bool = False, solved: bool | None = None) -> None:
        """One more record written."""
        self.done += 1
        self.searched += searched
        if solved is not None:
            self.judged += 1
            self.solved += solved

    @property
    def rate(self) -> float:
        """Searched positions per second so far."""
        return self.searched / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        """The run in one line."""
        parts = [f"{self.done} of {self.total} records written", f"{self.searched} searched"]
        if self.bad:
            parts.append(f"{self.bad} bad")
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.judged:
            parts.append(f"solved {self.solved} of {self.judged}")
        parts.append(f"{self.seconds:.1f} s, {self.rate:.2f} positions/s")
        return ", ".join(parts)


@dataclass(slots=True)
class Progress:
    """The status line of a run on ``stream``; ``live`` when it is a terminal."""

    tally: Tally
    stream: TextIO
    live: bool
    clock: Callable[[], float] = time.monotonic
    _started: float = field(init=False)
    _drawn: float = field(init=False)
    _width: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self._started = self._drawn = self.clock()

    def update(self) -> None:
        """Take the tally's new counts; redraw the line when it is time to."""
        now = self.clock()
        self.tally.seconds = now - self._started
        if self.live and now - self._drawn >= REDRAW_INTERVAL:
            self._drawn = now
            self._draw(self.status())

    def status(self) -> str:
        """Positions done, solved so far, rate and time left."""
        tally = self.tally
        parts = [f"{tally.done}/{tally.total} records"]
        if tally.judged:
            parts.append(f"solved {tally.solved}/{tally.judged}")
        if tally.done and tally.seconds > 0:
            left = (tally.total - tally.done) * tally.seconds / tally.done
            parts.append(f"{tally.rate:.1f} positions/s, {_duration(left)} left")
        return "  ".join(parts)

    def note(self, line: str) -> None:
        """A line for the user (a bad record, a failure), printed above the status line."""
        if self.live and self._width:
            self._draw("")
            self._drawn = float("-inf")  # drawn again at the next update
        self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        """Clear the status line; the caller prints the summary."""
        self.tally.seconds = self.clock() - self._started
        if self.live and self._width:
            self._draw("")

    def _draw(self, text: str) -> None:
        self.stream.write("\r" + text.ljust(self._width) + ("\r" if not text else ""))
        self.stream.flush()
        self._width = len(text)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
