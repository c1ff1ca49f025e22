"""Shared helpers for the engine bridge's tests: the scripted engines and how to run them.

The engines are the small programs in ``tests/engines/``, so the tests need no chess
engine installed and can make one crash, hang or ignore a command on purpose.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import chess

from serialref.client.engine import EnginePlayer
from serialref.client.options import EngineSettings
from serialref.client.players import ThinkingBudget, ThinkRequest

T = TypeVar("T")

ENGINES = Path(__file__).resolve().parent / "engines"


def run(scenario: Awaitable[T]) -> T:
    """Run a test's scenario on an event loop of its own."""
    return asyncio.run(scenario)  # type: ignore[arg-type]


def fake_uci(log: Path, behaviour: str = "normal", score: str = "cp 25") -> tuple[str, ...]:
    """The command of the scripted UCI engine: it behaves as ``behaviour`` says, reports
    ``score`` and writes every command it receives to ``log``."""
    return (sys.executable, str(ENGINES / "fake_uci.py"), behaviour, score, str(log))


def fake_xboard(log: Path, behaviour: str = "normal") -> tuple[str, ...]:
    """The command of the scripted XBoard engine (GNU Chess's manners), logging to ``log``."""
    return (sys.executable, str(ENGINES / "fake_xboard.py"), behaviour, str(log))


def uci_settings(
    log: Path, behaviour: str = "normal", score: str = "cp 25", **options: object
) -> EngineSettings:
    return EngineSettings(command=fake_uci(log, behaviour, score), **options)  # type: ignore[arg-type]


def xboard_settings(log: Path, behaviour: str = "normal", **options: object) -> EngineSettings:
    return EngineSettings(command=fake_xboard(log, behaviour), **options)  # type: ignore[arg-type]


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


