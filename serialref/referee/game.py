"""One game of a match, from its ``reset`` to its result (EPD spec section 8, PROTOCOL.md 3-7).

A :class:`GameReferee` is made by the match when both players are signed on and
reset, or from the journal when a restarted referee continues a game. Its states
are a ``transitions`` table: the reset delay (RESETTING), the respond/reply cycle
(PLAYING), the clocks stopped until every player is back (SUSPENDED: the fault
policy of PROTOCOL.md 4, or a restart after an orderly stop, PROTOCOL.md 7) and the
result (ENDED). A game that loses a player while RESETTING never began: the match
drops it and starts the same game, with the same number and colours, when the player
is back.

When a move's clock starts and stops is the :class:`MoveClock`'s to say. Every reply
is charged up to the moment its first byte left the player: its own line time is
subtracted (PROTOCOL.md 5).
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable
from typing import Any

import chess
from transitions import Machine

from serialref import records
from serialref.clock import ChessClock
from serialref.epd.record import EpdRecord
from serialref.happenings import (
    GameEnded,
    GameStarted,
    Infraction,
    MatchEvent,
    MovePlayed,
    PlayerSignedOff,
)
from serialref.referee.adjudication import (
    GameBoard,
    ReplyKind,
    Ruling,
    Termination,
    Verdict,
    reply_analysis,
)
from serialref.referee.gamestates import TRANSITIONS, GameState, ResumedGame
from serialref.referee.host import GameHost
from serialref.referee.moveclock import MoveClock
from serialref.referee.settings import PORTS, OnInfraction, other_port
from serialref.referee.turn import Ignored, judge_turn

__all__ = ["GameReferee"]

LOGGER = logging.getLogger(__name__)


class GameReferee:
    """Referees one game between the players on ports ``a`` and ``b``."""

    state: GameState
    # Triggers, made by the transitions table.
    reset_delay_passed: Callable[[], bool]
    suspend: Callable[..., bool]
    players_back: Callable[[], bool]
    end: Callable[..., bool]
    restart: Callable[..., bool]

    def __init__(self, number: int, host: GameHost, *, resumed: ResumedGame | None = None) -> None:
        """A new game (resets go out, the reset delay runs) or a ``resumed`` one."""
        self.number = number
        self._host = host
        self._settings = host.settings
        self._sessions = host.sessions
        self._offer_pending = False
        self._absent_until: dict[str, float] = {}
        self._reset_until: float | None = None
        # A supervisor's pause: no clock runs and the next respond waits (port, last move).
        self._held: tuple[str, str | None] | None = None
        self.paused = False
        if resumed is None:
            self.white_port = self._settings.white_port(number)
            opening = self._settings.opening(number)
            self.opening_moves = opening.moves
            self.game = GameBoard(opening.board())
            self.clock = ChessClock(self._settings.time_control)
            self.tags: dict[str, str] = {}
            initial = GameState.RESETTING
        else:
            started = resumed.started
            self.white_port = started.white_port
            self.opening_moves = started.opening_moves
            self.game = GameBoard(resumed.board)
            self.clock = resumed.clock
            self.tags = {name: started.tags[name] for name in records.ROSTER}
            self._offer_pending = resumed.offer_pending
            initial = resumed.state
        self._moves = MoveClock(self.clock, self._settings.flag_grace)
        self._machine = Machine(
            model=self,
            states=GameState,
            transitions=TRANSITIONS,
            initial=initial,
            auto_transitions=False,
        )
        if resumed is None:
            board = self.game.board
            for port in PORTS:
                if self._sessions[port].reset_for_game != number:
                    self.reset(port, board)
            self._reset_until = self._reset_deadline()

    # ----------------------------------------------------------------- driving

    @property
    def ended(self) -> bool:
        return self.state is GameState.ENDED

    @property
    def begun(self) -> bool:
        """Whether the game got past its reset delay (its number is used, PROTOCOL.md 7)."""
        return self.state is not GameState.RESETTING

    def next_deadline(self) -> float | None:
        """When :meth:`on_timer` must run next for this game."""
        deadlines = [self._reset_until, *self._absent_until.values()]
        if self.state is GameState.PLAYING:
            deadlines.append(self._moves.flag_deadline())
        return min((d for d in deadlines if d is not None), default=None)

    def on_timer(self, now: float) -> None:
        """Act on the deadlines that have passed: reset delay, rejoin windows, flag."""
        if self._reset_until is not None and now >= self._reset_until:
            self._reset_until = None
            self.reset_delay_passed()
            return
        for port, until in list(self._absent_until.items()):
            if now >= until:
                del self._absent_until[port]
                if not self._sessions[port].signed_on and not self.ended:
                    self.end(self._abandoned(port, "did not come back in time"), at=now)
        fell = self._moves.flag_fell_by(now) if self.state is GameState.PLAYING else None
        if fell is not None:
            self.end(self.game.flag_verdict(self.game.turn), at=fell)

    def on_stall(self, began: float, ended: float) -> None:
        """The referee did not run from ``began`` to ``ended``: charge it to no one."""
        self._moves.not_running(began, ended)
        lost = ended - began
        self._absent_until = {port: until + lost for port, until in self._absent_until.items()}

    def record_left(self, port: str, at: float) -> None:
        """A ``respond`` the port could not take at once has left: its move's clock starts."""
        self._moves.left(port, at)

    def storage_failed(self, now: float, unrecorded: MatchEvent | None) -> records.Position:
        """The journal cannot be written: no clock runs; the position to name to the players.

        A move whose entry is what failed was never relayed: the position is the one
        before it, which a restart continues from too (PROTOCOL.md 7).
        """
        if self.begun:
            self.clock.pause(now)
        return self.game.previous_fen if isinstance(unrecorded, MovePlayed) else self.game.fen

    def suspended_snapshot(self, now: float) -> dict[str, object]:
        """Stop the clocks for an orderly stop; what the restart continues from."""
        self.clock.pause(now)
        return self.clock.snapshot(now)

    # ------------------------------------------------------------- the players

    def reset(self, port: str, board: chess.Board | None = None) -> None:
        """Send ``reset`` with the game's initial position (8.1.6); no reset delay in play."""
        session = self._sessions[port]
        at = self._host.send(port, records.reset(board or self._initial_board()))
        session.note_reset(self.number, at)
        if self.state is GameState.RESETTING:
            self._reset_until = self._reset_deadline()

    def signed_on_again(self, port: str) -> None:
        """A player (re)signed on during the game: reset it again, or restore it."""
        if self.state is GameState.RESETTING:
            self.reset(port)
        else:
            self._restore(port)

    def player_left(self, port: str, reason: str, *, signed_off: bool) -> None:
        """A player left (``sign_off``, a fault, a lost line); the match has recorded it."""
        if self.ended or self.state is GameState.RESETTING:
            return
        window = self._settings.rejoin_window
        if window > 0:
            self._absent_until[port] = self._host.now() + window
        elif signed_off:
            self.end(self._abandoned(port, reason), at=self._host.now())
            return
        self._moves.gone(port, self._host.now())

    def player_fault(self, port: str, reason: str) -> None:
        """A player reported a fault it cannot recover from (8.2.1): the game ends unfinished."""
        if self.ended or self.state is GameState.RESETTING:
            return
        name = self._sessions[port].name
        self.end(
            Verdict.unfinished(Termination.EMERGENCY, f"{name} reported a fault: {reason}"),
            at=self._host.now(),
        )

    def on_reply(self, port: str, record: EpdRecord, text: str, at: float) -> None:
        """A ``reply`` arrived on ``port``: a move, an ending, an infraction, or stale."""
        session = self._sessions[port]
        ruling = judge_turn(
            self.game,
            record,
            session,
            playing=self.state is GameState.PLAYING,
            respond_left=not self._moves.awaits_departure_to(port),
            offer_pending=self._offer_pending,
        )
        if isinstance(ruling, Ignored):
            self._host.ignored(port, text, at, ruling.reason)
            return
        self._host.received(port, text, at)
        # The player stopped thinking when the reply's first byte left it.
        thought_at = at - self._host.transmission_time(port, len(text) + 1)
        if self.clock.flag_fell(thought_at):
            session.note_reply()
            self.end(self.game.flag_verdict(self.game.turn), at=thought_at)
            return
        for note in ruling.notes:
            LOGGER.info("port %s: %s", port, note)
        if ruling.kind is ReplyKind.INFRACTION:
            self._infraction(port, ruling, text, thought_at)
            return
        session.note_reply()
        mover = self.game.turn
        if ruling.kind is ReplyKind.RESIGN:
            self.end(Verdict.win(not mover, Termination.NORMAL, ruling.reason), at=thought_at)
        elif ruling.kind is ReplyKind.DRAW_AGREED:
            self.end(Verdict.draw(ruling.reason), at=thought_at)
        elif ruling.kind is ReplyKind.DRAW_CLAIMED:
            # A move that ends the game by itself (a mate above all) ends it before any claim.
            verdict = None
            if ruling.move is not None:
                self._host.publish(self._play(ruling, record, thought_at))
                verdict = self.game.automatic_verdict()
            self.end(verdict or Verdict.draw(ruling.reason), at=thought_at)
        else:
            played = self._play(ruling, record, thought_at)
            # Write-ahead (PROTOCOL.md 7): the move is in the journal before any record
            # tells another party of it; the observers see it, and the journal syncs it,
            # once the respond has left, before anything else is sent.
            self._host.publish(played)
            verdict = self.game.automatic_verdict()
            if verdict is not None:
                self.end(verdict, at=thought_at)
            else:
                self._send_respond(other_port(port), played.san)
                self._host.sync_records()

    def start_restored(self) -> None:
        """A resumed game: restore the players present; a PLAYING one asks the side to move."""
        verdict = self.game.automatic_verdict()
        if verdict is not None:
            self.end(verdict, at=self._host.now())
            return
        for port in PORTS:
            if self._sessions[port].signed_on:
                self._restore(port)
        self._ask_absent_side()

    # ---------------------------------------------------------- transitions

    def _open(self) -> None:
        """After the reset delay: the game begins (its number is used) and White is asked."""
        settings = self._settings
        black_port = other_port(self.white_port)
        self.tags = settings.roster(
            self.number,
            self._sessions[self.white_port].name,
            self._sessions[black_port].name,
            datetime.date.fromtimestamp(self._host.wall_time()),
        )
        self._host.publish(
            GameStarted(
                game=self.number,
                white_port=self.white_port,
                black_port=black_port,
                fen=self.game.board.root().fen(),
                tags=dict(self._inform_tags()),
                opening_moves=self.opening_moves,
            )
        )
        for port in PORTS:
            session = self._sessions[port]
            if session.signed_on:
                self._host.send(port, records.inform(self.game.fen, self._inform_tags()))
                session.fire("game_joined")
        self._send_respond(self._port_to_move(), None)

    def _stop_clock(self, *_args: Any, at: float) -> None:
        """Before suspending or ending: no one is charged from ``at`` on."""
        self._moves.stop(at)

    def _ask_side_to_move(self) -> None:
        """Every player is back: the side to move gets its respond and its clock runs."""
        self._send_respond(self._port_to_move(), None)

    def _conclude(self, verdict: Verdict, *, at: float) -> None:
        """8.1.5 inform with the result, 8.1.1 conclude, to every player still signed on."""
        clock = self.clock
        LOGGER.info(
            "game %d: %s %s (%s)",
            self.number,
            verdict.result,
            verdict.reason,
            verdict.termination.value,
        )
        self._absent_until.clear()
        self._host.publish(
            GameEnded(
                game=self.number,
                result=verdict.result,
                termination=verdict.termination.value,
                reason=verdict.reason,
                fen=self.game.fen,
                consumed=(clock.consumed(chess.WHITE), clock.consumed(chess.BLACK)),
            )
        )
        inform = records.inform(self.game.fen, self._inform_tags(verdict))
        conclude = records.conclude(self.game.fen, clock.consumed_ms())
        present = [port for port in PORTS if self._sessions[port].signed_on]
        for port in present:
            self._host.send(port, inform)
        for port in present:
            self._host.send(port, conclude)
            self._sessions[port].note_conclude()
        self._host.game_over(verdict, self.white_port)

    # ------------------------------------------------------------------ moves

    def _send_respond(self, port: str, san: str | None) -> None:
        """Ask ``port`` to move: after the opponent's ``san``, or (None) from the position."""
        game, clock = self.game, self.clock
        session = self._sessions[port]
        if self.paused:
            self._held = (port, san)
            return
        if not session.signed_on:
            # Told when it comes back; its clock runs meanwhile, as a real one would.
            self._moves.asked(port, game.turn, self._host.now())
            return
        line = records.respond_line(
            game.fen if san is None else game.previous_fen,
            clock.consumed_ms(self._host.now()),
            san,
            draw_offer=self._offer_pending and san is not None,
        )
        left_at = self._host.send(port, line, notify=not self._moves.counting)
        session.note_respond(game.fen)
        self._moves.asked(port, game.turn, left_at)

    def _play(self, ruling: Ruling, record: EpdRecord, at: float) -> MovePlayed:
        """Accept the ruling's move, its thinking having ended at ``at``; returns its event
        (the reply's ``record`` gives the analysis), the clocks as the move left them."""
        assert ruling.move is not None
        clock = self.clock
        elapsed = clock.stop(at)
        san = self.game.push(ruling.move)
        self._offer_pending = ruling.draw_offer
        return MovePlayed(
            game=self.number,
            ply=len(self.game.board.move_stack) - len(self.opening_moves),
            san=san,
            uci=ruling.move.uci(),
            elapsed=elapsed,
            remaining=(clock.remaining(chess.WHITE), clock.remaining(chess.BLACK)),
            consumed=(clock.consumed(chess.WHITE), clock.consumed(chess.BLACK)),
            moves_made=(clock.moves_made(chess.WHITE), clock.moves_made(chess.BLACK)),
            fen=self.game.fen,
            draw_offer=ruling.draw_offer,
            analysis=reply_analysis(record),
        )

    def _infraction(self, port: str, ruling: Ruling, text: str, at: float) -> None:
        session = self._sessions[port]
        self._host.publish(Infraction(port=port, reason=ruling.reason, text=text))
        LOGGER.warning("port %s: rules infraction by %s: %s", port, session.name, ruling.reason)
        if self._settings.on_infraction is OnInfraction.FAULT:
            # PROTOCOL.md 4: the clocks stop and the supervisor is called; after fault
            # the player counts as signed off, and is asked again once it is back.
            self.suspend(at=at)
            LOGGER.error("port %s: supervisor needed: %s", port, ruling.reason)
            self._host.send(port, records.fault(self.game.fen, ruling.reason))
            session.note_left()
            self._host.publish(PlayerSignedOff(port=port, reason=f"fault: {ruling.reason}"))
            return
        session.note_reply()
        self.end(
            Verdict.win(
                not self.game.turn,
                Termination.RULES_INFRACTION,
                f"{session.name}: {ruling.reason}",
            ),
            at=at,
        )

    # ------------------------------------------------------------- supervisor

    def pause(self, now: float) -> None:
        """Stop both clocks; a move on its way is played, the next ``respond`` waits."""
        self.paused = True
        self._moves.hold(now)

    def unpause(self, now: float) -> None:
        """The clocks run again; a ``respond`` held back by the pause goes out."""
        self.paused = False
        self._moves.release(now, playing=self.state is GameState.PLAYING)
        held, self._held = self._held, None
        if held is not None and self.state is GameState.PLAYING:
            self._send_respond(*held)

    def _start_over(self, *_args: Any, at: float) -> None:
        """The game's initial position and fresh clocks; both players are reset again."""
        board = self._initial_board()
        self.game = GameBoard(board.copy())
        self.clock = ChessClock(self._settings.time_control)
        self._moves = MoveClock(self.clock, self._settings.flag_grace)
        if self.paused:
            self._moves.hold(at)
        self._held = None
        self._offer_pending = False
        self._absent_until.clear()
        for port in PORTS:
            if self._sessions[port].signed_on:
                self.reset(port, board)
        self._reset_until = self._reset_deadline()

    # ---------------------------------------------------------------- restore

    def _restore(self, port: str) -> None:
        """Bring a player back into the game in progress (PROTOCOL.md 6)."""
        replay = self._initial_board()
        self.reset(port, replay)
        self._host.send(port, records.inform(replay, self._inform_tags()))
        self._sessions[port].fire("game_joined")
        for move in self.game.board.move_stack[len(replay.move_stack) :]:
            self._host.send(port, records.execute(replay, move))
            replay.push(move)
        if self.state is GameState.SUSPENDED:
            if all(session.signed_on for session in self._sessions.values()):
                self.players_back()
        elif self._port_to_move() == port:
            self._send_respond(port, None)

    def _ask_absent_side(self) -> None:
        """A resumed game whose side to move is not there: its clock runs all the same."""
        if self.state is GameState.PLAYING and not self._sessions[self._port_to_move()].signed_on:
            self._send_respond(self._port_to_move(), None)

    def _initial_board(self) -> chess.Board:
        """The game's position right after ``reset``: the opening's, with its moves played."""
        replay = self.game.board.copy()
        for _ in range(len(replay.move_stack) - len(self.opening_moves)):
            replay.pop()
        return replay

    # ---------------------------------------------------------------- helpers

    def _reset_deadline(self) -> float:
        times = [
            session.reset_at
            for session in self._sessions.values()
            if session.reset_at is not None and session.reset_for_game == self.number
        ]
        return max(times, default=self._host.now()) + self._settings.reset_delay

    def _inform_tags(self, final: Verdict | None = None) -> list[tuple[str, str]]:
        variant = self._settings.rules.pgn_name
        if final is None:
            return records.game_tags(self.tags, self._settings.time_control.text, variant=variant)
        return records.game_tags(
            self.tags,
            self._settings.time_control.text,
            result=final.result,
            termination=final.termination.value,
            variant=variant,
        )

    def _port_to_move(self) -> str:
        return self.white_port if self.game.turn == chess.WHITE else other_port(self.white_port)

    def _abandoned(self, port: str, reason: str) -> Verdict:
        colour = chess.WHITE if port == self.white_port else chess.BLACK
        return Verdict.win(
            not colour, Termination.ABANDONED, f"{self._sessions[port].name} {reason}"
        )
