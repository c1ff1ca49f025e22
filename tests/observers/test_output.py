"""An observer's output: whole pieces of text, flushed, silent after the first failure."""

from __future__ import annotations

import io
import logging

import pytest
from matchevents import untimed_game

from serialref.observers.console import ConsoleObserver
from serialref.observers.output import ObserverOutput, printable
from serialref.observers.progress import ProgressObserver


class Recording(io.StringIO):
    """Remembers what was written and when it was flushed."""

    def __init__(self) -> None:
        super().__init__()
        self.flushed_at: list[int] = []

    def flush(self) -> None:
        self.flushed_at.append(len(self.getvalue()))


class FailingAfter(io.StringIO):
    """Takes ``count`` writes, then fails as a closed pipe does."""

    name = "<stdout>"

    def __init__(self, count: int, error: Exception) -> None:
        super().__init__()
        self.count = count
        self.error = error
        self.attempts = 0

    def write(self, text: str) -> int:
        self.attempts += 1
        if self.attempts > self.count:
            raise self.error
        return super().write(text)


def test_every_piece_is_written_whole_and_flushed_at_once() -> None:
    stream = Recording()
    output = ObserverOutput(stream)
    output.write("Started game 1 of 2\n")
    output.write("Finished game 1\n")
    assert stream.getvalue() == "Started game 1 of 2\nFinished game 1\n"
    assert stream.flushed_at == [20, 36]


def test_a_broken_pipe_is_logged_once_and_the_output_falls_silent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stream = FailingAfter(1, BrokenPipeError(32, "Broken pipe"))
    output = ObserverOutput(stream)
    with caplog.at_level(logging.WARNING, logger="serialref.observers.output"):
        output.write("first\n")
        output.write("second\n")
        output.write("third\n")
        output.flush()
    assert stream.getvalue() == "first\n"
    assert stream.attempts == 2  # nothing is tried after the failure
    assert [record.getMessage() for record in caplog.records] == [
        "<stdout>: output stopped: [Errno 32] Broken pipe"
    ]


def test_a_closed_stream_is_a_failure_too(caplog: pytest.LogCaptureFixture) -> None:
    stream = io.StringIO()
    stream.close()
    output = ObserverOutput(stream)
    with caplog.at_level(logging.WARNING, logger="serialref.observers.output"):
        output.write("lost\n")
        output.write("lost too\n")
    assert [record.getMessage() for record in caplog.records] == [
        "output: output stopped: I/O operation on closed file"
    ]


def test_flush_writes_nothing() -> None:
    stream = Recording()
    ObserverOutput(stream).flush()
    assert stream.getvalue() == ""
    assert stream.flushed_at == [0]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Stockfish 17", "Stockfish 17"),
        ("Käse Ω", "Käse Ω"),  # printable letters stay as they are
        ("Evil\x1b[2J", "Evil\\x1b[2J"),
        ("two\r\nlines", "two\\r\\nlines"),
        ("bell\x07", "bell\\x07"),
        ("\x9b31m", "\\xc2\\x9b31m"),  # a C1 control a terminal would obey
        ("zero\u200bwidth", "zero\\xe2\\x80\\x8bwidth"),
        ("", ""),
    ],
)
def test_printable(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_an_untimed_game_on_a_stream_that_breaks_costs_only_the_output(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The console draws the board at the game's end, the progress lines follow; the
    # pipe breaks in between, and neither observer raises into the referee.
    stream = FailingAfter(3, BrokenPipeError(32, "Broken pipe"))
    observers = [ConsoleObserver(stream, live=False), ProgressObserver(stream)]
    with caplog.at_level(logging.WARNING):
        for event in untimed_game():
            for observer in observers:
                observer.handle(event)
        for observer in observers:
            observer.close()
    assert stream.getvalue().splitlines()[:2] == [
        "port a: Alpha signed on",
        "port b: Beta signed on",
    ]
    assert "Started game 1 of 1 (Alpha vs Beta)" in stream.getvalue()
    assert [record.getMessage() for record in caplog.records] == [
        "<stdout>: output stopped: [Errno 32] Broken pipe",
        "<stdout>: output stopped: [Errno 32] Broken pipe",  # once per observer
    ]
