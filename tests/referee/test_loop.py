"""The shared event loop with fake boards: routing, timers, stalls, failures, boards joining."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import pytest

from serialref.referee.loop import STALL_THRESHOLD, RefereeLoop


class FakeBoard:
    """A board that records what the loop asks of it and is done after ``events`` events."""

    def __init__(self, name: str, *, events: int = 1, clock: Callable[[], float] = time.monotonic,
                 deadline_in: float | None = None) -> None:  # fmt: skip
        self.name = name
        self.wanted = events
        self.clock = clock
        self.deadline_in = deadline_in
        self.handled: list[object] = []
        self.timers = 0
        self.stalls: list[tuple[float, float]] = []
        self.threads: set[int] = set()
        self.began = False
        self.ended: list[Exception | None] = []
        self.gone = threading.Event()
        self.fail_on: object = None
        self.on_timer_work: Callable[[], None] | None = None
        self.deadlines_asked = 0

    @property
    def done(self) -> bool:
        return len(self.handled) >= self.wanted or self.timers >= self.wanted

    @property
    def in_game(self) -> bool:
        return True

    def begin(self) -> None:
        self.threads.add(threading.get_ident())
        self.began = True

    def next_deadline(self) -> float | None:
        self.deadlines_asked += 1
        return None if self.deadline_in is None else self.clock() + self.deadline_in

    def handle(self, event: object) -> None:
        self.threads.add(threading.get_ident())
        if event == self.fail_on:
            raise OSError(f"{self.name} cannot write")
        self.handled.append(event)

    def on_timer(self) -> None:
        self.threads.add(threading.get_ident())
        self.timers += 1
        if self.on_timer_work is not None:
            self.on_timer_work()

    def settle(self) -> None:
        self.threads.add(threading.get_ident())

    def on_stall(self, since: float, until: float) -> None:
        self.stalls.append((since, until))

    def end(self, error: Exception | None) -> None:
        self.threads.add(threading.get_ident())
        self.ended.append(error)
        self.gone.set()


def test_every_board_gets_its_own_events_on_the_one_thread() -> None:
    loop = RefereeLoop()
    first, second = FakeBoard("first", events=2), FakeBoard("second", events=1)
    for board, event in ((first, "a1"), (second, "b1"), (first, "a2")):
        loop.put(board, event)
    loop.run([first, second])
    assert (first.handled, second.handled) == (["a1", "a2"], ["b1"])
    assert first.ended == second.ended == [None]
    assert first.threads == second.threads == {threading.get_ident()}


def test_a_board_added_from_another_thread_begins_on_the_loop() -> None:
    loop = RefereeLoop()
    over = threading.Event()
    late = FakeBoard("late")
    runner = threading.Thread(target=lambda: loop.run(stay=lambda: not over.is_set()))
    runner.start()
    try:
        loop.add(late)
        loop.put(late, "hello")
        assert late.gone.wait(5)
    finally:
        over.set()
        loop.call(lambda: None)
        runner.join(5)
    assert not runner.is_alive()
    assert late.began and late.handled == ["hello"] and late.ended == [None]
    assert late.threads == {runner.ident}


def test_a_stall_is_charged_to_no_one_on_every_board() -> None:
    offset = [0.0]

    def clock() -> float:
        return time.monotonic() + offset[0]

    loop = RefereeLoop(clock=clock)
    slow = FakeBoard("slow", events=2, clock=clock, deadline_in=0.0)
    other = FakeBoard("other", events=1)

    def stall() -> None:  # the handling of one board took longer than the threshold, once
        if slow.timers == 1:
            offset[0] += 2 * STALL_THRESHOLD
            loop.put(other, "after the stall")

    slow.on_timer_work = stall
    loop.run([slow, other])
    assert len(slow.stalls) == len(other.stalls) == 1
    since, until = other.stalls[0]
    assert until - since > STALL_THRESHOLD


def test_a_failing_board_ends_with_its_error_and_the_others_play_on() -> None:
    loop = RefereeLoop()
    failing, healthy = FakeBoard("failing", events=2), FakeBoard("healthy", events=2)
    failing.fail_on = "boom"
    for board, event in ((failing, "boom"), (healthy, "h1"), (failing, "never"), (healthy, "h2")):
        loop.put(board, event)
    loop.run([failing, healthy])
    assert len(failing.ended) == 1 and isinstance(failing.ended[0], OSError)
    assert failing.handled == []
    assert healthy.handled == ["h1", "h2"] and healthy.ended == [None]


def test_boards_still_playing_are_ended_when_the_loop_is_left_by_an_exception() -> None:
    loop = RefereeLoop()
    board = FakeBoard("board", events=5)

    def interrupt() -> None:
        raise KeyboardInterrupt

    loop.call(interrupt)
    with pytest.raises(KeyboardInterrupt):
        loop.run([board])
    assert board.ended == [None]


class LinePort:
    """A pipe the loop watches that gives one event per whole line, as a port does.

    It notes, at each read, how often the loop had asked its board for a deadline.
    """

    def __init__(self, board: FakeBoard) -> None:
        self.board = board
        self.read_fd, self.write_fd = os.pipe()
        self.pending = b""
        self.asked_at_reads: list[int] = []
        self.read = threading.Semaphore(0)

    def ready(self, readable: bool, writable: bool) -> list[object]:
        self.asked_at_reads.append(self.board.deadlines_asked)
        self.pending += os.read(self.read_fd, 64)
        *lines, self.pending = self.pending.split(b"\n")
        self.read.release()
        return [line.decode() for line in lines]


def test_a_part_of_a_line_does_not_make_the_loop_ask_for_deadlines_again() -> None:
    loop = RefereeLoop()
    board = FakeBoard("board", events=2, deadline_in=3600.0)
    port = LinePort(board)
    watching = threading.Event()

    def watch() -> None:
        loop.watch(port.read_fd, port)
        watching.set()

    loop.call(watch)
    runner = threading.Thread(target=loop.run, args=([board],))
    runner.start()
    try:
        assert watching.wait(5)
        for chunk in (b"fi", b"rst", b"\n", b"sec", b"ond\n"):
            os.write(port.write_fd, chunk)
            assert port.read.acquire(timeout=5)
        runner.join(5)
        assert not runner.is_alive()
    finally:
        os.close(port.read_fd)
        os.close(port.write_fd)
    assert board.handled == ["first", "second"]
    first = port.asked_at_reads[0]
    assert port.asked_at_reads == [first, first, first, first + 1, first + 1]
