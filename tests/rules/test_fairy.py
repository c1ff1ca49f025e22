"""The fairy variants' boards: Fairy-Stockfish's rules (pyffish) behind python-chess's interface."""

from __future__ import annotations

import sys

import chess
import processes
import pyffish
import pytest

from serialref.epd.parser import parse_record
from serialref.referee.rulings import GameBoard
from serialref.result import Result
from serialref.rules import find_rules
from serialref.rules.fairy import FairyMove

# The variant FEN convention's examples of the fairy variants (Fairy-Stockfish's
# documentation), with the move counters a board needs.
EXAMPLES = {
    "capablanca": "rnabqkbcnr/pppppppppp/10/10/10/10/PPPPPPPPPP/RNABQKBCNR w KQkq - 0 1",
    "seirawan": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[HEhe] w KQBCDFGkqbcdfg - 0 1",
    "makruk": "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - 128 0 1",
    "xiangqi": "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
    "shogi": "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL[-] w - - 0 1",
}


@pytest.mark.parametrize("variant", sorted(EXAMPLES))
def test_the_conventions_examples_are_valid_positions_of_their_variant(variant: str) -> None:
    fen = EXAMPLES[variant]
    assert pyffish.validate_fen(fen, variant) == pyffish.FEN_OK
    rules = find_rules(variant)
    record = parse_record(f"{fen.rsplit(' ', 2)[0]} hmvc 0; fmvn 1;")
    board = record.board(rules.board)
    assert board.is_valid()
    assert board.epd().split(" ")[1:] == fen.split(" ")[1:4]
    assert board.legal_moves


def test_a_position_the_variant_cannot_hold_is_refused_in_words() -> None:
    with pytest.raises(ValueError, match="capablanca: a rank is not as wide as the board"):
        find_rules("capablanca").board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")


def test_every_usual_name_finds_the_variant() -> None:
    assert find_rules("S-chess").name == "seirawan"
    assert find_rules("Chinese chess").name == "xiangqi"
    assert find_rules("Capablanca").pgn_name == "capablanca"
    assert find_rules("makruk").uci_variant == "makruk"
    assert find_rules("shogi").fairy and not find_rules("crazyhouse").fairy


def test_moves_are_the_variants_san_on_the_wire_and_its_uci_for_engines() -> None:
    board = find_rules("seirawan").board("r3k2r/8/8/8/8/8/8/R3K2R[EHeh] w KQkq - 0 1")
    gated = board.parse_san("O-O/He1")
    assert gated == FairyMove.of("e1g1h") and gated.uci() == "e1g1h"
    assert board.parse_san("O-O/Hh1").uci() == "h1e1h"  # the hawk where the rook stood
    assert board.san(board.parse_uci("a1b1e")) == "Rb1/E"
    shogi = find_rules("shogi").board("4k4/9/9/9/9/9/9/9/4K4[Pp] w - - 0 1")
    assert shogi.parse_san("P@e5") == FairyMove.of("P@e5")
    assert find_rules("capablanca").move("j2j4").uci() == "j2j4"
    with pytest.raises(chess.IllegalMoveError):
        board.parse_san("O-O/Ee8")
    with pytest.raises(chess.IllegalMoveError):
        shogi.parse_san("P@e9")  # a pawn may not be dropped where it cannot move


def test_push_pop_and_copy_keep_the_position_and_history() -> None:
    board = find_rules("capablanca").board()
    start = board.fen()
    for san in ("e4", "e5", "Cg3"):
        board.push_san(san)
    assert board.ply() == 3 and board.turn == chess.BLACK and board.fullmove_number == 2
    copy = board.copy(stack=1)
    assert copy.fen() == board.fen() and [m.uci() for m in copy.move_stack] == ["h1g3"]
    copy.pop()
    assert copy.fen() == copy.root().fen() != start
    assert board.pop() == FairyMove.of("h1g3")
    board.pop()
    board.pop()
    assert board.root().fen() == start


def test_makruk_counting_draws_without_a_claim() -> None:
    game = GameBoard(find_rules("makruk").board("8/8/8/4k3/8/8/3K4/4R3 w - 16 15 40"))
    assert game.automatic_verdict() is None
    game.push(game.board.parse_san("Kd3"))
    assert game.automatic_verdict() is None  # the 16th ply of the count
    game.push(game.board.parse_san("Kf6"))
    verdict = game.automatic_verdict()
    assert verdict is not None and verdict.result is Result.DRAW


def test_mate_wins_and_is_named() -> None:
    game = GameBoard(find_rules("xiangqi").board("4k4/9/9/9/9/9/9/9/4R4/3K5 w - - 0 1"))
    assert game.automatic_verdict() is None
    game.push(game.board.parse_san("Rd2"))  # the flying general: the rook covers d, the king e
    game = GameBoard(find_rules("xiangqi").board("3k5/9/9/9/9/9/9/9/R8/4K4 w - - 0 1"))
    game.push(game.board.parse_san("Rd2"))
    verdict = game.automatic_verdict()
    assert verdict is not None and verdict.result is Result.WHITE_WINS
    assert verdict.reason == "White mates"


def test_a_flag_falls_to_a_draw_only_where_pyffish_finds_no_win() -> None:
    game = GameBoard(find_rules("capablanca").board("4k5/10/10/10/10/10/10/R3K5 w - - 0 40"))
    assert game.flag_verdict(chess.BLACK).result is Result.WHITE_WINS  # a rook can mate
    drawn = game.flag_verdict(chess.WHITE)  # a bare king cannot win
    assert drawn.result is Result.DRAW
    assert drawn.reason == "White lost on time but Black cannot win by any legal sequence"


def test_the_move_rule_is_claimed_by_the_variants_rules() -> None:
    game = GameBoard(find_rules("capablanca").board("4k5/10/10/10/10/10/10/R3K5 w - - 98 80"))
    assert game.claim_reason() is None
    move = game.board.parse_san("Rb1")
    game.push(move)
    game.push(game.board.parse_san("Kd8"))
    assert game.claim_reason() == "by the variant's rules"


def test_the_gating_rights_fairy_stockfish_writes_after_a_king_move_are_read(
    capfd: pytest.CaptureFixture[str],
) -> None:
    fen = "rnb1Qbnr/8/5k2/R7/8/8/8/HNBEKBNR[e] b Kabcfgh - 2 3"  # as Fairy-Stockfish wrote it
    assert find_rules("seirawan").board(fen).fen() == fen
    assert capfd.readouterr().err == ""  # its own FEN check would have complained


@pytest.mark.parametrize("variant", sorted(EXAMPLES))
def test_each_start_position_is_the_one_fairy_stockfish_writes(variant: str) -> None:
    board_type = find_rules(variant).board_type
    placement, turn, rest = pyffish.start_fen(variant).split(" ", 2)
    missing = " - -" if variant == "shogi" else ""
    written = pyffish.get_fen(variant, f"{placement} {turn}{missing} {rest}", [])
    assert board_type.starting_fen == written


def test_standard_chess_does_not_load_fairy_stockfish() -> None:
    probe = "import sys, serialref.cli, serialref.rules; print('pyffish' in sys.modules)"
    result = processes.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
