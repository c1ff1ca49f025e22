"""The UCI dialect: a game's position line grown move by move, sent with ``go`` in one write."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import chess
import chess.engine
import pytest
from enginetools import request, run, running, sent, uci_settings

from serialref.client.startup import EngineProtocol, end_engine, open_engine
from serialref.client.uci import UciEngine
from serialref.errors import EngineError
from serialref.rules import find_rules


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
            first = engine.start_search(
                board, limit, game=1, draw_offered=False, ended=lambda: None
            )
            while not any(line.startswith("go") for line in sent(log)):
                await asyncio.sleep(0.01)  # another process writes the log: no event to await
            engine.stop_search()
            await first
            engine.begin_search()
            board.push_uci("e2e4")
            second = engine.start_search(
                board, limit, game=1, draw_offered=False, ended=lambda: None
            )
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


def test_an_engine_that_dies_within_a_game_is_reported_at_once(tmp_path: Path) -> None:
    """The search within a game is read on the reader's thread; the process's end still
    fails it at once, as python-chess's own search would fail (with no deadline and no
    time limit, nothing else would ever end it)."""

    async def scenario() -> float:
        async with running(uci_settings(tmp_path / "uci.log", "crash-later")) as player:
            board = chess.Board()
            decision = await player.think(request(board))
            assert decision.move is not None
            board.push(decision.move)
            board.push_san("e5")
            started = time.monotonic()
            with pytest.raises(EngineError, match=r"stopped: .*exit code: 3"):
                await asyncio.wait_for(player.think(request(board)), 10.0)
            assert player.pid is None
            return time.monotonic() - started

    assert run(scenario()) < 5.0
