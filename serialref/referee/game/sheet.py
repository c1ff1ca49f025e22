"""What one game is, apart from where its referee stands: its score sheet.

A :class:`GameSheet` holds the facts of a game that the record and the players are
told of: its number, who has White, the opening, the board with its history, the
chess clock, the Seven Tag Roster and a draw offer pending. It says what they make of
each moment of the game: the tags ``inform`` carries (8.1.5), what ``respond`` says
(8.1.7), the
:class:`~serialref.happenings.GameStarted` that opens it in the record and the
:class:`~serialref.happenings.GameEnded` that closes it, the move a ruling plays
(:func:`~serialref.referee.game.turn.play`), and the position a restart continues from.
When and to whom any of it goes is the game's table's to say
(:mod:`serialref.referee.game.machine`); the sheet sends nothing and keeps no time.
"""

from __future__ import annotations

import datetime
import logging

import chess

from serialref import records
from serialref.clock import ChessClock
from serialref.epd.record import EpdRecord
from serialref.happenings import GameEnded, GameStarted, MatchEvent, MovePlayed
from serialref.referee.adjudicator import GameAdjudicator
from serialref.referee.game.replay import ResumedGame, initial_board
from serialref.referee.game.turn import play
from serialref.referee.rulings import GameBoard, Ruling, Termination, Verdict
from serialref.referee.settings import MatchSettings, other_port

__all__ = ["GameSheet"]

LOGGER = logging.getLogger(__name__)


class GameSheet:
    """Game number ``number`` of a match played with ``settings``: a new one, at the
    opening's position with fresh clocks, or a ``resumed`` one as its journal left it."""

    def __init__(
        self, number: int, settings: MatchSettings, resumed: ResumedGame | None = None
    ) -> None:
        self.number = number
        self._settings = settings
        if resumed is None:
            self.white_port = settings.white_port(number)
            opening = settings.opening(number)
            self.opening_moves = opening.moves
            self.board = GameBoard(opening.board())
            self.chess_clock = ChessClock(settings.time_control)
            self.tags: dict[str, str] = {}
            self.offer_pending = False
            self.adjudicator = GameAdjudicator(settings.adjudication)
        else:
            started = resumed.started
            self.white_port = started.white_port
            self.opening_moves = started.opening_moves
            self.board = GameBoard(resumed.board)
            self.chess_clock = resumed.clock
            self.tags = {name: started.tags[name] for name in records.ROSTER}
            self.offer_pending = resumed.offer_pending
            self.adjudicator = GameAdjudicator(settings.adjudication, resumed.scores)

    @property
    def black_port(self) -> str:
        return other_port(self.white_port)

    def port_to_move(self) -> str:
        """The port of the side to move."""
        return self.white_port if self.board.turn == chess.WHITE else self.black_port

    def initial(self) -> chess.Board:
        """The position right after the game's ``reset``: the opening's, its moves played."""
        return initial_board(self.board.board, len(self.opening_moves))

    def start_over(self) -> chess.Board:
        """Back to the initial position, with fresh clocks and no offer pending; the
        position the players are reset to."""
        board = self.initial()
        self.board = GameBoard(board.copy())
        self.chess_clock = ChessClock(self._settings.time_control)
        self.offer_pending = False
        self.adjudicator = GameAdjudicator(self._settings.adjudication)
        return board

    def inform_tags(self, final: Verdict | None = None) -> list[tuple[str, str]]:
        """The tags ``inform`` carries: the roster, and at the end the result."""
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

    def begin(self, white: str, black: str, wall: float) -> GameStarted:
        """The game begins between players called ``white`` and ``black`` at the time
        of day ``wall``: its roster is filled in, and the event that records it."""
        self.tags = self._settings.roster(
            self.number, white, black, datetime.date.fromtimestamp(wall)
        )
        return GameStarted(
            game=self.number,
            white_port=self.white_port,
            black_port=self.black_port,
            fen=self.board.board.root().fen(),
            tags=dict(self.inform_tags()),
            opening_moves=self.opening_moves,
            wall=wall,
        )

    def respond_line(self, san: str | None, now: float) -> str:
        """8.1.7: the ``respond`` that asks for the next move at ``now``: in the position
        before the last move, ``san``, with the draw offer that came with it; or, asking
        again (``san`` None), in the current position."""
        board = self.board
        return records.respond_line(
            board.fen if san is None else board.previous_fen,
            self.chess_clock.consumed_ms(now),
            san,
            draw_offer=self.offer_pending and san is not None,
        )

    def play(self, ruling: Ruling, record: EpdRecord, at: float) -> MovePlayed:
        """Take the ruling's move (:func:`play`); its draw offer, if any, is now pending,
        and its score is noted for the referee's adjudication."""
        self.offer_pending = ruling.draw_offer
        played = play(
            self.board,
            self.chess_clock,
            ruling,
            record,
            at,
            game=self.number,
            opening_plies=len(self.opening_moves),
        )
        self.adjudicator.note(played.analysis)
        return played

    def ending(self) -> Verdict | None:
        """How the last move ended the game, or None to play on: by itself (a mate, a
        dead position, ...) or by the referee's adjudication (``--draw``, ``--resign``,
        ``--maxmoves``, ``--tb``), which a game restored from its journal meets again."""
        return self.board.automatic_verdict() or self.adjudicator.verdict(self.board.board)

    def end(self, verdict: Verdict, wall: float) -> GameEnded:
        """The game ends with ``verdict`` at the time of day ``wall``: the event that
        records it, with the clocks as they stopped."""
        LOGGER.info(
            "game %d: %s %s (%s)",
            self.number,
            verdict.result,
            verdict.reason,
            verdict.termination.value,
        )
        clock = self.chess_clock
        return GameEnded(
            game=self.number,
            result=verdict.result,
            termination=verdict.termination.value,
            reason=verdict.reason,
            fen=self.board.fen,
            consumed=(clock.consumed(chess.WHITE), clock.consumed(chess.BLACK)),
            wall=wall,
        )

    def abandoned(self, port: str, why: str) -> Verdict:
        """The player on ``port`` lost by abandoning the game; ``why`` names it and says
        how ("Beta signed off")."""
        colour = chess.WHITE if port == self.white_port else chess.BLACK
        return Verdict.win(not colour, Termination.ABANDONED, why)

    def recorded_position(self, unrecorded: MatchEvent | None) -> str:
        """The position a restart continues from when the journal failed on ``unrecorded``.

        A move whose entry is what failed was never relayed: the position is the one
        before it (PROTOCOL.md 7).
        """
        return self.board.previous_fen if isinstance(unrecorded, MovePlayed) else self.board.fen
