"""The game as the client follows it: a board with its history, matched against the referee's.

Spec section 8.1 asks a client to keep the game as a python-chess board *with its
history*, so that a repetition can be claimed. A record whose position matches the
board (the four fields, an en passant square that allows no capture counting as ``-``,
and ``hmvc``/``fmvn`` when sent) continues the game; any other position replaces the
board and its history is gone (spec 8.1, "treat it as a new position and clear any game
history"). The referee's restore (PROTOCOL.md 6) replays the game with ``execute``
records, so the history comes back after a restart.

Matching is cheap in the common case: the referee writes a position exactly as
:class:`~serialref.fentext.FenText` writes it, so the record's four fields are
compared as text with the board's, worked out once per position (and, through
:meth:`FollowedGame.position_fields`, ahead of time when the line is quiet). Only a record
that differs takes the full comparison of spec 8.1.

The game is more than its board: its PGN tags (``ptp``, spec 8.1.5) and its clocks
(:class:`~serialref.client.clocks.GameClocks`) count on whichever record carries them,
and a ``reset`` forgets them with the board. From all of it comes the player's
request in the position to move (:meth:`FollowedGame.request`), and the ``reply`` its
decision makes (:meth:`FollowedGame.reply`).
"""

from __future__ import annotations

import logging
import math

import chess

from serialref.client.clocks import GameClocks
from serialref.client.players import Decision, ThinkRequest
from serialref.client.replies import reply_to
from serialref.client.respond import RespondLine
from serialref.clock import side_index
from serialref.epd.record import EpdRecord
from serialref.errors import ConfigError, ProtocolError, escape
from serialref.fentext import FenText
from serialref.rules import STANDARD, Rules, rules_of_tags

__all__ = ["FollowedGame"]

LOGGER = logging.getLogger(__name__)


class FollowedGame:
    """One game: its board with its history, its tags and its clocks.

    Change the board only through this class's methods. It is changed in place: a
    request handed to the player holds it, so the session changes it only once that
    request is answered, or when a record of the referee's has ended it (and the
    output that tells the runner to stop its search is on its way). The player's
    own move is played once its reply has gone (:meth:`push_later`): every look at the
    game plays it first, so nothing ever sees the board without it.

    ``game`` is a new object for every game (``ThinkRequest.game``); ``tags`` are the
    PGN tags the referee sent for it.
    """

    def __init__(self) -> None:
        self._board = chess.Board()
        self._text = FenText(self._board)
        self._fields: str | None = None
        self.game: object = object()
        self.tags: dict[str, str] = {}
        self._clocks = GameClocks(self._board)
        # The game's rules: standard until inform's Variant tag names others; the
        # reset's position is then read again by them (Chess960 and atomic positions
        # look standard, a crazyhouse one cannot be read without its rules).
        self._rules = STANDARD
        self._reset: EpdRecord | None = None
        self._reset_unread = False
        self._due: chess.Move | None = None

    @property
    def board(self) -> chess.Board:
        """The board itself (not a copy): look, or push and pop back, but do not change it."""
        self._play_due()
        return self._board

    def position_fields(self) -> str:
        """The board's four position fields as the referee writes them; kept until a move."""
        self._play_due()
        fields = self._fields
        if fields is None:
            fields = self._fields = self._text.fields()
        return fields

    def push(self, move: chess.Move) -> None:
        """Play ``move`` (legal) on the board."""
        self._play_due()
        self._text.push(move)
        self._fields = None

    def push_later(self, move: chess.Move) -> None:
        """Play ``move`` (legal) at the next look at the game rather than now.

        For the player's own move: its reply goes out first, and the push (with its
        FEN) is done while the opponent thinks.
        """
        self._play_due()
        self._due = move
        self._fields = None

    def _play_due(self) -> None:
        if self._due is not None:
            move, self._due = self._due, None
            self._text.push(move)

    def start(self, record: EpdRecord) -> bool:
        """A new game from the record's position; False (board kept) if it is unusable.

        The last game's tags and clocks are forgotten, the record's taken. The position
        is read by standard rules until :meth:`play_by` names others; one that standard
        chess cannot read may be a variant's, so it is kept for that (and not reported:
        ``inform`` comes next and tells).
        """
        self._reset = record
        self._rules = STANDARD
        self.game = object()
        self.tags = {}
        board = _record_board(record, STANDARD, quiet=True)
        self._reset_unread = board is None
        if board is not None:
            self._replace(board)
        self._clocks = GameClocks(self.board)
        self.take(record)
        return board is not None

    def play_by(self, rules: Rules) -> bool:
        """Follow the game by ``rules`` from the reset's position; True if the board changed."""
        self._play_due()
        if self._reset is None or (rules == self._rules and not self._reset_unread):
            return False
        board = _record_board(self._reset, rules)
        self._reset_unread = False
        if board is None:
            return False
        LOGGER.info("playing %s", rules.name)
        self._rules = rules
        self._replace(board)
        return True

    def play_by_tags(self) -> None:
        """Play by the rules the ``Variant`` tag names (a reset alone does not say them).

        Raises :class:`~serialref.errors.MissingExtraError` for rules this install
        cannot play; a tag that names no rules is logged and ignored.
        """
        try:
            rules = rules_of_tags(self.tags)
        except ConfigError as exc:
            LOGGER.warning("ignored the Variant tag: %s", exc)
            return
        if self.play_by(rules):
            self._clocks.start_from(self._board)

    def take(self, record: EpdRecord) -> None:
        """Spec 8.1 and 8.1.5: the clocks and ``ptp`` count on whichever record carries them.

        The strict parser has already checked ``ptp`` and ``cc``.
        """
        if "ptp" in record:
            pairs = record.tag_pairs("ptp")
            self.tags.update(pairs)
            if any(name == "TimeControl" for name, _ in pairs):
                self._clocks.read_control(self.tags["TimeControl"])
            LOGGER.debug("tags: %s", escape(str(self.tags)))
        self._clocks.take(record)

    def follow(self, record: EpdRecord) -> bool:
        """Bring the board to the record's position, then play its ``sm``; False if impossible."""
        self._play_due()
        if not self._continued_by(record):
            target = _record_board(record, self._rules)
            if target is None:
                return False
            if not _same_position(self._board, target, record):
                if self._board.move_stack:
                    LOGGER.info(
                        "the referee's position differs from ours (%s): starting from %s with "
                        "no history",
                        self._board.fen(),
                        target.fen(),
                    )
                self._replace(target)
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
        self.push(move)
        return True

    def follow_respond(self, respond: RespondLine) -> bool:
        """The common ``respond``: our position and counters, a legal ``sm`` (played), clocks.

        False, and nothing changed, for anything else: :meth:`follow` then reads the
        record in full and says what is wrong.
        """
        self._play_due()
        board = self._board
        if (
            respond.halfmove != board.halfmove_clock
            or respond.fullmove != board.fullmove_number
            or respond.position != self.position_fields()
        ):
            return False
        if respond.san is not None:
            try:
                move = board.parse_san(respond.san)
            except ValueError:
                return False
            if not move:
                return False
            self.push(move)
        self._clocks.reported = respond.clocks
        return True

    def request(self, at: float, *, draw_offered: bool, safety_margin: float) -> ThinkRequest:
        """The player's request to move in the current position (one with a legal move).

        ``at``: when the ``respond`` asking for it arrived; its deadline is the flag,
        less ``safety_margin`` (``None`` when no clock runs).
        """
        board = self.board
        budget = self._clocks.budget(board, safety_margin)
        mine = budget.remaining[side_index(board.turn)]
        return ThinkRequest(
            board=board,
            budget=budget,
            draw_offered=draw_offered,
            tags=dict(self.tags),
            game=self.game,
            deadline=at + mine if math.isfinite(mine) else None,
        )

    def reply(self, request: ThinkRequest, decision: Decision, *, claim_draws: bool) -> str:
        """The ``reply`` line for the player's ``decision`` on ``request``; its move is
        played once the line has gone (:meth:`push_later`).

        Raises :class:`~serialref.errors.EngineError` for a decision that cannot be sent.
        """
        line, move = reply_to(
            self.board,
            decision,
            draw_offered=request.draw_offered,
            claim_draws=claim_draws,
            position=self.position_fields(),
        )
        if move is not None:
            self.push_later(move)
        return line

    def _replace(self, board: chess.Board) -> None:
        self._due = None
        self._board = board
        self._text = FenText(board)
        self._fields = None

    def _continued_by(self, record: EpdRecord) -> bool:
        """The record names our position exactly as the referee writes it."""
        if record.position != self.position_fields():
            return False
        try:
            if "hmvc" in record and record.integer("hmvc") != self._board.halfmove_clock:
                return False
            return "fmvn" not in record or record.integer("fmvn") == self._board.fullmove_number
        except ProtocolError:
            return False


def _record_board(record: EpdRecord, rules: Rules, *, quiet: bool = False) -> chess.Board | None:
    """The record's position as a board (hmvc/fmvn applied), or None if it is not usable.

    ``quiet``: a reset's position that standard chess cannot read may be a variant's
    that only the next ``inform`` names: no warning for that.
    """
    try:
        board = record.board(rules.board)
    except (ProtocolError, ValueError) as exc:
        if not quiet:
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
