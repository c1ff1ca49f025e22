"""UCI and XBoard engines as a :class:`~serialref.client.players.Player`, through ``chess.engine``.

The client's one thread owns an asyncio event loop and drives python-chess's async
engine API on it with ``run_until_complete``. ``SimpleEngine`` would run that loop on a
second thread and hand every call across with a future; measured on the development
machine, that hand-over cost about 0.17 ms of the 0.8 ms a ``play(nodes=1)`` call takes
(0.65 ms on the client's own loop, 0.21 ms for the bare pipe exchange), and it is one
thread fewer to shut down. Nothing else in the client uses asyncio, so the two models
do not mix: the loop only runs while the player waits for its engine.

Faults are split in two, as :meth:`EnginePlayer.think` and :meth:`EnginePlayer.restart`:
a crash, a hang (no move within the search limit plus :attr:`EngineSettings.hang_margin`)
or an engine protocol error makes ``think`` kill the process and raise
:class:`~serialref.errors.EngineError`; the session then calls ``restart``, which starts
a fresh process (and the session signs on again, so the referee restores the game), or
raises ``EngineError`` itself when the engine cannot be started or keeps failing.

GNU Chess 6 (Debian's ``gnuchess --xboard``) needs three allowances, all confined to
:class:`_CompatibleXBoardProtocol`: it announces moves in the pre-``move`` CECP forms
(``1. ... e2e4`` and ``My move is : e2e4``), its start-up only advances while input
keeps arriving, and after resigning it can still announce the move its search found,
which must not be taken for its first move of the next game.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import logging
import math
import re
import shlex
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import chess
import chess.engine

from serialref.client.players import Analysis, Decision, ThinkingBudget, ThinkRequest
from serialref.errors import ConfigError, EngineError

__all__ = [
    "UNTIMED_MOVETIME",
    "EnginePlayer",
    "EngineProtocol",
    "EngineSettings",
    "parse_engine_options",
    "spec_centipawns",
]

LOGGER = logging.getLogger(__name__)

UNTIMED_MOVETIME = 1.0
"""Seconds per move for an untimed game when no ``--nodes/--depth/--movetime`` is given."""

MATE_SCORE = 32767
"""Spec 6.7: mate values count plies down from here."""

_MATE_POLICY_SCORE = 100_000
"""Centipawns a mate counts as for the draw and resign policies (beyond any real score)."""

_CE_LIMIT = 31_999
"""Largest centipawn ``ce`` that cannot be read as a mate (spec 6.7: above 32000 is mate)."""

_XBOARD_NUDGE_INTERVAL = 0.05
"""Seconds between the ``xboard`` lines that wake a stalled XBoard engine at start-up."""

_REAP_TIMEOUT = 5.0
"""Seconds to wait for a killed engine process to be reaped."""

_FEATURES_DONE = re.compile(r"^\s*feature\b.*\bdone=1\b")

_LEGACY_MOVE = re.compile(r"^\s*My move is\s*:\s*(\S+)\s*$")
_LEGACY_MOVE_NUMBER = re.compile(r"^\s*\d+\s*\.\s*\.\.\.\s*\S+\s*$")
_MOVE_ANNOUNCEMENT = re.compile(r"^\s*move\s+(\S+)")
_GAME_OVER = re.compile(r"^\s*(?:resign\s*$|(?:1-0|0-1|1/2-1/2)(?:\s|$))")
"""The lines after which python-chess ends a search without a move (it pings and stops)."""

_INFO = chess.engine.INFO_BASIC | chess.engine.INFO_SCORE | chess.engine.INFO_PV

T = TypeVar("T")


class EngineProtocol(enum.Enum):
    """The two engine protocols python-chess speaks."""

    UCI = "uci"
    XBOARD = "xboard"


@dataclass(frozen=True, slots=True)
class EngineSettings:
    """How to run one engine and how it plays; the ``serialref client`` options.

    ``nodes``, ``depth`` and ``movetime`` (seconds) replace the clock as the search
    limit; at most one may be set. The score policies are in centipawns from the
    engine's point of view; only their magnitude counts, so ``--resign-below 600`` and
    ``--resign-below -600`` mean the same. ``max_restarts`` bounds the restarts in a row
    that produce no move, so an engine that dies on every position ends in a fault
    rather than a loop.
    """

    command: tuple[str, ...]
    protocol: EngineProtocol = EngineProtocol.UCI
    options: Mapping[str, str] = field(default_factory=dict)
    nodes: int | None = None
    depth: int | None = None
    movetime: float | None = None
    draw_offer_below: int | None = None
    draw_accept_below: int | None = None
    resign_below: int | None = None
    resign_moves: int = 3
    hang_margin: float = 10.0
    start_timeout: float = 10.0
    max_restarts: int = 3

    def __post_init__(self) -> None:
        if not self.command:
            raise ConfigError("engine", "an engine command is required")
        limits = [
            name for name in ("nodes", "depth", "movetime") if getattr(self, name) is not None
        ]
        if len(limits) > 1:
            raise ConfigError(limits[1], f"cannot be combined with {limits[0]}")
        for name in ("nodes", "depth", "movetime", "resign_moves"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ConfigError(name, f"must be positive, not {value!r}")
        if self.hang_margin < 0 or self.start_timeout <= 0:
            raise ConfigError("hang_margin", "timeouts must be positive")

    @classmethod
    def from_command_line(cls, command: str, **settings: Any) -> EngineSettings:
        """Settings for a command given as one shell-quoted string (``"gnuchess --xboard"``)."""
        try:
            words = tuple(shlex.split(command))
        except ValueError as exc:
            raise ConfigError("engine", f"cannot split {command!r}: {exc}") from exc
        return cls(command=words, **settings)

    def fixed_limit(self) -> chess.engine.Limit | None:
        """The search limit that overrides the clock, if one was given."""
        if self.nodes is None and self.depth is None and self.movetime is None:
            return None
        return chess.engine.Limit(nodes=self.nodes, depth=self.depth, time=self.movetime)


def parse_engine_options(pairs: Sequence[str]) -> dict[str, str]:
    """``NAME=VALUE`` strings (``--option``) as a mapping; python-chess checks the values."""
    options: dict[str, str] = {}
    for pair in pairs:
        name, sign, value = pair.partition("=")
        if not sign or not name.strip():
            raise ConfigError("option", f"expected NAME=VALUE, not {pair!r}")
        options[name.strip()] = value
    return options


def spec_centipawns(score: chess.engine.Score) -> int:
    """A score from the mover's point of view as spec 6.7's ``ce``.

    A mate in N moves is 2N-1 plies away (``32767 - (2N - 1)``); being mated in N is 2N
    plies away (``-32767 + 2N``). Centipawn scores are kept clear of those bands (beyond
    +-32000), and absurdly long mates are kept inside them.
    """
    mate = score.mate()
    if mate is not None:
        # Beyond 383 moves the arithmetic would leave the mate band; clamp inside it.
        if mate > 0:
            return max(_CE_LIMIT + 2, MATE_SCORE - (2 * mate - 1))
        return min(-_CE_LIMIT - 2, -MATE_SCORE + 2 * -mate)
    centipawns = score.score()
    assert centipawns is not None  # not a mate, so a centipawn score
    return max(-_CE_LIMIT, min(_CE_LIMIT, centipawns))


class EnginePlayer:
    """A UCI or XBoard engine behind ``serialref client``.

    The engine starts in the constructor, so a missing program fails before any port
    is opened and the engine's own name is known for the sign-on.
    """

    def __init__(self, settings: EngineSettings) -> None:
        self._settings = settings
        self._fixed_limit = settings.fixed_limit()
        self._loop = asyncio.new_event_loop()
        self._transport: asyncio.SubprocessTransport | None = None
        self._engine: chess.engine.Protocol | None = None
        self._clock_id: object = object()
        self._moves_to_go: int | None = None
        self._losing_streak = 0
        self._failures = 0
        try:
            self._start()
        except BaseException:
            self._loop.close()
            raise
        self._name = self._engine_name()

    @property
    def name(self) -> str:
        """The engine's ``id name`` / ``myname``, else its program file name."""
        return self._name

    @property
    def pid(self) -> int | None:
        """The engine process's id, ``None`` while no engine runs."""
        return None if self._transport is None else self._transport.get_pid()

    def new_game(self, tags: Mapping[str, str]) -> None:
        """Start a new clock model; the engine itself starts its game on the first move.

        python-chess sends ``ucinewgame``/``new`` when the request's ``game`` changes. An
        XBoard engine is told the control once per period (``level``, from the first
        clock limit of the game, which the ``TimeControl`` tag determines) and only its
        remaining time (``time``/``otim``) on later moves.
        """
        LOGGER.info("%s: new game, TimeControl %s", self.name, tags.get("TimeControl", "not given"))
        self._clock_id = object()
        self._moves_to_go = None
        self._losing_streak = 0

    def think(self, request: ThinkRequest) -> Decision:
        """Let the engine move; raise :class:`EngineError` (after killing it) if it fails."""
        engine = self._running_engine()
        board = request.board
        limit = self._limit(request.budget)
        timeout = self._answer_timeout(limit, request.budget)
        LOGGER.debug("%s: thinking with %s (watchdog %s s)", self.name, limit, timeout)
        try:
            result = self._run(
                engine.play(
                    board,
                    limit,
                    game=request.game,
                    info=_INFO,
                    draw_offered=request.draw_offered,
                ),
                timeout,
            )
        except TimeoutError:
            self._stop_engine()
            raise EngineError(f"{self.name} gave no move within {timeout:.1f} s") from None
        except chess.engine.EngineTerminatedError as exc:
            self._stop_engine()
            raise EngineError(f"{self.name} stopped: {exc}") from exc
        except chess.engine.EngineError as exc:
            self._stop_engine()
            raise EngineError(f"{self.name} failed: {exc}") from exc
        self._failures = 0
        return self._decide(request, result)

    def restart(self) -> None:
        """Start a fresh engine process after a failure, or raise :class:`EngineError`."""
        self._stop_engine()
        self._failures += 1
        if self._failures > self._settings.max_restarts:
            raise EngineError(
                f"{self.name} failed {self._failures} times in a row without producing a move"
            )
        LOGGER.warning("%s: restarting the engine (attempt %d)", self.name, self._failures)
        try:
            self._start()
        except ConfigError as exc:
            raise EngineError(f"cannot configure {self.name} again: {exc}") from exc
        self._clock_id = object()

    def close(self) -> None:
        """Ask the engine to quit (killing it if it does not), then close the event loop."""
        if self._loop.is_closed():
            return
        try:
            self._stop_engine(politely=True)
        finally:
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()

    # -- engine process -----------------------------------------------------------------

    def _start(self) -> None:
        settings = self._settings
        command = list(settings.command)
        try:
            transport, engine = self._spawn(command)
        except FileNotFoundError:
            raise EngineError(f"engine program not found: {command[0]!r}") from None
        except PermissionError:
            raise EngineError(f"engine program not executable: {command[0]!r}") from None
        except TimeoutError:  # before OSError, of which it is a subclass
            raise EngineError(
                f"{command[0]!r} did not finish its {settings.protocol.value} handshake "
                f"within {settings.start_timeout:g} s, {settings.max_restarts + 1} times"
            ) from None
        except OSError as exc:
            raise EngineError(f"cannot start {command[0]!r}: {exc.strerror or exc}") from exc
        except chess.engine.EngineError as exc:
            raise EngineError(
                f"{command[0]!r} is not a working {settings.protocol.value} engine: {exc}"
            ) from exc
        self._transport, self._engine = transport, engine
        LOGGER.info("engine %s started: pid %s", shlex.join(command), transport.get_pid())
        if settings.options:
            try:
                self._run(engine.configure(dict(settings.options)), settings.start_timeout)
            except (chess.engine.EngineError, TimeoutError) as exc:
                self._stop_engine()
                raise ConfigError("option", str(exc) or "the engine did not answer") from exc

    def _spawn(
        self, command: list[str]
    ) -> tuple[asyncio.SubprocessTransport, chess.engine.Protocol]:
        """Start the engine; a handshake that hangs is tried again, ``max_restarts`` times.

        GNU Chess 6 now and then never finishes its start-up (see
        :class:`_CompatibleXBoardProtocol`); a fresh process almost always does.
        """
        settings = self._settings
        for attempt in range(settings.max_restarts):
            try:
                return self._run(_popen(settings.protocol, command), settings.start_timeout)
            except TimeoutError:
                LOGGER.warning(
                    "%s: no %s handshake within %g s; starting it again (attempt %d)",
                    command[0],
                    settings.protocol.value,
                    settings.start_timeout,
                    attempt + 1,
                )
        return self._run(_popen(settings.protocol, command), settings.start_timeout)

    def _stop_engine(self, *, politely: bool = False) -> None:
        """End the engine process and wait until it is reaped (no zombie, no stray thread)."""
        transport, engine = self._transport, self._engine
        self._transport = self._engine = None
        if transport is None or engine is None:
            return
        if politely and not engine.returncode.done():
            try:
                self._run(engine.quit(), 2.0)
            except (chess.engine.EngineError, TimeoutError) as exc:
                LOGGER.warning("%s did not quit (%s): killing it", self.name, exc)
        if not engine.returncode.done():
            LOGGER.info("killing engine pid %s", transport.get_pid())
            with contextlib.suppress(ProcessLookupError):
                transport.kill()
            try:
                self._run(asyncio.shield(engine.returncode), _REAP_TIMEOUT)
            except TimeoutError:
                LOGGER.error("engine pid %s did not end after SIGKILL", transport.get_pid())
        transport.close()

    def _running_engine(self) -> chess.engine.Protocol:
        if self._engine is None:
            raise EngineError(f"{self.name} is not running")
        return self._engine

    def _engine_name(self) -> str:
        engine = self._running_engine()
        return engine.id.get("name") or Path(self._settings.command[0]).name

    def _run(
        self, coroutine: Coroutine[Any, Any, T] | asyncio.Future[T], timeout: float | None
    ) -> T:
        return self._loop.run_until_complete(asyncio.wait_for(coroutine, timeout))

    # -- thinking -----------------------------------------------------------------------

    def _limit(self, budget: ThinkingBudget) -> chess.engine.Limit:
        if self._fixed_limit is not None:
            return self._fixed_limit
        limit = budget.limit()
        if limit is None:
            return chess.engine.Limit(time=UNTIMED_MOVETIME)
        if (
            budget.moves_to_go is not None
            and self._moves_to_go is not None
            and budget.moves_to_go > self._moves_to_go
        ):
            self._clock_id = object()  # a new period: XBoard engines get a new ``level``
        self._moves_to_go = budget.moves_to_go
        return dataclasses.replace(limit, clock_id=self._clock_id)

    def _answer_timeout(self, limit: chess.engine.Limit, budget: ThinkingBudget) -> float | None:
        """The search's own time bound plus the margin; ``None`` if nothing bounds it."""
        bounds = [limit.time] if limit.time is not None else []
        if budget.timed:
            bounds.append(max(0.0, budget.remaining[0 if budget.turn else 1]))
        finite = [bound for bound in bounds if math.isfinite(bound)]
        return min(finite) + self._settings.hang_margin if finite else None

    def _decide(self, request: ThinkRequest, result: chess.engine.PlayResult) -> Decision:
        board = request.board
        move = result.move
        analysis = _analysis(board.turn, move, result.info)
        score = _policy_score(board.turn, result.info)
        if result.resigned:
            LOGGER.info("%s resigns", self.name)
            return Decision(None, resign=True, analysis=analysis)
        if request.draw_offered and self._accepts_draw(result, score):
            LOGGER.info("%s accepts the draw offer (score %s)", self.name, score)
            return Decision(None, draw_accept=True, analysis=analysis)
        if self._resigns(score):
            LOGGER.info("%s resigns by the score policy (score %s)", self.name, score)
            return Decision(None, resign=True, analysis=analysis)
        offer = (result.draw_offered and not request.draw_offered) or _within(
            score, self._settings.draw_offer_below
        )
        return Decision(move, draw_offer=offer, analysis=analysis)

    def _accepts_draw(self, result: chess.engine.PlayResult, score: int | None) -> bool:
        """XBoard engines answer ``draw`` with ``offer draw``; UCI ones go by the score."""
        if self._settings.protocol is EngineProtocol.XBOARD:
            return result.draw_offered
        return _within(score, self._settings.draw_accept_below)

    def _resigns(self, score: int | None) -> bool:
        threshold = self._settings.resign_below
        if threshold is None or score is None:
            return False
        self._losing_streak = self._losing_streak + 1 if score <= -abs(threshold) else 0
        return self._losing_streak >= self._settings.resign_moves


def _within(score: int | None, threshold: int | None) -> bool:
    return threshold is not None and score is not None and abs(score) < abs(threshold)


def _policy_score(turn: chess.Color, info: chess.engine.InfoDict) -> int | None:
    score = info.get("score")
    return None if score is None else score.pov(turn).score(mate_score=_MATE_POLICY_SCORE)


def _analysis(turn: chess.Color, move: chess.Move | None, info: chess.engine.InfoDict) -> Analysis:
    """``ce``, ``pv``, ``acn`` and ``acs`` from python-chess's last ``info`` of the search."""
    score = info.get("score")
    pv = tuple(info.get("pv", ()))
    if move is not None and pv[:1] != (move,):
        pv = (move,)
    elapsed = info.get("time")
    return Analysis(
        centipawns=None if score is None else spec_centipawns(score.pov(turn)),
        pv=pv if move is not None else (),
        nodes=info.get("nodes"),
        seconds=None if elapsed is None else int(elapsed),
    )


async def _popen(
    protocol: EngineProtocol, command: list[str]
) -> tuple[asyncio.SubprocessTransport, chess.engine.Protocol]:
    """Spawn and initialise the engine in its own process group (a Ctrl-C is the client's).

    An engine that fails its handshake, or is still in it when the start-up timeout
    cancels this, is killed and reaped before the error goes on, so no zombie is left.
    """
    engine_class: type[chess.engine.Protocol] = (
        chess.engine.UciProtocol if protocol is EngineProtocol.UCI else _CompatibleXBoardProtocol
    )
    transport, engine = await engine_class.popen(command, setpgrp=True)
    try:
        await engine.initialize()
    except BaseException:
        transport.close()
        await asyncio.wait([engine.returncode], timeout=_REAP_TIMEOUT)
        raise
    return transport, engine


class _CompatibleXBoardProtocol(chess.engine.XBoardProtocol):
    """python-chess's XBoard protocol, plus what older engines such as GNU Chess 6 need.

    GNU Chess 6's start-up stalls until input arrives, one step per input line, for
    anything from a fraction of a second to several (its input thread holds a stdio
    lock the engine thread needs). python-chess gives the feature exchange 2 s. So the
    handshake is warmed up first: ``xboard`` and ``protover 2``, then one more
    ``xboard`` (a no-op for every engine) every 50 ms until the features are complete,
    before python-chess's own handshake runs. A prompt engine answers before the
    first repetition and merely does the feature exchange twice.

    CECP still accepts the move announcements from before ``move`` existed; python-chess
    reads only ``move``. The numbered echo (``1. ... e2e4``) repeats the announcement and
    is dropped.

    GNU Chess answers ``ping`` from its input thread at once, while its search thread
    may still announce the move it found. After ``resign`` (or a result such as
    ``0-1 {White resigns}``) python-chess ends the search on the pong, so that move
    arrives late: since the event loop only runs while a player thinks, it is read by
    the next game's search, where python-chess would take it for the answer and fail
    on it ("no matching legal move"), costing an engine restart and a game restore.
    A move cannot be told stale by timing or by position in the stream, so the rule is
    by legality: once a game-over line was seen, the first move announcement that is
    illegal in the protocol's current board (the position being searched) is dropped.
    A legal announcement is passed on, so an engine that prints no stale move keeps its
    first move. Either way the allowance ends there: a search yields at most one move,
    so a second illegal move is the engine's own fault and fails as usual. A stale move
    that happens to be legal in the new position cannot be recognised and is taken.
    """

    def __init__(self) -> None:
        super().__init__()
        self._warm_up: asyncio.Future[None] | None = None
        self._stale_move_possible = False

    async def initialize(self) -> None:
        self._warm_up = self.loop.create_future()
        self.send_line("xboard")
        self.send_line("protover 2")
        nudges = self.loop.create_task(self._nudge())
        try:
            await self._warm_up
            await super().initialize()
        finally:
            nudges.cancel()

    async def _nudge(self) -> None:
        while True:
            await asyncio.sleep(_XBOARD_NUDGE_INTERVAL)
            self.send_line("xboard")

    def _line_received(self, line: str) -> None:
        if self._warm_up is not None and not self._warm_up.done():
            LOGGER.debug("%s: >> %s (warm-up)", self, line)
            if _FEATURES_DONE.search(line):
                self._warm_up.set_result(None)
            return
        legacy = _LEGACY_MOVE.match(line)
        if legacy:
            line = f"move {legacy.group(1)}"
        elif _LEGACY_MOVE_NUMBER.match(line):
            LOGGER.debug("%s: >> %s (numbered move echo, ignored)", self, line)
            return
        if _GAME_OVER.match(line):
            self._stale_move_possible = True
        elif self._stale_move_possible and (announced := _MOVE_ANNOUNCEMENT.match(line)):
            self._stale_move_possible = False
            if not self._is_legal(announced.group(1)):
                LOGGER.debug("%s: >> %s (stale move after a game over, ignored)", self, line)
                return
        super()._line_received(line)

    def _is_legal(self, announced: str) -> bool:
        try:
            self.board.parse_xboard(announced)
        except ValueError:
            return False
        return True
