"""The player side of the referee protocol as pure logic: lines in, lines and think requests out.

:class:`PlayerSession` follows the referee's game on a board with its history
(:class:`~serialref.client.following.FollowedGame`, spec section 8.1), so that a
repetition can be claimed and a restore (PROTOCOL.md 6) brings the history back.

Where the player stands with the referee is a state machine (:class:`PlayerState`):
one ``transitions`` table, :data:`TRANSITIONS`, whose rows name the section of the EPD
specification or of PROTOCOL.md they carry out, run row by row on the session
(:class:`~serialref.statetable.StateTable`). What a record says is read, and the
board follows it (legality is python-chess's), before the trigger of its command fires;
the table then decides what the record means where the player stands.

The session never waits for its player. A ``respond`` becomes a :class:`ThinkRequest`
in the output; the runner lets the player think while it goes on reading the port,
and hands the answer back with :meth:`PlayerSession.decision_made`. A reply belongs to
the ``respond`` it answers: once a newer ``respond``, an ``execute``, ``conclude``,
``reset``, ``fault`` or ``disconnect`` has arrived, the output says ``stop`` (the search
is no longer wanted) and a late answer to the old request is dropped, never sent.
Beside where it stands, the session keeps the request in hand: which request an
answer must belong to is that request itself, not a state.

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

import contextlib
import enum
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import chess

from serialref.client.clocks import SAFETY_MARGIN
from serialref.client.following import FollowedGame
from serialref.client.players import Decision, ThinkRequest
from serialref.client.replies import reply_in_finished_position
from serialref.client.respond import read_respond
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
from serialref.statetable import StateTable

__all__ = [
    "SIGN_ON_RETRY",
    "STATES",
    "TRANSITIONS",
    "PlayerSession",
    "PlayerState",
    "SessionOutput",
]

LOGGER = logging.getLogger(__name__)

SIGN_ON_RETRY = 5.0
"""Seconds without a ``reset`` after which ``sign_on`` is sent again (PROTOCOL.md 4)."""


class PlayerState(enum.Enum):
    """Where the player stands with the referee, as its session sees it."""

    OFFLINE = "offline"  # nothing sent yet
    SIGNING_ON = "signing on"  # sign_on sent, no reset has answered it yet (8.2.4)
    WAITING = "waiting for a referee"  # signing on every 5 s, and the log has said so
    REJOINING = "rejoining"  # signed on, sign_on sent again: the restore is awaited (PROTOCOL.md 6)
    RESETTING = "resetting"  # reset came: a game begins, its first inform announces it (8.1.6)
    SIGNED_ON = "signed on"  # its game announced (in play or over), or none yet after a restore
    FINISHED = "finished"  # disconnect to a session that plays once, or sign_off: nothing more


_P = PlayerState
_UNANSWERED = [_P.SIGNING_ON, _P.WAITING, _P.REJOINING]
_NOT_SIGNED_ON = [_P.OFFLINE, _P.SIGNING_ON, _P.WAITING]
_IN_TOUCH = [_P.REJOINING, _P.RESETTING, _P.SIGNED_ON]
_ON_LINE = [*_NOT_SIGNED_ON, *_IN_TOUCH]
_ANY = list(PlayerState)

STATES: list[dict[str, Any]] = [
    *({"name": state} for state in (_P.OFFLINE, _P.RESETTING, _P.SIGNED_ON)),
    # Nothing reaches a finished session.
    {"name": _P.FINISHED, "ignore_invalid_triggers": True},
    # PROTOCOL.md 4: while a sign_on awaits its reset, it is sent again every 5 s.
    *(
        {"name": state, "on_enter": "_await_reset", "on_exit": "_stop_awaiting_reset"}
        for state in _UNANSWERED
    ),
]

# Rows are tried in order: the first whose source holds the state and whose conditions
# hold fires. "_abandon" marks what ends the request in hand (PROTOCOL.md 7): a reply
# answers one respond, and once the referee has moved on, the search for it stops.
TRANSITIONS: list[dict[str, Any]] = [
    # 8.2.4 sign_on: the line was opened: the player registers; the referee answers reset.
    {"trigger": "line_opened", "source": [_P.OFFLINE, _P.SIGNING_ON], "dest": _P.SIGNING_ON,
     "before": "_abandon", "after": "_send_sign_on"},
    {"trigger": "line_opened", "source": _P.WAITING, "dest": _P.WAITING, "before": "_abandon",
     "after": "_send_sign_on"},
    # PROTOCOL.md 4, 6: the line was opened again while signed on: the referee restores the game.
    {"trigger": "line_opened", "source": _IN_TOUCH, "dest": _P.REJOINING, "before": "_abandon",
     "after": "_send_sign_on"},
    # PROTOCOL.md 4: no reset within 5 s (a port opened after the sign_on has lost it): sign
    # on again, and say once that the client waits for a referee.
    {"trigger": "retry_deadline_passed", "source": [_P.SIGNING_ON, _P.REJOINING],
     "dest": _P.WAITING, "conditions": "_reset_overdue", "before": "_abandon",
     "after": ["_say_waiting", "_send_sign_on"]},
    {"trigger": "retry_deadline_passed", "source": _P.WAITING, "dest": _P.WAITING,
     "conditions": "_reset_overdue", "before": "_abandon",
     "after": ["_say_no_reset", "_send_sign_on"]},
    {"trigger": "retry_deadline_passed", "source": _ANY, "dest": None},
    # 8.1.6 reset, PROTOCOL.md 4: the referee answers the sign_on; a game begins.
    {"trigger": "reset_received", "source": _NOT_SIGNED_ON, "dest": _P.RESETTING,
     "before": "_abandon", "after": ["_say_signed_on", "_start_game"]},
    # 8.1.6 reset, PROTOCOL.md 6: the next game, or the restore of this one.
    {"trigger": "reset_received", "source": _IN_TOUCH, "dest": _P.RESETTING,
     "before": "_abandon", "after": "_start_game"},
    # 8.1.5 inform: the first after reset announces the game, played by its Variant tag.
    {"trigger": "inform_received", "source": _P.RESETTING, "dest": _P.SIGNED_ON,
     "after": "_announce_game"},
    {"trigger": "inform_received", "source": _ON_LINE, "dest": None, "after": "_follow_variant"},
    # 8.1.7 respond: the player is asked for a move in the position the record names
    # (8, step 10: none in a mated or stalemated one, whose reply has no move).
    {"trigger": "respond_received", "source": _ON_LINE, "dest": None, "before": "_abandon",
     "after": "_hand_over"},
    # 8.1.3 execute: the game goes on by a move (how a restore replays it).
    {"trigger": "execute_received", "source": _ON_LINE, "dest": None, "before": "_abandon",
     "after": "_follow"},
    # 8.1.1 conclude: the game is over.
    {"trigger": "conclude_received", "source": _ON_LINE, "dest": None, "before": "_abandon",
     "after": "_say_game_over"},
    # 8.1.4 fault, PROTOCOL.md 3: the player counts as signed off, so it signs on again.
    {"trigger": "fault_received", "source": _ON_LINE, "dest": _P.SIGNING_ON,
     "before": "_abandon", "after": ["_say_referee_fault", "_send_sign_on"]},
    # 8.1.2 disconnect: the referee talks no more. A session that plays once is finished;
    # PROTOCOL.md 4 (1.2): any other stays on its line and signs on every 5 s until a reset.
    {"trigger": "disconnect_received", "source": _ON_LINE, "dest": _P.FINISHED,
     "conditions": "_plays_once", "before": "_abandon", "after": "_finish"},
    {"trigger": "disconnect_received", "source": _ON_LINE, "dest": _P.WAITING,
     "before": "_abandon", "after": "_say_staying"},
    # 8.2.2 reply: the answer to the respond in hand goes out; one to any other is dropped.
    {"trigger": "player_answered", "source": _ON_LINE, "dest": None, "conditions": "_is_pending",
     "after": "_send_reply"},
    {"trigger": "player_answered", "source": _ANY, "dest": None, "after": "_drop_answer"},
    # PROTOCOL.md 6: the player failed on the request in hand and was started again: it
    # signs on again, as on a line opened again, and the referee replays the game to it.
    {"trigger": "player_back", "source": _ON_LINE, "dest": None, "conditions": "_is_pending",
     "after": "_sign_on_again"},
    {"trigger": "player_back", "source": _ANY, "dest": None},
    # 8.2.1 fault: the player cannot go on; the referee hears why.
    {"trigger": "player_gone", "source": _ON_LINE, "dest": None, "before": "_abandon",
     "after": "_send_fault"},
    # 8.2.3 sign_off: the client is being stopped.
    {"trigger": "stop_requested", "source": _ON_LINE, "dest": _P.FINISHED, "before": "_abandon",
     "after": "_send_sign_off"},
]  # fmt: skip


_TABLE = StateTable(PlayerState, TRANSITIONS, states=STATES)
"""The table as the session runs it, row by row (:mod:`serialref.statetable` says why)."""


_TRIGGERS = {
    Refcom.RESET: "reset_received",
    Refcom.INFORM: "inform_received",
    Refcom.EXECUTE: "execute_received",
    Refcom.CONCLUDE: "conclude_received",
    Refcom.FAULT: "fault_received",
    Refcom.DISCONNECT: "disconnect_received",
}
"""The trigger a command fires with its record; a ``respond``'s fires once it was followed."""


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


class _Output:
    """A :class:`SessionOutput` being gathered while the machine runs one trigger."""

    __slots__ = ("finished", "lines", "new_game", "stop", "think")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.new_game: object | None = None
        self.think: ThinkRequest | None = None
        self.stop = False
        self.finished = False

    def done(self) -> SessionOutput:
        return SessionOutput(tuple(self.lines), self.new_game, self.think, self.stop, self.finished)


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
        self._sign_on_due = math.inf
        self._followed = FollowedGame()
        self._pending: ThinkRequest | None = None
        self._output = _Output()
        self.state = PlayerState.OFFLINE

    @property
    def finished(self) -> bool:
        """True once the session is over: ``disconnect`` came to a session that plays
        ``once``, or it signed off."""
        return self.state is PlayerState.FINISHED

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
        return self._sign_on_due if math.isfinite(self._sign_on_due) else None

    def sign_on(self) -> SessionOutput:
        """Register with the referee; the retry deadline starts now."""
        return self._run("line_opened")

    def sign_off(self) -> SessionOutput:
        """Leave the referee (on shutdown); nothing is expected back."""
        return self._run("stop_requested")

    def deadline_passed(self) -> SessionOutput:
        """Sign on again if the referee has not answered the last ``sign_on`` in time.

        Pyserial discards input already waiting when a port is opened, so a
        ``sign_on`` sent before the referee opened its end is lost for good.
        """
        return self._run("retry_deadline_passed")

    def line_received(self, text: str, at: float | None = None) -> SessionOutput:
        """Act on one line from the referee, which arrived at ``at`` (default: now).

        Never raises for anything the line holds. The ``respond`` that continues the
        game, as the referee writes it, is read without the general EPD reader.
        """
        arrived = self._clock() if at is None else at
        self._output = output = _Output()
        respond = read_respond(text)
        if respond is not None and self._followed.follow_respond(respond):
            self._ask(arrived, draw_offered=respond.draw_offer)
            return output.done()
        try:
            record = parse_record(text)
            command = referee_command(record)
        except ProtocolError as exc:
            LOGGER.warning("ignored a line from the referee: %s: %s", exc, escape(text))
            return output.done()
        if command is not Refcom.RESET:  # a reset first forgets the previous game's
            self._followed.take(record)
        if command is not Refcom.RESPOND:
            _TABLE.fire(self, _TRIGGERS[command], record)
        elif self._followed.follow(record):
            self._ask(arrived, draw_offered="draw_offer" in record)
        else:
            _TABLE.fire(self, "respond_received", None)
        return output.done()

    def prepare(self) -> None:
        """Work out now what the next record will need, while nothing waits for it.

        The runner calls it when the line and the player are quiet: after a reply has
        gone (the next ``respond`` names the position it leads to) and once the player
        is thinking (the reply names the position it thinks in).
        """
        self._followed.position_fields()

    def decision_made(self, request: ThinkRequest, decision: Decision) -> SessionOutput:
        """The player's answer to ``request``: the reply, or nothing if it is stale."""
        return self._run("player_answered", request, decision)

    def player_restarted(self, request: ThinkRequest) -> SessionOutput:
        """The player failed on ``request`` and was restarted: sign on again if it was current.

        A restarted engine has lost the game, and the sign-on makes the referee replay
        it (PROTOCOL.md 6: reset, inform, one execute per move, respond).
        """
        return self._run("player_back", request)

    def player_lost(self, reason: str) -> SessionOutput:
        """The player failed and cannot be restarted: the referee hears of a fault."""
        return self._run("player_gone", reason)

    def _run(self, trigger: str, *args: Any) -> SessionOutput:
        """Fire ``trigger`` and return what its callbacks asked of the runner."""
        self._output = output = _Output()
        _TABLE.fire(self, trigger, *args)
        return output.done()

    def _ask(self, at: float, *, draw_offered: bool) -> None:
        """The ``respond``'s request for a move in the current position, if one can be made.

        Spec 8 step 10: a mated or stalemated client produces no move; its reply says so.
        """
        board = self._followed.board
        if any(board.generate_legal_moves()):
            margin = self._safety_margin
            request = self._followed.request(at, draw_offered=draw_offered, safety_margin=margin)
            _TABLE.fire(self, "respond_received", request)
            return
        LOGGER.warning("asked to move in a finished position: %s", board.fen())
        self._output.lines.append(format_record(reply_in_finished_position(board)))
        _TABLE.fire(self, "respond_received", None)

    # -- conditions ---------------------------------------------------------------------

    def _reset_overdue(self) -> bool:
        return self._clock() >= self._sign_on_due

    def _plays_once(self, record: EpdRecord) -> bool:
        return self._once

    def _is_pending(self, request: ThinkRequest, *_: Any) -> bool:
        return request is self._pending

    # -- callbacks: signing on ------------------------------------------------------------

    def _await_reset(self, *_: Any) -> None:
        """A ``sign_on`` awaits its ``reset``: it is sent again if none comes in time."""
        self._sign_on_due = self._clock() + self._sign_on_retry

    def _stop_awaiting_reset(self, *_: Any) -> None:
        self._sign_on_due = math.inf

    def _sign_on_again(self, request: ThinkRequest) -> None:
        _TABLE.fire(self, "line_opened")

    def _send_sign_on(self, *_: Any) -> None:
        record = sign_on(self._followed.board, self._name, token=self._token)
        self._output.lines.append(format_record(record))

    def _say_waiting(self) -> None:
        LOGGER.info(
            "no referee on %s yet: signing on every %.0f s",
            escape(self._port),
            self._sign_on_retry,
        )

    def _say_no_reset(self) -> None:
        LOGGER.debug("no reset within %.0f s of sign_on: signing on again", self._sign_on_retry)

    def _say_signed_on(self, record: EpdRecord) -> None:
        LOGGER.info(
            "the referee answered on %s: signed on as %s",
            escape(self._port),
            escape(self._name),
        )

    def _say_referee_fault(self, record: EpdRecord) -> None:
        reason = " ".join(record.operand_texts("c0")) or "no reason given"
        LOGGER.error(
            "THE REFEREE REPORTS A FAULT: %s. The operator must look at the referee; "
            "signing on again.",
            escape(reason),
        )

    def _say_staying(self, record: EpdRecord) -> None:
        # The referee has closed its end or is about to: the first sign_on waits a while.
        LOGGER.info(
            "the referee disconnected: staying on %s for its next match, signing on every %.0f s",
            escape(self._port),
            self._sign_on_retry,
        )

    def _finish(self, record: EpdRecord) -> None:
        LOGGER.info("the referee disconnected")
        self._output.finished = True

    def _send_sign_off(self) -> None:
        self._output.lines.append(format_record(sign_off(self._followed.board)))

    # -- callbacks: the game ----------------------------------------------------------------

    def _start_game(self, record: EpdRecord) -> None:
        """A new game from the reset's position, its tags and clocks forgotten."""
        # A new game even when its position is not usable yet: a variant's position is
        # read once inform names the variant (and an unusable one is not followed).
        self._followed.start(record)
        self._output.new_game = self._followed.game
        LOGGER.debug("new game from %s", self._followed.board.fen())

    def _follow(self, record: EpdRecord) -> None:
        self._followed.follow(record)

    def _announce_game(self, record: EpdRecord) -> None:
        """The game's first ``inform``: say that it started, by the rules it names."""
        try:
            self._followed.play_by_tags()
        except MissingExtraError as exc:
            # A variant this install cannot play: the referee ends the game without a
            # loser (an emergency) rather than waiting for moves that cannot come; the
            # game's closing inform then needs no second word.
            self._send_fault(str(exc))
            return
        tags = self._followed.tags
        LOGGER.info(
            "game started: round %s, %s - %s, time control %s",
            escape(tags.get("Round", "?")),
            escape(tags.get("White", "?")),
            escape(tags.get("Black", "?")),
            escape(tags.get("TimeControl", "not given")),
        )

    def _follow_variant(self, record: EpdRecord) -> None:
        """A later ``inform``: the rules it names, if they can be played, count still."""
        with contextlib.suppress(MissingExtraError):  # reported at the game's first inform
            self._followed.play_by_tags()

    def _abandon(self, *_: Any) -> None:
        """The request in hand, if any, is no longer wanted: its search must stop."""
        self._output.stop = self._pending is not None
        self._pending = None

    def _hand_over(self, request: ThinkRequest | None) -> None:
        """The player thinks on ``request``, if the ``respond`` asked for a move."""
        self._pending = self._output.think = request

    def _send_reply(self, request: ThinkRequest, decision: Decision) -> None:
        """The ``reply`` for ``decision``; a decision that cannot be sent is a fault."""
        self._pending = None
        try:
            line = self._followed.reply(request, decision, claim_draws=self._claim_draws)
        except EngineError as exc:
            self._send_fault(str(exc))
            return
        self._output.lines.append(line)

    def _drop_answer(self, request: ThinkRequest, decision: Decision) -> None:
        LOGGER.debug("dropped the answer to a request the referee no longer waits for")

    def _say_game_over(self, record: EpdRecord) -> None:
        tags = self._followed.tags
        LOGGER.info(
            "game over: %s (%s)",
            escape(tags.get("Result", "*")),
            escape(tags.get("Termination", "no termination given")),
        )

    def _send_fault(self, reason: str) -> None:
        LOGGER.error("reporting a fault to the referee: %s", reason)
        record = player_fault(self._followed.board, reason)
        self._output.lines.append(format_record(record))
