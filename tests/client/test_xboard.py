"""The XBoard dialect with GNU Chess's allowances: one stale move forgiven, no illegal one."""

from __future__ import annotations

import logging
from pathlib import Path

import chess
import pytest
from enginetools import request, run, running, xboard_settings

from serialref.errors import EngineError


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
            caplog.set_level(logging.DEBUG, logger="serialref.client.xboard")
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
