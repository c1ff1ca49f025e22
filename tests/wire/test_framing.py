"""LineFramer: line ends, caps, malformed lines, and independence from chunking."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref.errors import ConfigError
from serialref.wire.framing import MAX_LINE, FrameEvent, Line, LineFramer, MalformedLine

Chunker = Callable[[bytes], list[bytes]]


def whole(data: bytes) -> list[bytes]:
    return [data]


def halves(data: bytes) -> list[bytes]:
    middle = len(data) // 2
    return [data[:middle], data[middle:]]


def byte_by_byte(data: bytes) -> list[bytes]:
    return [data[index : index + 1] for index in range(len(data))]


CHUNKERS = [whole, halves, byte_by_byte]


def frame(data: bytes, chunker: Chunker = whole, max_line: int = MAX_LINE) -> list[FrameEvent]:
    framer = LineFramer(max_line)
    return [event for chunk in chunker(data) for event in framer.feed(chunk)]


@pytest.mark.parametrize("chunker", CHUNKERS)
@pytest.mark.parametrize(
    ("data", "texts"),
    [
        (b"one\ntwo\n", ["one", "two"]),
        (b"one\r\ntwo\r\n", ["one", "two"]),
        (b"one\rtwo\r", ["one", "two"]),
        (b"one\r\ntwo\nthree\rfour\r\n", ["one", "two", "three", "four"]),
        (b"\r\n\n\r\rone\r\n\r\n", ["one"]),
        (b"a\tb\t\r\n", ["a b "]),
        (b"  \r\n", ["  "]),
        (b"no end yet", []),
    ],
    ids=["lf", "crlf", "cr", "mixed", "empty-lines", "tab", "blanks", "unfinished"],
)
def test_line_ends(data: bytes, texts: list[str], chunker: Chunker) -> None:
    assert frame(data, chunker) == [Line(text) for text in texts]


def test_cr_at_chunk_end_and_lf_at_next_start_are_one_line_end() -> None:
    framer = LineFramer()
    assert framer.feed(b"one\r") == [Line("one")]
    assert framer.feed(b"\ntwo\r") == [Line("two")]
    assert framer.feed(b"\r\n") == []
    assert framer.feed(b"\nthree\n") == [Line("three")]


def test_a_line_is_reported_when_its_cr_arrives() -> None:
    assert LineFramer().feed(b"ready\r") == [Line("ready")]


def test_empty_chunks_change_nothing() -> None:
    framer = LineFramer()
    assert framer.feed(b"one\r") == [Line("one")]
    assert framer.feed(b"") == []
    assert framer.feed(b"\ntwo\n") == [Line("two")]


@pytest.mark.parametrize("chunker", CHUNKERS)
def test_non_printable_byte_makes_the_line_malformed(chunker: Chunker) -> None:
    events = frame(b"ok 1\r\nabcdef\x1b[2J\r\nok 2\r\n", chunker)
    assert events == [
        Line("ok 1"),
        MalformedLine(
            reason="byte 0x1b at column 7 is not printable ASCII",
            preview="abcdef\\x1b[2J",
            length=10,
        ),
        Line("ok 2"),
    ]


@pytest.mark.parametrize("byte", [0x00, 0x07, 0x7F, 0x80, 0xFF])
def test_every_byte_outside_printable_ascii_is_refused(byte: int) -> None:
    (event,) = frame(b"e2e4" + bytes([byte]) + b"\n")
    assert isinstance(event, MalformedLine)
    assert f"0x{byte:02x} at column 5" in event.reason


def test_malformed_preview_is_escaped_and_capped() -> None:
    (event,) = frame(b"\x1b" + b"x" * 200 + b"\n")
    assert isinstance(event, MalformedLine)
    assert event.preview == "\\x1b" + "x" * 79
    assert event.length == 201


@pytest.mark.parametrize("chunker", CHUNKERS)
def test_line_of_exactly_the_cap_is_accepted(chunker: Chunker) -> None:
    assert frame(b"x" * 16 + b"\r\n", chunker, max_line=16) == [Line("x" * 16)]


@pytest.mark.parametrize("chunker", CHUNKERS)
def test_too_long_line_is_reported_once_and_framing_recovers(chunker: Chunker) -> None:
    events = frame(b"before\n" + b"y" * 100 + b"\x1b\r\nafter\r\n", chunker, max_line=16)
    assert events == [
        Line("before"),
        MalformedLine(reason="line too long (more than 16 bytes)", preview="y" * 17, length=17),
        Line("after"),
    ]


def test_too_long_line_is_reported_when_it_overflows_not_at_its_end() -> None:
    framer = LineFramer(max_line=MAX_LINE)
    assert framer.feed(b"z" * MAX_LINE) == []
    (event,) = framer.feed(b"z")
    assert isinstance(event, MalformedLine)
    assert event.reason == f"line too long (more than {MAX_LINE} bytes)"
    assert framer.feed(b"z" * 10_000) == []
    assert framer.feed(b"tail\nnext\n") == [Line("next")]


def test_a_line_that_never_ends_does_not_grow_memory() -> None:
    framer = LineFramer()
    chunk = b"n" * 65_536
    framer.feed(chunk)
    tracemalloc.start()
    try:
        for _ in range(200):  # 13 MB of one endless line
            assert framer.feed(chunk) == []
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024


def test_cap_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="max_line"):
        LineFramer(0)


# Bytes that matter to the framer are drawn often; the rest of the byte range still appears.
wire_bytes = st.lists(
    st.one_of(
        st.sampled_from([b"\r", b"\n", b"\r\n", b"\t", b"\x1b", b"\x00", b"\xff"]),
        st.binary(min_size=1, max_size=12),
        st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12).map(
            str.encode
        ),
    ),
    max_size=40,
).map(b"".join)


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    return [data[start:stop] for start, stop in pairwise(points)]


@given(
    data=wire_bytes,
    cuts=st.lists(st.integers(min_value=0), max_size=10),
    cap=st.sampled_from([4, 9, MAX_LINE]),
)
def test_any_chunking_yields_the_same_events(data: bytes, cuts: list[int], cap: int) -> None:
    expected = frame(data, whole, cap)
    assert frame(data, halves, cap) == expected
    assert frame(data, byte_by_byte, cap) == expected
    assert frame(data, lambda raw: split_at(raw, cuts), cap) == expected


@given(data=wire_bytes, cap=st.sampled_from([4, 9, MAX_LINE]))
def test_lines_are_never_empty_nor_unprintable(data: bytes, cap: int) -> None:
    for event in frame(data, byte_by_byte, cap):
        if isinstance(event, Line):
            assert event.text
            assert len(event.text) <= cap
            assert all(" " <= char <= "~" for char in event.text)
        else:
            assert event.length <= max(cap + 1, len(data))
            assert event.reason


@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    events = frame(data, halves)
    assert all(isinstance(event, Line | MalformedLine) for event in events)
