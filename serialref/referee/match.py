"""The referee of one match between the players on two ports (EPD spec section 8).

:class:`MatchReferee` plays the match's games one after another. Its states are a
``transitions`` table, :data:`TRANSITIONS`, kept beside the callbacks its rows name:
waiting for players, in a game (:class:`~serialref.referee.game.machine.GameReferee`),
between games (the conclude delay of 8.1.1), done. The game to play next is always the
one after the games that have a result, so a game interrupted before it began is played
again with the same number and colours, and a game is never skipped (PROTOCOL.md 7).

The players' seats (:class:`~serialref.referee.session.PortSession`) are the match's
between games: a player that signs on is reset for the next game, which begins once
both are signed on and reset. While a game runs they are the game's: the line router
(:mod:`serialref.referee.lines`) hands it what the players send, and the match takes
them back when the game has a result, or was dropped before it began.

It is driven by one thread: the board hands its ports' events to the line router, and
wakes the match at its deadlines (the conclude delay, the game's reset delay, flag and
rejoin windows, a paced ``sign_on``) and after its own stalls. It never sleeps and never
reads a port, so tests drive it with a fake clock and fake ports. Records go out, and
events are published, through its :class:`~serialref.referee.host.RefereeHost`: the
:class:`~serialref.referee.publisher.Publisher` hands each event to the recorders, in
order (a journal that cannot be written stops the match, PROTOCOL.md 7), then to the
observers (one that fails is detached).
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import chess

from serialref import records
from serialref.epd.record import EpdRecord
from serialref.errors import RecorderError
from serialref.happenings import (
    MatchEnded,
    MatchEvent,
    MatchListener,
    MatchStarted,
    PlayerSignedOff,
    PlayerSignedOn,
    Recorder,
    RefereeStalled,
)
from serialref.referee.farewell import STORAGE_FAILURE, disconnect_all
from serialref.referee.game.machine import GameReferee
from serialref.referee.game.moveclock import Pause
from serialref.referee.game.replay import ResumedGame, resumed_game
from serialref.referee.game.turn import reply_out_of_turn
from serialref.referee.host import PlayerPorts, RefereeHost
from serialref.referee.lines import LineRouter
from serialref.referee.publisher import Publisher
from serialref.referee.resume import ResumePoint
from serialref.referee.rulings import Verdict
from serialref.referee.session import PortSession
from serialref.referee.settings import PORTS, MatchSettings
from serialref.result import Result
from serialref.statetable import StateTable

LOGGER = logging.getLogger(__name__)

__all__ = ["TRANSITIONS", "MatchReferee", "MatchState"]


class MatchState(enum.Enum):
    """Where the match stands."""

    WAITING_FOR_PLAYERS = "waiting for players"
    IN_GAME = "in game"
    BETWEEN_GAMES = "between games"
    DONE = "done"


_M = MatchState
_PLAYING_ON = [_M.WAITING_FOR_PLAYERS, _M.BETWEEN_GAMES]

TRANSITIONS: list[dict[str, Any]] = [
    # 8, steps 5-6: both players are signed on and reset: a game begins (reset delay,
    # 8.1.6). Between games the next one waits for the conclude delay (8.1.1).
    {"trigger": "players_ready", "source": _M.WAITING_FOR_PLAYERS, "dest": _M.IN_GAME,
     "conditions": "_all_signed_on", "after": "_begin_game"},
    {"trigger": "players_ready", "source": _M.BETWEEN_GAMES, "dest": None},
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
    # 8.1.2: stopped (SIGTERM, SIGINT, SIGHUP, the supervisor's abort): the game under way
    # stops where it stands; every signed-on player gets disconnect. A match that is
    # over stays as it ended.
    {"trigger": "stop", "source": _PLAYING_ON, "dest": _M.DONE, "after": "_finish"},
    {"trigger": "stop", "source": _M.IN_GAME, "dest": _M.DONE, "before": "_stop_game",
     "after": "_finish"},
    {"trigger": "stop", "source": _M.DONE, "dest": None},
    # 3.2 (9): the supervisor's pause holds the game under way and every game after it,
    # until it ends.
    {"trigger": "pause", "source": _PLAYING_ON, "dest": None, "unless": "_paused",
     "after": "_start_pause"},
    {"trigger": "pause", "source": _M.IN_GAME, "dest": None, "unless": "_paused",
     "after": ["_start_pause", "_pause_game"]},
    {"trigger": "unpause", "source": _PLAYING_ON, "dest": None, "conditions": "_paused",
     "after": "_end_pause"},
    {"trigger": "unpause", "source": _M.IN_GAME, "dest": None, "conditions": "_paused",
     "after": ["_end_pause", "_unpause_game"]},
    # PROTOCOL.md 7: the journal cannot be written: the game stops, every player gets
    # fault and disconnect, and the match is over; nothing more is recorded.
    {"trigger": "storage_failed", "source": [*_PLAYING_ON, _M.DONE], "dest": _M.DONE,
     "after": "_fault_everyone"},
    {"trigger": "storage_failed", "source": _M.IN_GAME, "dest": _M.DONE, "before": "_stop_game",
     "after": "_fault_everyone"},
]  # fmt: skip

_TABLE = StateTable(
    MatchState,
    TRANSITIONS,
    states=[{"name": state, "on_enter": "_log_change"} for state in MatchState],
)


class MatchReferee:
    """Runs the games of one match between the players on ports ``a`` and ``b``.

    ``line_times``: how long bytes take on each port's line where a line's own time is
    not charged (see :class:`~serialref.referee.host.RefereeHost`).
    """

    state: MatchState

    def __init__(
        self,
        settings: MatchSettings,
        ports: PlayerPorts,
        recorders: Sequence[Recorder] = (),
        observers: Sequence[MatchListener] = (),
        *,
        line_times: Mapping[str, Callable[[int], float]] | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.publisher = Publisher(
            recorders, observers, wall_clock=wall_clock, on_storage_failure=self._journal_failed
        )
        self.host = RefereeHost(
            ports, self.publisher, line_times=line_times, clock=clock, wall_clock=wall_clock
        )
        self.sessions = {
            port: PortSession(port, name) for port, name in zip(PORTS, settings.names, strict=True)
        }
        self.lines = LineRouter(self.sessions, self.publisher, ports, holder=self)
        self.games_done = 0
        self.score = [0.0, 0.0]
        self.game: GameReferee | None = None
        self._last_position: chess.Board | None = None
        self._delay_until: float | None = None
        self._stop_reason = ""
        self._pause = Pause()
        self.state = MatchState.WAITING_FOR_PLAYERS

    # ----------------------------------------------------------------- driving

    def start(self, resume: ResumePoint | None = None) -> None:
        """Announce the match; players are awaited, or (``resume``) the match continues."""
        settings = self.settings
        self.publisher.publish(
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
        """Whether the match is over: the supervisor's pause means nothing to it any more
        (every other state has rows for it). The loop asks at every step."""
        return not _TABLE.handles(self, "pause")

    @property
    def complete(self) -> bool:
        """Whether every game was played (as opposed to a stopped match)."""
        return self.done and not self._stop_reason

    @property
    def in_game(self) -> bool:
        """Whether a game is under way (a clock may be running: the loop keeps a heartbeat)."""
        return self.game is not None

    @property
    def paused(self) -> bool:
        """Whether the supervisor's pause is on."""
        return self._pause.on

    def next_deadline(self) -> float | None:
        """When :meth:`on_timer` must run next, or None to wait for lines only."""
        deadlines = [self._delay_until, self.lines.next_deadline()]
        if self.game is not None:
            deadlines.append(self.game.next_deadline())
        return min((d for d in deadlines if d is not None), default=None)

    def on_timer(self) -> None:
        """Act on every deadline that has passed."""
        now = self.host.now()
        self.lines.on_timer(now)
        if self.game is not None:
            self.game.on_timer(now)
        if self._delay_until is not None and now >= self._delay_until:
            self._delay_until = None
            self.conclude_delay_passed()

    def on_stall(self, began: float, ended: float) -> None:
        """The referee did not run from ``began`` to ``ended``: no one is charged for it."""
        LOGGER.warning(
            "the referee did not run for %.2f s: that time is charged to no one", ended - began
        )
        self.publisher.publish(RefereeStalled(seconds=ended - began))
        if self.game is not None:
            self.game.on_stall(began, ended)

    # ---------------------------------------------------------------- triggers

    def players_ready(self) -> bool:
        return _TABLE.fire(self, "players_ready")

    def game_interrupted(self, port: str) -> bool:
        """The game had not begun when the player on ``port`` left."""
        return _TABLE.fire(self, "game_interrupted", port)

    def game_resumed(self, point: ResumePoint) -> bool:
        return _TABLE.fire(self, "game_resumed", point)

    def game_decided(self, verdict: Verdict, white_port: str) -> bool:
        """The game has a result; inform and conclude went out."""
        return _TABLE.fire(self, "game_decided", verdict, white_port)

    def conclude_delay_passed(self) -> bool:
        return _TABLE.fire(self, "conclude_delay_passed")

    def all_games_played(self) -> bool:
        return _TABLE.fire(self, "all_games_played")

    def stop(self, reason: str) -> bool:
        """End the match now (SIGTERM, SIGINT, SIGHUP, the supervisor's abort):
        ``disconnect`` to every player."""
        return _TABLE.fire(self, "stop", reason)

    def pause(self) -> bool:
        """The supervisor's pause: no clock runs, and the next ``respond`` waits."""
        return _TABLE.fire(self, "pause")

    def may_pause(self) -> bool:
        return _TABLE.may(self, "pause")

    def unpause(self) -> bool:
        """The supervisor's pause is over: the clocks run again; a ``respond`` held back
        by the pause goes out."""
        return _TABLE.fire(self, "unpause")

    def may_unpause(self) -> bool:
        return _TABLE.may(self, "unpause")

    def storage_failed(self, reason: str, unrecorded: MatchEvent | None) -> bool:
        """The journal cannot be written (``reason``); it lacks ``unrecorded``, if any.

        No clock runs from now on; every player is told the position a restart continues
        from: before a move whose entry is what failed, which was never relayed
        (PROTOCOL.md 7).
        """
        return _TABLE.fire(self, "storage_failed", reason, unrecorded)

    # ------------------------------------------------- the seats between games

    def player_signed_on(self, port: str, name: str | None) -> None:
        """A player signed on between games: it is reset for the next game."""
        session = self.sessions[port]
        session.note_sign_on(name)
        self.publisher.publish(PlayerSignedOn(port=port, name=session.name))
        upcoming = self.games_done + 1
        board = self.settings.opening(upcoming).board()
        session.note_reset(upcoming, self.host.send(port, records.reset(board)))
        self.players_ready()

    def reply_received(self, port: str, record: EpdRecord, text: str, at: float) -> None:
        """No game, no respond outstanding: a reply is stale or out of turn."""
        reason = reply_out_of_turn(self.sessions[port], record).reason
        self.publisher.ignored(port, text, at, reason)

    def player_signed_off(self, port: str) -> None:
        self._left(port, "signed off")

    def line_lost(self, port: str, reason: str) -> None:
        self._left(port, f"line lost: {reason}")

    def fault_reported(self, port: str, reason: str, text: str, at: float) -> None:
        """8.2.1: outside a game a player can repeat it at will, and it is only recorded,
        within the limits of ignored lines (PROTOCOL.md 7)."""
        if self.publisher.admits(port, at):
            self.publisher.fault(port, self.sessions[port].name, reason, text, at)

    def record_left(self, port: str, at: float) -> None:
        """Between games no move waits for a record to leave."""

    def _left(self, port: str, reason: str) -> None:
        self.sessions[port].note_left()
        self.publisher.publish(PlayerSignedOff(port=port, reason=reason))

    # ------------------------------------------------------------- callbacks

    def _all_signed_on(self) -> bool:
        return all(session.signed_on for session in self.sessions.values())

    def _games_remain(self) -> bool:
        return self.games_done < self.settings.games

    def _paused(self) -> bool:
        return self._pause.on

    def _start_game_if_ready(self) -> None:
        self.players_ready()

    def _begin_game(self) -> None:
        self._hand_seats(self._game(self.games_done + 1))

    def _drop_game(self, port: str) -> None:
        assert self.game is not None
        LOGGER.warning(
            "game %d had not begun when the player on port %s left: it starts again when both"
            " players are back",
            self.game.number,
            port,
        )
        self._take_seats_back()

    def _continue_game(self, point: ResumePoint) -> None:
        assert point.game is not None
        resumed = resumed_game(point, self.settings.time_control)
        game = self._game(point.game.game, resumed)
        self._hand_seats(game)
        game.resume()

    def _count_result(self, verdict: Verdict, white_port: str) -> None:
        assert self.game is not None
        self.games_done += 1
        self._count_score(verdict.result, white_port)
        self._last_position = self.game.sheet.board.board
        self._take_seats_back()
        self._delay_until = self.host.now() + self.settings.conclude_delay
        self.publisher.count_left_out()

    def _finish(self, reason: str = "") -> None:
        """8.1.2: ``disconnect`` to every signed-on player; the match's end is recorded."""
        self._stop_reason = reason
        self._delay_until = None
        self.publisher.count_left_out()
        disconnect_all(self.host, self.sessions, self._current_position())
        clocks = None if self.game is None else self.game.clocks_at_stop
        self.game = None
        self.publisher.publish(
            MatchEnded(
                complete=not reason,
                score=(self.score[0], self.score[1]),
                reason=reason,
                clocks=clocks,
            )
        )

    def _stop_game(self, *_: object) -> None:
        """The game under way stops where it stands: no clock runs from now on."""
        assert self.game is not None
        self.game.stop(at=self.host.now())

    def _start_pause(self) -> None:
        self._pause.on = True

    def _pause_game(self) -> None:
        assert self.game is not None
        self.game.pause(at=self.host.now())

    def _end_pause(self) -> None:
        self._pause.on = False

    def _unpause_game(self) -> None:
        assert self.game is not None
        self.game.unpause(at=self.host.now())

    def _fault_everyone(self, reason: str, unrecorded: MatchEvent | None) -> None:
        """Nothing more is recorded (the record would have a gap); what is recorded stays
        as it is, so a restart continues from the last entry on disk: the position the
        players are told."""
        self._stop_reason = reason
        game = self.game
        position = chess.Board() if game is None else game.sheet.recorded_position(unrecorded)
        disconnect_all(self.host, self.sessions, position, fault=STORAGE_FAILURE)

    def _log_change(self, *_: object) -> None:
        LOGGER.debug("match: %s", self.state.value)

    # ------------------------------------------------------------------ restore

    def _resume(self, point: ResumePoint) -> None:
        """Continue a match from its journal (PROTOCOL.md 6 and 7)."""
        self.games_done = point.games_done
        self._pause.on = point.paused
        for white_port, result in point.results:
            self._count_score(result, white_port)
        LOGGER.warning(
            "resuming the match from its journal: %d game(s) finished%s%s",
            point.games_done,
            f", game {point.game.game} at ply {len(point.moves)}" if point.game else "",
            "; waiting for both players (it was stopped in order)" if point.orderly else "",
        )
        for port, name, present in zip(PORTS, point.names, point.signed_on, strict=True):
            session = self.sessions[port]
            session.take_name(name)
            if present:
                session.note_sign_on(None)
        if point.game is not None:
            self.game_resumed(point)
        elif not self._games_remain():
            self.all_games_played()
        else:
            self.players_ready()

    # ---------------------------------------------------------------- plumbing

    def _game(self, number: int, resumed: ResumedGame | None = None) -> GameReferee:
        return GameReferee(
            number,
            self.settings,
            self.sessions,
            self.host,
            owner=self,
            pause=self._pause,
            resumed=resumed,
        )

    def _hand_seats(self, game: GameReferee) -> None:
        """The game holds the seats while it runs."""
        self.game = game
        self.lines.holder = game

    def _take_seats_back(self) -> None:
        self.game = None
        self.lines.holder = self

    def _current_position(self) -> chess.Board:
        """The position ``disconnect`` names (8.1.2): the game's, the last game's final
        one, or before any game the first game's start."""
        if self.game is not None:
            return self.game.sheet.board.board
        if self._last_position is not None:
            return self._last_position
        return self.settings.opening(self.games_done + 1).board()

    def _count_score(self, result: str, white_port: str) -> None:
        white = PORTS.index(white_port)
        points = Result.points_of(result)
        if points is not None:
            self.score[white] += points[0]
            self.score[1 - white] += points[1]

    def _journal_failed(self, exc: RecorderError, unrecorded: MatchEvent | None) -> None:
        """The publisher's word that the journal cannot be written: stop the match."""
        LOGGER.critical("%s: stopping the match", exc)
        self.storage_failed(str(exc), unrecorded)
