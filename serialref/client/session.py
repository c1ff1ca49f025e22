"""The player side of the referee protocol as pure logic: lines in, lines and think requests out.

:class:`PlayerSession` follows the referee's game on a board with its history
(:class:`~serialref.client.following.FollowedGame`, spec section 8.1), so that a
repetition can be claimed and a restore (PROTOCOL.md 6) brings the history back.

The session never waits for its player. A ``respond`` becomes a :class:`ThinkRequest`
in the output; the runner lets the player think while it goes on reading the port,
and hands the answer back with :meth:`PlayerSession.decision_made`. A reply belongs to
the ``respond`` it answers: once a newer ``respond``, an ``execute``, ``conclude``,
``reset``, ``fault`` or ``disconnect`` has arrived, the output says ``stop`` (the search
is no longer wanted) and a late answer to the old request is dropped, never sent.

Clocks. The clocks are the referee's, set from each record that carries them
(:class:`~serialref.client.clocks.GameClocks`); the only time the session counts
itself is that of the move in hand, from the arrival of its ``respond``. The budget
handed to the player leaves out a safety margin (the line time of a respond and a
reply at the port's rate, plus scheduling jitter); ``ThinkRequest.deadline`` marks the
same point in time.

A player that stays. After ``disconnect`` the session keeps its line and signs on
every :data:`SIGN_ON_RETRY` seconds until a ``reset`` comes (PROTOCOL.md 4): the next
pairing of an event, or a referee started again after an orderly stop, finds it
there. With ``once`` the session is finished at ``disconnect`` instead.

Nothing the referee sends can stop the session except ``disconnect`` with ``once``: a
record that cannot be parsed, is not a ``refcom``, or asks for something impossible is
logged with the reason and otherwise ignored, as the wire profile asks of the referee
too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

import chess

from serialref.client.clocks import SAFETY_MARGIN
from serialref.client.following import FollowedGame
from serialref.client.players import Decision, ThinkRequest
from serialref.client.replies import reply_in_finished_position
from serialref.client.respond import RespondLine, read_respond
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import EngineError, MissingExtraError, ProtocolError, escape
from serialref.records import (
    Refcom,
    player_fault,
    referee_command,
    sign_off,
    sign_on,
)

__all__ = ["SIGN_ON_RETRY", "PlayerSession", "SessionOutput"]

LOGGER = logging.getLogger(__name__)

SIGN_ON_RETRY = 5.0
"""Seconds without a ``reset`` after which ``sign_on`` is sent again (PROTOCOL.md 4)."""

@dataclass(frozen=True, slots=True)
class SessionOutput:
    """What the runner must do after feeding the session, in this order.

    ``stop``: the search in progress answers a request that is no longer wanted;
    ``lines``: send them; ``new_game``: a game begins (its ``ThinkRequest.game``), the
    player may get ready for it; ``think``: let the player think on this request;
    ``finished``: the referee sent ``disconnect`` to a session that plays ``once``.
    """

    lines: tuple[str, ...] = ()
    new_game: object | None = None
    think: ThinkRequest | None = None
    stop: bool = False
    finished: bool = False


class PlayerSession:
    """One player's conversation with the referee, record by record.

    Feed every received line to :meth:`line_received` and every answer of the player
    to :meth:`decision_made`; call :meth:`sign_on` at the start and whenever the line
    was re-established, and :meth:`deadline_passed` when :meth:`next_deadline` has come.
    Each returns a :class:`SessionOutput`.
    """

    def __init__(
        self,
        name: str,
        *,
        port: str = "the line",
        once: bool = False,
        clock: Callable[[], float] = time.monotonic,
        claim_draws: bool = True,
        sign_on_retry: float = SIGN_ON_RETRY,
        safety_margin: float = SAFETY_MARGIN,
        token: str | None = None,
    ) -> None:
        """``name`` goes into ``tcsi``; ``clock`` is the one line arrival times come from.

        ``port`` names the line in what the session logs. ``once``: the session is
        finished at ``disconnect`` rather than staying for the next match. ``token``
        goes into the ``sign_on`` for a TCP seat that requires one.

        ``claim_draws`` adds ``draw_claim`` to any move that makes a threefold
        repetition or the fifty-move rule claimable, so no drawn game drags on to
        the fivefold or seventy-five-move rules.
        """
        self._name = name
        self._port = port
        self._once = once
        self._token = token
        self._clock = clock
        self._claim_draws = claim_draws
        self._sign_on_retry = sign_on_retry
        self._safety_margin = safety_margin
        self._sign_on_due: float | None = None
        self._signed_on = False
        # Whether the log already says the session is waiting for a referee.
        self._waiting_told = False
        self._finished = False
        self._followed = FollowedGame()
        self._game_announced = False
        self._pending: ThinkRequest | None = None

    @property
    def finished(self) -> bool:
        """True once the referee sent ``disconnect`` to a session that plays ``once``."""
        return self._finished

    @property
    def board(self) -> chess.Board:
        """A copy of the game as the session holds it, history included."""
        return self._followed.board.copy()

    @property
    def tags(self) -> dict[str, str]:
        """The PGN tags the referee sent for the current game."""
        return dict(self._followed.tags)

    @property
    def pending(self) -> ThinkRequest | None:
        """The request whose answer the referee is waiting for, if any."""
        return self._pending

    def next_deadline(self) -> float | None:
        """When :meth:`deadline_passed` must be called (clock reading), or ``None``."""
        return self._sign_on_due

    def sign_on(self) -> SessionOutput:
        """Register with the referee; the retry deadline starts now."""
        self._sign_on_due = self._clock() + self._sign_on_retry
        stop = self._abandon()
        record = sign_on(self._followed.board, self._name, token=self._token)
        return SessionOutput(lines=(format_record(record),), stop=stop)

    def sign_off(self) -> SessionOutput:
        """Leave the referee (on shutdown); nothing is expected back."""
        self._sign_on_due = None
        stop = self._abandon()
        return SessionOutput(lines=(format_record(sign_off(self._followed.board)),), stop=stop)

    def deadline_passed(self) -> SessionOutput:
        """Sign on again if the referee has not answered the last ``sign_on`` in time.

        Pyserial discards input already waiting when a port is opened, so a
        ``sign_on`` sent before the referee opened its end is lost for good.
        """
        if self._sign_on_due is None or self._clock() < self._sign_on_due:
            return SessionOutput()
        if self._waiting_told:
            LOGGER.debug("no reset within %.0f s of sign_on: signing on again", self._sign_on_retry)
        else:
            self._waiting_told = True
            LOGGER.info(
                "no referee on %s yet: signing on every %.0f s",
                escape(self._port),
                self._sign_on_retry,
            )
        return self.sign_on()

    def line_received(self, text: str, at: float | None = None) -> SessionOutput:
        """Act on one line from the referee, which arrived at ``at`` (default: now).

        Never raises for anything the line holds. The ``respond`` that continues the
        game, as the referee writes it, is read without the general EPD reader.
        """
        arrived = self._clock() if at is None else at
        respond = read_respond(text)
        if respond is not None:
            output = self._respond_directly(respond, arrived)
            if output is not None:
                return output
        try:
            record = parse_record(text)
            command = referee_command(record)
        except ProtocolError as exc:
            LOGGER.warning("ignored a line from the referee: %s: %s", exc, escape(text))
            return SessionOutput()
        if command is not Refcom.RESET:  # a reset first forgets the previous game's
            self._followed.take(record)
        return self._HANDLERS[command](self, record, arrived)

    def prepare(self) -> None:
        """Work out now what the next record will need, while nothing waits for it.

        The runner calls it when the line and the player are quiet: after a reply has
        gone (the next ``respond`` names the position it leads to) and once the player
        is thinking (the reply names the position it thinks in).
        """
        self._followed.position_fields()

    def decision_made(self, request: ThinkRequest, decision: Decision) -> SessionOutput:
        """The player's answer to ``request``: the reply, or nothing if it is stale."""
        if request is not self._pending:
            LOGGER.debug("dropped the answer to a request the referee no longer waits for")
            return SessionOutput()
        self._pending = None
        return self._answer(request, decision)

    def player_restarted(self, request: ThinkRequest) -> SessionOutput:
        """The player failed on ``request`` and was restarted: sign on again if it was current.

        A restarted engine has lost the game, and the sign-on makes the referee replay
        it (PROTOCOL.md 6: reset, inform, one execute per move, respond).
        """
        if request is not self._pending:
            return SessionOutput()
        return self.sign_on()

    def player_lost(self, reason: str) -> SessionOutput:
        """The player failed and cannot be restarted: the referee hears of a fault."""
        stop = self._abandon()
        LOGGER.error("reporting a fault to the referee: %s", reason)
        return SessionOutput(
            lines=(format_record(player_fault(self._followed.board, reason)),), stop=stop
        )

    # -- referee commands (spec 8.1, PROTOCOL.md 3) ----------------------------------

    def _reset(self, record: EpdRecord, at: float) -> SessionOutput:
        self._sign_on_due = None
        if not self._signed_on:
            self._signed_on = True
            self._waiting_told = False
            LOGGER.info(
                "the referee answered on %s: signed on as %s",
                escape(self._port),
                escape(self._name),
            )
        stop = self._abandon()
        # A new game even when its position is not usable yet: a variant's position is
        # read once inform names the variant (and an unusable one is not followed).
        self._followed.start(record)
        self._game_announced = False
        LOGGER.debug("new game from %s", self._followed.board.fen())
        return SessionOutput(stop=stop, new_game=self._followed.game)

    def _inform(self, record: EpdRecord, at: float) -> SessionOutput:
        try:
            self._followed.play_by_tags()
        except MissingExtraError as exc:
            # A variant this install cannot play: the referee ends the game without a
            # loser (an emergency) rather than waiting for moves that cannot come; the
            # game's closing inform then needs no second word.
            if self._game_announced:
                return SessionOutput()
            self._game_announced = True
            return self.player_lost(str(exc))
        if not self._game_announced:
            self._game_announced = True
            tags = self._followed.tags
            LOGGER.info(
                "game started: round %s, %s - %s, time control %s",
                escape(tags.get("Round", "?")),
                escape(tags.get("White", "?")),
                escape(tags.get("Black", "?")),
                escape(tags.get("TimeControl", "not given")),
            )
        return SessionOutput()

    def _respond(self, record: EpdRecord, at: float) -> SessionOutput:
        stop = self._abandon()
        if not self._followed.follow(record):
            return SessionOutput(stop=stop)
        return self._ask(at, draw_offered="draw_offer" in record, stop=stop)

    def _respond_directly(self, respond: RespondLine, at: float) -> SessionOutput | None:
        """The common ``respond``, read without the EPD reader; None for any other."""
        if not self._followed.follow_respond(respond):
            return None
        return self._ask(at, draw_offered=respond.draw_offer, stop=self._abandon())

    def _ask(self, at: float, *, draw_offered: bool, stop: bool) -> SessionOutput:
        """Hand the player the current position to move in (the ``respond``'s request)."""
        board = self._followed.board
        if not any(board.generate_legal_moves()):
            # Spec 8 step 10: no move is produced when the client is mated or stalemated.
            LOGGER.warning("asked to move in a finished position: %s", board.fen())
            return SessionOutput(lines=(format_record(reply_in_finished_position(board)),))
        margin = self._safety_margin
        self._pending = self._followed.request(at, draw_offered=draw_offered, safety_margin=margin)
        return SessionOutput(think=self._pending, stop=stop)

    def _execute(self, record: EpdRecord, at: float) -> SessionOutput:
        stop = self._abandon()
        self._followed.follow(record)
        return SessionOutput(stop=stop)

    def _conclude(self, record: EpdRecord, at: float) -> SessionOutput:
        stop = self._abandon()
        LOGGER.info(
            "game over: %s (%s)",
            escape(self._followed.tags.get("Result", "*")),
            escape(self._followed.tags.get("Termination", "no termination given")),
        )
        return SessionOutput(stop=stop)

    def _referee_fault(self, record: EpdRecord, at: float) -> SessionOutput:
        reason = " ".join(record.operand_texts("c0")) or "no reason given"
        LOGGER.error(
            "THE REFEREE REPORTS A FAULT: %s. The operator must look at the referee; "
            "signing on again.",
            escape(reason),
        )
        self._signed_on = False
        return self.sign_on()

    def _disconnect(self, record: EpdRecord, at: float) -> SessionOutput:
        stop = self._abandon()
        self._signed_on = False
        if self._once:
            LOGGER.info("the referee disconnected")
            self._finished = True
            self._sign_on_due = None
            return SessionOutput(stop=stop, finished=True)
        # The referee has closed its end or is about to: the first sign_on waits a while.
        self._sign_on_due = self._clock() + self._sign_on_retry
        self._waiting_told = True
        LOGGER.info(
            "the referee disconnected: staying on %s for its next match, signing on every %.0f s",
            escape(self._port),
            self._sign_on_retry,
        )
        return SessionOutput(stop=stop)

    _HANDLERS: ClassVar[
        Mapping[Refcom, Callable[[PlayerSession, EpdRecord, float], SessionOutput]]
    ] = {
        Refcom.RESET: _reset,
        Refcom.INFORM: _inform,
        Refcom.RESPOND: _respond,
        Refcom.EXECUTE: _execute,
        Refcom.CONCLUDE: _conclude,
        Refcom.FAULT: _referee_fault,
        Refcom.DISCONNECT: _disconnect,
    }

    # -- the game ---------------------------------------------------------------------

    def _abandon(self) -> bool:
        """Forget the request in progress; True if there was one (its search must stop)."""
        abandoned, self._pending = self._pending is not None, None
        return abandoned

    def _answer(self, request: ThinkRequest, decision: Decision) -> SessionOutput:
        """The ``reply`` for ``decision``; a decision that cannot be sent is a fault."""
        try:
            line = self._followed.reply(request, decision, claim_draws=self._claim_draws)
        except EngineError as exc:
            return self.player_lost(str(exc))
        return SessionOutput(lines=(line,))

