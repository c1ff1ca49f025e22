"""The player side of the referee protocol as pure logic: lines in, lines out, no I/O.

:class:`PlayerSession` keeps the game the way spec section 8.1 asks a client to: a
python-chess board *with its history*, so that a repetition can be claimed. A record
whose position matches the board (the four fields, an en passant square that allows
no capture counting as ``-``, and ``hmvc``/``fmvn`` when sent) continues the game; any
other position replaces the board and its history is gone (spec 8.1, "treat it as a
new position and clear any game history"). The referee's restore (PROTOCOL.md 6)
replays the game with ``execute`` records, so the history comes back after a restart.

Nothing the referee sends can stop the session except ``disconnect``: a record that
cannot be parsed, is not a ``refcom``, or asks for something impossible is logged
with the reason and otherwise ignored, as the wire profile asks of the referee too.

The session does not read a clock to measure anything; it only asks its injected
clock when the sign-on retry (PROTOCOL.md 4: no ``reset`` within 5 s) is due, and the
runner waits for :meth:`PlayerSession.next_deadline` on its event queue.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

import chess

from serialref.client.players import Analysis, Decision, Player, ThinkingBudget, ThinkRequest
from serialref.clock import TimeControl
from serialref.epd import EpdRecord, Operation, format_record, parse_record
from serialref.errors import ConfigError, EngineError, ProtocolError, escape
from serialref.records import (
    Refcom,
    player_fault,
    referee_command,
    reply,
    sign_off,
    sign_on,
)

__all__ = ["SIGN_ON_RETRY", "PlayerSession", "SessionOutput"]

LOGGER = logging.getLogger(__name__)

SIGN_ON_RETRY = 5.0
"""Seconds without a ``reset`` after which ``sign_on`` is sent again (PROTOCOL.md 4)."""

_CE_RANGE = range(-32768, 32767)
"""Values an EPD ``ce`` may take (spec 6.7)."""


@dataclass(frozen=True, slots=True)
class SessionOutput:
    """What the runner must do after feeding the session: send ``lines``, stop if ``finished``."""

    lines: tuple[str, ...] = ()
    finished: bool = False


class PlayerSession:
    """One player's conversation with the referee, record by record.

    Feed every received line to :meth:`line_received`; call :meth:`sign_on` at the
    start and whenever the line was re-established, and :meth:`deadline_passed` when
    :meth:`next_deadline` has come. Each returns the lines to send.
    """

    def __init__(
        self,
        player: Player,
        *,
        name: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        claim_draws: bool = True,
        sign_on_retry: float = SIGN_ON_RETRY,
    ) -> None:
        """``name`` goes into ``tcsi`` (default: the player's own name).

        ``claim_draws`` adds ``draw_claim`` to any move that makes a threefold
        repetition or the fifty-move rule claimable, so no drawn game drags on to
        the fivefold or seventy-five-move rules.
        """
        self._player = player
        self._name = name if name is not None else player.name
        self._clock = clock
        self._claim_draws = claim_draws
        self._sign_on_retry = sign_on_retry
        self._sign_on_due: float | None = None
        self._finished = False
        self._board = chess.Board()
        self._start_ply = 0
        self._tags: dict[str, str] = {}
        self._control: TimeControl | None = None
        self._consumed: tuple[float, float] = (0.0, 0.0)
        self._game: object = object()
        self._new_game_pending = True

    @property
    def finished(self) -> bool:
        """True once the referee sent ``disconnect``."""
        return self._finished

    @property
    def board(self) -> chess.Board:
        """A copy of the game as the session holds it, history included."""
        return self._board.copy()

    @property
    def tags(self) -> dict[str, str]:
        """The PGN tags the referee sent for the current game."""
        return dict(self._tags)

    def next_deadline(self) -> float | None:
        """When :meth:`deadline_passed` must be called (clock reading), or ``None``."""
        return self._sign_on_due

    def sign_on(self) -> SessionOutput:
        """Register with the referee; the retry deadline starts now."""
        self._sign_on_due = self._clock() + self._sign_on_retry
        return self._output(sign_on(self._board, self._name))

    def sign_off(self) -> SessionOutput:
        """Leave the referee (on shutdown); nothing is expected back."""
        self._sign_on_due = None
        return self._output(sign_off(self._board))

    def deadline_passed(self) -> SessionOutput:
        """Sign on again if the referee has not answered the last ``sign_on`` in time.

        Pyserial discards input already waiting when a port is opened, so a
        ``sign_on`` sent before the referee opened its end is lost for good.
        """
        if self._sign_on_due is None or self._clock() < self._sign_on_due:
            return SessionOutput()
        LOGGER.info("no reset within %.0f s of sign_on: signing on again", self._sign_on_retry)
        return self.sign_on()

    def line_received(self, text: str) -> SessionOutput:
        """Act on one line from the referee; never raises for anything the line holds."""
        try:
            record = parse_record(text)
            command = referee_command(record)
        except ProtocolError as exc:
            LOGGER.warning("ignored a line from the referee: %s: %s", exc, escape(text))
            return SessionOutput()
        if command is not Refcom.RESET:  # a reset first forgets the previous game's
            self._take_tags_and_clocks(record)
        return self._HANDLERS[command](self, record)

    # -- referee commands (spec 8.1, PROTOCOL.md 3) ----------------------------------

    def _reset(self, record: EpdRecord) -> SessionOutput:
        self._sign_on_due = None
        board = _record_board(record)
        if board is None:
            return SessionOutput()
        self._board = board
        self._start_ply = _ply(board)
        self._tags = {}
        self._control = None
        self._consumed = (0.0, 0.0)
        self._game = object()
        self._new_game_pending = True
        LOGGER.info("new game from %s", board.fen())
        self._take_tags_and_clocks(record)
        return SessionOutput()

    def _inform(self, record: EpdRecord) -> SessionOutput:
        if self._new_game_pending:
            return self._start_game()
        return SessionOutput()

    def _respond(self, record: EpdRecord) -> SessionOutput:
        if not self._follow(record):
            return SessionOutput()
        if self._new_game_pending:
            started = self._start_game()
            if started.lines:
                return started
        board = self._board
        if not any(board.generate_legal_moves()):
            # Spec 8 step 10: no move is produced when the client is mated or stalemated.
            LOGGER.warning("asked to move in a finished position: %s", board.fen())
            return self._output(reply(board, None, *_counters(board)))
        request = ThinkRequest(
            board=board.copy(),
            budget=self._budget(),
            draw_offered="draw_offer" in record,
            tags=dict(self._tags),
            game=self._game,
        )
        try:
            decision = self._player.think(request)
        except EngineError as exc:
            return self._recover(f"player failed: {exc}")
        return self._answer(decision, request.draw_offered)

    def _execute(self, record: EpdRecord) -> SessionOutput:
        if self._new_game_pending:
            started = self._start_game()
            if started.lines:
                return started
        self._follow(record)
        return SessionOutput()

    def _conclude(self, record: EpdRecord) -> SessionOutput:
        LOGGER.info(
            "game over: %s (%s)",
            escape(self._tags.get("Result", "*")),
            escape(self._tags.get("Termination", "no termination given")),
        )
        return SessionOutput()

    def _recover(self, reason: str) -> SessionOutput:
        """Restart a failed player and sign on again; the referee then restores the game.

        A restarted engine has lost the game, and the sign-on makes the referee replay
        it (PROTOCOL.md 6: reset, inform, one execute per move, respond). Only when the
        player cannot be restarted does the referee hear of a fault.
        """
        LOGGER.error("%s: restarting the player", reason)
        try:
            self._player.restart()
        except EngineError as exc:
            return self._report_fault(f"{reason}; restart failed: {exc}")
        self._new_game_pending = True
        return self.sign_on()

    def _report_fault(self, reason: str) -> SessionOutput:
        LOGGER.error("reporting a fault to the referee: %s", reason)
        return self._output(player_fault(self._board, reason))

    def _referee_fault(self, record: EpdRecord) -> SessionOutput:
        reason = " ".join(record.operand_texts("c0")) or "no reason given"
        LOGGER.error(
            "THE REFEREE REPORTS A FAULT: %s. The operator must look at the referee; "
            "signing on again.",
            escape(reason),
        )
        return self.sign_on()

    def _disconnect(self, record: EpdRecord) -> SessionOutput:
        LOGGER.info("the referee disconnected")
        self._finished = True
        self._sign_on_due = None
        return SessionOutput(finished=True)

    _HANDLERS: ClassVar[Mapping[Refcom, Callable[[PlayerSession, EpdRecord], SessionOutput]]] = {
        Refcom.RESET: _reset,
        Refcom.INFORM: _inform,
        Refcom.RESPOND: _respond,
        Refcom.EXECUTE: _execute,
        Refcom.CONCLUDE: _conclude,
        Refcom.FAULT: _referee_fault,
        Refcom.DISCONNECT: _disconnect,
    }

    # -- the game ---------------------------------------------------------------------

    def _take_tags_and_clocks(self, record: EpdRecord) -> None:
        """Spec 8.1 and 8.1.5: ``cc`` and ``ptp`` count on whichever record carries them.

        The strict parser has already checked both operations' operands.
        """
        if "ptp" in record:
            pairs = record.tag_pairs("ptp")
            self._tags.update(pairs)
            if any(name == "TimeControl" for name, _ in pairs):
                self._control = _time_control(self._tags["TimeControl"])
            LOGGER.info("tags: %s", escape(str(self._tags)))
        if "cc" in record:
            self._consumed = record.clock_pair("cc")

    def _start_game(self) -> SessionOutput:
        self._new_game_pending = False
        try:
            self._player.new_game(dict(self._tags))
        except EngineError as exc:
            return self._recover(f"player failed to start a game: {exc}")
        return SessionOutput()

    def _follow(self, record: EpdRecord) -> bool:
        """Bring the board to the record's position, then play its ``sm``; False if impossible."""
        target = _record_board(record)
        if target is None:
            return False
        if not _same_position(self._board, target, record):
            if self._board.move_stack:
                LOGGER.info(
                    "the referee's position differs from ours (%s): starting from %s with no "
                    "history",
                    self._board.fen(),
                    target.fen(),
                )
            self._board = target
        if "sm" not in record:
            return True
        try:
            move = record.move("sm", self._board)
        except (ProtocolError, ValueError) as exc:
            LOGGER.warning(
                "ignored a record whose sm cannot be played in %s: %s",
                self._board.fen(),
                exc,
            )
            return False
        self._board.push(move)
        return True

    def _budget(self) -> ThinkingBudget:
        plies = max(0, _ply(self._board) - self._start_ply)
        first_mover_moves, second_mover_moves = (plies + 1) // 2, plies // 2
        white_started = self._start_ply % 2 == 0
        moves_made = (
            (first_mover_moves, second_mover_moves)
            if white_started
            else (second_mover_moves, first_mover_moves)
        )
        return ThinkingBudget.from_clocks(
            self._control,
            consumed=self._consumed,
            moves_made=moves_made,
            turn=self._board.turn,
        )

    def _answer(self, decision: Decision, draw_offered: bool) -> SessionOutput:
        """Turn a decision into one ``reply``, checked against PROTOCOL.md section 4."""
        board = self._board
        flags: list[str] = []
        move = decision.move
        if decision.resign:
            if decision.draw_offer or decision.draw_accept or decision.draw_claim:
                LOGGER.warning("the player resigns and draws at once: sending the resignation")
            flags.append("resign")
            move = None
        elif decision.draw_accept and draw_offered:
            flags.append("draw_accept")
            move = None
        else:
            if decision.draw_accept:
                LOGGER.warning("the player accepts a draw nobody offered: flag dropped")
            if move is None:
                if not (decision.draw_claim and _claimable_now(board)):
                    return self._report_fault("the player chose no move")
                flags.append("draw_claim")
            elif move not in board.legal_moves:
                return self._report_fault(f"the player chose an illegal move {move.uci()}")
            elif decision.draw_claim or (self._claim_draws and _claim_holds(board, move)):
                flags.append("draw_claim")
            elif decision.draw_offer:
                flags.append("draw_offer")
        operations = [Operation(flag) for flag in flags]
        operations += _analysis_operations(board, decision.analysis)
        operations += _counters(board)
        output = self._output(reply(board, move, *operations))
        if move is not None:
            board.push(move)
        return output

    def _output(self, record: EpdRecord) -> SessionOutput:
        return SessionOutput(lines=(format_record(record),))


def _record_board(record: EpdRecord) -> chess.Board | None:
    """The record's position as a board (hmvc/fmvn applied), or None if it is not usable."""
    try:
        board = record.board()
    except (ProtocolError, ValueError) as exc:
        LOGGER.warning("ignored a record with an unusable position: %s", exc)
        return None
    if not board.is_valid():
        LOGGER.warning(
            "ignored a record with an impossible position %s (%s)",
            board.fen(),
            board.status().name,
        )
        return None
    return board


def _same_position(board: chess.Board, target: chess.Board, record: EpdRecord) -> bool:
    """Spec 8.1's match: the four fields, and the move counters when the referee sent them.

    ``Board.epd()`` writes an en passant square only when a capture is possible, which
    is exactly PROTOCOL.md 2's rule for comparing positions.
    """
    if board.epd() != target.epd():
        return False
    if "hmvc" in record and board.halfmove_clock != target.halfmove_clock:
        return False
    return "fmvn" not in record or board.fullmove_number == target.fullmove_number


def _ply(board: chess.Board) -> int:
    """Half-moves since the start of a game that began with White at move 1."""
    return 2 * (board.fullmove_number - 1) + (board.turn == chess.BLACK)


def _claimable_now(board: chess.Board) -> bool:
    return board.is_repetition(3) or board.is_fifty_moves()


def _claim_holds(board: chess.Board, move: chess.Move) -> bool:
    """PROTOCOL.md 5: the current position, or the one after ``move``, allows a claim.

    python-chess's ``can_claim_draw`` asks whether *any* move allows one; the referee
    judges the move actually supplied, so that move is tried alone.
    """
    if _claimable_now(board):
        return True
    board.push(move)
    try:
        return _claimable_now(board)
    finally:
        board.pop()


def _counters(board: chess.Board) -> list[Operation]:
    """``fmvn`` and ``hmvc`` of the reply's position, so the referee can check them too."""
    return [Operation.of("fmvn", board.fullmove_number), Operation.of("hmvc", board.halfmove_clock)]


def _analysis_operations(board: chess.Board, analysis: Analysis | None) -> list[Operation]:
    """``ce``, ``pv`` (SAN), ``acn`` and ``acs``; values the spec cannot carry are dropped."""
    if analysis is None:
        return []
    operations: list[Operation] = []
    if analysis.centipawns is not None:
        if analysis.centipawns in _CE_RANGE:
            operations.append(Operation.of("ce", analysis.centipawns))
        else:
            LOGGER.warning("dropped ce %d: outside spec 6.7's range", analysis.centipawns)
    sans = _pv_sans(board, analysis.pv)
    if sans:
        operations.append(Operation.of("pv", *sans))
    for opcode, count in (("acn", analysis.nodes), ("acs", analysis.seconds)):
        if count is None:
            continue
        if count >= 0:
            operations.append(Operation.of(opcode, count))
        else:
            LOGGER.warning("dropped %s %d: must not be negative", opcode, count)
    return operations


def _pv_sans(board: chess.Board, moves: Iterable[chess.Move]) -> list[str]:
    """The variation in SAN, cut at the first move that is not legal where it is played."""
    line = board.copy(stack=False)
    sans: list[str] = []
    for move in moves:
        if move not in line.legal_moves:
            LOGGER.debug("pv cut at %s: not legal in %s", move.uci(), line.fen())
            break
        sans.append(line.san(move))
        line.push(move)
    return sans


def _time_control(text: str) -> TimeControl | None:
    try:
        return TimeControl.parse(text)
    except ConfigError as exc:
        LOGGER.warning("ignored the TimeControl tag: %s", exc)
        return None
