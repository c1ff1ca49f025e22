"""FollowedGame: the client's board with its history, matched against the referee's records."""

from __future__ import annotations

import logging

import chess
import chess.variant
import pytest

from serialref import records
from serialref.client.following import FollowedGame
from serialref.client.players import Decision
from serialref.client.respond import read_respond
from serialref.epd.parser import parse_record
from serialref.epd.writer import format_record
from serialref.rules import find_rules


def played(*sans: str) -> FollowedGame:
    game = FollowedGame()
    for san in sans:
        game.push(game.board.parse_san(san))
    return game


def respond_text(before: chess.Board, san: str | None) -> str:
    return format_record(records.respond(before, (1_000, 2_000), san))


def test_the_position_fields_are_the_referees_and_follow_each_move() -> None:
    game = played("e4")
    # PROTOCOL.md 2: the en passant square after every double push.
    assert game.position_fields() == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3"
    game.push(chess.Move.from_uci("e7e5"))
    assert game.position_fields() == game.board.epd(en_passant="fen")


@pytest.mark.parametrize("look", ["board", "position_fields", "follow_respond", "push"])
def test_a_move_pushed_later_is_played_before_any_look_at_the_game(look: str) -> None:
    game = played("e4")
    before = game.board.copy()
    game.push_later(chess.Move.from_uci("e7e5"))
    after = before.copy()
    after.push_san("e5")
    if look == "board":
        assert game.board.move_stack == after.move_stack
    elif look == "position_fields":
        assert game.position_fields() == after.epd(en_passant="fen")
    elif look == "follow_respond":
        respond = read_respond(respond_text(after, "Nf3"))
        assert respond is not None
        assert game.follow_respond(respond)
        assert [move.uci() for move in game.board.move_stack] == ["e2e4", "e7e5", "g1f3"]
    else:
        game.push(chess.Move.from_uci("g1f3"))
        assert [move.uci() for move in game.board.move_stack] == ["e2e4", "e7e5", "g1f3"]


def test_a_new_game_forgets_a_move_pushed_later() -> None:
    game = played("e4")
    game.push_later(chess.Move.from_uci("e7e5"))
    assert game.start(parse_record(format_record(records.reset(chess.Board()))))
    assert game.board.move_stack == []
    assert game.position_fields() == chess.Board().epd(en_passant="fen")


def test_a_respond_continuing_the_game_plays_its_move_and_keeps_the_history() -> None:
    game = played("e4")
    respond = read_respond(respond_text(game.board, "e5"))
    assert respond is not None
    assert game.follow_respond(respond)
    assert [move.uci() for move in game.board.move_stack] == ["e2e4", "e7e5"]
    assert game.position_fields() == game.board.epd(en_passant="fen")


@pytest.mark.parametrize(
    ("before", "san"),
    [
        (chess.Board("4k3/8/8/8/8/8/8/4K3 b - - 0 1"), "Kd7"),  # another position
        (chess.Board(), None),  # the start, not our game
    ],
)
def test_a_respond_naming_another_position_changes_nothing(
    before: chess.Board, san: str | None
) -> None:
    game = played("e4")
    respond = read_respond(respond_text(before, san))
    assert respond is not None
    assert not game.follow_respond(respond)
    assert [move.uci() for move in game.board.move_stack] == ["e2e4"]


def test_a_respond_whose_move_cannot_be_played_changes_nothing() -> None:
    game = played("e4")
    text = respond_text(game.board, "e5").replace("sm e5;", "sm e4;")
    respond = read_respond(text)
    assert respond is not None
    assert not game.follow_respond(respond)
    assert not game.follow(parse_record(text))
    assert len(game.board.move_stack) == 1


def test_a_record_of_another_position_starts_again_without_history(
    caplog: pytest.LogCaptureFixture,
) -> None:
    game = played("e4", "e5")
    elsewhere = chess.Board("4k3/8/8/8/8/8/8/4K3 w - - 0 1")
    with caplog.at_level(logging.INFO, logger="serialref.client.following"):
        assert game.follow(parse_record(respond_text(elsewhere, "Kd2")))
    assert "differs from ours" in caplog.text
    assert game.board.move_stack == [chess.Move.from_uci("e1d2")]
    assert game.board.root().board_fen() == elsewhere.board_fen()


def test_an_en_passant_square_allowing_no_capture_counts_as_the_same_position() -> None:
    game = played("e4")
    text = respond_text(game.board, "e5").replace(" KQkq e3 ", " KQkq - ")
    assert game.follow(parse_record(text))
    assert [move.uci() for move in game.board.move_stack] == ["e2e4", "e7e5"]


def test_an_impossible_position_is_refused_and_the_board_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    game = played("e4")
    kingless = format_record(records.reset("8/8/8/8/8/8/8/8 w - - 0 1"))
    assert not game.start(parse_record(kingless))
    assert "impossible position" in caplog.text
    assert len(game.board.move_stack) == 1


def test_the_client_reads_the_reset_again_by_the_rules_inform_names() -> None:
    game = FollowedGame()
    zh = chess.variant.CrazyhouseBoard(
        "rnbqkb1r/ppp2ppp/5p2/3p4/8/8/PPPP1PPP/RNBQKBNR[Np] w KQkq - 0 4"
    )
    assert not game.start(parse_record(format_record(records.reset(zh))))  # not standard chess
    assert game.play_by(find_rules("crazyhouse"))
    assert type(game.board) is chess.variant.CrazyhouseBoard
    assert game.board.fen() == zh.fen()
    assert not game.play_by(find_rules("crazyhouse"))  # already so
    atomic = chess.variant.AtomicBoard()
    assert game.start(parse_record(format_record(records.reset(atomic))))  # looks standard
    assert type(game.board) is chess.Board
    assert game.play_by(find_rules("atomic"))
    assert type(game.board) is chess.variant.AtomicBoard


def test_a_reset_forgets_the_last_games_tags_and_clocks() -> None:
    game = FollowedGame()
    game.start(parse_record(format_record(records.reset(chess.Board()))))
    first = game.game
    game.take(parse_record(format_record(records.inform(chess.Board(), [("Round", "1")]))))
    assert game.tags == {"Round": "1"}
    game.start(parse_record(format_record(records.reset(chess.Board()))))
    assert game.tags == {}
    assert game.game is not first


def test_the_request_names_the_game_its_tags_and_its_deadline() -> None:
    game = FollowedGame()
    game.start(parse_record(format_record(records.reset(chess.Board()))))
    tags = [("TimeControl", "60+1"), ("White", "Alpha")]
    game.take(parse_record(format_record(records.inform(chess.Board(), tags))))
    respond = read_respond(format_record(records.respond(chess.Board(), (12_000, 0), None)))
    assert respond is not None and game.follow_respond(respond)
    request = game.request(100.0, draw_offered=True, safety_margin=0.5)
    assert request.game is game.game and request.board is game.board
    assert request.tags == {"TimeControl": "60+1", "White": "Alpha"}
    assert request.draw_offered
    assert request.deadline == pytest.approx(100.0 + 60 - 12 - 0.5)
    untimed = FollowedGame()
    assert untimed.request(100.0, draw_offered=False, safety_margin=0.5).deadline is None


def test_a_reply_plays_its_move_once_the_line_has_gone() -> None:
    game = played("e4")
    request = game.request(0.0, draw_offered=False, safety_margin=0.0)
    line = game.reply(request, Decision(chess.Move.from_uci("e7e5")), claim_draws=True)
    assert line.startswith(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 fmvn 1; hmvc 0;"
    )
    assert line.endswith("refreq reply; sm e5;")
    assert game.board.move_stack[-1] == chess.Move.from_uci("e7e5")
