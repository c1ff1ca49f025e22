"""The engine bridge: playing, limits, the deadline, stopping, and faults.

The engines are the scripted programs in ``tests/engines/``; real engines are exercised
in ``tests/integration/test_engines.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import chess
import pytest
from enginetools import request, run, running, sent, timed, uci_settings, xboard_settings

from serialref.client.engine import STOP_GRACE, UNTIMED_MOVETIME, EnginePlayer
from serialref.client.options import EngineSettings
from serialref.client.players import Analysis, ThinkingBudget
from serialref.errors import ConfigError, EngineError

ROOT = Path(__file__).resolve().parents[2]


def test_options_are_checked_by_the_engine(tmp_path: Path) -> None:
    log = tmp_path / "uci.log"
    with pytest.raises(ConfigError, match="NoSuch"):
        run(EnginePlayer(uci_settings(log, options={"NoSuch": "1"})).start())

    async def scenario() -> None:
        player = EnginePlayer(uci_settings(log, options={"Hash": "32"}))
        await player.start()
        await player.close()
        await player.close()  # closing twice is harmless

    run(scenario())
    assert "setoption name Hash value 32" in sent(log)


def test_a_node_limit_an_xboard_engine_cannot_keep_is_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nodes: Fake XBoard does not take node limits"):
        run(EnginePlayer(xboard_settings(tmp_path / "x.log", nodes=3000)).start())


def test_the_engine_name_move_and_analysis(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running(uci_settings(tmp_path / "uci.log")) as player:
            assert player.name == "Fake Engine 1.0"
            decision = await player.think(request())
            assert decision.move == chess.Move.from_uci("e2e4")
            assert decision.engine_restarts == 0
            assert decision.analysis == Analysis(
                centipawns=25,
                pv=(chess.Move.from_uci("e2e4"), chess.Move.from_uci("e7e5")),
                nodes=1234,
                seconds=2,
                depth=3,
            )
            assert not (decision.draw_offer or decision.resign or decision.draw_accept)

    run(scenario())


def test_the_engine_gets_the_whole_game(tmp_path: Path) -> None:
    log = tmp_path / "uci.log"

    async def scenario() -> chess.Move | None:
        async with running(uci_settings(log)) as player:
            board = chess.Board()
            board.push_san("e4")
            return (await player.think(request(board))).move

    assert run(scenario()) == chess.Move.from_uci("e7e5")
    assert "position startpos moves e2e4" in sent(log)


def test_a_fixed_limit_goes_with_the_real_clocks(tmp_path: Path) -> None:
    log = tmp_path / "uci.log"

    async def scenario() -> None:
        async with running(uci_settings(log, depth=2)) as player:
            await player.think(timed(12.5))

    run(scenario())
    go = [line for line in sent(log) if line.startswith("go")]
    assert go == ["go wtime 12500 btime 12500 winc 100 binc 100 depth 2"]


def test_an_untimed_game_gets_a_fixed_move_time(tmp_path: Path) -> None:
    log = tmp_path / "uci.log"

    async def scenario() -> None:
        async with running(uci_settings(log)) as player:
            await player.think(request(budget=ThinkingBudget(turn=chess.WHITE)))

    run(scenario())
    assert f"go movetime {int(UNTIMED_MOVETIME * 1000)}" in sent(log)


def test_an_engine_that_ignores_its_clock_is_stopped_at_the_deadline(tmp_path: Path) -> None:
    log = tmp_path / "uci.log"

    async def scenario() -> tuple[chess.Move | None, float, float]:
        async with running(uci_settings(log, "obey-stop", depth=30)) as player:
            deadline = time.monotonic() + 0.4
            decision = await player.think(timed(0.4))
            return decision.move, deadline, time.monotonic()

    move, deadline, answered = run(scenario())
    assert move == chess.Move.from_uci("e2e4")
    assert answered < deadline + STOP_GRACE
    assert "stop" in sent(log)


@pytest.mark.parametrize(("behaviour", "expected"), [("deaf", "d1a1"), ("silent", None)])
def test_an_engine_that_never_answers_still_moves_before_its_flag(
    tmp_path: Path, behaviour: str, expected: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    log = tmp_path / "uci.log"
    board = chess.Board("4k3/8/8/3q4/8/8/8/3RK3 w - - 0 1")

    async def scenario() -> tuple[list[chess.Move | None], list[float], list[int | None]]:
        async with running(uci_settings(log, behaviour)) as player:
            moves, late, pids = [], [], []
            for seconds in (0.3, 3.0):  # the second move leaves time to replace the engine
                deadline = time.monotonic() + seconds
                pids.append(player.pid)
                moves.append((await player.think(timed(seconds, board))).move)
                late.append(time.monotonic() - deadline)
            pids.append(player.pid)
            return moves, late, pids

    moves, late, pids = run(scenario())
    # The variation's first move, else the greedy choice: the rook takes the queen.
    assert moves == [chess.Move.from_uci(expected or "d1d5")] * 2
    assert all(lateness < STOP_GRACE + 0.2 for lateness in late), late
    assert "stop" in sent(log)
    assert pids[0] == pids[1] != pids[2]  # the deaf engine was replaced for its next move
    assert "did not answer 'stop'" in caplog.text


def test_a_move_is_sent_in_time_while_a_replaced_engine_is_still_starting(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = tmp_path / "uci.log"
    board = chess.Board("4k3/8/8/3q4/8/8/8/3RK3 w - - 0 1")

    async def scenario() -> list[chess.Move | None]:
        async with running(uci_settings(log, "silent")) as player:
            moves = []
            for _ in range(2):  # no time to start a fresh engine for the second move
                moves.append((await player.think(timed(0.3, board))).move)
            return moves

    assert run(scenario()) == [chess.Move.from_uci("d1d5")] * 2
    assert "its engine is still starting: playing Rxd5" in caplog.text


@pytest.mark.parametrize("settings_for", [uci_settings, xboard_settings])
def test_a_cancelled_search_is_stopped_and_the_next_one_plays(
    tmp_path: Path, settings_for: Callable[..., EngineSettings]
) -> None:
    log = tmp_path / "engine.log"

    async def scenario() -> tuple[chess.Move | None, int | None, int | None]:
        async with running(settings_for(log, "obey-stop", depth=30)) as player:
            pid = player.pid
            search = asyncio.ensure_future(player.think(timed(60.0)))
            while not any(line.startswith("go") for line in sent(log)):
                await asyncio.sleep(0.01)  # another process writes the log: no event to await
            search.cancel()
            with pytest.raises(asyncio.CancelledError):
                await search
            board = chess.Board("4k3/8/8/3q4/8/8/8/3RK3 w - - 0 1")
            decision = await player.think(timed(0.5, board))
            return decision.move, pid, player.pid

    move, pid, pid_after = run(scenario())
    assert move is not None
    assert pid == pid_after  # stopped, not killed
    commands = sent(log)
    stop = "stop" if settings_for is uci_settings else "?"
    searches = [index for index, line in enumerate(commands) if line.startswith("go")]
    assert len(searches) == 2
    assert searches[0] < commands.index(stop) < searches[1]


def test_a_crashed_engine_is_reported_and_restarted(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running(uci_settings(tmp_path / "uci.log", "crash-once")) as player:
            first_pid = player.pid
            with pytest.raises(EngineError, match="stopped"):
                await player.think(request())
            assert player.pid is None
            await player.restart()
            assert player.pid not in (None, first_pid)
            decision = await player.think(request())
            assert decision.move == chess.Move.from_uci("e2e4")
            assert decision.engine_restarts == 1  # for the referee's summary of the match

    run(scenario())


def test_a_hung_engine_in_an_untimed_game_is_killed_after_the_margin(tmp_path: Path) -> None:
    async def scenario() -> None:
        settings = uci_settings(tmp_path / "uci.log", "silent", hang_margin=0.2, movetime=0.05)
        async with running(settings) as player:
            untimed = request(budget=ThinkingBudget(turn=chess.WHITE))
            with pytest.raises(EngineError, match=r"gave no move within 0\.2 s"):
                await player.think(untimed)
            assert player.pid is None

    run(scenario())


def test_an_engine_that_keeps_crashing_is_given_up(tmp_path: Path) -> None:
    async def scenario() -> None:
        settings = uci_settings(tmp_path / "uci.log", "crash", max_restarts=2)
        async with running(settings) as player:
            for _ in range(2):
                with pytest.raises(EngineError):
                    await player.think(request())
                await player.restart()
            with pytest.raises(EngineError):
                await player.think(request())
            with pytest.raises(EngineError, match="failed 3 times in a row"):
                await player.restart()

    run(scenario())
