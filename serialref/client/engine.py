"""UCI and XBoard engines as a :class:`~serialref.client.players.Player`, through ``chess.engine``.

The engine is driven with python-chess's async API on the client's own event loop, so
the client keeps reading its port while the engine searches, and pays no thread
hand-over per call (``SimpleEngine`` runs a second loop on a thread of its own). A UCI
engine's search within a game leaves python-chess's engine layer: the dialect writes
it and a thread reads its answer (:mod:`serialref.client.uci`).

**Clocks.** The engine always gets the real clocks (remaining time, increment, moves
to go), also when ``--depth``, ``--nodes`` or ``--movetime`` limit its search: python-chess
sends both, and an engine that ignores the limit (GNU Chess 6 ignores ``sd``) still
manages its time. On top of that the player keeps its own emergency deadline, the
request's ``deadline``: if the engine has not answered by then, it is told to stop
(``stop`` / ``?``) and its answer is played; if even that does not come within
:data:`STOP_GRACE`, the first move of its latest principal variation is played (or,
with none, the built-in greedy player's choice), and the engine is killed and started
again before its next move. A move is always sent before the flag falls.

**Cancellation.** When the referee no longer wants the answer, :meth:`EnginePlayer.think`
is cancelled: the search is told to stop and its answer is awaited in the background
(:data:`SETTLE_TIMEOUT`, after which the engine is killed). The next search waits for
that, so the engine never receives a position while it is still searching another, but
for :data:`STOP_PATIENCE` at most: an engine that has not ended its search by then is
killed and started again. A restart that is not done by the deadline leaves the move
to the fallback too.

**Faults.** A crash, a hang in an untimed game (no move within the search limit plus
:attr:`EngineSettings.hang_margin`) or an engine protocol error kills the process and
raises :class:`~serialref.errors.EngineError`; the client then calls
:meth:`EnginePlayer.restart`, which starts a fresh process, or raises ``EngineError``
itself when the engine cannot be started or keeps failing.

**Refused commands.** An engine that refuses a command it was sent gets one WARNING
per command naming the option that therefore has no effect (``--depth`` for ``sd``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import shlex
import time
from pathlib import Path

import chess
import chess.engine

from serialref.client.options import EngineSettings
from serialref.client.players import Decision, GreedyPlayer, ThinkingBudget, ThinkRequest
from serialref.client.scoring import ScorePolicy
from serialref.client.startup import (
    EngineDialect,
    EngineProtocol,
    OpenEngine,
    QuietNotices,
    end_engine,
    find_program,
    open_engine,
)
from serialref.client.uci import UciEngine
from serialref.client.xboard import XBoardEngine
from serialref.errors import ConfigError, EngineError, escape

__all__ = [
    "SETTLE_TIMEOUT",
    "STOP_GRACE",
    "UNTIMED_MOVETIME",
    "EnginePlayer",
    "check_node_limit",
]

LOGGER = logging.getLogger(__name__)

UNTIMED_MOVETIME = 1.0
"""Seconds per move for an untimed game when no ``--nodes/--depth/--movetime`` is given."""

STOP_GRACE = 0.05
"""Seconds an engine told to stop at the deadline has to answer before the client moves."""

SETTLE_TIMEOUT = 2.0
"""Seconds an abandoned search has to end after ``stop`` before its engine is killed."""

STOP_PATIENCE = 0.25
"""Seconds the next search waits for an abandoned one to end before killing its engine."""

PV_PLIES = 8
"""Plies of the engine's principal variation passed on in the reply's ``pv``.

Each is turned into SAN (a legal move generation) while the engine's clock runs, and
a long variation's tail says little; eight plies keep the comment useful and cheap.
"""

_REFUSED_OPTIONS = {
    "sd": "--depth has no effect on it; it plays on the clock",
    "st": "--movetime has no effect on it; it plays on the clock",
    "nps": "--nodes has no effect on it; it plays on the clock",
    "level": "it is not told the time control",
    "time": "it is not told its clock",
    "otim": "it is not told the opponent's clock",
    "draw": "it is not told of draw offers",
    "setoption": "an --option has no effect on it",
}
"""What stops working when an engine refuses one of the commands the client sends."""


class EnginePlayer:
    """A UCI or XBoard engine behind ``serialref client``; :meth:`start` runs it."""

    def __init__(self, settings: EngineSettings) -> None:
        self._settings = settings
        self._fixed_limit = settings.fixed_limit()
        self._name = Path(settings.command[0]).name
        self._command: tuple[str, ...] = settings.command
        self._protocol = settings.protocol
        self._running: OpenEngine | None = None
        self._settling: asyncio.Task[None] | None = None
        self._reviving: asyncio.Task[None] | None = None
        self._refused: set[str] = set()
        self._quiet = QuietNotices()
        self._game: object = object()
        self._clock_id: object = object()
        self._moves_to_go: int | None = None
        self._policy = ScorePolicy(settings)
        self._failures = 0
        self._restarts = 0  # engines started again since the player began

    @property
    def name(self) -> str:
        """The engine's ``id name`` / ``myname``, else its program file name."""
        return self._name

    @property
    def protocol(self) -> EngineProtocol | None:
        """The protocol the engine speaks, once known."""
        return self._protocol

    @property
    def pid(self) -> int | None:
        """The engine process's id, ``None`` while no engine runs."""
        return None if self._running is None else self._running.transport.get_pid()

    async def start(self) -> None:
        """Find the program, start it, learn its protocol and name, set its options."""
        logging.getLogger("chess.engine").addFilter(self._quiet)
        self._command = (find_program(self._settings.command[0]), *self._settings.command[1:])
        await self._open()
        engine = self._engine()
        self._name = engine.id.get("name") or self._name

    async def new_game(self, game: object) -> None:
        """Tell a UCI engine of the new game now, while the referee's reset delay runs.

        python-chess announces a game with its first search (``ucinewgame``, then
        ``isready`` and the wait for ``readyok``, on the clock); done here, the first
        search goes out like any other. An engine that does not answer in
        ``start_timeout`` is left to the first search to find out.
        """
        await self._settled()
        if self._running is None:
            return
        self._new_game(game)
        engine = self._engine()
        if isinstance(engine, UciEngine):
            try:
                await asyncio.wait_for(engine.new_game(game), self._settings.start_timeout)
            except (chess.engine.EngineError, TimeoutError) as exc:
                LOGGER.warning("%s did not get ready for the new game: %s", self.name, exc)

    async def think(self, request: ThinkRequest) -> Decision:
        """Let the engine move; raise :class:`EngineError` (after killing it) if it fails.

        The decision carries how often the engine was started again, for the referee's
        summary of the match.
        """
        decision = await self._decision(request)
        if not self._restarts:
            return decision
        return dataclasses.replace(decision, engine_restarts=self._restarts)

    async def _decision(self, request: ThinkRequest) -> Decision:
        await self._settled()
        if self._running is None and not await self._revived(request.deadline):
            return self._greedy(request, "its engine is still starting")
        engine = self._engine()
        if request.game is not self._game:
            self._new_game(request.game)
        limit = self._limit(request.budget)
        LOGGER.debug("%s: thinking with %s, deadline %s", self.name, limit, request.deadline)
        engine.begin_search()
        # One future the search, the deadline or the watchdog completes: cheaper on
        # every move than asyncio.wait, which builds its waiter for each call. The
        # search completes it as it ends, not a turn of the loop later.
        ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        search = engine.start_search(
            request.board,
            limit,
            game=request.game,
            draw_offered=request.draw_offered,
            ended=lambda: _complete(ended),
        )
        search.add_done_callback(_consume)
        try:
            outcome = await self._outcome(engine, search, ended, request, limit)
        except asyncio.CancelledError:
            self._settle(search)
            raise
        if isinstance(outcome, Decision):
            return outcome
        self._failures = 0
        variation = engine.variation(request.board, limit=PV_PLIES)
        xboard = self._protocol is EngineProtocol.XBOARD
        return self._policy.decide(self.name, request, outcome, variation, xboard=xboard)

    async def restart(self) -> None:
        """Start a fresh engine process after a failure, or raise :class:`EngineError`."""
        await self._stop_engine()
        self._failures += 1
        if self._failures > self._settings.max_restarts:
            raise EngineError(
                f"{self.name} failed {self._failures} times in a row without producing a move"
            )
        LOGGER.warning("%s: restarting the engine (attempt %d)", self.name, self._failures)
        try:
            await self._open()
        except ConfigError as exc:
            raise EngineError(f"cannot configure {self.name} again: {exc}") from exc
        self._restarts += 1
        self._clock_id = object()

    async def close(self) -> None:
        """Ask the engine to quit (killing it if it does not)."""
        for task in (self._settling, self._reviving):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, EngineError):
                    await task
        await self._stop_engine(politely=True)
        logging.getLogger("chess.engine").removeFilter(self._quiet)

    # -- the engine process ---------------------------------------------------------

    async def _open(self) -> None:
        settings = self._settings
        protocols = [self._protocol] if self._protocol else list(EngineProtocol)
        program = self._command[0]
        try:
            opened = await open_engine(
                self._command,
                protocols,
                patience=settings.start_timeout,
                attempts=settings.max_restarts + 1,
            )
        except FileNotFoundError:
            raise EngineError(f"engine program not found: {program!r}") from None
        except PermissionError:
            raise EngineError(f"engine program not executable: {program!r}") from None
        except OSError as exc:
            raise EngineError(f"cannot start {program!r}: {exc.strerror or exc}") from exc
        self._running, self._protocol = opened, opened.protocol
        opened.engine.on_refusal = self._refusal
        LOGGER.info(
            "engine %s started (%s): pid %s",
            shlex.join(self._command),
            opened.protocol.value,
            opened.transport.get_pid(),
        )
        try:
            self._check_limits(opened)
            if settings.options:
                await asyncio.wait_for(
                    opened.engine.configure(dict(settings.options)), settings.start_timeout
                )
            opened.engine.settle_options()
        except (chess.engine.EngineError, TimeoutError) as exc:
            await self._stop_engine()
            raise ConfigError("option", str(exc) or "the engine did not answer") from exc
        except ConfigError:
            await self._stop_engine()
            raise

    def _check_limits(self, opened: OpenEngine) -> None:
        check_node_limit(self._settings, opened, self.name)

    def _engine(self) -> EngineDialect:
        if self._running is None:
            raise EngineError(f"{self.name} is not running")
        return self._running.engine

    async def _stop_engine(self, *, politely: bool = False) -> None:
        """End the engine process and wait until it is reaped (no zombie, no stray task)."""
        running, self._running = self._running, None
        if running is not None:
            await end_engine(running, politely=politely, name=self.name)

    def _refusal(self, command: str, line: str) -> None:
        if command in self._refused:
            return
        self._refused.add(command)
        consequence = _REFUSED_OPTIONS.get(command, "the client goes on without it")
        LOGGER.warning(
            "%s refuses %r (%s): %s", self.name, command, escape(line.strip()), consequence
        )

    # -- searching ------------------------------------------------------------------

    async def _outcome(
        self,
        engine: EngineDialect,
        search: asyncio.Future[chess.engine.PlayResult],
        ended: asyncio.Future[None],
        request: ThinkRequest,
        limit: chess.engine.Limit,
    ) -> chess.engine.PlayResult | Decision:
        """The search's result, stopped at the deadline; errors become :class:`EngineError`.

        ``ended`` is completed by the search, the deadline or the watchdog. A
        :class:`Decision` instead when the engine did not answer in time.
        """
        patience = self._patience(request, limit)
        loop = asyncio.get_running_loop()
        timers = []
        if request.deadline is not None:
            stop_at = loop.time() + request.deadline - time.monotonic()
            timers.append(loop.call_at(stop_at, self._move_now, engine))
            timers.append(loop.call_at(stop_at + STOP_GRACE, _complete, ended))
        elif patience is not None:
            timers.append(loop.call_later(patience, _complete, ended))
        try:
            await ended
        finally:
            for timer in timers:
                timer.cancel()
        if not search.done() and request.deadline is not None:
            return await self._fallback(engine, search, request)
        if not search.done():
            await self._stop_engine()
            raise EngineError(f"{self.name} gave no move within {patience:.1f} s")
        try:
            return search.result()
        except chess.engine.EngineTerminatedError as exc:
            await self._stop_engine()
            raise EngineError(f"{self.name} stopped: {exc}") from exc
        except chess.engine.EngineError as exc:
            await self._stop_engine()
            raise EngineError(f"{self.name} failed: {exc}") from exc

    def _move_now(self, engine: EngineDialect) -> None:
        LOGGER.warning("%s: its clock is nearly out: telling it to move now", self.name)
        engine.stop_search()

    async def _fallback(
        self,
        engine: EngineDialect,
        search: asyncio.Future[chess.engine.PlayResult],
        request: ThinkRequest,
    ) -> Decision:
        """The best move known without the engine's answer; the engine is left to settle."""
        self._settle(search)
        move = engine.best_move()
        if move is None:
            return self._greedy(request, f"it did not answer 'stop' within {STOP_GRACE:g} s")
        LOGGER.warning(
            "%s did not answer 'stop' within %g s: playing %s, its best move so far",
            self.name,
            STOP_GRACE,
            request.board.san(move),
        )
        return Decision(move)

    def _patience(self, request: ThinkRequest, limit: chess.engine.Limit) -> float | None:
        """Seconds after which an untimed search counts as hung: its time plus the margin."""
        if request.deadline is not None or limit.time is None:
            return None
        return limit.time + self._settings.hang_margin

    def _settle(self, search: asyncio.Future[chess.engine.PlayResult]) -> None:
        """Stop an unwanted search and let it end in the background (or kill its engine)."""
        if search.done() or self._running is None:
            return
        self._running.engine.stop_search()
        self._settling = asyncio.get_running_loop().create_task(self._wait_out(search))

    async def _wait_out(self, search: asyncio.Future[chess.engine.PlayResult]) -> None:
        await asyncio.wait({search}, timeout=SETTLE_TIMEOUT)
        if not search.done():
            LOGGER.warning(
                "%s did not end its search within %g s of being told to stop: killing it",
                self.name,
                SETTLE_TIMEOUT,
            )
            await self._stop_engine()

    async def _settled(self) -> None:
        """Wait for an abandoned search to end, :data:`STOP_PATIENCE` at most, else kill."""
        settling = self._settling
        if settling is None:
            return
        await asyncio.wait({settling}, timeout=STOP_PATIENCE)
        self._settling = None
        if not settling.done():
            settling.cancel()
            LOGGER.warning(
                "%s did not end its search within %g s of being told to stop: killing it",
                self.name,
                STOP_PATIENCE,
            )
            await self._stop_engine()

    async def _revived(self, deadline: float | None) -> bool:
        """Start the engine again after it was killed; False if it is not ready in time.

        The restart goes on in the background when the deadline comes first, and the
        next search waits for it. A restart that fails raises :class:`EngineError`.
        """
        if self._reviving is None:
            LOGGER.warning("%s: starting the engine again", self.name)
            self._reviving = asyncio.get_running_loop().create_task(self.restart())
        reviving = self._reviving
        room = None if deadline is None else max(0.0, deadline - STOP_GRACE - time.monotonic())
        await asyncio.wait({reviving}, timeout=room)
        if not reviving.done():
            return False
        self._reviving = None
        reviving.result()
        return True

    def _greedy(self, request: ThinkRequest, reason: str) -> Decision:
        """The built-in greedy player's move, when the engine cannot give one in time."""
        decision = GreedyPlayer().decide(request.board)
        move = decision.move
        LOGGER.warning(
            "%s: %s: playing %s, a one-ply choice",
            self.name,
            reason,
            "nothing" if move is None else request.board.san(move),
        )
        return decision

    def _new_game(self, game: object) -> None:
        """A new clock model: XBoard engines get ``level`` again, policies start over."""
        self._game = game
        self._clock_id = object()
        self._moves_to_go = None
        self._policy.new_game()

    def _limit(self, budget: ThinkingBudget) -> chess.engine.Limit:
        """The clocks, with the fixed limit on top; a fixed time alone when untimed.

        An XBoard engine is told the control once per period (``level``, from the first
        clock limit of the period) and only its remaining time on later moves; python-chess
        cannot give an XBoard engine a node limit and a clock at once, so there the node
        limit goes alone and the deadline guards the clock.
        """
        fixed = self._fixed_limit
        clock = budget.limit()
        if clock is None:
            return fixed or chess.engine.Limit(time=UNTIMED_MOVETIME)
        if self._moves_to_go is not None and (
            budget.moves_to_go is None or budget.moves_to_go > self._moves_to_go
        ):
            # A new period, counted or not (40/20:10+0.2 at move 40): XBoard engines get a
            # new ``level``, or they would plan on a bonus that does not come.
            self._clock_id = object()
        self._moves_to_go = budget.moves_to_go
        clock = dataclasses.replace(clock, clock_id=self._clock_id)
        if fixed is None:
            return clock
        if fixed.nodes is not None and self._protocol is EngineProtocol.XBOARD:
            return fixed
        return dataclasses.replace(clock, nodes=fixed.nodes, depth=fixed.depth, time=fixed.time)


def check_node_limit(settings: EngineSettings, opened: OpenEngine, name: str) -> None:
    """Refuse a node limit an XBoard engine has not declared it can keep."""
    engine = opened.engine
    if settings.nodes is not None and isinstance(engine, XBoardEngine) and not engine.features.get(
        "nps"
    ):
        raise ConfigError(
            "nodes",
            f"{engine.id.get('name') or name} does not take node limits (its XBoard features "
            "have no nps=1); use --depth or --movetime",
        )


def _complete(ended: asyncio.Future[None]) -> None:
    if not ended.done():
        ended.set_result(None)


def _consume(search: asyncio.Future[chess.engine.PlayResult]) -> None:
    """Fetch an abandoned search's outcome, so asyncio does not report it as never retrieved."""
    if not search.cancelled():
        search.exception()
