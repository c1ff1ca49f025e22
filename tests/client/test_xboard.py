"""The XBoard dialect with GNU Chess's allowances: one stale move forgiven, no illegal one."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import chess
import pytest
from enginetools import request, run, running, sent, xboard_settings

from serialref.client.players import ThinkingBudget, ThinkRequest
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


def test_a_period_that_ends_into_sudden_death_gets_a_new_level(tmp_path: Path) -> None:
    # 40/20:10+0.2 at move 40: the engine told "40 moves" would plan on a bonus that never
    # comes and spend its last seconds on move 80; it must be told the new control.
    log = tmp_path / "x.log"
    board = chess.Board()

    def on_clock(moves_to_go: int | None) -> ThinkRequest:
        budget = ThinkingBudget(turn=board.turn, remaining=(20.0, 20.0), increment=(0.2, 0.2),
                                moves_to_go=moves_to_go)  # fmt: skip
        return request(board.copy(), budget=budget, deadline=time.monotonic() + 20)

    async def scenario() -> None:
        async with running(xboard_settings(log)) as player:
            for moves_to_go in (2, 1, None):
                board.push((await player.think(on_clock(moves_to_go))).move)
                board.push(next(iter(board.legal_moves)))

    run(scenario())
    levels = [line for line in sent(log) if line.startswith("level ")]
    assert len(levels) == 2, levels
    assert levels[0].startswith("level 2 ") and levels[1].startswith("level 0 ")
