"""The engine's output read on a thread: a search's progress kept back, all else passed on."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time

import pytest

from serialref.client.searchreader import SearchLines, SearchReader


class _Pipe(asyncio.Protocol):
    """python-chess's side of the pipe: what it reads once the reader hands the pipe back."""

    def __init__(self) -> None:
        self.data = b""
        self.closed = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.data += data

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed.set_result(None)


def _bestmove(search: SearchLines, line: str) -> str:
    """The answer's reading, for these tests: the ``bestmove`` line itself."""
    return line


def _nothing() -> None:
    """Nobody waits on the search but the test."""


async def _reader(max_line: int = 1000) -> tuple[SearchReader, int, _Pipe, list[str], list[str]]:
    """A reader of a fresh pipe; returns it, the pipe's writing end and what it delivers."""
    read_end, write_end = os.pipe()
    pipe = _Pipe()
    transport, _ = await asyncio.get_running_loop().connect_read_pipe(
        lambda: pipe, os.fdopen(read_end, "rb", buffering=0)
    )
    delivered: list[str] = []
    cuts: list[str] = []
    reader = SearchReader(
        transport,  # type: ignore[arg-type]
        deliver=delivered.append,
        cut=lambda: cuts.append("cut"),
        max_line=max_line,
        pending=b"info str",
    )
    return reader, write_end, pipe, delivered, cuts


def test_a_search_keeps_its_latest_scored_line_and_passes_on_the_rest() -> None:
    async def scenario() -> tuple[str, SearchLines, list[str]]:
        reader, writer, pipe, delivered, _ = await _reader()
        try:
            os.write(writer, b"ing before the search\r\n")
            while not delivered:
                await asyncio.sleep(0.01)  # another thread reads it: no event to await
            search = reader.expect_answer(_bestmove, _nothing)
            os.write(writer, b"info depth 1 score cp 10 pv e2e4\n")
            os.write(writer, b"info depth 2 score cp 20 nodes 9 pv d2d4 d7d5\ninfo depth 3 curr")
            os.write(writer, b"move c2c4\nreadyok\nbestmove d2d4 ponder d7d5\nid name late\n")
            answer = await asyncio.wait_for(search.answer, 5.0)
            while len(delivered) < 3:
                await asyncio.sleep(0.01)  # the thread hands over what follows on its own turn
        finally:
            os.close(writer)
        await asyncio.wait_for(pipe.closed, 5.0)
        return answer, search, delivered

    answer, search, delivered = asyncio.run(scenario())
    assert answer == "bestmove d2d4 ponder d7d5"
    assert search.info_lines() == [
        "info depth 2 score cp 20 nodes 9 pv d2d4 d7d5",
        "info depth 3 currmove c2c4",
    ]
    assert search.variation_line() == "info depth 2 score cp 20 nodes 9 pv d2d4 d7d5"
    assert delivered == ["info string before the search", "readyok", "id name late"]


def test_the_end_of_the_output_hands_the_pipe_back() -> None:
    """python-chess's transport must see the end itself: it reports the engine's exit."""

    async def scenario() -> bytes:
        reader, writer, pipe, _, _ = await _reader()
        reader.expect_answer(_bestmove, _nothing)
        os.write(writer, b"info depth 1 score cp 10 pv e2e4\n")
        os.close(writer)
        await asyncio.wait_for(pipe.closed, 5.0)
        assert reader.searching is not None  # no bestmove came: the search waits for the exit
        reader.engine_ended(RuntimeError("exited"))
        assert reader.searching is None
        return pipe.data

    assert asyncio.run(scenario()) == b""


def test_a_search_whose_engine_ended_fails() -> None:
    async def scenario() -> None:
        reader, writer, pipe, _, _ = await _reader()
        search = reader.expect_answer(_bestmove, _nothing)
        os.close(writer)
        await asyncio.wait_for(pipe.closed, 5.0)
        reader.engine_ended(RuntimeError("exit code 3"))
        with pytest.raises(RuntimeError, match="exit code 3"):
            await search.answer

    asyncio.run(scenario())


def test_a_long_line_is_cut_and_said_so() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        _, writer, pipe, delivered, cuts = await _reader(max_line=40)
        os.write(writer, b"x" * 100 + b"\n" + b"y" * 30 + b"\n")
        os.close(writer)
        await asyncio.wait_for(pipe.closed, 5.0)
        return delivered, cuts

    delivered, cuts = asyncio.run(scenario())
    assert delivered == ["info str" + "x" * 32, "y" * 30]
    assert cuts == ["cut"]


def test_a_flood_waits_for_the_loop() -> None:
    """Lines the loop has not taken yet are bounded: the thread stops reading meanwhile,
    and the engine's writes wait, as when the loop read the pipe itself."""
    flood = 20_000_000

    async def scenario() -> int:
        _, writer, pipe, delivered, _ = await _reader()
        written = [0]

        def write() -> None:
            with contextlib.suppress(BrokenPipeError):
                while written[0] < flood:
                    written[0] += os.write(writer, b"x\n" * 32_768)
            os.close(writer)

        engine = threading.Thread(target=write)
        engine.start()
        time.sleep(1.0)  # the loop takes nothing meanwhile
        waiting = written[0]
        await asyncio.wait_for(pipe.closed, 60.0)
        engine.join()
        assert len(delivered) == written[0] // 2  # every line (the first after "info str")
        return waiting

    waiting = asyncio.run(scenario())
    assert waiting < 1_000_000, waiting  # two reads, and the pipe's buffer
