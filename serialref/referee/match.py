"""The referee of one match between the players on two ports (EPD spec section 8).

:class:`MatchReferee` is driven by one thread: it is handed every line event from both
ports, the departures of records a port could not take at once, the referee's own
stalls, and is woken at its deadlines (reset and conclude delays, a flag fall, a rejoin
window). It decides, sends records through a :class:`Wire` and publishes
:mod:`serialref.happenings` (:class:`serialref.referee.publisher.Publisher`). It never
sleeps and never reads a port, so tests drive it with a fake clock and a fake wire.

The match is a ``transitions`` state machine declared as one table: waiting for
players, in a game (:class:`serialref.referee.game.GameReferee`), between games, done.
The game to play next is always the one after the games that have a result, so a
game interrupted before it began is played again with the same number and colours,
and a game is never skipped (PROTOCOL.md 7). The per-port state lives in
:class:`serialref.referee.session.PortSession`.
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import chess
from transitions import Machine

from serialref import records
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import LineLostError, RecorderError, RecordError, UnexpectedRecordError
from serialref.happenings import (
    Infraction,
    MatchEnded,
    MatchEvent,
    MatchListener,
    MatchStarted,
    PlayerSignedOff,
    PlayerSignedOn,
    Recorder,
    RefereeStalled,
)
from serialref.records import Refreq
from serialref.referee.adjudication import Verdict
from serialref.referee.game import GameReferee
from serialref.referee.host import Wire
from serialref.referee.publisher import Publisher
from serialref.referee.resume import ResumePoint, resumed_game
from serialref.referee.session import PortSession, SessionState
from serialref.referee.settings import PORTS, MatchSettings
from serialref.result import Result

LOGGER = logging.getLogger(__name__)

__all__ = ["MatchReferee", "MatchState"]

STORAGE_FAILURE = "referee storage failure"
"""The ``c0`` of the ``fault`` every player gets when the journal cannot be written."""


class MatchState(enum.Enum):
    """Where the match stands."""

    WAITING_FOR_PLAYERS = "waiting for players"
    IN_GAME = "in game"
    BETWEEN_GAMES = "between games"
    DONE = "done"


_M = MatchState

TRANSITIONS: list[dict[str, Any]] = [
    # 8, steps 5-6: both players are signed on and reset: a game begins (reset delay, 8.1.6).
    {"trigger": "players_ready", "source": _M.WAITING_FOR_PLAYERS, "dest": _M.IN_GAME,
     "after": "_begin_game"},
    # PROTOCOL.md 7: a player left before the first respond: the game is played again later.
    {"trigger": "game_interrupted", "source": _M.IN_GAME, "dest": _M.WAITING_FOR_PLAYERS,
     "after": "_drop_game"},
    # 3.2 (9), PROTOCOL.md 6: a restarted referee continues its journal's unfinished game.
    {"trigger": "game_resumed", "source": _M.WAITING_FOR_PLAYERS, "dest": _M.IN_GAME,
     "after": "_continue_game"},
    # 8, step 13: the game has a result; the conclude delay of 8.1.1 runs.
    {"trigger": "game_decided", "source": _M.IN_GAME, "dest": _M.BETWEEN_GAMES,
     "after": "_count_result"},
    # 8.1.1: the conclude delay is over: the next game, or (8, step 15) the match is complete.
    {"trigger": "conclude_delay_passed", "source": _M.BETWEEN_GAMES,
     "dest": _M.WAITING_FOR_PLAYERS, "conditions": "_games_remain",
     "after": "_start_game_if_ready"},
    {"trigger": "conclude_delay_passed", "source": _M.BETWEEN_GAMES, "dest": _M.DONE,
     "after": "_finish"},
    # A restarted referee whose journal holds every game's result.
    {"trigger": "all_games_played", "source": _M.WAITING_FOR_PLAYERS, "dest": _M.DONE,
     "after": "_finish"},
    # 8.1.2: stopped (SIGTERM, SIGINT, SIGHUP): every signed-on player gets disconnect.
    {"trigger": "stopped", "source": [_M.WAITING_FOR_PLAYERS, _M.IN_GAME, _M.BETWEEN_GAMES],
     "dest": _M.DONE, "after": "_finish"},
]  # fmt: skip


class MatchReferee:
    """Runs the games of one match between the players on ports ``a`` and ``b``."""

    state: MatchState
    # Triggers, made by the transitions table.
    players_ready: Callable[[], bool]
    game_interrupted: Callable[..., bool]
    game_resumed: Callable[..., bool]
    game_decided: Callable[..., bool]
    conclude_delay_passed: Callable[[], bool]
    all_games_played: Callable[[], bool]
    stopped: Callable[..., bool]

    def __init__(
        self,
        settings: MatchSettings,
        wire: Wire,
        recorders: Sequence[Recorder] = (),
        observers: Sequence[MatchListener] = (),
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self._wire = wire
        self._publisher = Publisher(
            recorders, observers, wall_clock=wall_clock, on_storage_failure=self._storage_failed
        )
        self._clock = clock
        self._wall = wall_clock
        self.sessions = {
            port: PortSession(port, name or f"Player {port.upper()}")
            for port, name in zip(PORTS, settings.names, strict=True)
        }
        self.games_done = 0
        self.score = [0.0, 0.0]
        self.game: GameReferee | None = None
        self._last_position: chess.Board | None = None
        self._delay_until: float | None = None
        self._stop_reason = ""
        self.paused = False  # by the supervisor: every game's clocks stay stopped
        self._machine = Machine(
            model=self,
            states=MatchState,
            transitions=TRANSITIONS,
            initial=MatchState.WAITING_FOR_PLAYERS,
            auto_transitions=False,
            after_state_change=self._log_change,
        )

    # ----------------------------------------------------------------- driving

    def start(self, resume: ResumePoint | None = None) -> None:
        """Announce the match; players are awaited, or (``resume``) the match continues."""
        settings = self.settings
        self.publish(
            MatchStarted(
                games=settings.games,
                time_control=settings.time_control.text,
                ports=PORTS,
                settings={
                    "event": settings.event,
                    "site": settings.site,
                    "reset_delay": settings.reset_delay,
                    "conclude_delay": settings.conclude_delay,
                    "on_infraction": settings.on_infraction,
                },
                resumed=resume is not None,
                identity=settings.identity(),
            )
        )
        if resume is not None:
            self._resume(resume)

    @property
    def done(self) -> bool:
        return self.state is MatchState.DONE

    @property
    def complete(self) -> bool:
        """Whether every game was played (as opposed to a stopped match)."""
        return self.done and not self._stop_reason

    @property
    def in_game(self) -> bool:
        """Whether a game is under way (a clock may be running: the loop keeps a heartbeat)."""
        return self.game is not None

    def next_deadline(self) -> float | None:
        """When :meth:`on_timer` must run next, or None to wait for lines only."""
        deadlines = [self._delay_until, *(s.sign_ons.due() for s in self.sessions.values())]
        if self.game is not None:
            deadlines.append(self.game.next_deadline())
        return min((d for d in deadlines if d is not None), default=None)

    def on_timer(self) -> None:
        """Act on every deadline that has passed."""
        now = self._clock()
        for port, session in self.sessions.items():
            held = session.sign_ons.release(now)
            if held is not None:
                self._on_sign_on(port, held)
        if self.game is not None:
            self.game.on_timer(now)
        if (
            self.state is MatchState.BETWEEN_GAMES
            and self._delay_until is not None
            and now >= self._delay_until
        ):
            self._delay_until = None
            self.conclude_delay_passed()

    def on_line(self, port: str, text: str, at: float) -> None:
        """A line arrived on ``port``; its line end came at ``at``."""
        if self.done:
            return
        with self._publisher.acting_on_line():
            try:
                record = parse_record(text)
                request = records.player_request(record)
            except (RecordError, UnexpectedRecordError) as exc:
                self.ignored(port, text, at, f"not a player request: {exc}")
                return
            session = self.sessions[port]
            if request is Refreq.SIGN_ON:
                waits = session.sign_on_waits(record, at, unread=self._wire.waiting(port))
                if waits:
                    self._publisher.repeated(port, text, at, waits)
                    return
                self.received(port, text, at)
                self._on_sign_on(port, record)
            elif not session.signed_on:
                self.ignored(port, text, at, f"{request.value} from a player that is not signed on")
            elif request is Refreq.REPLY:
                self._on_reply(port, record, text, at)
            elif request is Refreq.SIGN_OFF:
                self.received(port, text, at)
                self._on_gone(port, "signed off", signed_off=True)
            else:
                self._on_player_fault(port, record, text, at)

    def on_malformed(self, port: str, reason: str, preview: str, at: float) -> None:
        """Line noise: logged and counted within limits, never acted on (PROTOCOL.md 1, 7)."""
        self._publisher.malformed(port, reason, preview, at)

    def on_line_lost(self, port: str, reason: str) -> None:
        """The port's line went away; the game and the clocks go on."""
        self.sessions[port].sign_ons.drop()  # a sign_on held from before is nobody's now
        if self.sessions[port].state in (SessionState.OFFLINE, SessionState.DISCONNECTED):
            return
        LOGGER.warning("port %s: line lost (%s)", port, reason)
        self._on_gone(port, f"line lost: {reason}", signed_off=False)

    def on_record_left(self, port: str, at: float) -> None:
        """A record the port could not take at once has left; it can have arrived at ``at``."""
        if self.game is not None:
            self.game.record_left(port, at)

    def on_stall(self, began: float, ended: float) -> None:
        """The referee did not run from ``began`` to ``ended``: no one is charged for it."""
        LOGGER.warning("the referee did not run for %.2f s: that time is charged to no one",
                       ended - began)  # fmt: skip
        self.publish(RefereeStalled(seconds=ended - began))
        if self.game is not None:
            self.game.on_stall(began, ended)

    def stop(self, reason: str) -> None:
        """End the match now (SIGTERM, SIGINT, SIGHUP): ``disconnect`` to every player."""
        if self.done:
            return
        clocks = None
        game = self.game
        if game is not None and game.begun and not game.ended:
            clocks = game.suspended_snapshot(self._clock())
        self._stop_reason = reason
        self.stopped(reason=reason, clocks=clocks)

    # ----------------------------------------------------------- the game host

    def send(self, port: str, record: EpdRecord | str, *, notify: bool = False) -> float | None:
        """Send a record (or its normalised line); when it can have reached the player, or
        None while it waits.

        A line that is down gives None too: its loss reaches the referee from the loop.
        """
        text = record if isinstance(record, str) else format_record(record)
        try:
            left_at = self._wire.send(port, text, notify=notify)
        except LineLostError as exc:
            LOGGER.warning("port %s: could not send (%s)", port, exc)
            return None
        self._publisher.sent(port, text, self._clock() if left_at is None else left_at,
                             queued=left_at is None)  # fmt: skip
        return left_at

    def transmission_time(self, port: str, nbytes: int) -> float:
        return self._wire.transmission_time(port, nbytes)

    def received(self, port: str, text: str, at: float) -> None:
        self._publisher.received(port, text, at)

    def ignored(self, port: str, text: str, at: float, reason: str) -> None:
        self._publisher.ignored(port, text, at, reason)

    def now(self) -> float:
        return self._clock()

    def wall_time(self) -> float:
        return self._wall()

    def game_over(self, verdict: Verdict, white_port: str) -> None:
        self.game_decided(verdict=verdict, white_port=white_port)

    def sync_records(self) -> None:
        """Make the records of the step just handled durable (the loop calls it each step)."""
        self._publisher.sync()

    def publish(self, event: MatchEvent) -> None:
        self._publisher.publish(event)

    # ------------------------------------------------------------ sign-on/off

    def _on_sign_on(self, port: str, record: EpdRecord) -> None:
        session = self.sessions[port]
        identity = records.sign_on_identity(record)
        if identity.name and not self.settings.names[PORTS.index(port)]:
            session.name = records.tag_value(identity.name)
        again = session.signed_on
        session.fire("sign_on_received")
        self.publish(PlayerSignedOn(port=port, name=session.name))
        LOGGER.info("port %s: %s signed on%s", port, session.name, " again" if again else "")
        if self.game is not None:
            self.game.signed_on_again(port)
            return
        upcoming = self.games_done + 1
        board = self.settings.opening(upcoming).board()
        session.note_reset(upcoming, self.send(port, records.reset(board)))
        if self.state is MatchState.WAITING_FOR_PLAYERS:
            self._start_game_if_ready()

    def _on_gone(self, port: str, reason: str, *, signed_off: bool) -> None:
        self.sessions[port].note_left()
        self.publish(PlayerSignedOff(port=port, reason=reason))
        game = self.game
        if game is None:
            return
        if not game.begun:
            self.game_interrupted(port=port)
            return
        game.player_left(port, reason, signed_off=signed_off)

    def _on_player_fault(self, port: str, record: EpdRecord, text: str, at: float) -> None:
        # 8.2.1: it ends the game in play; outside one a player can repeat it at will, and it
        # is only recorded, within the limits of ignored lines (PROTOCOL.md 7).
        game = self.game
        if (game is None or not game.begun or game.ended) and not self._publisher.admits(port, at):
            return
        self.received(port, text, at)
        reason = " ".join(record.operand_texts("c0")) or "no reason given"
        LOGGER.error(
            "port %s: player %s reports a fault: %s", port, self.sessions[port].name, reason
        )
        self.publish(Infraction(port=port, reason=f"player fault: {reason}", text=text))
        if game is not None:
            game.player_fault(port, reason)

    def _on_reply(self, port: str, record: EpdRecord, text: str, at: float) -> None:
        if self.game is not None:
            self.game.on_reply(port, record, text, at)
        elif self.sessions[port].is_stale(record.position):
            self.ignored(port, text, at, "stale reply: it answers an earlier respond")
        else:
            self.ignored(port, text, at, "reply out of turn")

    # ---------------------------------------------------------- transitions

    def _start_game_if_ready(self, **_: object) -> None:
        if all(session.signed_on for session in self.sessions.values()):
            self.players_ready()

    def _begin_game(self) -> None:
        self.game = GameReferee(self.games_done + 1, self)
        if self.paused:
            self.game.pause(self._clock())

    def _drop_game(self, port: str) -> None:
        assert self.game is not None
        LOGGER.warning(
            "game %d had not begun when the player on port %s left: it starts again when both"
            " players are back",
            self.game.number,
            port,
        )
        self.game = None

    def _continue_game(self, point: ResumePoint) -> None:
        assert point.game is not None
        resumed = resumed_game(point, self.settings.time_control)
        self.game = GameReferee(point.game.game, self, resumed=resumed)
        if self.paused:
            self.game.pause(self._clock())
        self.game.start_restored()

    def _count_result(self, verdict: Verdict, white_port: str) -> None:
        assert self.game is not None
        self.games_done += 1
        self._count_score(verdict.result, white_port)
        self._last_position = self.game.game.board
        self.game = None
        self._delay_until = self._clock() + self.settings.conclude_delay
        self._publisher.count_left_out()

    def _games_remain(self, **_: object) -> bool:
        return self.games_done < self.settings.games

    def _finish(self, reason: str = "", clocks: dict[str, object] | None = None) -> None:
        """8.1.2: ``disconnect`` to every signed-on player; the match's end is recorded."""
        self._delay_until = None
        self._publisher.count_left_out()
        # The current position (8.1.2): the game's, or the last game's final one.
        if self.game is not None:
            board = self.game.game.board
        elif self._last_position is not None:
            board = self._last_position
        else:
            board = self.settings.opening(self.games_done + 1).board()
        for port, session in self.sessions.items():
            if session.signed_on:
                self.send(port, records.disconnect(board))
            if session.state is not SessionState.DISCONNECTED:
                session.note_disconnect()
        self.game = None
        self.publish(
            MatchEnded(
                complete=not reason,
                score=(self.score[0], self.score[1]),
                reason=reason,
                clocks=clocks,
            )
        )

    # ---------------------------------------------------------------- restore

    def _resume(self, point: ResumePoint) -> None:
        """Continue a match from its journal (PROTOCOL.md 6 and 7)."""
        self.games_done = point.games_done
        self.paused = point.paused
        for white_port, result in point.results:
            self._count_score(result, white_port)
        for port, name, present in zip(PORTS, point.names, point.signed_on, strict=True):
            session = self.sessions[port]
            if name and not self.settings.names[PORTS.index(port)]:
                session.name = name
            if present:
                session.fire("sign_on_received")
        LOGGER.warning(
            "resuming the match from its journal: %d game(s) finished%s%s",
            point.games_done,
            f", game {point.game.game} at ply {len(point.moves)}" if point.game else "",
            "; waiting for both players (it was stopped in order)" if point.orderly else "",
        )
        if point.game is not None:
            self.game_resumed(point=point)
        elif not self._games_remain():
            self.all_games_played()
        else:
            self._start_game_if_ready()

    # ------------------------------------------------------------------ plumbing

    def _count_score(self, result: str, white_port: str) -> None:
        white = PORTS.index(white_port)
        points = Result.points_of(result)
        if points is not None:
            self.score[white] += points[0]
            self.score[1 - white] += points[1]

    def _storage_failed(self, exc: RecorderError, unrecorded: MatchEvent | None) -> None:
        """The journal cannot be written: stop the clocks, tell every player, stop.

        Nothing more is recorded (the record would have a gap); what is recorded stays
        as it is, so a restart continues from the last entry on disk.
        """
        LOGGER.critical("%s: stopping the match", exc)
        self._stop_reason = str(exc)
        game = self.game
        board = chess.Board() if game is None else game.storage_failed(self._clock(), unrecorded)
        for port, session in self.sessions.items():
            if session.signed_on:
                self.send(port, records.fault(board, STORAGE_FAILURE))
                self.send(port, records.disconnect(board))
            if session.state is not SessionState.DISCONNECTED:
                session.note_disconnect()
        self._machine.set_state(MatchState.DONE)

    def _log_change(self, *_: object, **__: object) -> None:
        LOGGER.debug("match: %s", self.state.value)
