"""How a game ends, and what a player's reply means (PROTOCOL.md sections 4-5).

Pure rules on top of python-chess: no I/O, no clocks. :class:`GameBoard` keeps
the board with its history and an incremental table of position counts, so
checking repetitions costs the same at ply 400 as at ply 4 (python-chess's own
``is_repetition`` replays the move stack). :func:`judge_reply` turns a ``reply``
record into a :class:`Ruling` the match acts on; infractions are rulings, not
exceptions.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass

import chess

from serialref.epd.record import EpdRecord
from serialref.errors import RecordError
from serialref.fentext import FenText
from serialref.result import Result
from serialref.rules.fairy import FairyBoard

__all__ = [
    "GameBoard",
    "ReplyKind",
    "Ruling",
    "Termination",
    "Verdict",
    "judge_reply",
    "positions_match",
    "reply_analysis",
    "variant_verdict",
    "wrong_position",
]


class Termination(enum.StrEnum):
    """PGN ``Termination`` tag values (PGN standard 9.8.1)."""

    NORMAL = "normal"
    TIME_FORFEIT = "time forfeit"
    RULES_INFRACTION = "rules infraction"
    ABANDONED = "abandoned"
    EMERGENCY = "emergency"
    ADJUDICATION = "adjudication"


@dataclass(frozen=True, slots=True)
class Verdict:
    """The end of a game: PGN result, Termination tag and a reason for people."""

    result: Result
    termination: Termination
    reason: str

    @classmethod
    def win(cls, winner: chess.Color, termination: Termination, reason: str) -> Verdict:
        return cls(
            Result.WHITE_WINS if winner == chess.WHITE else Result.BLACK_WINS, termination, reason
        )

    @classmethod
    def draw(cls, reason: str, termination: Termination = Termination.NORMAL) -> Verdict:
        return cls(Result.DRAW, termination, reason)

    @classmethod
    def unfinished(cls, termination: Termination, reason: str) -> Verdict:
        return cls(Result.UNFINISHED, termination, reason)


def _colour(side: chess.Color) -> str:
    return "White" if side == chess.WHITE else "Black"


class GameBoard:
    """The board of one game with an O(1) repetition table.

    Moves must be played with :meth:`push`, which keeps the table and the FENs.
    """

    def __init__(self, board: chess.Board) -> None:
        self.board = board
        self._counts: Counter[Hashable] = Counter()
        replay = board.root() if board.move_stack else board.copy(stack=False)
        self._counts[replay._transposition_key()] += 1
        for move in board.move_stack:
            replay.push(move)
            self._counts[replay._transposition_key()] += 1
        self._text = FenText(board)
        # A variant board (pieces in hand, checks to give) may end by its own rules;
        # standard chess and Chess960 keep the fast path.
        self._variant = type(board) is not chess.Board
        if self._variant:
            self.automatic_verdict = self._variant_verdict  # type: ignore[method-assign]
        self._fen: str | None = self._text.fen()
        self.previous_fen = self.fen
        if board.move_stack:
            before = board.copy(stack=1)
            before.pop()
            self.previous_fen = before.fen(en_passant="fen")

    @property
    def turn(self) -> chess.Color:
        return self.board.turn

    @property
    def fen(self) -> str:
        """The position's FEN (en passant after every double push), written when first asked:
        the ``respond`` after a move carries the FEN before it, and leaves without this one."""
        if self._fen is None:
            self._fen = self._text.fen()
        return self._fen

    def occurrences(self) -> int:
        """How often the current position has occurred (spec 6.22 ``rc``)."""
        return self._counts[self.board._transposition_key()]

    def push(self, move: chess.Move) -> str:
        """Play ``move``; returns it in SAN (python-chess computes both in one push)."""
        self.previous_fen = self.fen
        san = self._text.san_and_push(move)
        self._counts[self.board._transposition_key()] += 1
        self._fen = None
        return san

    def _variant_verdict(self) -> Verdict | None:
        """A variant's own endings first (three checks, the hill...), then the common ones."""
        return variant_verdict(self.board) or GameBoard.automatic_verdict(self)

    def automatic_verdict(self) -> Verdict | None:
        """Endings the referee declares without a claim (PROTOCOL.md 5)."""
        board = self.board
        if not any(board.generate_legal_moves()):
            if board.is_check():
                return Verdict.win(
                    not board.turn, Termination.NORMAL, f"{_colour(not board.turn)} mates"
                )
            return Verdict.draw("stalemate")
        if board.is_insufficient_material():
            return Verdict.draw("dead position: neither side can mate")
        if self.occurrences() >= 5:
            return Verdict.draw("fivefold repetition")
        if board.halfmove_clock >= 150:
            return Verdict.draw("seventy-five-move rule")
        return None

    def claim_reason(self, move: chess.Move | None = None) -> str | None:
        """Why a draw claim holds now, or after ``move``; None when it does not."""
        if move is None:
            if isinstance(self.board, FairyBoard):  # repetition and move rules of its own
                return "by the variant's rules" if self.board.claimable_draw() else None
            if self.occurrences() >= 3:
                return "threefold repetition"
            if self.board.halfmove_clock >= 100:
                return "fifty-move rule"
            return None
        self.board.push(move)
        key = self.board._transposition_key()
        self._counts[key] += 1
        try:
            return self.claim_reason()
        finally:
            self._counts[key] -= 1
            self.board.pop()

    def flag_verdict(self, flagged: chess.Color) -> Verdict:
        """A flag fell: a loss, or a draw when the opponent cannot mate by any legal sequence."""
        if self.board.has_insufficient_material(not flagged):
            # python-chess knows each variant's "cannot win": none in crazyhouse,
            # king of the hill and racing kings (the flag decides), its own elsewhere.
            cannot = "cannot win by any legal sequence" if self._variant else "cannot mate"
            return Verdict.draw(
                f"{_colour(flagged)} lost on time but {_colour(not flagged)} {cannot}",
                Termination.TIME_FORFEIT,
            )
        return Verdict.win(
            not flagged, Termination.TIME_FORFEIT, f"{_colour(flagged)} lost on time"
        )


# Why a variant's own rule ended the game, by python-chess's variant name: the winner's deed.
_VARIANT_WINS = {
    "3check": "gives the third check",
    "kingofthehill": "brings the king to the centre",
    "atomic": "explodes the enemy king",
    "antichess": "has no piece left or cannot move",
    "racingkings": "brings the king to the eighth rank first",
    "horde": "wins by the horde rules",
}


def variant_verdict(board: chess.Board) -> Verdict | None:
    """The result when the variant's own rule ends the game here, else None.

    python-chess says who wins from the side to move's view (Antichess's stalemate
    is a win, for instance); a variant draw is Racing Kings' both kings home.
    """
    if board.is_variant_draw():
        return Verdict.draw(f"{board.uci_variant}: drawn by the variant's rules")
    if board.is_variant_win():
        winner = board.turn
    elif board.is_variant_loss():
        winner = not board.turn
    else:
        return None
    deed = _VARIANT_WINS.get(board.uci_variant or "", "")
    deed = deed or ("mates" if board.is_checkmate() else "wins by the variant's rules")
    return Verdict.win(winner, Termination.NORMAL, f"{_colour(winner)} {deed}")


class ReplyKind(enum.Enum):
    """What a reply amounts to."""

    MOVE = "move"
    RESIGN = "resign"
    DRAW_AGREED = "draw agreed"
    DRAW_CLAIMED = "draw claimed"
    INFRACTION = "rules infraction"


@dataclass(frozen=True, slots=True)
class Ruling:
    """The referee's decision on one reply."""

    kind: ReplyKind
    reason: str = ""
    move: chess.Move | None = None
    draw_offer: bool = False
    notes: tuple[str, ...] = ()


# Pairs the EPD spec (6.9-6.12, 6.25) says must not appear together.
_CONTRADICTIONS = (
    ("resign", "draw_accept"),
    ("resign", "draw_claim"),
    ("resign", "draw_reject"),
    ("resign", "draw_offer"),
    ("draw_accept", "draw_reject"),
    ("draw_accept", "draw_offer"),
    ("draw_claim", "draw_offer"),
)

_ANALYSIS = ("ce", "acd", "acn", "acs", "pv")


def positions_match(record: EpdRecord, board: chess.Board, fen: str | None = None) -> bool:
    """Whether a player's four position fields name ``board`` (whose FEN may be given).

    PROTOCOL.md 2: an en passant square that allows no legal capture counts
    as ``-``, because players built on python-chess omit it.
    """
    placement, turn, castling, en_passant, rest = (fen or board.fen(en_passant="fen")).split(" ", 4)
    if (record.placement, record.active, record.castling) != (placement, turn, castling):
        return False
    if (record.checks or "+" in rest) and record.checks != rest.partition(" ")[0]:
        return False  # a check counting variant's checks still to give
    if record.en_passant == en_passant:
        return True
    legal_ep = board.fen(en_passant="legal").split(" ")[3]
    if record.en_passant == legal_ep:
        return True
    if legal_ep != "-":
        return False
    # Some other square: harmless exactly when it allows no legal capture either.
    try:
        square = chess.parse_square(record.en_passant)
    except ValueError:
        return False
    probe = board.copy(stack=False)
    probe.ep_square = square
    return not probe.has_legal_en_passant()


def wrong_position(game: GameBoard, record: EpdRecord) -> Ruling:
    """The ruling on a reply in turn whose position is not the game's (PROTOCOL.md 4)."""
    expected = game.fen.rsplit(" ", 2)[0]
    return Ruling(
        ReplyKind.INFRACTION, f"wrong position {record.position!r}, expected {expected!r}"
    )


def judge_reply(game: GameBoard, record: EpdRecord, *, offer_pending: bool) -> Ruling:
    """Decide what a ``reply`` in turn, in the game's position, means (PROTOCOL.md 4 and 5).

    The caller has checked the position with :func:`positions_match` (a reply in
    another position may be stale rather than wrong: PROTOCOL.md 7).
    ``offer_pending`` says the opponent offered a draw with its last move.
    The game is not changed; the caller pushes the move of a MOVE ruling.
    """
    board, opcodes = game.board, record.opcodes
    for first, second in _CONTRADICTIONS:
        if first in opcodes and second in opcodes:
            return Ruling(ReplyKind.INFRACTION, f"contradictory opcodes {first} and {second}")
    if "resign" in opcodes:
        return Ruling(ReplyKind.RESIGN, f"{_colour(board.turn)} resigns")
    # An accepted offer, or a claim that holds on the current position, ends the game
    # before the move beside it is read: an illegal or missing move changes nothing.
    if "draw_accept" in opcodes and offer_pending:
        return Ruling(ReplyKind.DRAW_AGREED, "draw agreed")
    if "draw_claim" in opcodes and (reason := game.claim_reason()) is not None:
        return Ruling(ReplyKind.DRAW_CLAIMED, f"draw claimed: {reason}")

    notes: list[str] = []
    move: chess.Move | None = None
    if "sm" in opcodes:
        try:
            move = record.move("sm", board)
        except RecordError as exc:
            return Ruling(ReplyKind.INFRACTION, f"illegal or unreadable move: {exc.reason}")

    if "draw_accept" in opcodes:
        if move is None:
            return Ruling(
                ReplyKind.INFRACTION, "draw_accept without a draw offer and without a move"
            )
        notes.append("draw_accept ignored: no draw was offered")

    if "draw_claim" in opcodes:
        if move is None:
            return Ruling(ReplyKind.INFRACTION, "draw claim that does not hold, without a move")
        reason = game.claim_reason(move)
        if reason is not None:
            return Ruling(ReplyKind.DRAW_CLAIMED, f"draw claimed: {reason}", move=move)
        notes.append("draw claim does not hold: the move stands")

    if move is None:
        return Ruling(ReplyKind.INFRACTION, "reply without a move (sm)")
    if offer_pending:
        notes.append("the opponent's draw offer lapsed")
    return Ruling(
        ReplyKind.MOVE,
        move=move,
        draw_offer="draw_offer" in opcodes,
        notes=tuple(notes),
    )


def reply_analysis(record: EpdRecord) -> dict[str, str]:
    """What a reply says of its search (``ce``, ``acd``, ``acn``, ``acs``, ``pv``), for the
    record."""
    return {
        opcode: " ".join(record.operand_texts(opcode)) for opcode in _ANALYSIS if opcode in record
    }
