"""PortLink: polled reads and the reader thread, line events, line writes, clean shutdown."""

from __future__ import annotations

import itertools
import os
import queue
import select
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from serialref.errors import (
    ConfigError,
    FramingError,
    LineLostError,
    ProgrammingError,
)
from serialref.testing import Peer
from serialref.wire.framing import MAX_LINE
from serialref.wire.link import LineRead, LinkEvent, LinkLost, MalformedLineRead, PortLink
from serialref.wire.transport import SerialTransport

EVENT_TIMEOUT = 5.0
IDLE_SECONDS = 0.5
IDLE_CPU_BOUND = 0.05


class CountingClock:
    """A clock that ticks once per call, so a test can see which call stamped an event."""

    def __init__(self) -> None:
        self._ticks = itertools.count(1)

    def __call__(self) -> float:
        return float(next(self._ticks))


@pytest.fixture
def events() -> queue.SimpleQueue[Any]:
    return queue.SimpleQueue()


@pytest.fixture
def started_link(
    null_modem: tuple[str, Peer], events: queue.SimpleQueue[Any]
) -> Iterator[tuple[PortLink, Peer]]:
    path, peer = null_modem
    with PortLink("white", SerialTransport.open(path), events, clock=CountingClock()) as link:
        link.start()
        yield link, peer


@pytest.fixture
def polled_link(
    null_modem: tuple[str, Peer], events: queue.SimpleQueue[Any]
) -> Iterator[tuple[PortLink, Peer]]:
    path, peer = null_modem
    with PortLink("white", SerialTransport.open(path), events, clock=CountingClock()) as link:
        yield link, peer


def poll(link: PortLink) -> list[LinkEvent]:
    """Wait until the link's descriptor is ready, then read its events (maybe none yet)."""
    fd = link.fileno()
    assert fd is not None
    ready, _, _ = select.select([fd], [], [], EVENT_TIMEOUT)
    assert ready, f"port {link.port} had nothing to read within {EVENT_TIMEOUT} s"
    return link.read_events()


def poll_until(link: PortLink, count: int) -> list[LinkEvent]:
    received: list[LinkEvent] = []
    while len(received) < count:
        received += poll(link)
    return received


def next_event(events: queue.SimpleQueue[Any]) -> Any:
    return events.get(timeout=EVENT_TIMEOUT)


def reader_thread(port: str) -> threading.Thread | None:
    return next((t for t in threading.enumerate() if t.name == f"serialref-reader-{port}"), None)


def whole(data: bytes) -> list[bytes]:
    return [data]


def halves(data: bytes) -> list[bytes]:
    return [data[: len(data) // 2], data[len(data) // 2 :]]


def byte_by_byte(data: bytes) -> list[bytes]:
    return [data[index : index + 1] for index in range(len(data))]


@pytest.mark.parametrize("chunker", [whole, halves, byte_by_byte])
def test_lines_arrive_as_events_however_they_are_split(
    started_link: tuple[PortLink, Peer],
    events: queue.SimpleQueue[Any],
    chunker: Callable[[bytes], list[bytes]],
) -> None:
    _, peer = started_link
    wire = b"refreq sign_on\r\n\r\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\rx y\n"
    for chunk in chunker(wire):
        peer.send_bytes(chunk)
    texts = [next_event(events) for _ in range(3)]
    assert [event.text for event in texts] == [
        "refreq sign_on",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -",
        "x y",
    ]
    assert all(isinstance(event, LineRead) and event.port == "white" for event in texts)


def test_lines_of_one_chunk_share_its_arrival_time(
    null_modem: tuple[str, Peer], events: queue.SimpleQueue[Any]
) -> None:
    path, peer = null_modem
    with PortLink("black", SerialTransport.open(path), events, clock=CountingClock()) as link:
        peer.send_bytes(b"one\r\ntwo\r\n")  # one write, waiting before the reader starts
        link.start()
        first, second = next_event(events), next_event(events)
        peer.send_bytes(b"three\r\n")
        third = next_event(events)
    assert (first.text, second.text, third.text) == ("one", "two", "three")
    assert first.at == second.at == 1.0
    assert third.at == 2.0


def test_malformed_and_too_long_lines_become_events(
    started_link: tuple[PortLink, Peer], events: queue.SimpleQueue[Any]
) -> None:
    _, peer = started_link
    peer.send_bytes(b"\x1b[31mred\r\n" + b"z" * (MAX_LINE + 1) + b"\r\nfine\r\n")
    bad, long, good = next_event(events), next_event(events), next_event(events)
    assert bad == MalformedLineRead(
        "white", "byte 0x1b at column 1 is not printable ASCII", "\\x1b[31mred", bad.at
    )
    assert isinstance(long, MalformedLineRead)
    assert long.reason.startswith("line too long")
    assert good.text == "fine"


def test_hang_up_gives_exactly_one_link_lost(
    started_link: tuple[PortLink, Peer], events: queue.SimpleQueue[Any]
) -> None:
    link, peer = started_link
    thread = reader_thread("white")
    assert thread is not None
    peer.hang_up()
    lost = next_event(events)
    assert isinstance(lost, LinkLost)
    assert lost.port == "white"
    assert "line lost" in lost.reason
    thread.join(EVENT_TIMEOUT)
    assert not thread.is_alive()
    assert events.empty()
    with pytest.raises(LineLostError):
        link.send_line("refcom respond")


def test_send_line_appends_cr_lf(started_link: tuple[PortLink, Peer]) -> None:
    link, peer = started_link
    before = time.monotonic()
    left_at = link.send_line("refcom reset")
    assert before <= left_at <= time.monotonic()
    assert peer.read_line() == "refcom reset"


@pytest.mark.parametrize("newline", [b"\r\n", b"\n"])
def test_send_line_writes_exactly_the_line_and_the_newline(newline: bytes) -> None:
    events: queue.SimpleQueue[Any] = queue.SimpleQueue()
    with PortLink("loop", SerialTransport.open("loop://"), events, newline=newline) as link:
        link.send_line("refcom disconnect")
        assert link.transport.read() == b"refcom disconnect" + newline


@pytest.mark.parametrize(
    "text",
    ["", "e4\x1b[2J", "caf\u00e9", "a\tb", "two\r\nlines", "x" * (MAX_LINE + 1)],
    ids=["empty", "escape", "non-ascii", "tab", "line-end", "too-long"],
)
def test_send_line_refuses_what_is_not_a_line(text: str) -> None:
    events: queue.SimpleQueue[Any] = queue.SimpleQueue()
    with PortLink("loop", SerialTransport.open("loop://"), events) as link:
        with pytest.raises(FramingError) as caught:
            link.send_line(text)
        assert caught.value.port == "loop"
        link.send_line("ok")
        assert link.transport.read() == b"ok\r\n"  # nothing of the refused line went out


def test_newline_must_be_cr_lf_or_lf() -> None:
    with SerialTransport.open("loop://") as transport, pytest.raises(ConfigError, match="newline"):
        PortLink("loop", transport, queue.SimpleQueue(), newline=b"\r")


def test_close_joins_the_reader_and_closes_the_port(
    null_modem: tuple[str, Peer], events: queue.SimpleQueue[Any]
) -> None:
    path, _ = null_modem
    link = PortLink("white", SerialTransport.open(path), events)
    link.start()
    thread = reader_thread("white")
    assert thread is not None
    link.close()
    assert not thread.is_alive()
    link.close()
    assert events.empty()
    with SerialTransport.open(path):  # released: not busy any more
        pass


def test_close_without_start_closes_the_port(null_modem: tuple[str, Peer]) -> None:
    path, _ = null_modem
    PortLink("white", SerialTransport.open(path), queue.SimpleQueue()).close()
    with SerialTransport.open(path):
        pass


def test_start_twice_is_refused(started_link: tuple[PortLink, Peer]) -> None:
    link, _ = started_link
    with pytest.raises(ProgrammingError, match="already started"):
        link.start()


def test_a_bug_in_the_reader_still_reports_the_link_lost(
    started_link: tuple[PortLink, Peer],
    events: queue.SimpleQueue[Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, peer = started_link

    def broken_feed(self: object, data: bytes) -> list[object]:
        raise ZeroDivisionError("framer bug")

    monkeypatch.setattr("serialref.wire.link.LineFramer.feed", broken_feed)
    peer.send_line("anything")
    lost = next_event(events)
    assert isinstance(lost, LinkLost)
    assert "framer bug" in lost.reason


def thread_cpu_seconds(thread: threading.Thread) -> float:
    """User + system CPU time of one thread, from /proc (clock ticks)."""
    fields = Path(f"/proc/self/task/{thread.native_id}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of stat
    return ticks / os.sysconf("SC_CLK_TCK")


def test_an_idle_reader_uses_no_cpu(started_link: tuple[PortLink, Peer]) -> None:
    thread = reader_thread("white")
    assert thread is not None
    before = thread_cpu_seconds(thread)
    threading.Event().wait(IDLE_SECONDS)  # measuring idleness: there is no event to await
    assert thread_cpu_seconds(thread) - before <= IDLE_CPU_BOUND
    assert thread.is_alive()


# --- polled mode ---------------------------------------------------------------------------


@pytest.mark.parametrize("chunker", [whole, halves, byte_by_byte])
def test_polled_lines_arrive_however_they_are_split(
    polled_link: tuple[PortLink, Peer],
    events: queue.SimpleQueue[Any],
    chunker: Callable[[bytes], list[bytes]],
) -> None:
    link, peer = polled_link
    wire = b"refreq sign_on\r\n\r\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\rx y\n"
    received: list[LinkEvent] = []
    for chunk in chunker(wire):
        peer.send_bytes(chunk)
        received += poll(link)  # the framer keeps a partial line between calls
    assert [event for event in received if not isinstance(event, LineRead)] == []
    assert [(event.port, event.text) for event in received if isinstance(event, LineRead)] == [
        ("white", "refreq sign_on"),
        ("white", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"),
        ("white", "x y"),
    ]
    assert events.empty()  # a polled link never uses the queue
    assert reader_thread("white") is None


def test_polled_lines_are_stamped_right_after_the_read(polled_link: tuple[PortLink, Peer]) -> None:
    link, peer = polled_link
    assert link.read_events() == []  # nothing waiting: no event, and the clock is not read
    peer.send_bytes(b"one\r\ntwo\r\n")
    first, second = poll_until(link, 2)
    peer.send_bytes(b"three\r\n")
    (third,) = poll_until(link, 1)
    assert isinstance(first, LineRead) and isinstance(second, LineRead)
    assert (first.text, second.text, third.at) == ("one", "two", 2.0)
    assert first.at == second.at == 1.0


def test_polled_malformed_lines_become_events(polled_link: tuple[PortLink, Peer]) -> None:
    link, peer = polled_link
    peer.send_bytes(b"\x1b[31mred\r\nfine\r\n")
    bad, good = poll_until(link, 2)
    assert bad == MalformedLineRead(
        "white", "byte 0x1b at column 1 is not printable ASCII", "\\x1b[31mred", 1.0
    )
    assert isinstance(good, LineRead) and good.text == "fine"


def test_polled_hang_up_gives_exactly_one_link_lost(
    polled_link: tuple[PortLink, Peer], caplog: pytest.LogCaptureFixture
) -> None:
    link, peer = polled_link
    peer.hang_up()
    (lost,) = poll(link)
    assert isinstance(lost, LinkLost)
    assert (lost.port, lost.at) == ("white", 1.0)
    assert "line lost" in lost.reason
    assert "line lost" in caplog.text
    assert link.read_events() == []
    assert link.fileno() is not None  # still open: the caller unregisters, then closes


def test_a_bug_in_polled_framing_still_reports_the_link_lost(
    polled_link: tuple[PortLink, Peer], monkeypatch: pytest.MonkeyPatch
) -> None:
    link, peer = polled_link

    def broken_feed(self: object, data: bytes) -> list[object]:
        raise ZeroDivisionError("framer bug")

    monkeypatch.setattr("serialref.wire.link.LineFramer.feed", broken_feed)
    peer.send_line("anything")
    (lost,) = poll(link)
    assert isinstance(lost, LinkLost)
    assert "framer bug" in lost.reason
    assert link.read_events() == []


def test_a_started_link_cannot_be_polled(started_link: tuple[PortLink, Peer]) -> None:
    link, _ = started_link
    with pytest.raises(ProgrammingError, match="its own thread"):
        link.read_events()


def test_a_link_without_a_descriptor_must_be_started() -> None:
    events: queue.SimpleQueue[Any] = queue.SimpleQueue()
    with PortLink("loop", SerialTransport.open("loop://"), events) as link:
        assert link.fileno() is None
        link.start()
        link.send_line("echo")
        assert next_event(events).text == "echo"


def test_close_of_a_polled_link_closes_the_port(polled_link: tuple[PortLink, Peer]) -> None:
    link, peer = polled_link
    peer.send_line("unread")
    link.close()
    assert link.fileno() is None
    assert link.read_events() == []
    with SerialTransport.open(link.transport.url):  # released: not busy any more
        pass
