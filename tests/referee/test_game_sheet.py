"""A game's score sheet: what its facts make of each moment (tags, respond, start, end)."""

from __future__ import annotations

import chess
import pytest

from serialref.epd.parser import parse_record
from serialref.happenings import MovePlayed
from serialref.referee.game.sheet import GameSheet
from serialref.referee.rulings import ReplyKind, Ruling, Termination, Verdict
from serialref.referee.settings import MatchSettings
from serialref.result import Result
from serialref.timecontrol import TimeControl

WALL = 1_795_000_000.0  # 2026-11-18
SETTINGS = MatchSettings(time_control=TimeControl.parse("60+1"), event="Test", site="Lab")


def a_move(sheet: GameSheet, uci: str, *, offer: bool = False) -> MovePlayed:
    """The side to move plays ``uci`` one second into its move."""
    board = sheet.board.board
    sheet.chess_clock.start(board.turn, 10.0)
    ruling = Ruling(ReplyKind.MOVE, move=chess.Move.from_uci(uci), draw_offer=offer)
    return sheet.play(ruling, parse_record(board.epd()), 11.0)


def test_the_second_game_gives_white_to_port_b_and_begins_with_the_roster() -> None:
    sheet = GameSheet(2, SETTINGS)
    started = sheet.begin("Beta", "Alpha", WALL)
    assert (sheet.white_port, sheet.black_port, sheet.port_to_move()) == ("b", "a", "b")
    assert (started.game, started.white_port, started.wall) == (2, "b", WALL)
    assert started.tags["White"] == "Beta" and started.tags["Date"] == "2026.11.18"
    assert dict(sheet.inform_tags())["Round"] == "2"


def test_respond_names_the_last_move_and_the_offer_that_came_with_it() -> None:
    sheet = GameSheet(1, SETTINGS)
    played = a_move(sheet, "e2e4", offer=True)
    assert played.san == "e4" and sheet.offer_pending
    line = sheet.respond_line(played.san, 12.0)
    assert line.startswith(chess.Board().epd()) and "sm e4;" in line and "draw_offer;" in line
    again = sheet.respond_line(None, 12.0)  # asked again: the current position, no offer
    assert again.startswith(sheet.board.board.epd().split(" ")[0]) and "draw_offer" not in again


def test_the_end_records_the_result_and_the_clocks() -> None:
    sheet = GameSheet(1, SETTINGS)
    sheet.begin("Alpha", "Beta", WALL)
    a_move(sheet, "e2e4")
    ended = sheet.end(Verdict.draw("agreed"), WALL)
    assert (ended.result, ended.reason, ended.wall) == ("1/2-1/2", "agreed", WALL)
    assert ended.consumed == pytest.approx((1.0, 0.0))
    assert dict(sheet.inform_tags(Verdict.draw("agreed")))["Result"] == "1/2-1/2"


def test_an_abandoned_game_is_lost_by_the_player_who_left() -> None:
    sheet = GameSheet(1, SETTINGS)
    assert sheet.abandoned("a", "Alpha signed off") == Verdict.win(
        chess.BLACK, Termination.ABANDONED, "Alpha signed off"
    )


def test_a_move_the_journal_lacks_is_taken_back_in_the_position_a_restart_continues() -> None:
    sheet = GameSheet(1, SETTINGS)
    played = a_move(sheet, "e2e4")
    assert sheet.recorded_position(played) == chess.Board().fen(en_passant="fen")
    assert sheet.recorded_position(None) == sheet.board.fen


def test_starting_over_keeps_the_opening_and_forgets_the_moves_clocks_and_offer() -> None:
    sheet = GameSheet(1, SETTINGS)
    a_move(sheet, "e2e4", offer=True)
    board = sheet.start_over()
    assert board == chess.Board() and sheet.board.board == chess.Board()
    assert not sheet.offer_pending and sheet.chess_clock.consumed(chess.WHITE) == 0.0


def test_a_move_with_a_score_may_end_the_game_by_the_referees_adjudication() -> None:
    from serialref.referee.adjudicator import AdjudicationRules

    sheet = GameSheet(1, MatchSettings(adjudication=AdjudicationRules(max_moves=1)))
    a_move(sheet, "e2e4")
    assert sheet.ending() is None
    a_move(sheet, "e7e5")
    assert sheet.ending() == Verdict(
        Result.DRAW, Termination.ADJUDICATION, "Draw by adjudication: maximal game length"
    )
    sheet.start_over()  # the scores go with the moves
    assert sheet.adjudicator.scores == []
