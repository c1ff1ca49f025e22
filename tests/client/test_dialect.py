"""What the client adds to both engine protocols: refused commands, progress read once."""

from __future__ import annotations

import logging
import time
import tracemalloc
from pathlib import Path

import chess
import pytest
from enginetools import run, running, sent, timed, uci_settings, xboard_settings

from serialref.client.engine import STOP_GRACE
from serialref.client.players import Decision
from serialref.client.startup import EngineProtocol


@pytest.mark.parametrize("behaviour", ["refuse-sd", "gnu-sd"])
def test_an_engine_that_refuses_a_depth_limit_is_warned_about_once_and_plays_on_the_clock(
    tmp_path: Path, behaviour: str, caplog: pytest.LogCaptureFixture
) -> None:
    log = tmp_path / "x.log"

    async def scenario() -> list[chess.Move | None]:
        settings = xboard_settings(log, behaviour, protocol=EngineProtocol.XBOARD, depth=2)
        async with running(settings) as player:
            board = chess.Board()
            moves = []
            for _ in range(3):
                decision = await player.think(timed(20.0, board))
                moves.append(decision.move)
                assert decision.move is not None
                board.push(decision.move)
            return moves

    moves = run(scenario())
    assert moves[:2] == [chess.Move.from_uci("e2e4"), chess.Move.from_uci("e7e5")]
    warnings = [entry for entry in caplog.records if entry.levelno == logging.WARNING]
    assert len(warnings) == 1, [entry.getMessage() for entry in warnings]
    assert "Fake XBoard refuses 'sd'" in warnings[0].getMessage()
    assert "--depth has no effect on it; it plays on the clock" in warnings[0].getMessage()
    commands = sent(log)
    assert "sd 2" in commands
    assert any(line.startswith("time ") for line in commands)
    assert any(line.startswith("level ") for line in commands)


def test_an_engine_that_floods_its_progress_is_still_stopped_at_the_deadline(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """3 MB of progress lines a move, the last (and latest with a score) 300 kB long."""
    log = tmp_path / "uci.log"

    async def scenario() -> tuple[list[Decision], list[float], list[int]]:
        async with running(uci_settings(log, "flood")) as player:
            decisions, late, peaks = [], [], []
            for _ in range(2):
                tracemalloc.start()
                try:
                    deadline = time.monotonic() + 0.5
                    decisions.append(await player.think(timed(0.5)))
                    late.append(time.monotonic() - deadline)
                    peaks.append(tracemalloc.get_traced_memory()[1])
                finally:
                    tracemalloc.stop()
            return decisions, late, peaks

    decisions, late, peaks = run(scenario())
    e4, e5 = chess.Move.from_uci("e2e4"), chess.Move.from_uci("e7e5")
    for decision in decisions:
        assert decision.move == e4  # the engine's own answer to 'stop'
        assert decision.analysis is not None  # read from the long line, cut but whole enough
        assert decision.analysis.centipawns == 30 and decision.analysis.pv[:2] == (e4, e5)
    assert all(lateness < STOP_GRACE + 0.2 for lateness in late), late
    assert "did not answer 'stop'" not in caplog.text
    assert max(peaks) < 1_000_000, peaks  # a third of what the engine printed
    assert caplog.text.count("the rest is dropped") == 1  # once per engine process
