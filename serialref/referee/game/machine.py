"""One game of a match, from its ``reset`` to its result (EPD spec section 8, PROTOCOL.md 3-7).

A :class:`GameReferee` is made by the match when both players are signed on and
reset, or from the journal when a restarted referee continues a game
(:mod:`serialref.referee.game.replay`). While it runs it holds the match's two seats
(:class:`~serialref.referee.session.PortSession`): the line router hands it every
request the players send, and it alone changes a seat's state. It gives them back by
telling the match (its :class:`GameOwner`) that it has a result, or that it never began.

Its states (:class:`~serialref.referee.game.states.GameState`) are a ``transitions``
table, :data:`TRANSITIONS`, kept beside the callbacks its rows name: the reset delay
(RESETTING), the respond/reply cycle (PLAYING), the clocks stopped until every player
is back (SUSPENDED: the fault policy of PROTOCOL.md 4, or a restart after an orderly
stop, PROTOCOL.md 7), the result (ENDED), and a referee that stopped under it (STOPPED).
What a reply in turn is, and taking its move, is :mod:`serialref.referee.game.turn`'s
to say; when a move's clock starts and stops, the
:class:`~serialref.referee.game.moveclock.MoveClock`'s. A game that loses a player
while RESETTING never began: the match drops it and starts the same game, with the same
number and colours, when the player is back.

Every reply is charged up to the moment its first byte left the player: its own line
time is subtracted (PROTOCOL.md 5).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from serialref.epd.record import EpdRecord
from serialref.happenings import Infraction
from serialref.referee.game.moveclock import MoveClock, Pause
from serialref.referee.game.replay import ResumedGame
from serialref.referee.game.seats import GameSeats
from serialref.referee.game.sheet import GameSheet
from serialref.referee.game.states import GameState
from serialref.referee.game.turn import (
    FlagFell,
    Ignored,
    decided_by_words,
    judge_turn,
    reply_out_of_turn,
)
from serialref.referee.host import RefereeHost
from serialref.referee.rulings import ReplyKind, Ruling, Termination, Verdict
from serialref.referee.session import PortSession
from serialref.referee.settings import PORTS, MatchSettings, OnInfraction, other_port
from serialref.statetable import StateTable

__all__ = ["TRANSITIONS", "GameOwner", "GameReferee"]

LOGGER = logging.getLogger(__name__)

_G = GameState
_UNDER_WAY = [_G.RESETTING, _G.PLAYING, _G.SUSPENDED]
_BEGUN = [_G.PLAYING, _G.SUSPENDED]

TRANSITIONS: list[dict[str, Any]] = [
    # 8.1.5, 8 step 8: the reset delay is over: tags to both players, the first respond.
    {"trigger": "reset_delay_passed", "source": _G.RESETTING, "dest": _G.PLAYING,
     "after": "_open"},
    # 8.1.7: the side to move is asked with respond. 3.2 (9): while the supervisor's
    # pause is on, the respond waits for its end. PROTOCOL.md 6: a player who is away
    # is asked when it is back, and its clock runs meanwhile, as a real one would.
    {"trigger": "ask", "source": _G.PLAYING, "dest": None, "conditions": "_paused",
     "after": "_hold_respond"},
    {"trigger": "ask", "source": _G.PLAYING, "dest": None, "unless": "_present",
     "after": "_start_move_away"},
    {"trigger": "ask", "source": _G.PLAYING, "dest": None, "after": "_send_respond"},
    # 8.2.2: a reply in the respond/reply cycle is judged (PROTOCOL.md 4, 5, 7) and acted
    # on; outside it no respond is outstanding, and a reply is stale or out of turn.
    {"trigger": "reply_received", "source": _G.PLAYING, "dest": None, "after": "_take_reply"},
    {"trigger": "reply_received", "source": [_G.RESETTING, _G.SUSPENDED], "dest": None,
     "after": "_ignore_reply"},
    # PROTOCOL.md 6: a player back (it signed on again, or the supervisor restores it)
    # is reset again before the game began; after, it is sent the game again, and asked
    # if it is to move; a suspended game goes on once every player is back.
    {"trigger": "restore", "source": _G.RESETTING, "dest": None, "conditions": "_present",
     "after": "_reset_again"},
    {"trigger": "restore", "source": _G.PLAYING, "dest": None, "conditions": "_present",
     "after": ["_replay", "_ask_if_to_move"]},
    {"trigger": "restore", "source": _G.SUSPENDED, "dest": None, "conditions": "_present",
     "after": ["_replay", "players_back"]},
    {"trigger": "players_back", "source": _G.SUSPENDED, "dest": _G.PLAYING,
     "conditions": "_all_present", "after": "_ask_side_to_move"},
    # PROTOCOL.md 6, 7: a game its journal left unfinished goes on (unless its last move
    # ended it): the players present get it again; in the respond/reply cycle a side to
    # move that is away is asked all the same, so its clock runs.
    {"trigger": "resume", "source": _BEGUN, "dest": None, "conditions": "_over",
     "after": "_end_after_last_move"},
    {"trigger": "resume", "source": _G.PLAYING, "dest": None,
     "after": ["_restore_present", "_ask_if_away"]},
    {"trigger": "resume", "source": _G.SUSPENDED, "dest": None, "after": "_restore_present"},
    # 8.2.3 sign_off, or the line went away. PROTOCOL.md 7: a player who leaves before
    # the first respond interrupts the game: the match drops it and plays it again once
    # both players are back. PROTOCOL.md 6: after, the game waits for the rejoin window;
    # without one, a player who signed off has abandoned it, while one whose line went
    # away has its clock run. A player not back when its window closes has abandoned it.
    {"trigger": "player_signed_off", "source": _G.RESETTING, "dest": None,
     "before": "_note_signed_off", "after": "_interrupt"},
    {"trigger": "player_signed_off", "source": _BEGUN, "dest": None,
     "conditions": "_rejoin_window", "before": "_note_signed_off", "after": "_await_return"},
    {"trigger": "player_signed_off", "source": _BEGUN, "dest": None,
     "before": "_note_signed_off", "after": "_abandon"},
    {"trigger": "line_lost", "source": _G.RESETTING, "dest": None, "before": "_note_lost",
     "after": "_interrupt"},
    {"trigger": "line_lost", "source": _BEGUN, "dest": None, "conditions": "_rejoin_window",
     "before": "_note_lost", "after": "_await_return"},
    {"trigger": "line_lost", "source": _BEGUN, "dest": None, "before": "_note_lost",
     "after": "_move_on_without"},
    {"trigger": "rejoin_window_closed", "source": _BEGUN, "dest": None, "unless": "_present",
     "after": "_abandon_late"},
    {"trigger": "rejoin_window_closed", "source": [*_BEGUN, _G.ENDED], "dest": None},
    # 8.2.1: a player's fault ends the game in play, unfinished; before the game began it
    # is only recorded, within the limits of ignored lines (PROTOCOL.md 7).
    {"trigger": "fault_reported", "source": _G.RESETTING, "dest": None,
     "after": "_note_fault"},
    {"trigger": "fault_reported", "source": _BEGUN, "dest": None, "after": "_end_on_fault"},
    # PROTOCOL.md 5: in the respond/reply cycle the flag falls by the timer too, not only
    # when a reply arrives.
    {"trigger": "time_passed", "source": _G.PLAYING, "dest": None, "after": "_watch_flag"},
    {"trigger": "time_passed", "source": [_G.RESETTING, _G.SUSPENDED, _G.ENDED], "dest": None},
    # PROTOCOL.md 4 (fault policy), 7 (orderly restart): the clocks stop until all are back.
    {"trigger": "suspend", "source": _G.PLAYING, "dest": _G.SUSPENDED, "before": "_stop_clock"},
    # PROTOCOL.md 5: the game ends; 8.1.5 inform with the result, 8.1.1 conclude.
    {"trigger": "end", "source": _BEGUN, "dest": _G.ENDED, "before": "_stop_clock",
     "after": "_conclude"},
    # 3.2 (9): the supervisor starts the game again from its initial position.
    {"trigger": "restart", "source": _UNDER_WAY, "dest": _G.RESETTING, "before": "_stop_clock",
     "after": "_start_over"},
    # 3.2 (9): the supervisor's pause: both clocks stop; a move on its way is played, the
    # next respond waits. At its end the move in progress runs again and a respond held
    # back goes out; before the game began or while it is suspended the clock runs again
    # from the next respond.
    {"trigger": "pause", "source": _UNDER_WAY, "dest": None, "after": "_hold_clock"},
    {"trigger": "unpause", "source": _G.PLAYING, "dest": None, "after": "_release_move"},
    {"trigger": "unpause", "source": [_G.RESETTING, _G.SUSPENDED], "dest": None,
     "after": "_release_clock"},
    # PROTOCOL.md 7: the referee stops under the game, in order or because its journal
    # cannot be written: no clock runs; a restart continues the game from its journal,
    # with the clocks as they stood. A game with its result has nothing left to stop.
    {"trigger": "stop", "source": _G.RESETTING, "dest": _G.STOPPED},
    {"trigger": "stop", "source": _BEGUN, "dest": _G.STOPPED, "before": "_stop_clock",
     "after": "_keep_clocks"},
    {"trigger": "stop", "source": _G.ENDED, "dest": None},
]  # fmt: skip

_TABLE = StateTable(GameState, TRANSITIONS)


class GameOwner(Protocol):
    """The match a game belongs to, which takes the seats back when the game is over."""

    def game_decided(self, verdict: Verdict, white_port: str) -> bool:
        """The game has a result; inform and conclude went out."""
        ...

    def game_interrupted(self, port: str) -> bool:
        """The player on ``port`` left before the game began: it is played again later."""
        ...


class GameReferee:
    """Referees one game between the players on ports ``a`` and ``b``."""

    state: GameState
    # Triggers and their may_<trigger>, made by the table; what they do is in its rows.
    reset_delay_passed: Callable[[], bool]
    ask: Callable[[str, str | None], bool]
    reply_received: Callable[[str, EpdRecord, str, float], bool]
    restore: Callable[[str], bool]
    may_restore: Callable[[str], bool]
    players_back: Callable[..., bool]
    resume: Callable[[], bool]
    player_signed_off: Callable[[str], bool]
    line_lost: Callable[[str, str], bool]
    rejoin_window_closed: Callable[[str, float], bool]
    fault_reported: Callable[[str, str, str, float], bool]
    time_passed: Callable[[float], bool]
    suspend: Callable[..., bool]
    end: Callable[..., bool]
    may_end: Callable[[], bool]
    restart: Callable[..., bool]
    pause: Callable[..., bool]
    unpause: Callable[..., bool]
    stop: Callable[..., bool]

    def __init__(
        self,
        number: int,
        settings: MatchSettings,
        sessions: Mapping[str, PortSession],
        host: RefereeHost,
        *,
        owner: GameOwner,
        pause: Pause,
        resumed: ResumedGame | None = None,
    ) -> None:
        """A new game (resets go out, the reset delay runs) or a ``resumed`` one, played
        on the match's ``sessions`` until it gives them back to its ``owner``; ``pause``
        is the match's, which holds every game's clock."""
        self.number = number
        self._settings = settings
        self._seats = GameSeats(number, sessions, host)
        self._host = host
        self._publisher = host.publisher
        self._owner = owner
        self._reset_until: float | None = None
        # The respond the supervisor's pause holds back: (port, the last move's SAN).
        self._held: tuple[str, str | None] | None = None
        self.clocks_at_stop: dict[str, object] | None = None
        self.sheet = GameSheet(number, settings, resumed)
        self.state = GameState.RESETTING if resumed is None else resumed.state
        self._pause = pause
        self._moves = MoveClock(self.sheet.chess_clock, settings.flag_grace, pause)
        _TABLE.bind(self)
        if resumed is None:
            self._seats.reset_the_rest(self.sheet.board.board)
            self._reset_until = self._seats.reset_deadline(settings.reset_delay)

    # ------------------------------------------------------ the players' requests

    def player_signed_on(self, port: str, name: str | None) -> None:
        """A player signed on (again) during the game: it is registered and restored."""
        self._seats.signed_on(port, name)
        self.restore(port)

    def record_left(self, port: str, at: float) -> None:
        """A ``respond`` the port could not take at once has left: its move's clock starts."""
        self._moves.left(port, at)

    # ------------------------------------------------------------------ the time

    def next_deadline(self) -> float | None:
        """When :meth:`on_timer` must run next for this game."""
        deadlines = [self._reset_until, self._seats.rejoin_deadline(), self._moves.flag_deadline()]
        return min((d for d in deadlines if d is not None), default=None)

    def on_timer(self, now: float) -> None:
        """Act on the deadlines that have passed: reset delay, rejoin windows, flag."""
        if self._reset_until is not None and now >= self._reset_until:
            self._reset_until = None
            self.reset_delay_passed()
            return
        for port in self._seats.not_back(now):
            self.rejoin_window_closed(port, now)
        self.time_passed(now)

    def on_stall(self, began: float, ended: float) -> None:
        """The referee did not run from ``began`` to ``ended``: charge it to no one."""
        self._moves.not_running(began, ended)
        self._seats.not_running(ended - began)

    # ------------------------------------------------------------- conditions

    def _paused(self, *_: object) -> bool:
        return self._pause.on

    def _present(self, port: str, *_: object) -> bool:
        return self._seats.present(port)

    def _all_present(self, *_: object) -> bool:
        return self._seats.all_present()

    def _rejoin_window(self, *_: object) -> bool:
        return self._settings.rejoin_window > 0

    def _over(self) -> bool:
        return self.sheet.ending() is not None

    # ------------------------------------------------------------ the game's life

    def _open(self) -> None:
        """After the reset delay: the game begins (its number is used) and White is asked."""
        sheet = self.sheet
        names = self._seats[sheet.white_port].name, self._seats[sheet.black_port].name
        self._publisher.publish(sheet.begin(*names, self._host.wall_time()))
        self._seats.inform(sheet.board.fen, sheet.inform_tags())
        self.ask(sheet.port_to_move(), None)

    def _stop_clock(self, *_args: Any, at: float) -> None:
        """Before suspending, ending or stopping: no one is charged from ``at`` on."""
        self._moves.stop(at)

    def _keep_clocks(self, *, at: float) -> None:
        """The clocks as they stood at ``at``, which a restart after an orderly stop
        continues from."""
        self.clocks_at_stop = self.sheet.chess_clock.snapshot(at)

    def _ask_side_to_move(self, *_: object) -> None:
        """Every player is back: the side to move gets its respond and its clock runs."""
        self.ask(self.sheet.port_to_move(), None)

    def _conclude(self, verdict: Verdict, *, at: float) -> None:
        """8.1.5 inform with the result, 8.1.1 conclude, to every player still signed on."""
        sheet = self.sheet
        self._seats.forget_absences()
        self._publisher.publish(sheet.end(verdict, self._host.wall_time()))
        self._seats.conclude(
            sheet.board.fen, sheet.inform_tags(verdict), sheet.chess_clock.consumed_ms()
        )
        self._owner.game_decided(verdict, sheet.white_port)

    def _start_over(self, *, at: float) -> None:
        """The game's initial position and fresh clocks; both players are reset again."""
        board = self.sheet.start_over()
        self._moves = MoveClock(self.sheet.chess_clock, self._settings.flag_grace, self._pause)
        self._held = None
        self._seats.forget_absences()
        self._seats.reset_present(board)
        self._reset_until = self._seats.reset_deadline(self._settings.reset_delay)

    # ------------------------------------------------------------------ the turn

    def _take_reply(self, port: str, record: EpdRecord, text: str, at: float) -> None:
        """Judge the reply (:func:`judge_turn`) and act on it: record it, then end the
        game, or play its move and ask the opponent."""
        session = self._seats[port]
        # The player stopped thinking when the reply's first byte left it.
        thought_at = at - self._host.line_time(port, len(text) + 1)
        judged = judge_turn(self.sheet, session, self._moves, record, thought_at)
        if isinstance(judged, Ignored):
            self._publisher.ignored(port, text, at, judged.reason)
            return
        self._publisher.received(port, text, at)
        if isinstance(judged, FlagFell):
            self._seats.reply_taken(port)
            self.end(judged.verdict, at=thought_at)
            return
        for note in judged.notes:
            LOGGER.info("port %s: %s", port, note)
        if judged.kind is ReplyKind.INFRACTION:
            self._infraction(port, judged, text, thought_at)
            return
        self._seats.reply_taken(port)
        if judged.kind is ReplyKind.MOVE:
            played = self.sheet.play(judged, record, thought_at)
            # Write-ahead (PROTOCOL.md 7): the move is in the journal before any record
            # tells another party of it; the observers see it, and the journal syncs it,
            # once the respond has left, before anything else is sent.
            self._publisher.publish(played)
            verdict = self.sheet.ending()
            if verdict is not None:
                self.end(verdict, at=thought_at)
            else:
                self.ask(other_port(port), played.san)
                self._publisher.sync()
        elif judged.kind is ReplyKind.DRAW_CLAIMED:
            # A move that ends the game by itself (a mate above all) ends it before any claim.
            verdict = None
            if judged.move is not None:
                self._publisher.publish(self.sheet.play(judged, record, thought_at))
                verdict = self.sheet.board.automatic_verdict()
            self.end(verdict or Verdict.draw(judged.reason), at=thought_at)
        else:  # a resignation, or a draw agreed: the words decide, whatever the move
            said = decided_by_words(judged, self.sheet.board.turn)
            assert said is not None
            self.end(said, at=thought_at)

    def _ignore_reply(self, port: str, record: EpdRecord, text: str, at: float) -> None:
        """No respond is outstanding outside the respond/reply cycle."""
        reason = reply_out_of_turn(self._seats[port], record).reason
        self._publisher.ignored(port, text, at, reason)

    def _infraction(self, port: str, ruling: Ruling, text: str, at: float) -> None:
        """A rules infraction loses the game, or under the fault policy suspends it."""
        session = self._seats[port]
        self._publisher.publish(Infraction(port=port, reason=ruling.reason, text=text))
        LOGGER.warning("port %s: rules infraction by %s: %s", port, session.name, ruling.reason)
        if self._settings.on_infraction is OnInfraction.FAULT:
            # PROTOCOL.md 4: the clocks stop and the supervisor is called; after fault
            # the player counts as signed off, and is asked again once it is back.
            self.suspend(at=at)
            LOGGER.error("port %s: supervisor needed: %s", port, ruling.reason)
            self._seats.fault(port, self.sheet.board.fen, ruling.reason)
            return
        self._seats.reply_taken(port)
        self.end(
            Verdict.win(
                not self.sheet.board.turn,
                Termination.RULES_INFRACTION,
                f"{session.name}: {ruling.reason}",
            ),
            at=at,
        )

    def _watch_flag(self, now: float) -> None:
        """The flag fell, with the grace a reply still on the line has: the game ends."""
        fell = self._moves.flag_fell_by(now)
        if fell is not None:
            self.end(self.sheet.board.flag_verdict(self.sheet.board.turn), at=fell)

    # ---------------------------------------------------------------- responds

    def _send_respond(self, port: str, san: str | None) -> None:
        """8.1.7: ``respond`` to ``port``; the move's clock starts when it can have reached
        the player (:class:`MoveClock`)."""
        line, board = self.sheet.respond_line(san, self._host.now()), self.sheet.board
        left_at = self._seats.respond(port, line, board.fen, notify=not self._moves.counting)
        self._moves.asked(port, board.turn, left_at)

    def _hold_respond(self, port: str, san: str | None) -> None:
        """The supervisor's pause: the respond goes out at its end."""
        self._held = (port, san)

    def _start_move_away(self, port: str, san: str | None) -> None:
        """Its player is told when it comes back; its clock runs meanwhile."""
        self._moves.asked(port, self.sheet.board.turn, self._host.now())

    def _ask_if_to_move(self, port: str) -> None:
        if self.sheet.port_to_move() == port:
            self.ask(port, None)

    def _ask_if_away(self) -> None:
        """A resumed game whose side to move is not there: its clock runs all the same."""
        port = self.sheet.port_to_move()
        if not self._seats.present(port):
            self.ask(port, None)

    # ---------------------------------------------------------------- the players

    def _reset_again(self, port: str) -> None:
        """A player back before the game began: reset again; the reset delay runs anew."""
        self._seats.reset(port, self.sheet.initial())
        self._reset_until = self._seats.reset_deadline(self._settings.reset_delay)

    def _replay(self, port: str) -> None:
        """Bring a player back into the game in progress (PROTOCOL.md 6)."""
        initial = self.sheet.initial()
        self._seats.replay(port, initial, self.sheet.board.board, self.sheet.inform_tags())

    def _end_after_last_move(self) -> None:
        verdict = self.sheet.ending()
        assert verdict is not None
        self.end(verdict, at=self._host.now())

    def _restore_present(self) -> None:
        for port in PORTS:
            if self._seats.present(port):
                self.restore(port)

    def _note_signed_off(self, port: str) -> None:
        self._seats.left(port, "signed off")

    def _note_lost(self, port: str, reason: str) -> None:
        self._seats.left(port, f"line lost: {reason}")

    def _interrupt(self, port: str, *_: object) -> None:
        self._owner.game_interrupted(port)

    def _await_return(self, port: str, *_: object) -> None:
        """The rejoin window opens; the player's clock runs meanwhile."""
        now = self._host.now()
        self._seats.await_return(port, now + self._settings.rejoin_window)
        self._moves.gone(port, now)

    def _move_on_without(self, port: str, reason: str) -> None:
        """Its clock runs, as a real one would, whether or not its respond had left."""
        self._moves.gone(port, self._host.now())

    def _abandon(self, port: str) -> None:
        """The player on ``port`` signed off for good: it lost."""
        self.end(self._abandoned(port, "signed off"), at=self._host.now())

    def _abandon_late(self, port: str, at: float) -> None:
        self.end(self._abandoned(port, "did not come back in time"), at=at)

    def _abandoned(self, port: str, reason: str) -> Verdict:
        return self.sheet.abandoned(port, f"{self._seats[port].name} {reason}")

    def _note_fault(self, port: str, reason: str, text: str, at: float) -> None:
        """Recorded within the limits of lines a player can repeat at will."""
        if self._publisher.admits(port, at):
            self._publisher.fault(port, self._seats[port].name, reason, text, at)

    def _end_on_fault(self, port: str, reason: str, text: str, at: float) -> None:
        name = self._seats[port].name
        self._publisher.fault(port, name, reason, text, at)
        self.end(
            Verdict.unfinished(Termination.EMERGENCY, f"{name} reported a fault: {reason}"),
            at=self._host.now(),
        )

    # ------------------------------------------------------------- supervisor

    def _hold_clock(self, *, at: float) -> None:
        self._moves.hold(at)

    def _release_move(self, *, at: float) -> None:
        """The move in progress runs again; a respond the pause held back goes out."""
        self._moves.release_move(at)
        held, self._held = self._held, None
        if held is not None:
            self.ask(*held)

    def _release_clock(self, *, at: float) -> None:
        self._moves.release(at)
        self._held = None
