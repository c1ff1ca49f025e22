"""The engine bridge: playing, limits, the deadline, stopping, and faults.

The engines are the scripted programs in ``tests/engines/``; real engines are exercised
in ``tests/integration/test_engines.py``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import chess
import pytest
from enginetools import request, run, running, sent, timed, uci_settings, xboard_settings

from serialref.client.engine import STOP_GRACE, UNTIMED_MOVETIME, EnginePlayer
from serialref.client.options import EngineSettings
from serialref.client.players import Analysis, Decision, ThinkingBudget
from serialref.client.startup import EngineProtocol, end_engine, open_engine
from serialref.client.uci import UciEngine
from serialref.errors import ConfigError, EngineError
from serialref.rules import find_rules

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
            assert decision.analysis == Analysis(
                centipawns=25,
                pv=(chess.Move.from_uci("e2e4"), chess.Move.from_uci("e7e5")),
                nodes=1234,
                seconds=2,
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
            assert (await player.think(request())).move == chess.Move.from_uci("e2e4")

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


def test_the_command_line_reports_a_missing_engine_in_one_line(tmp_path: Path) -> None:
    port = str(tmp_path / "ttyNothing")
    runs = [
        (["--engine", "no-such-engine --uci"], 5, "engine program 'no-such-engine' not found"),
        (["--player", "greedy", "--nodes", "5"], 2, "nodes: only applies to an --engine"),
        (["--player", "greedy", "--protocol", "uci"], 2, "protocol: only applies to an --engine"),
    ]
    for options, exit_code, message in runs:
        finished = subprocess.run(
            [sys.executable, "-m", "serialref", "client", port, *options],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        )
        assert finished.returncode == exit_code
        assert len(finished.stderr.splitlines()) == 1, finished.stderr
        assert finished.stderr.startswith(f"serialref: error: {message}")


@pytest.mark.parametrize(
    ("variant", "words", "expected"),
    [
        # Squares beyond h8 (files up to i, ranks up to 10) are read with the board.
        ("xiangqi", "h3e3 h10g8 i1i2 i10i9", ["h3e3", "h10g8", "i1i2", "i10i9"]),
        ("xiangqi", "h3e3 h10h9 i1i2", ["h3e3"]),  # cut where a move cannot be played
        ("standard", "e2e4 e7e5 g1f3", ["e2e4", "e7e5", "g1f3"]),
    ],
)
def test_the_principal_variation_is_read_on_the_games_board(
    variant: str, words: str, expected: list[str]
) -> None:
    async def variation() -> list[str]:
        engine = UciEngine()
        engine.initialized = True
        engine.pipe_data_received(1, f"info depth 4 score cp 12 pv {words}\n".encode())
        board = find_rules(variant).board_type()
        return [move.uci() for move in engine.variation(board, limit=8)]

    assert asyncio.run(variation()) == expected


def test_a_new_game_is_announced_before_its_first_move_is_asked_for(tmp_path: Path) -> None:
    """``ucinewgame`` and ``isready`` go out while the referee's reset delay runs, so the
    game's first search is one write like any other (the engine's very first one excepted:
    python-chess sets up the options it manages with it)."""
    log = tmp_path / "uci.log"

    async def scenario() -> tuple[list[str], list[str]]:
        async with running(uci_settings(log)) as player:
            await player.new_game("game 1")
            before_first = sent(log)
            await player.think(request(game="game 1"))
            await player.new_game("game 2")
            announced = sent(log)
            await player.think(request(game="game 2"))
            return before_first, announced

    before_first, announced = run(scenario())
    assert "ucinewgame" not in before_first
    assert announced[-2:] == ["ucinewgame", "isready"]
    second_game = sent(log)[len(announced) :]
    assert second_game[0] == "position startpos"
    assert second_game[1].startswith("go ")
    assert "ucinewgame" not in second_game


def test_an_abandoned_search_is_ended_by_its_answer_and_the_engine_goes_on(
    tmp_path: Path,
) -> None:
    """A caller that stops waiting for a search (its task cancelled) leaves the ``go``
    to be ended by the engine's ``bestmove``; the next command must not wait behind it."""
    log = tmp_path / "uci.log"
    command = uci_settings(log, "obey-stop").command

    async def scenario() -> list[str]:
        opened = await open_engine(command, [EngineProtocol.UCI], patience=5.0, attempts=1)
        engine = opened.engine
        assert isinstance(engine, UciEngine)
        try:
            board = chess.Board()
            limit = chess.engine.Limit(depth=30)
            first = asyncio.ensure_future(engine.search(board, limit, game=1, draw_offered=False))
            while not any(line.startswith("go") for line in sent(log)):
                await asyncio.sleep(0.01)  # another process writes the log: no event to await
            engine.stop_search()
            await first
            engine.begin_search()
            board.push_uci("e2e4")
            second = asyncio.ensure_future(engine.search(board, limit, game=1, draw_offered=False))
            while sum(line.startswith("go") for line in sent(log)) < 2:
                await asyncio.sleep(0.01)
            second.cancel()
            with pytest.raises(asyncio.CancelledError):
                await second
            await asyncio.wait_for(engine.ping(), 5.0)
            return sent(log)
        finally:
            await end_engine(opened, politely=False, name="fake_uci")

    commands = run(scenario())
    assert commands[-2:] == ["stop", "isready"], commands


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs or more")
def test_an_engine_starts_on_one_cpu_and_plays_on_all(tmp_path: Path) -> None:
    """GNU Chess's start-up race is won at once on one CPU (startup._set_cpus)."""
    log = tmp_path / "uci.log"

    async def scenario() -> set[int]:
        async with running(uci_settings(log)) as player:
            assert player.pid is not None
            return os.sched_getaffinity(player.pid)

    playing = run(scenario())
    starting = {int(cpu) for cpu in log.with_suffix(".cpus").read_text().split()}
    assert len(starting) == 1
    assert playing == os.sched_getaffinity(0)
