"""One engine process that analyses positions, started and restarted the client's way.

The program is found, its protocol detected and its options set by the client's own
start-up (:func:`~serialref.client.startup.open_engine`), so ``--engine stockfish``
and ``--engine "gnuchess --xboard"`` behave exactly as they do for ``serialref
client``. The search itself is python-chess's ``analyse`` on the caller's event loop:
one loop drives every engine of a ``--jobs N`` run, with no thread per engine.

Each position is searched as a game of its own (``ucinewgame``, XBoard's ``new``):
what the engine kept from the positions before it (its hash table, its history) would
otherwise decide the result, which would then depend on the file's order and on which
engine of a ``--jobs`` run got the position.

A search that fails (the engine exits, breaks the protocol, or gives no answer
within :attr:`AnalysisEngine.patience` of its limit) kills the process and raises
:class:`~serialref.errors.EngineError`; :meth:`AnalysisEngine.ready` starts a fresh one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine

from serialref.client.engine import check_node_limit
from serialref.client.options import EngineSettings
from serialref.client.startup import (
    EngineProtocol,
    OpenEngine,
    QuietNotices,
    end_engine,
    find_program,
    open_engine,
)
from serialref.client.xboard import XBoardEngine
from serialref.errors import ConfigError, EngineError

__all__ = ["INFO", "AnalysisEngine", "Search"]

LOGGER = logging.getLogger(__name__)

INFO = chess.engine.INFO_BASIC | chess.engine.INFO_SCORE | chess.engine.INFO_PV
"""What python-chess reads of the engine's final ``info``: score, variation, nodes, time."""


@dataclass(frozen=True, slots=True)
class Search:
    """What one search found; ``score`` is from the side to move's point of view."""

    score: chess.engine.Score | None
    pv: tuple[chess.Move, ...]
    nodes: int | None
    seconds: float


class AnalysisEngine:
    """One engine process; :meth:`ready` (re)starts it, :meth:`search` analyses."""

    def __init__(self, settings: EngineSettings, *, patience: float | None) -> None:
        self._settings = settings
        self._command = settings.command
        self._running: OpenEngine | None = None
        self._quiet = QuietNotices()
        self.name = Path(settings.command[0]).name
        self.patience = patience
        """Seconds a search may run past its limit before the engine counts as hung;
        ``None`` trusts a node or depth limit to end the search."""

    async def ready(self) -> None:
        """Start the engine unless it runs; :class:`EngineError` if it cannot be started."""
        if self._running is not None:
            return
        settings = self._settings
        logging.getLogger("chess.engine").addFilter(self._quiet)
        self._command = (find_program(settings.command[0]), *settings.command[1:])
        protocols = [settings.protocol] if settings.protocol else list(EngineProtocol)
        try:
            opened = await open_engine(
                self._command,
                protocols,
                patience=settings.start_timeout,
                attempts=settings.max_restarts + 1,
            )
        except OSError as exc:
            raise EngineError(f"cannot start {self._command[0]!r}: {exc.strerror or exc}") from exc
        self._running = opened
        try:
            check_node_limit(settings, opened, self.name)
        except ConfigError:
            await self.close(politely=False)
            raise
        try:
            if settings.options:
                await asyncio.wait_for(
                    opened.engine.configure(dict(settings.options)), settings.start_timeout
                )
            opened.engine.settle_options()
        except (chess.engine.EngineError, TimeoutError) as exc:
            await self.close(politely=False)
            raise EngineError(f"--option: {exc or 'the engine did not answer'}") from exc
        self.name = opened.engine.id.get("name") or self.name

    async def search(self, board: chess.Board, limit: chess.engine.Limit) -> Search:
        """Analyse ``board`` within ``limit``; on any failure kill the engine and raise."""
        if self._running is None:
            raise EngineError(f"{self.name} is not running")
        engine = self._running.engine
        engine.begin_search()
        started = time.monotonic()
        if isinstance(engine, XBoardEngine):
            analysis = self._played(engine, board, limit)
        else:
            analysis = engine.analyse(board, limit, info=INFO, game=object())
        try:
            if self.patience is None:
                info = await analysis
            else:
                info = await asyncio.wait_for(analysis, (limit.time or 0.0) + self.patience)
        except TimeoutError:
            await self.close(politely=False)
            raise EngineError(f"{self.name} gave no answer within its limit") from None
        except chess.engine.EngineError as exc:
            await self.close(politely=False)
            raise EngineError(f"{self.name} failed: {exc or type(exc).__name__}") from exc
        seconds = info.get("time")
        return Search(
            score=info["score"].relative if "score" in info else None,
            pv=tuple(info.get("pv", ())),
            nodes=info.get("nodes"),
            seconds=time.monotonic() - started if seconds is None else seconds,
        )

    @staticmethod
    async def _played(
        engine: XBoardEngine, board: chess.Board, limit: chess.engine.Limit
    ) -> chess.engine.InfoDict:
        """An XBoard engine's search as a move it plays: python-chess analyses XBoard
        engines in ``analyze`` mode, which has no end but ``exit`` and which GNU Chess
        answers with progress lines only; a move ends a search in every XBoard engine."""
        played = await engine.play(board, limit, info=INFO, game=object())
        info = played.info.copy()
        pv = info.get("pv", [])
        if played.move is not None and pv[:1] != [played.move]:
            info["pv"] = [played.move]
        return info

    async def close(self, *, politely: bool = True) -> None:
        """End the engine process (asking it to quit first, if ``politely``); reap it."""
        logging.getLogger("chess.engine").removeFilter(self._quiet)
        running, self._running = self._running, None
        if running is not None:
            await end_engine(running, politely=politely, name=self.name)
