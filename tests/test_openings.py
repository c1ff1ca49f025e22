"""Where games start: --fen and --openings books, and each opening played with both colours."""

from __future__ import annotations

from pathlib import Path

import chess
import pytest

from serialref.errors import ConfigError
from serialref.referee.openings import load_openings, opening_from_fen

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "epd"


def test_a_fen_opening_is_checked_for_legality() -> None:
    assert opening_from_fen("4k3/8/8/8/8/8/8/4K2R w K - 0 1").board().is_valid()
    with pytest.raises(ConfigError, match="not a FEN"):
        opening_from_fen("not a fen")
    with pytest.raises(ConfigError, match="no black king"):
        opening_from_fen("8/8/8/8/8/8/8/4K3 w - - 0 1")


def test_an_epd_book_from_a_published_suite(tmp_path: Path) -> None:
    suite = (FIXTURES / "silent-but-deadly.epd").read_bytes().splitlines()
    # Line 28 has a check mark cut off its move ('bm Nf6 +'): the book names it, not guesses.
    with pytest.raises(ConfigError, match=r"silent-but-deadly\.epd:28: .*check mark"):
        load_openings(FIXTURES / "silent-but-deadly.epd")
    book = tmp_path / "book.epd"
    book.write_bytes(b"\n".join(suite[:27]) + b"\n")
    openings = load_openings(book)
    assert len(openings) == 27
    board = openings[0].board()
    assert board.fen() == "1qr3k1/p2nbppp/bp2p3/3p4/3P4/1P2PNP1/P2Q1PBP/1N2R1K1 b - - 0 1"


def test_an_epd_book_with_a_bad_line_names_it(tmp_path: Path) -> None:
    book = tmp_path / "book.epd"
    book.write_text(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\n"
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -1 12\n"
    )
    with pytest.raises(ConfigError, match=r"book\.epd:2:"):
        load_openings(book)


def test_a_pgn_book_keeps_the_moves(tmp_path: Path) -> None:
    book = tmp_path / "book.pgn"
    book.write_text(
        '[Event "a"]\n\n1. e4 c5 2. Nf3 *\n\n'
        '[Event "b"]\n[SetUp "1"]\n[FEN "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"]\n\n1. e4 *\n'
    )
    first, second = load_openings(book)
    assert first.moves == ("e4", "c5", "Nf3")
    assert (
        first.board().fen()
        == chess.Board("rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2").fen()
    )
    assert (second.fen, second.moves) == ("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", ("e4",))


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("book.txt", "", "must end in .epd or .pgn"),
        ("book.epd", "\n\n", "holds no openings"),
        ("book.pgn", "1. e4 e5 2. Qxf7 *\n", "illegal san"),
        ("book.epd", "caf\xe9\n", "not ASCII"),
    ],
)
def test_bad_books_are_one_clear_error(tmp_path: Path, name: str, text: str, reason: str) -> None:
    book = tmp_path / name
    book.write_text(text, encoding="latin-1")
    with pytest.raises(ConfigError, match=reason):
        load_openings(book)
    with pytest.raises(ConfigError, match="cannot read"):
        load_openings(tmp_path / "missing.pgn")
