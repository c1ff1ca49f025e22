"""What a player is to ``serialref client``, and the two built-in players.

The protocol session (:mod:`serialref.client.session`) owns the game: it keeps the
board with its history, reads the clocks, claims draws and writes the records. A
player only decides: it gets a :class:`ThinkRequest` and returns a :class:`Decision`.
That split lets the engine bridge (UCI and XBoard programs through ``chess.engine``)
plug in as one more :class:`Player` without touching the protocol code:

- the request's board carries the whole known history (``move_stack``), so an engine
  can be given the game's moves and see repetitions;
- ``request.game`` changes with every ``reset``, so it can be passed as the ``game``
  key of ``chess.engine`` to make the engine start a new game (``ucinewgame``/``new``);
- ``request.budget.limit()`` is the engine's clock model, computed in one place from
  the ``TimeControl`` tag, the referee's ``cc`` values and the client's own timing;
- ``request.deadline`` is when the answer must be ready for the reply to reach the
  referee before the flag falls, whatever limit the player was given.

A player is asynchronous: the client keeps reading the port while it thinks, and
cancels :meth:`Player.think` when the referee no longer wants the answer (a newer
``respond``, ``conclude``, ``reset``, ``disconnect``).

The built-in players are instant and deterministic for a given seed, so matches,
tests and the demo replay exactly.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import chess
import chess.engine

from serialref.clock import ChessClock, side_index
from serialref.errors import ConfigError
from serialref.timecontrol import TimeControl

__all__ = [
    "BUILTIN_PLAYERS",
    "Analysis",
    "Decision",
    "GreedyPlayer",
    "Player",
    "RandomPlayer",
    "ThinkRequest",
    "ThinkingBudget",
    "make_builtin_player",
]


PIECE_VALUES = {
    chess.PAWN: 1,
    chess.KNIGHT: 3,
    chess.BISHOP: 3,
    chess.ROOK: 5,
    chess.QUEEN: 9,
    chess.KING: 0,
}
"""Material values the greedy player counts in (the usual 1/3/3/5/9)."""


@dataclass(frozen=True, slots=True)
class ThinkingBudget:
    """The clocks as the referee last reported them, ready for a player's time management.

    Pairs are (White, Black), indexed with :func:`serialref.clock.side_index`.
    ``remaining`` is ``inf`` for an untimed or unknown control (or when no
    ``TimeControl`` tag arrived); ``moves_to_go`` counts the moves the side to move
    still has to make before its next time bonus, ``None`` when no bonus comes.
    """

    turn: chess.Color
    remaining: tuple[float, float] = (math.inf, math.inf)
    increment: tuple[float, float] = (0.0, 0.0)
    moves_to_go: int | None = None

    @classmethod
    def from_clocks(
        cls,
        control: TimeControl | None,
        *,
        consumed: tuple[float, float],
        moves_made: tuple[int, int],
        turn: chess.Color,
    ) -> ThinkingBudget:
        """The budget for ``turn`` from the control and the referee's view of the clocks.

        The referee's ``cc`` holds time *consumed*; what is left follows from the
        control and the moves each side has made, exactly as the referee's own
        :class:`~serialref.clock.ChessClock` derives it, so both agree on every bonus
        and increment.
        """
        if control is None or control.untimed:
            return cls(turn=turn)
        clock = ChessClock(control, consumed=consumed, moves_made=moves_made)
        remaining = (clock.remaining(chess.WHITE), clock.remaining(chess.BLACK))
        increments = (
            control.period_of(moves_made[0]).increment,
            control.period_of(moves_made[1]).increment,
        )
        return cls(
            turn=turn,
            remaining=remaining,
            increment=increments,
            moves_to_go=control.moves_to_go(moves_made[side_index(turn)]),
        )

    @property
    def timed(self) -> bool:
        """Whether any clock limits the side to move."""
        return math.isfinite(self.remaining[side_index(self.turn)])

    def limit(self) -> chess.engine.Limit | None:
        """The clock situation as a ``chess.engine`` search limit, ``None`` if untimed.

        A fallen or nearly fallen flag still yields a positive time, so an engine is
        never told to think for a negative time.
        """
        if not self.timed:
            return None
        white, black = (max(0.001, value) for value in self.remaining)
        return chess.engine.Limit(
            white_clock=white,
            black_clock=black,
            white_inc=self.increment[0],
            black_inc=self.increment[1],
            remaining_moves=self.moves_to_go,
        )


@dataclass(frozen=True, slots=True)
class ThinkRequest:
    """Everything a player may use to choose its move.

    ``board`` is the session's own board, with the whole history known to the client
    (after a position the client could not connect to its game, the history starts
    there, as spec 8.1 says). It is not copied for each move, which would cost time in
    proportion to the game's length: a player may push and pop on it but must leave it
    as it found it, and must not use it after its :meth:`Player.think` has returned or
    been cancelled (the session moves on with it then). ``draw_offered`` is the
    opponent's ``draw_offer`` that came with its last move. ``game`` is a new object
    for every game the referee starts. ``deadline`` is a reading of
    :func:`time.monotonic`: an answer later than that risks the flag (``None`` when no
    clock runs). The budget's clocks already leave out the same safety margin, so an
    engine managing its own time stays inside it.
    """

    board: chess.Board
    budget: ThinkingBudget
    draw_offered: bool = False
    tags: Mapping[str, str] = field(default_factory=dict)
    game: object = None
    deadline: float | None = None


@dataclass(frozen=True, slots=True)
class Analysis:
    """What a player may report about its search (spec 6.1, 6.2, 6.7, 6.21, and ``acd``).

    ``centipawns`` is the spec 6.7 ``ce`` value from the mover's point of view,
    including the mate encodings (32767 - plies to mate, -32767 + plies). ``pv``
    starts with the move played. ``seconds`` is whole seconds of search (``acs``),
    ``depth`` the plies the search reached (``acd``, "analysis count: depth", the
    opcode of the later EPD lists beside ``acn`` and ``acs``; PGN writers show it with
    the score). The session drops (and logs) whatever the spec cannot carry instead
    of sending it.
    """

    centipawns: int | None = None
    pv: tuple[chess.Move, ...] = ()
    nodes: int | None = None
    seconds: int | None = None
    depth: int | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    """A player's answer to a ``respond``.

    ``move`` is ``None`` only when the player resigns, accepts a draw offer, or claims
    a draw that holds in the current position. The session turns the flags into the
    ``reply`` operations of PROTOCOL.md section 4 and checks that they make sense
    together before anything is sent. ``engine_restarts`` is how often the player has
    started its engine again since the client began, which the reply tells the referee
    (``engine_restarts``) once there was one.
    """

    move: chess.Move | None
    draw_offer: bool = False
    draw_accept: bool = False
    draw_claim: bool = False
    resign: bool = False
    analysis: Analysis | None = None
    engine_restarts: int = 0


class Player(Protocol):
    """A chess-playing program behind ``serialref client``.

    The client calls :meth:`start` once before it opens the port (so a missing
    engine fails at once and its name is known for the sign-on), then any number of
    :meth:`think`, one at a time, and :meth:`close` once at the end, all on one event
    loop. A :meth:`think` may be cancelled; the player must then be ready for the next
    one without delaying it more than it has to. A player whose :meth:`think` fails
    raises :class:`~serialref.errors.EngineError`; the client then calls
    :meth:`restart` and signs on again, so the referee restores the game (PROTOCOL.md
    6). When :meth:`restart` raises ``EngineError`` too, the player is gone for good
    and the client reports a ``refreq fault``.
    """

    @property
    def name(self) -> str:
        """The program name sent in ``tcsi`` at sign-on (used for the PGN tag)."""
        ...

    async def start(self) -> None:
        """Get ready to play; raise ``EngineError`` (or ``ConfigError``) if impossible."""
        ...

    async def new_game(self, game: object) -> None:
        """A game begins (``game`` is its ``ThinkRequest.game``): get ready for its first
        move, which may come as soon as this returns. Failures surface at that move."""
        ...

    async def think(self, request: ThinkRequest) -> Decision:
        """Choose what to do in ``request.board`` (the side to move is the player's)."""
        ...

    async def restart(self) -> None:
        """Start afresh after a failure; raise ``EngineError`` if that is impossible."""
        ...

    async def close(self) -> None:
        """Release whatever the player holds (an engine process, say)."""
        ...


class RandomPlayer:
    """Plays a uniformly random legal move; never offers, accepts or claims anything itself.

    With a seed, the choice is a function of the seed and the position alone, so a
    move asked for twice (after a referee restart, say) gets the same answer and a
    seeded match replays move for move. Without one, the operating system's
    randomness is used.
    """

    def __init__(self, seed: int | None = None, *, pace: float = 0.0) -> None:
        """``pace``: seconds to wait before each move, so that people can follow a game."""
        self._seed = seed
        self._pace = pace
        self._random = random.Random()

    @property
    def name(self) -> str:
        """Program name for the PGN tags."""
        return "serialref random"

    async def start(self) -> None:
        """Nothing to start: the player keeps no state between moves."""

    async def new_game(self, game: object) -> None:
        """Nothing to prepare."""

    async def think(self, request: ThinkRequest) -> Decision:
        """The player's move, after the configured pace (cut short by the deadline)."""
        if self._pace > 0:
            pause = self._pace
            if request.deadline is not None:
                pause = min(pause, max(0.0, request.deadline - time.monotonic()))
            await asyncio.sleep(pause)
        return self.decide(request.board)

    async def restart(self) -> None:
        """Nothing can have failed: the player holds no state."""

    async def close(self) -> None:
        """Nothing to release."""

    def decide(self, board: chess.Board) -> Decision:
        """The player's choice in ``board``, at once."""
        return self._decide(board)

    def _decide(self, board: chess.Board) -> Decision:
        """Any legal move, chosen uniformly."""
        return Decision(self._choose(board, list(board.legal_moves)))

    def _choose(self, board: chess.Board, moves: Sequence[chess.Move]) -> chess.Move | None:
        if not moves:
            return None
        if self._seed is not None:
            self._random.seed(f"{self._seed} {board.fen()}")
        return self._random.choice(sorted(moves, key=chess.Move.uci))


class GreedyPlayer(RandomPlayer):
    """A one-ply material grabber.

    It mates in one if it can; otherwise it takes the most valuable piece it can
    capture (promotion value breaks no ties: only what is taken counts), and with
    nothing to capture plays a random move. It looks no further, so it happily drops its
    queen: good enough to finish games quickly and to exercise every rule.
    """

    @property
    def name(self) -> str:
        """Program name for the PGN tags."""
        return "serialref greedy"

    def _decide(self, board: chess.Board) -> Decision:
        """A mate in one, else the best capture, else a random move."""
        moves = list(board.legal_moves)
        mates = [move for move in moves if _gives_mate(board, move)]
        if mates:
            return Decision(self._choose(board, mates))
        captures = [move for move in moves if board.is_capture(move)]
        if captures:
            best = max(_captured_value(board, move) for move in captures)
            return Decision(
                self._choose(
                    board, [move for move in captures if _captured_value(board, move) == best]
                )
            )
        return Decision(self._choose(board, moves))


BUILTIN_PLAYERS = {"random": RandomPlayer, "greedy": GreedyPlayer}
"""The ``--player`` choices and the class behind each."""


def make_builtin_player(kind: str, seed: int | None = None, *, pace: float = 0.0) -> Player:
    """The built-in player called ``kind`` (``random`` or ``greedy``), seeded for replay.

    Without a seed the player draws from the operating system's randomness, so two
    unseeded clients do not play the same game over and over. ``pace`` is a wait
    in seconds before each move, so that people can watch.
    """
    try:
        player_class = BUILTIN_PLAYERS[kind]
    except KeyError:
        choices = ", ".join(sorted(BUILTIN_PLAYERS))
        raise ConfigError("player", f"must be one of {choices}, not {kind!r}") from None
    return player_class(seed, pace=pace)


def _captured_value(board: chess.Board, move: chess.Move) -> int:
    if board.is_en_passant(move):
        return PIECE_VALUES[chess.PAWN]
    captured = board.piece_type_at(move.to_square)
    return PIECE_VALUES[captured] if captured is not None else 0


def _gives_mate(board: chess.Board, move: chess.Move) -> bool:
    board.push(move)
    try:
        return board.is_checkmate()
    finally:
        board.pop()
