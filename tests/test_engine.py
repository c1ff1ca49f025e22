"""The engine bridge: start-up, limits, deadlines, stops, scores, policies and faults.

The engines are the small scripted programs in ``tests/engines/``, so these tests need
no chess engine installed and can make one crash, hang or ignore a command on purpose.
Real engines are exercised in ``tests/integration/test_engines.py``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import chess
import chess.engine
import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref.client import startup
from serialref.client.engine import (
    STOP_GRACE,
    UNTIMED_MOVETIME,
    EnginePlayer,
    EngineProtocol,
    EngineSettings,
    parse_engine_options,
    spec_centipawns,
)
from serialref.client.players import Analysis, ThinkingBudget, ThinkRequest
from serialref.errors import ConfigError, EngineError

ENGINES = Path(__file__).resolve().parent / "engines"
ROOT = Path(__file__).resolve().parents[1]

T = TypeVar("T")


def run(scenario: Awaitable[T]) -> T:
    return asyncio.run(scenario)  # type: ignore[arg-type]


def uci_settings(
    log: Path, behaviour: str = "normal", score: str = "cp 25", **options: object
) -> EngineSettings:
    command = (sys.executable, str(ENGINES / "fake_uci.py"), behaviour, score, str(log))
    return EngineSettings(command=command, **options)  # type: ignore[arg-type]


def xboard_settings(log: Path, behaviour: str = "normal", **options: object) -> EngineSettings:
    command = (sys.executable, str(ENGINES / "fake_xboard.py"), behaviour, str(log))
    return EngineSettings(command=command, **options)  # type: ignore[arg-type]


@asynccontextmanager
async def running(settings: EngineSettings) -> AsyncIterator[EnginePlayer]:
    player = EnginePlayer(settings)
    try:
        await player.start()
        yield player
    finally:
        await player.close()


def request(
    board: chess.Board | None = None,
    *,
    draw_offered: bool = False,
    budget: ThinkingBudget | None = None,
    game: str = "game 1",
    deadline: float | None = None,
) -> ThinkRequest:
    board = board or chess.Board()
    return ThinkRequest(
        board=board,
        budget=budget or ThinkingBudget(turn=board.turn, remaining=(60.0, 60.0)),
        draw_offered=draw_offered,
        game=game,
        deadline=deadline,
    )


def timed(seconds: float, board: chess.Board | None = None) -> ThinkRequest:
    """A request on a clock with ``seconds`` left, whose deadline is that far away."""
    board = board or chess.Board()
    budget = ThinkingBudget(turn=board.turn, remaining=(seconds, seconds), increment=(0.1, 0.1))
    return request(board, budget=budget, deadline=time.monotonic() + seconds)


def sent(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


# -- pure functions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (chess.engine.Mate(1), 32766),
        (chess.engine.Mate(5), 32758),
        (chess.engine.Mate(-1), -32765),
        (chess.engine.Mate(-5), -32757),
        (chess.engine.Cp(-37), -37),
        (chess.engine.Cp(50_000), 31_999),
    ],
)
def test_spec_centipawns_uses_the_mate_encodings_of_spec_6_7(
    score: chess.engine.Score, expected: int
) -> None:
    assert spec_centipawns(score) == expected


@given(st.integers(min_value=1, max_value=100_000))
def test_mates_for_and_against_stay_in_their_bands(moves: int) -> None:
    assert 32000 < spec_centipawns(chess.engine.Mate(moves)) <= 32766
    assert -32767 < spec_centipawns(chess.engine.Mate(-moves)) < -32000


def test_engine_options_parse_and_reject_garbage() -> None:
    assert parse_engine_options(["Hash=64", "Book File=a=b.bin"]) == {
        "Hash": "64",
        "Book File": "a=b.bin",
    }
    with pytest.raises(ConfigError, match="NAME=VALUE"):
        parse_engine_options(["Hash"])


def test_settings_reject_two_limits_and_nonsense() -> None:
    with pytest.raises(ConfigError, match="depth: cannot be combined with nodes"):
        EngineSettings(command=("x",), nodes=1, depth=2)
    with pytest.raises(ConfigError, match="movetime: must be positive"):
        EngineSettings(command=("x",), movetime=0)
    with pytest.raises(ConfigError, match="engine command is required"):
        EngineSettings.from_command_line("")
    assert EngineSettings.from_command_line("gnuchess --xboard").command == ("gnuchess", "--xboard")


def test_xboard_is_a_protocol_choice() -> None:
    assert EngineProtocol("xboard") is EngineProtocol.XBOARD
    with pytest.raises(ValueError):
        EngineProtocol("cecp")


# -- finding and starting the engine -------------------------------------------------------


def test_a_bare_name_is_looked_for_on_path_then_in_the_games_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = tmp_path / "games"
    games.mkdir()
    program = games / "fakefish"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr(startup, "ENGINE_DIRECTORIES", (str(tmp_path / "none"), str(games)))
    assert startup.find_program("fakefish") == str(program)
    assert startup.find_program("./relative/path") == "./relative/path"
    with pytest.raises(EngineError) as caught:
        startup.find_program("nofish")
    assert str(caught.value) == (
        f"engine program 'nofish' not found on PATH or in {tmp_path / 'none'} or {games}"
    )


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (("cat",), "'cat' is not a UCI or XBoard engine: it echoed 'uci' back; it echoed 'xboard'"),
        (("true",), "'true' is not a UCI or XBoard engine: it exited (code 0) before answering"),
        (("no-such-engine",), "engine program 'no-such-engine' not found on PATH or in"),
    ],
)
def test_a_program_that_is_no_engine_fails_fast_with_one_clear_error(
    command: tuple[str, ...], message: str
) -> None:
    started = time.monotonic()
    with pytest.raises(EngineError) as caught:
        run(EnginePlayer(EngineSettings(command=command)).start())
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)
    assert time.monotonic() - started < 5.0


def test_a_silent_program_is_given_up_after_the_probe(tmp_path: Path) -> None:
    script = tmp_path / "mute.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    pass\n")
    settings = EngineSettings(command=(sys.executable, str(script)), protocol=EngineProtocol.UCI)
    with pytest.raises(EngineError, match=r"not a working uci engine: no answer to 'uci' within 2"):
        run(EnginePlayer(settings).start())


def test_the_protocol_is_found_out_when_not_given(tmp_path: Path) -> None:
    async def scenario() -> tuple[EngineProtocol | None, EngineProtocol | None, str]:
        async with (
            running(uci_settings(tmp_path / "uci.log")) as uci,
            running(xboard_settings(tmp_path / "xboard.log")) as xboard,
        ):
            decision = await xboard.think(timed(30.0))
            assert decision.move == chess.Move.from_uci("e2e4")
            return uci.protocol, xboard.protocol, xboard.name

    assert run(scenario()) == (EngineProtocol.UCI, EngineProtocol.XBOARD, "Fake XBoard")
    # The XBoard engine was asked 'uci' first (in a process of its own).
    assert "uci" in sent(tmp_path / "xboard.log")


def test_a_start_up_that_stalls_is_tried_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> str:
        settings = uci_settings(
            tmp_path / "uci.log", "stall-start-once", protocol=EngineProtocol.UCI,
            start_timeout=2.5,
        )
        async with running(settings) as player:
            return player.name

    assert run(scenario()) == "Fake Engine 1.0"
    assert "uci handshake stalled after 2.5 s; starting it again (attempt 1 of 4)" in caplog.text


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


# -- playing -------------------------------------------------------------------------------


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


def test_limits_follow_the_clock_or_the_override() -> None:
    budget = ThinkingBudget(turn=chess.WHITE, remaining=(30.0, 20.0), increment=(1.0, 1.0))
    assert EngineSettings(command=("x",), movetime=0.05).fixed_limit() == chess.engine.Limit(
        time=0.05
    )
    assert EngineSettings(command=("x",)).fixed_limit() is None
    limit = budget.limit()
    assert limit is not None and limit.white_clock == 30.0 and limit.black_inc == 1.0
    assert math.isinf(ThinkingBudget(turn=chess.WHITE).remaining[0])


def test_an_untimed_game_gets_a_fixed_move_time(tmp_path: Path) -> None:
    log = tmp_path / "uci.log"

    async def scenario() -> None:
        async with running(uci_settings(log)) as player:
            await player.think(request(budget=ThinkingBudget(turn=chess.WHITE)))

    run(scenario())
    assert f"go movetime {int(UNTIMED_MOVETIME * 1000)}" in sent(log)


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


@pytest.mark.parametrize(
    ("score", "accepts"), [("cp 10", True), ("cp -10", True), ("cp 300", False), ("mate 3", False)]
)
def test_a_uci_engine_accepts_a_draw_by_score(tmp_path: Path, score: str, accepts: bool) -> None:
    async def scenario() -> None:
        settings = uci_settings(tmp_path / "uci.log", score=score, draw_accept_below=50)
        async with running(settings) as player:
            decision = await player.think(request(draw_offered=True))
            assert decision.draw_accept is accepts
            assert (decision.move is None) is accepts

    run(scenario())


def test_a_uci_engine_offers_a_draw_by_score(tmp_path: Path) -> None:
    async def scenario() -> None:
        settings = uci_settings(tmp_path / "uci.log", score="cp 5", draw_offer_below=20)
        async with running(settings) as player:
            decision = await player.think(request())
            assert decision.draw_offer and decision.move == chess.Move.from_uci("e2e4")

    run(scenario())


def test_a_uci_engine_resigns_after_enough_bad_moves(tmp_path: Path) -> None:
    async def scenario() -> None:
        settings = uci_settings(
            tmp_path / "uci.log", score="cp -900", resign_below=600, resign_moves=2
        )
        async with running(settings) as player:
            assert not (await player.think(request(game="one"))).resign
            second = await player.think(request(game="one"))
            assert second.resign and second.move is None
            assert not (await player.think(request(game="two"))).resign  # a new count

    run(scenario())


# -- the deadline and stopping ---------------------------------------------------------------


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


# -- faults ----------------------------------------------------------------------------------


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
