"""The engine dialects: refused commands, GNU Chess's echoes and stale moves."""

from __future__ import annotations

import logging
from pathlib import Path

import chess
import pytest
from enginetools import request, run, running, sent, timed, uci_settings, xboard_settings

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


def test_a_uci_game_is_sent_as_one_position_line_that_grows(tmp_path: Path) -> None:
    log = tmp_path / "uci.log"
    histories = []

    async def scenario() -> None:
        async with running(uci_settings(log)) as player:
            board = chess.Board()
            for _ in range(4):
                histories.append(" ".join(move.uci() for move in board.move_stack))
                decision = await player.think(request(board))
                assert decision.move is not None
                board.push(decision.move)
                board.push(sorted(board.legal_moves, key=chess.Move.uci)[0])

    run(scenario())
    commands = sent(log)
    positions = [line for line in commands if line.startswith("position")]
    assert positions == ["position startpos"] + [
        f"position startpos moves {history}" for history in histories[1:]
    ]
    assert commands.count("ucinewgame") == 1
    assert commands.count("isready") == 1  # at the game's start only


def test_another_board_or_another_history_starts_the_position_line_again(tmp_path: Path) -> None:
    log = tmp_path / "uci.log"
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 40"

    async def scenario() -> None:
        async with running(uci_settings(log)) as player:
            first = chess.Board()
            await player.think(request(first))
            first.push_san("d4")
            first.push_san("d5")
            await player.think(request(first))
            first.pop()
            first.push_san("Nf6")  # same length, another move
            await player.think(request(first))
            other = chess.Board(fen)
            other.push_san("e4")
            other.push_san("Kd7")
            await player.think(request(other))

    run(scenario())
    positions = [line for line in sent(log) if line.startswith("position")]
    assert positions[1:] == [
        "position startpos moves d2d4 d7d5",
        "position startpos moves d2d4 g8f6",
        f"position fen {fen} moves e2e4 e8d7",
    ]


def test_an_illegal_bestmove_within_a_game_is_a_fault(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running(uci_settings(tmp_path / "uci.log", "illegal-later")) as player:
            board = chess.Board()
            board.push_san("d4")
            assert (await player.think(request(board))).move == chess.Move.from_uci("e7e5")
            board.push_san("e5")
            board.push_san("dxe5")
            with pytest.raises(EngineError, match=r"failed: .*e2e5"):
                await player.think(request(board))
            assert player.pid is None

    run(scenario())
