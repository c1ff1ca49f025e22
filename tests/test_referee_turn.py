"""A reply judged before the game acts on it: ignored (and why) or ruled on."""

from __future__ import annotations

import chess
import pytest

from serialref import records
from serialref.epd.parser import parse_record
from serialref.epd.writer import format_record
from serialref.referee.adjudication import GameBoard, ReplyKind, Ruling
from serialref.referee.game.turn import Ignored, judge_turn
from serialref.referee.session import PortSession


def seat_asked(*fens: str) -> PortSession:
    """A seat in a game that was sent a ``respond`` for each FEN, the last outstanding."""
    seat = PortSession("a", "Alpha")
    seat.note_sign_on(None)
    seat.note_reset(1, 0.0)
    seat.note_joined()
    for fen in fens:
        seat.note_respond(fen)
    return seat


def reply(board: chess.Board, san: str) -> str:
    return format_record(records.reply(board, board.parse_san(san)))


def judged(game: GameBoard, text: str, seat: PortSession, **flags: bool) -> Ignored | Ruling:
    settings = {"playing": True, "respond_left": True, "offer_pending": False, **flags}
    return judge_turn(game, parse_record(text), seat, **settings)


def test_a_reply_in_turn_in_the_games_position_is_ruled_on() -> None:
    game = GameBoard(chess.Board())
    ruling = judged(game, reply(chess.Board(), "e4"), seat_asked(game.fen))
    assert isinstance(ruling, Ruling)
    assert (ruling.kind, ruling.move) == (ReplyKind.MOVE, chess.Move.from_uci("e2e4"))


def test_a_reply_in_turn_in_another_position_is_an_infraction() -> None:
    game = GameBoard(chess.Board())
    after_e4 = chess.Board()
    after_e4.push_san("e4")
    ruling = judged(game, reply(after_e4, "e5"), seat_asked(game.fen))
    assert isinstance(ruling, Ruling) and ruling.kind is ReplyKind.INFRACTION
    assert ruling.reason.startswith("wrong position")


@pytest.mark.parametrize(
    ("flags", "reason"),
    [
        ({"respond_left": False}, "reply before its respond had left (stale)"),
        ({"playing": False}, "reply out of turn"),
    ],
)
def test_a_reply_that_cannot_answer_the_respond_is_ignored(
    flags: dict[str, bool], reason: str
) -> None:
    game = GameBoard(chess.Board())
    assert judged(game, reply(chess.Board(), "e4"), seat_asked(game.fen), **flags) == Ignored(
        reason
    )


def test_a_reply_to_an_earlier_respond_is_stale_even_in_turn() -> None:
    earlier = chess.Board()
    game = GameBoard(earlier.copy())
    game.push(chess.Move.from_uci("e2e4"))
    game.push(chess.Move.from_uci("e7e5"))
    seat = seat_asked(earlier.fen(), game.fen)
    assert judged(game, reply(earlier, "d4"), seat) == Ignored(
        "stale reply: it answers an earlier respond"
    )


def test_a_reply_from_a_seat_not_to_move_is_out_of_turn() -> None:
    game = GameBoard(chess.Board())
    seat = seat_asked(game.fen)
    seat.note_reply()
    after_e4 = chess.Board()
    after_e4.push_san("e4")
    assert judged(game, reply(after_e4, "e5"), seat) == Ignored("reply out of turn")
