"""serialref.rules and the variant plumbing: names, boards, endings, the console, the config."""

from __future__ import annotations

from pathlib import Path

import chess
import chess.variant
import pytest

from serialref import records
from serialref.appliance.config import load_config
from serialref.errors import ConfigError
from serialref.observers.console import board_with_coordinates
from serialref.referee.rulings import GameBoard, Termination, positions_match
from serialref.result import Result
from serialref.rules import STANDARD, find_rules, rules_of_tags, variant_names


@pytest.mark.parametrize(
    ("spelling", "name"),
    [
        ("Crazyhouse", "crazyhouse"),
        ("KOTH", "kingofthehill"),
        ("King of the Hill", "kingofthehill"),
        ("Three-check", "3check"),
        ("fischerandom", "chess960"),
        ("Racing Kings", "racingkings"),
        ("normal", "standard"),
    ],
)
def test_every_usual_spelling_finds_the_rules(spelling: str, name: str) -> None:
    assert find_rules(spelling).name == name


def test_an_unknown_variant_is_one_clear_error() -> None:
    with pytest.raises(ConfigError, match=r"variant: unknown variant 'shatranj'; known"):
        find_rules("shatranj")


def test_names_of_each_variant_for_pgn_uci_and_xboard() -> None:
    crazyhouse = find_rules("crazyhouse")
    assert (crazyhouse.pgn_name, crazyhouse.uci_variant, crazyhouse.xboard_variant) == (
        "Crazyhouse", "crazyhouse", "crazyhouse")  # fmt: skip
    chess960 = find_rules("chess960")
    assert (chess960.uci_variant, chess960.xboard_variant) == ("chess960", "fischerandom")
    assert chess960.board().chess960
    assert STANDARD.standard and not crazyhouse.standard
    assert rules_of_tags({"Variant": "Crazyhouse"}) is crazyhouse
    assert rules_of_tags({}) is STANDARD
    assert variant_names()[0] == "standard"


def _played(board: chess.Board, *sans: str) -> GameBoard:
    game = GameBoard(board)
    for san in sans:
        game.push(game.board.parse_san(san))
    return game


def test_three_checks_win_and_the_fen_counts_them() -> None:
    game = _played(chess.variant.ThreeCheckBoard(), "e4", "e5", "Bc4", "Nc6", "Bxf7+", "Kxf7",
                   "Qh5+", "Ke7", "Qe5+")  # fmt: skip
    assert " 0+3 " in game.fen
    verdict = game.automatic_verdict()
    assert verdict is not None
    assert (verdict.result, verdict.reason) == (Result.WHITE_WINS, "White gives the third check")


def test_king_of_the_hill_and_antichess_end_by_their_own_rules() -> None:
    hill = GameBoard(chess.variant.KingOfTheHillBoard("8/8/8/3K4/8/8/8/k7 b - - 0 1"))
    verdict = hill.automatic_verdict()
    assert verdict is not None and verdict.result is Result.WHITE_WINS
    # Antichess: Black to move and stalemated wins.
    stalemated = GameBoard(chess.variant.AntichessBoard("8/8/8/3pQ3/3P4/8/4K3/8 b - - 0 40"))
    verdict = stalemated.automatic_verdict()
    assert verdict is not None and verdict.result is Result.BLACK_WINS


def test_a_crazyhouse_flag_fall_counts_the_pieces_in_hand() -> None:
    game = GameBoard(chess.variant.CrazyhouseBoard("k7/8/8/8/8/8/8/K7[p] w - - 0 1"))
    verdict = game.flag_verdict(chess.WHITE)
    assert (verdict.result, verdict.termination) == (Result.BLACK_WINS, Termination.TIME_FORFEIT)
    standard = GameBoard(chess.Board("k7/8/8/8/8/8/8/K7 w - - 0 1"))
    assert standard.flag_verdict(chess.WHITE).result is Result.DRAW


def test_a_drop_keeps_the_hand_in_the_fen_and_the_records() -> None:
    game = _played(chess.variant.CrazyhouseBoard(), "e4", "d5", "exd5", "Qxd5", "P@e6")
    assert game.fen == game.board.fen(en_passant="fen")
    record = records.respond(game.previous_fen, (0, 0), "P@e6")
    assert record.placement.endswith("[Pp]")  # the position before the drop
    assert positions_match(records.reset(game.fen), game.board, game.fen)


def test_a_reply_without_the_check_field_is_not_the_position() -> None:
    game = _played(chess.variant.ThreeCheckBoard(), "e4")
    assert positions_match(records.reset(game.fen), game.board, game.fen)
    standard_fields = records.reset(chess.Board(game.fen.replace(" 3+3", "")))
    assert not positions_match(standard_fields, game.board, game.fen)


def test_the_console_shows_the_hand_and_the_checks() -> None:
    board = chess.variant.CrazyhouseBoard("k7/8/8/8/8/8/8/K7[Nqp] w - - 0 1")
    assert board_with_coordinates(board)[-1] == "in hand: White N Black qp"
    checks = chess.variant.ThreeCheckBoard("k7/8/8/8/8/8/8/K7 w - - 2+1 0 1")
    assert board_with_coordinates(checks)[-1] == "checks to give: White 2 Black 1"


def test_variant_reads_the_start_position_by_its_rules(tmp_path: Path) -> None:
    zh = "rnbqkb1r/ppp2ppp/5p2/3p4/8/8/PPPP1PPP/RNBQKBNR/Np w KQkq - 0 4"
    config = load_config(None, {"variant": "crazyhouse", "fen": zh})
    opening = config.start_positions.openings[0]
    assert opening.fen.startswith("rnbqkb1r/ppp2ppp/5p2/3p4/8/8/PPPP1PPP/RNBQKBNR[Np] ")
    assert type(opening.board()) is chess.variant.CrazyhouseBoard
    with pytest.raises(ConfigError, match="--fen"):
        load_config(None, {"fen": zh})  # standard chess has no hand
    usual = load_config(None, {"variant": "3check"}).start_positions.openings[0]
    assert usual.board().fen() == chess.variant.ThreeCheckBoard.starting_fen


def test_chess960_positions_by_number() -> None:
    config = load_config(None, {"variant": "chess960", "openings": "0-2,518", "fen": ""})
    fens = [opening.fen for opening in config.start_positions.openings]
    assert fens[0] == chess.Board.from_chess960_pos(0).fen()
    assert fens[-1] == chess.STARTING_FEN
    assert len(fens) == 4
    with pytest.raises(ConfigError, match="'960' is no Chess960 start position"):
        load_config(None, {"variant": "chess960", "openings": "960"})
    one = load_config(None, {"variant": "chess960", "fen": "7"}).start_positions.openings[0]
    assert one.board().chess960


def test_epd_check_by_a_variants_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from serialref import cli

    path = tmp_path / "zh.epd"
    path.write_text("rnbqkb1r/ppp2ppp/5p2/3p4/8/8/PPPP1PPP/RNBQKBNR/Np w KQkq - 0 4 bm N@e5;\n")
    assert cli.main(["epd", "check", "--variant", "crazyhouse", str(path)]) == cli.EXIT_OK
    assert capsys.readouterr().out == (
        "rnbqkb1r/ppp2ppp/5p2/3p4/8/8/PPPP1PPP/RNBQKBNR[Np] w KQkq - bm N@e5; fmvn 4; hmvc 0;\n"
    )
    assert cli.main(["epd", "check", str(path)]) != cli.EXIT_OK  # no hand in standard chess
    assert "python-chess rejects the position" in capsys.readouterr().err
