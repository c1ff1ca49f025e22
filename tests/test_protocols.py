"""The engine dialects: refused commands, GNU Chess's echoes and stale moves."""

from __future__ import annotations

import logging
from pathlib import Path

import chess
import pytest
from enginetools import request, run, running, sent, timed, xboard_settings

from serialref.client.startup import EngineProtocol
from serialref.errors import EngineError


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


@pytest.mark.parametrize("behaviour", ["stale", "no-stale"])
def test_a_stale_move_after_a_resignation_does_not_become_the_next_first_move(
    tmp_path: Path, behaviour: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        settings = xboard_settings(tmp_path / "x.log", behaviour, movetime=1.0)
        async with running(settings) as player:
            assert player.name == "Fake XBoard"
            pid = player.pid
            assert (await player.think(request(game="game 1"))).resign
            caplog.set_level(logging.DEBUG, logger="serialref.client.protocols")
            decision = await player.think(request(game="game 2"))
            assert decision.move == chess.Move.from_uci("e2e4")
            assert player.pid == pid  # no restart

    run(scenario())
    dropped = [record for record in caplog.records if "stale move" in record.getMessage()]
    assert len(dropped) == (behaviour == "stale")


def test_only_one_stale_move_is_forgiven(tmp_path: Path) -> None:
    async def scenario() -> None:
        settings = xboard_settings(tmp_path / "x.log", "stale-then-illegal", movetime=1.0)
        async with running(settings) as player:
            assert (await player.think(request(game="game 1"))).resign
            with pytest.raises(EngineError, match=r"failed: .*e2e5"):
                await player.think(request(game="game 2"))

    run(scenario())


def test_an_illegal_xboard_move_without_a_game_over_is_a_fault(tmp_path: Path) -> None:
    async def scenario() -> None:
        settings = xboard_settings(tmp_path / "x.log", "illegal", movetime=1.0)
        async with running(settings) as player:
            with pytest.raises(EngineError, match=r"failed: .*d4b2"):
                await player.think(request())
            assert player.pid is None

    run(scenario())
