"""A reply judged before the game acts on it: ignored (and why), too late, or ruled on; and
its move taken."""

from __future__ import annotations

from dataclasses import dataclass

import chess
import pytest

from serialref import records
from serialref.clock import ChessClock
from serialref.epd.operations import Operation
from serialref.epd.parser import parse_record
from serialref.epd.writer import format_record
from serialref.referee.game.moveclock import MoveClock, Pause
from serialref.referee.game.turn import (
    FlagFell,
    Ignored,
    decided_by_words,
    judge_turn,
    play,
    reply_out_of_turn,
)
from serialref.referee.rulings import GameBoard, ReplyKind, Ruling, Termination, Verdict
from serialref.referee.session import PortSession
from serialref.timecontrol import TimeControl


@dataclass
class View:
    """A game as the judge reads it."""

    board: GameBoard
    offer_pending: bool = False


def seat_asked(*fens: str) -> PortSession:
    """A seat in a game that was sent a ``respond`` for each FEN, the last outstanding."""
    seat = PortSession("a", "Alpha")
    seat.note_sign_on(None)
    seat.note_reset(1, 0.0)
    seat.note_joined()
    for fen in fens:
        seat.note_respond(fen)
    return seat


def a_move_clock(*, left_at: float | None = 0.0, control: str = "60+0") -> MoveClock:
    """White's move, its respond to port a left at ``left_at`` (None: not yet)."""
    clock = MoveClock(ChessClock(TimeControl.parse(control)), 0.0, Pause())
    clock.asked("a", chess.WHITE, left_at)
    return clock


def reply(board: chess.Board, san: str) -> str:
    return format_record(records.reply(board, board.parse_san(san)))


def judged(
    game: GameBoard, text: str, seat: PortSession, clock: MoveClock | None = None, at: float = 1.0
) -> Ignored | FlagFell | Ruling:
    return judge_turn(View(game), seat, clock or a_move_clock(), parse_record(text), at)


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


def test_a_reply_before_its_respond_had_left_is_ignored() -> None:
    game = GameBoard(chess.Board())
    early = a_move_clock(left_at=None)
    ignored = judged(game, reply(chess.Board(), "e4"), seat_asked(game.fen), early)
    assert ignored == Ignored("reply before its respond had left (stale)")


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
    text = reply(after_e4, "e5")
    assert judged(game, text, seat) == Ignored("reply out of turn")
    assert reply_out_of_turn(seat, parse_record(text)) == Ignored("reply out of turn")


@pytest.mark.parametrize("move", ["e4", "Ke2"])  # a legal move, and an infraction
def test_a_reply_in_turn_after_the_flag_fell_loses_whatever_it_says(move: str) -> None:
    game = GameBoard(chess.Board())
    text = format_record(records.reply(chess.Board(), None, Operation.of("sm", move)))
    late = judged(game, text, seat_asked(game.fen), at=60.0)
    lost = Verdict.win(chess.BLACK, Termination.TIME_FORFEIT, "White lost on time")
    assert late == FlagFell(lost)


def test_a_move_taken_stops_its_clock_and_records_how_the_clocks_stand() -> None:
    game = GameBoard(chess.Board())
    clock = ChessClock(TimeControl.parse("60+1"))
    clock.start(chess.WHITE, 10.0)
    text = format_record(records.reply(chess.Board(), chess.Move.from_uci("e2e4"),
                                       Operation.of("ce", "31")))  # fmt: skip
    ruling = judged(game, text, seat_asked(game.fen))
    assert isinstance(ruling, Ruling)
    played = play(game, clock, ruling, parse_record(text), 12.5, game=4, opening_plies=0)
    assert (played.game, played.ply, played.san, played.uci) == (4, 1, "e4", "e2e4")
    assert played.elapsed == pytest.approx(2.5)
    assert played.remaining == pytest.approx((60 - 2.5 + 1, 60))
    assert (played.moves_made, played.analysis) == ((1, 0), {"ce": "31"})
    assert game.board.move_stack == [chess.Move.from_uci("e2e4")] and clock.running is None


def test_a_resignation_or_an_agreement_decides_the_game_whatever_its_move() -> None:
    resigned = Ruling(ReplyKind.RESIGN, "Black resigns", chess.Move.from_uci("e7e5"))
    assert decided_by_words(resigned, chess.BLACK) == Verdict.win(
        chess.WHITE, Termination.NORMAL, "Black resigns"
    )
    agreed = Ruling(ReplyKind.DRAW_AGREED, "draw agreed")
    assert decided_by_words(agreed, chess.WHITE) == Verdict.draw("draw agreed")
    assert decided_by_words(Ruling(ReplyKind.MOVE, move=chess.Move.null()), chess.WHITE) is None
    assert decided_by_words(Ruling(ReplyKind.DRAW_CLAIMED, "50 moves"), chess.WHITE) is None
