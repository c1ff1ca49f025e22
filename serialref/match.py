"""The referee of one match between the players on two ports (EPD spec section 8).

:class:`MatchReferee` is driven by one thread: it is handed every line event
from both ports and is woken at its deadlines (the reset and conclude delays, a
flag fall, a rejoin window). It decides, sends records through a :class:`Wire`
and publishes :mod:`serialref.events` to its listeners. It never sleeps and
never reads a port, so tests drive it with a fake clock and a fake wire.

The match is a ``transitions`` state machine declared as one table; the
per-port state lives in :class:`serialref.session.PortSession`.
"""

from __future__ import annotations

import datetime
import enum
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import chess
from transitions import Machine

from serialref import records
from serialref.adjudication import RefereeGame, ReplyKind, Ruling, Termination, Verdict, judge_reply
from serialref.clock import ChessClock, TimeControl
from serialref.epd import EpdRecord, format_record, parse_record
from serialref.errors import LineLostError, RecordError, UnexpectedRecordError
from serialref.events import (
    GameEnded,
    GameStarted,
    Infraction,
    LineReceived,
    MatchEnded,
    MatchEvent,
    MatchListener,
    MatchStarted,
    MovePlayed,
    PlayerSignedOff,
    PlayerSignedOn,
    RecordSent,
)
from serialref.records import Refreq
from serialref.session import PortSession, SessionState

LOGGER = logging.getLogger(__name__)

__all__ = [
    "PORTS",
    "MatchReferee",
    "MatchSettings",
    "MatchState",
    "Opening",
    "ResumePoint",
    "Wire",
]

PORTS = ("a", "b")
"""Port labels: the player on port ``a`` has White in game 1; colours alternate."""


class Wire(Protocol):
    """How the referee reaches the players."""

    def send(self, port: str, text: str) -> float:
        """Write one line; return the monotonic time its bytes had left. Raises LineLostError."""
        ...

    def transmission_time(self, port: str, nbytes: int) -> float:
        """Time ``nbytes`` take on that port's line (0 where no line rate applies)."""
        ...


@dataclass(frozen=True, slots=True)
class Opening:
    """A game's starting point: a position and the moves already played from it."""

    fen: str = chess.STARTING_FEN
    moves: tuple[str, ...] = ()

    def board(self) -> chess.Board:
        board = chess.Board(self.fen)
        for san in self.moves:
            board.push_san(san)
        return board


@dataclass(frozen=True, slots=True)
class MatchSettings:
    """Everything the referee needs to know about the match (see :mod:`serialref.config`)."""

    games: int = 1
    time_control: TimeControl = field(default_factory=lambda: TimeControl.parse("300+3"))
    openings: tuple[Opening, ...] = (Opening(),)
    event: str = "serialref match"
    site: str = "?"
    names: tuple[str | None, str | None] = (None, None)
    reset_delay: float = 5.0
    conclude_delay: float = 5.0
    on_infraction: str = "forfeit"
    rejoin_window: float = 0.0
    flag_grace: float = 0.0


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """Where a match stood when its referee stopped, as its journal tells it."""

    games_done: int
    results: tuple[tuple[str, str], ...]  # (White's port, PGN result) of each finished game
    names: tuple[str | None, str | None]
    signed_on: tuple[bool, bool]
    game: GameStarted | None = None
    moves: tuple[MovePlayed, ...] = ()


class MatchState(enum.Enum):
    """Where the match stands."""

    WAITING_FOR_PLAYERS = "waiting for players"
    RESETTING = "resetting"
    INFORMING = "informing"
    PLAYING = "playing"
    CONCLUDING = "concluding"
    BETWEEN_GAMES = "between games"
    DISCONNECTING = "disconnecting"
    DONE = "done"


_M = MatchState
_ACTIVE = [
    _M.WAITING_FOR_PLAYERS,
    _M.RESETTING,
    _M.INFORMING,
    _M.PLAYING,
    _M.CONCLUDING,
    _M.BETWEEN_GAMES,
]

TRANSITIONS: list[dict[str, Any]] = [
    # 8 (5, 6): both players signed on and reset: the reset delay of 8.1.6 runs.
    {"trigger": "players_ready", "source": _M.WAITING_FOR_PLAYERS, "dest": _M.RESETTING},
    # 8.1.5: the delay is over; tags go to both players.
    {"trigger": "reset_delay_passed", "source": _M.RESETTING, "dest": _M.INFORMING},
    # 3.2 (9): a restarted referee picks the game up where its journal left it.
    {"trigger": "resumed", "source": _M.WAITING_FOR_PLAYERS, "dest": _M.PLAYING},
    # 8 (8): the first respond goes to White.
    {"trigger": "first_respond_sent", "source": _M.INFORMING, "dest": _M.PLAYING},
    # 8 (13): the game ended; the result is told and conclude sent.
    {
        "trigger": "game_over",
        "source": [_M.RESETTING, _M.INFORMING, _M.PLAYING],
        "dest": _M.CONCLUDING,
    },
    # 8.1.1: the conclude delay runs.
    {"trigger": "concluded", "source": _M.CONCLUDING, "dest": _M.BETWEEN_GAMES},
    # The next game needs both players again.
    {"trigger": "next_game", "source": _M.BETWEEN_GAMES, "dest": _M.WAITING_FOR_PLAYERS},
    # A player left before its game began.
    {"trigger": "player_missing", "source": _M.RESETTING, "dest": _M.WAITING_FOR_PLAYERS},
    # 8 (15), 8.1.2: the match is over or the referee is stopped.
    {"trigger": "match_over", "source": _ACTIVE, "dest": _M.DISCONNECTING},
    {"trigger": "disconnected", "source": _M.DISCONNECTING, "dest": _M.DONE},
]


def _other(port: str) -> str:
    return "b" if port == "a" else "a"


class MatchReferee:
    """Runs the games of one match between the players on ports ``a`` and ``b``."""

    state: MatchState

    def __init__(
        self,
        settings: MatchSettings,
        wire: Wire,
        listeners: Sequence[MatchListener] = (),
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self._wire = wire
        self._listeners = list(listeners)
        self._clock = clock
        self._wall = wall_clock
        self.sessions = {
            port: PortSession(port, name or f"Player {port.upper()}")
            for port, name in zip(PORTS, settings.names, strict=True)
        }
        self.game_number = 0
        self.score = [0.0, 0.0]
        self.game: RefereeGame | None = None
        self.chess_clock: ChessClock | None = None
        self.white_port = "a"
        self.tags: dict[str, str] = {}
        self._opening_length = 0
        self._offer_pending = False
        self._delay_until: float | None = None
        self._absent_until: dict[str, float] = {}
        self._stopping = ""
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
        """Announce the match; players are awaited, or (``resume``) restored at once."""
        self._publish(
            MatchStarted(
                games=self.settings.games,
                time_control=self.settings.time_control.text,
                ports=PORTS,
                settings={
                    "event": self.settings.event,
                    "site": self.settings.site,
                    "reset_delay": self.settings.reset_delay,
                    "conclude_delay": self.settings.conclude_delay,
                    "on_infraction": self.settings.on_infraction,
                },
                resumed=resume is not None,
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
        return self.done and not self._stopping

    def next_deadline(self) -> float | None:
        """When :meth:`on_timer` must run next, or None to wait for lines only."""
        deadlines = [self._delay_until, *self._absent_until.values()]
        if self.state is MatchState.PLAYING and self.chess_clock is not None:
            flag = self.chess_clock.flag_deadline()
            if flag is not None:
                deadlines.append(flag + self.settings.flag_grace)
        return min((d for d in deadlines if d is not None), default=None)

    def on_timer(self) -> None:
        """Act on every deadline that has passed."""
        now = self._clock()
        for port, until in list(self._absent_until.items()):
            if now >= until:
                del self._absent_until[port]
                if self.state is MatchState.PLAYING and not self.sessions[port].signed_on:
                    self._end_game(self._abandon_verdict(port, "did not come back in time"), now)
        clock = self.chess_clock
        if (
            self.state is MatchState.PLAYING
            and clock is not None
            and clock.flag_fell(now - self.settings.flag_grace)
        ):
            assert self.game is not None
            self._end_game(self.game.flag_verdict(self.game.turn), now)
        if self._delay_until is not None and now >= self._delay_until:
            self._delay_until = None
            if self.state is MatchState.RESETTING:
                self._begin_play()
            elif self.state is MatchState.BETWEEN_GAMES:
                self._after_conclude_delay()

    def on_line(self, port: str, text: str, at: float) -> None:
        """A line arrived on ``port``; its line end came at ``at``."""
        self._publish(LineReceived(port=port, text=text, wall=self._wall(), at=at))
        if self.done or self.state is MatchState.DISCONNECTING:
            return
        try:
            record = parse_record(text)
            request = records.player_request(record)
        except (RecordError, UnexpectedRecordError) as exc:
            self._ignore(port, f"not a player request: {exc}", text)
            return
        if request is Refreq.SIGN_ON:
            self._on_sign_on(port, record)
        elif not self.sessions[port].signed_on:
            self._ignore(port, f"{request.value} from a player that is not signed on", text)
        elif request is Refreq.REPLY:
            self._on_reply(port, record, text, at)
        elif request is Refreq.SIGN_OFF:
            self._on_gone(port, "signed off", signed_off=True)
        else:
            self._on_player_fault(port, record)

    def on_malformed(self, port: str, reason: str, preview: str, at: float) -> None:
        """Line noise: logged and counted, never acted on (PROTOCOL.md 1)."""
        self._publish(
            LineReceived(
                port=port, text=preview, wall=self._wall(), at=at, malformed=True, note=reason
            )
        )
        LOGGER.warning("port %s: ignored malformed line (%s): %s", port, reason, preview)

    def on_line_lost(self, port: str, reason: str) -> None:
        """The port's line went away; the game and the clocks go on (issue: durability)."""
        if self.sessions[port].state in (SessionState.OFFLINE, SessionState.DISCONNECTED):
            return
        LOGGER.warning("port %s: line lost (%s)", port, reason)
        self._on_gone(port, f"line lost: {reason}", signed_off=False)

    def stop(self, reason: str) -> None:
        """End the match now (SIGTERM, SIGINT): tell every signed-on player ``disconnect``."""
        if self.state in (MatchState.DISCONNECTING, MatchState.DONE):
            return
        self._stopping = reason
        if self.chess_clock is not None and self.state is MatchState.PLAYING:
            self.chess_clock.pause(self._clock())
        self._finish_match(reason)

    # ------------------------------------------------------------ sign-on/off

    def _on_sign_on(self, port: str, record: EpdRecord) -> None:
        session = self.sessions[port]
        identity = records.sign_on_identity(record)
        configured = self.settings.names[PORTS.index(port)]
        if identity.name and not configured:
            session.name = records.tag_value(identity.name)
        restarted = session.signed_on
        session.fire("sign_on_received")
        self._absent_until.pop(port, None)
        self._publish(PlayerSignedOn(port=port, name=session.name))
        LOGGER.info("port %s: %s signed on%s", port, session.name, " again" if restarted else "")
        if self.state in (MatchState.PLAYING, MatchState.INFORMING) and self.game is not None:
            self._restore(port)
            return
        upcoming = self._upcoming_game()
        self._send_reset(port, self._opening(upcoming).board(), upcoming)
        if self.state is MatchState.WAITING_FOR_PLAYERS:
            self._start_game_if_ready()
        elif self.state is MatchState.RESETTING:
            self._delay_until = self._reset_deadline()

    def _on_gone(self, port: str, reason: str, *, signed_off: bool) -> None:
        session = self.sessions[port]
        session.fire("left")
        self._publish(PlayerSignedOff(port=port, reason=reason))
        if self.state is MatchState.RESETTING:
            self._fire("player_missing")
            self._delay_until = None
        if self.state is not MatchState.PLAYING:
            return
        window = self.settings.rejoin_window
        if window > 0:
            self._absent_until[port] = self._clock() + window
        elif signed_off:
            self._end_game(self._abandon_verdict(port, reason), self._clock())

    def _abandon_verdict(self, port: str, reason: str) -> Verdict:
        colour = chess.WHITE if port == self.white_port else chess.BLACK
        return Verdict.win(
            not colour, Termination.ABANDONED, f"{self.sessions[port].name} {reason}"
        )

    def _on_player_fault(self, port: str, record: EpdRecord) -> None:
        reason = " ".join(record.operand_texts("c0")) or "no reason given"
        LOGGER.error(
            "port %s: player %s reports a fault: %s", port, self.sessions[port].name, reason
        )
        self._publish(
            Infraction(port=port, reason=f"player fault: {reason}", text=format_record(record))
        )
        if self.state is MatchState.PLAYING:
            self._end_game(
                Verdict.unfinished(
                    Termination.EMERGENCY, f"{self.sessions[port].name} reported a fault: {reason}"
                ),
                self._clock(),
            )

    # ------------------------------------------------------------- game setup

    def _upcoming_game(self) -> int:
        """The game a reset sent now is for: the one being set up, or the next."""
        setting_up = self.state in (MatchState.RESETTING, MatchState.INFORMING)
        return self.game_number if setting_up else self.game_number + 1

    def _opening(self, game: int) -> Opening:
        openings = self.settings.openings
        return openings[((game - 1) // 2) % len(openings)]

    def _start_game_if_ready(self) -> None:
        if not all(session.signed_on for session in self.sessions.values()):
            return
        self.game_number += 1
        board = self._opening(self.game_number).board()
        self.white_port = "a" if self.game_number % 2 == 1 else "b"
        for port, session in self.sessions.items():
            if session.reset_for_game != self.game_number:
                self._send_reset(port, board, self.game_number)
        self._fire("players_ready")
        self._delay_until = self._reset_deadline()

    def _reset_deadline(self) -> float:
        times = [s.reset_at for s in self.sessions.values() if s.reset_at is not None]
        return max(times, default=self._clock()) + self.settings.reset_delay

    def _send_reset(self, port: str, board: chess.Board, game: int) -> None:
        session = self.sessions[port]
        sent_at = self._send(port, records.reset(board))
        if sent_at is None:
            return
        session.fire("reset_sent")
        session.reset_at = sent_at
        session.reset_for_game = game

    def _begin_play(self) -> None:
        self._fire("reset_delay_passed")
        opening = self._opening(self.game_number)
        board = opening.board()
        self._opening_length = len(opening.moves)
        self.game = RefereeGame(board)
        self.chess_clock = ChessClock(self.settings.time_control)
        self._offer_pending = False
        self._absent_until.clear()
        names = {port: session.name for port, session in self.sessions.items()}
        black_port = _other(self.white_port)
        self.tags = {
            "Event": self.settings.event,
            "Site": self.settings.site,
            "Date": datetime.date.fromtimestamp(self._wall()).strftime("%Y.%m.%d"),
            "Round": str(self.game_number),
            "White": names[self.white_port],
            "Black": names[black_port],
            "Result": "*",
        }
        self._publish(
            GameStarted(
                game=self.game_number,
                white_port=self.white_port,
                black_port=black_port,
                fen=board.root().fen(),
                tags={**self.tags, "TimeControl": self.settings.time_control.text},
                opening_moves=opening.moves,
            )
        )
        for port in PORTS:
            if self.sessions[port].signed_on:
                self._send_inform(port)
                self._join(port)
        self._fire("first_respond_sent")
        self._send_respond(self._port_to_move(), None)

    def _join(self, port: str) -> None:
        session = self.sessions[port]
        if session.state in (SessionState.RESETTING, SessionState.IDLE):
            session.fire("game_joined")

    def _inform_tags(self, final: Verdict | None = None) -> list[tuple[str, str]]:
        tags = [(name, self.tags[name]) for name in records.ROSTER]
        if final is not None:
            tags[-1] = ("Result", final.result)
        tags.append(("TimeControl", self.settings.time_control.text))
        if final is not None:
            tags.append(("Termination", final.termination.value))
        return tags

    def _send_inform(self, port: str, final: Verdict | None = None) -> None:
        assert self.game is not None
        self._send(port, records.inform(self.game.fen, self._inform_tags(final)))

    def _port_to_move(self) -> str:
        assert self.game is not None
        return self.white_port if self.game.turn == chess.WHITE else _other(self.white_port)

    # ------------------------------------------------------------------ moves

    def _send_respond(self, port: str, san: str | None, *, restore: bool = False) -> None:
        """Ask ``port`` to move: after the opponent's ``san``, or from the current position."""
        assert self.game is not None and self.chess_clock is not None
        session = self.sessions[port]
        record = records.respond(
            self.game.fen if san is None else self.game.previous_fen,
            self.chess_clock.cc_seconds(self._clock()),
            san,
            draw_offer=self._offer_pending and san is not None,
        )
        # A player that is away is told when it comes back (restore), but its
        # clock runs as a real one would: its flag may fall while it is away.
        sent_at = self._send(port, record) if session.signed_on else None
        if sent_at is not None:
            session.fire("respond_sent")
        if not restore:
            self.chess_clock.start(self.game.turn, self._clock() if sent_at is None else sent_at)

    def _on_reply(self, port: str, record: EpdRecord, text: str, at: float) -> None:
        session = self.sessions[port]
        if not session.to_move or self.state is not MatchState.PLAYING:
            self._ignore(port, "reply out of turn", text)
            return
        assert self.game is not None and self.chess_clock is not None
        deduct = self._wire.transmission_time(port, len(text) + 1)
        if self.chess_clock.flag_fell(at, deduct=deduct):
            self._end_game(self.game.flag_verdict(self.game.turn), at)
            return
        ruling = judge_reply(self.game, record, offer_pending=self._offer_pending)
        for note in ruling.notes:
            LOGGER.info("port %s: %s", port, note)
        if ruling.kind is ReplyKind.INFRACTION:
            self._on_infraction(port, ruling, text, at)
            return
        session.fire("reply_taken")
        mover = self.game.turn
        if ruling.kind is ReplyKind.RESIGN:
            self._end_game(Verdict.win(not mover, Termination.NORMAL, ruling.reason), at)
        elif ruling.kind is ReplyKind.DRAW_AGREED:
            self._end_game(Verdict.draw(ruling.reason), at)
        elif ruling.kind is ReplyKind.DRAW_CLAIMED:
            if ruling.move is not None:
                self._play(ruling, at, deduct)
            self._end_game(Verdict.draw(ruling.reason), at)
        else:
            san = self._play(ruling, at, deduct)
            verdict = self.game.automatic_verdict()
            if verdict is not None:
                self._end_game(verdict, at)
            else:
                self._send_respond(_other(port), san)

    def _play(self, ruling: Ruling, at: float, deduct: float) -> str:
        """Accept the ruling's move; returns it in SAN."""
        assert self.game is not None and self.chess_clock is not None
        assert ruling.move is not None
        board = self.game.board
        elapsed = self.chess_clock.stop(at, deduct=deduct)
        san = self.game.push(ruling.move)
        self._offer_pending = ruling.draw_offer
        clock = self.chess_clock
        self._publish(
            MovePlayed(
                game=self.game_number,
                ply=len(board.move_stack) - self._opening_length,
                san=san,
                uci=ruling.move.uci(),
                elapsed=elapsed,
                remaining=(clock.remaining(chess.WHITE), clock.remaining(chess.BLACK)),
                consumed=(clock.consumed(chess.WHITE), clock.consumed(chess.BLACK)),
                moves_made=(clock.moves_made(chess.WHITE), clock.moves_made(chess.BLACK)),
                fen=self.game.fen,
                draw_offer=ruling.draw_offer,
                analysis=ruling.analysis,
            )
        )
        return san

    def _on_infraction(self, port: str, ruling: Ruling, text: str, at: float) -> None:
        assert self.game is not None and self.chess_clock is not None
        name = self.sessions[port].name
        self._publish(Infraction(port=port, reason=ruling.reason, text=text))
        LOGGER.warning("port %s: rules infraction by %s: %s", port, name, ruling.reason)
        if self.settings.on_infraction == "fault":
            # The clocks stop and the supervisor is called; the player is asked
            # again once it signs on anew (PROTOCOL.md 3: after fault it counts
            # as signed off).
            self.chess_clock.pause(at)
            LOGGER.error("port %s: supervisor needed: %s", port, ruling.reason)
            self._send(port, records.fault(self.game.fen, ruling.reason))
            self.sessions[port].fire("left")
            self._publish(PlayerSignedOff(port=port, reason=f"fault: {ruling.reason}"))
            return
        self.sessions[port].fire("reply_taken")
        self._end_game(
            Verdict.win(
                not self.game.turn, Termination.RULES_INFRACTION, f"{name}: {ruling.reason}"
            ),
            at,
        )

    # ---------------------------------------------------------------- restore

    def _resume(self, point: ResumePoint) -> None:
        """Continue a match from its journal without waiting for new sign-ons (PROTOCOL.md 6)."""
        self.game_number = point.games_done
        for white_port, result in point.results:
            self._count_score(result, white_port)
        for port, name, signed_on in zip(PORTS, point.names, point.signed_on, strict=True):
            session = self.sessions[port]
            if name and not self.settings.names[PORTS.index(port)]:
                session.name = name
            if signed_on:
                session.fire("sign_on_received")
        LOGGER.warning(
            "resuming the match from its journal: %d game(s) finished%s",
            point.games_done,
            f", game {point.game.game} at ply {len(point.moves)}" if point.game else "",
        )
        if point.game is None:
            if self.game_number >= self.settings.games:
                self._finish_match("")
            else:
                self._start_game_if_ready()
            return
        started = point.game
        self.game_number = started.game
        self.white_port = started.white_port
        board = Opening(started.fen, started.opening_moves).board()
        self._opening_length = len(started.opening_moves)
        for played in point.moves:
            board.push_uci(played.uci)
        self.game = RefereeGame(board)
        self.tags = {name: started.tags[name] for name in records.ROSTER}
        last = point.moves[-1] if point.moves else None
        # Clocks as at the last completed move: the time the referee was down,
        # and the move that was in flight, are charged to no one.
        self.chess_clock = ChessClock(
            self.settings.time_control,
            consumed=last.consumed if last else (0.0, 0.0),
            moves_made=last.moves_made if last else (0, 0),
        )
        self._offer_pending = last.draw_offer if last else False
        self._fire("resumed")
        verdict = self.game.automatic_verdict()
        if verdict is not None:
            self._end_game(verdict, self._clock())
            return
        for port in PORTS:
            if self.sessions[port].signed_on:
                self._restore(port, start_clock=True)
        if self.chess_clock.running is None:
            self.chess_clock.start(self.game.turn, self._clock())

    def _restore(self, port: str, *, start_clock: bool = False) -> None:
        """Bring a player back into the game in progress (PROTOCOL.md 6)."""
        assert self.game is not None and self.chess_clock is not None
        board = self.game.board
        replay = board.copy()
        moves = replay.move_stack[self._opening_length :]
        for _ in moves:
            replay.pop()
        self._send_reset(port, replay, self.game_number)
        self._send(port, records.inform(replay, self._inform_tags()))
        self.sessions[port].fire("game_joined")
        for move in moves:
            self._send(port, records.execute(replay, move))
            replay.push(move)
        if self.chess_clock.paused:
            self.chess_clock.resume(self._clock())
        if self._port_to_move() == port:
            self._send_respond(port, None, restore=not start_clock)

    # ------------------------------------------------------------ game's end

    def _end_game(self, verdict: Verdict, at: float) -> None:
        assert self.game is not None and self.chess_clock is not None
        clock = self.chess_clock
        clock.pause(at)
        consumed = (clock.consumed(chess.WHITE), clock.consumed(chess.BLACK))
        LOGGER.info(
            "game %d: %s %s (%s)",
            self.game_number,
            verdict.result,
            verdict.reason,
            verdict.termination.value,
        )
        self._absent_until.clear()
        self._fire("game_over")
        self._publish(
            GameEnded(
                game=self.game_number,
                result=verdict.result,
                termination=verdict.termination.value,
                reason=verdict.reason,
                fen=self.game.fen,
                consumed=consumed,
            )
        )
        self._count_score(verdict.result, self.white_port)
        conclude = records.conclude(self.game.fen, clock.cc_seconds())
        for port in PORTS:
            if self.sessions[port].signed_on:
                self._send_inform(port, verdict)
        for port in PORTS:
            session = self.sessions[port]
            if session.signed_on and self._send(port, conclude) is not None:
                session.fire("conclude_sent")
        self._fire("concluded")
        self._delay_until = self._clock() + self.settings.conclude_delay
        self.chess_clock = None

    def _count_score(self, result: str, white_port: str) -> None:
        white = PORTS.index(white_port)
        points = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}.get(result)
        if points is not None:
            self.score[white] += points[0]
            self.score[1 - white] += points[1]

    def _after_conclude_delay(self) -> None:
        if self.game_number >= self.settings.games:
            self._finish_match("")
            return
        self._fire("next_game")
        self.game = None
        self._start_game_if_ready()

    def _finish_match(self, reason: str) -> None:
        self._fire("match_over")
        self._delay_until = None
        board = (
            self.game.board
            if self.game is not None
            else self._opening(self._upcoming_game()).board()
        )
        for port in PORTS:
            session = self.sessions[port]
            if session.signed_on:
                self._send(port, records.disconnect(board))
            if session.state is not SessionState.DISCONNECTED:
                session.fire("disconnect_sent")
        self._fire("disconnected")
        self._publish(
            MatchEnded(complete=not reason, score=(self.score[0], self.score[1]), reason=reason)
        )

    # ------------------------------------------------------------------ plumbing

    def _send(self, port: str, record: EpdRecord) -> float | None:
        """Send a record; None when the line is gone (the loss is handled as it arrives)."""
        text = format_record(record)
        try:
            left_at = self._wire.send(port, text)
        except LineLostError as exc:
            LOGGER.warning("port %s: could not send (%s)", port, exc)
            return None
        self._publish(RecordSent(port=port, text=text, wall=self._wall(), left_at=left_at))
        return left_at

    def _ignore(self, port: str, reason: str, text: str) -> None:
        LOGGER.warning("port %s: ignored: %s", port, reason)
        self._publish(Infraction(port=port, reason=f"ignored: {reason}", text=text))

    def _publish(self, event: MatchEvent) -> None:
        for listener in self._listeners:
            listener.handle(event)

    def _fire(self, trigger: str) -> None:
        """Fire a match trigger; an impossible one is a referee bug, so it raises."""
        self._machine.events[trigger].trigger(self)

    def _log_change(self) -> None:
        LOGGER.debug("match: %s", self.state.value)
