"""Where games start: --fen and --openings books, and each opening played with both colours."""

from __future__ import annotations

from pathlib import Path

import chess
import chess.pgn
import pytest

from serialref.errors import ConfigError
from serialref.referee.openings import (
    BookOrder,
    MersenneTwister64,
    OpeningOrder,
    load_openings,
    opening_from_fen,
)
from serialref.referee.settings import MatchSettings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "epd"


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


# --- a book dealt out as fastchess deals it ---------------------------------------------

FASTCHESS = Path(__file__).resolve().parents[1] / "fixtures" / "fastchess"


def fastchess_openings(pgn: Path) -> list[tuple[str, tuple[str, ...], str]]:
    """Each game fastchess played: its start, the book moves it began with, White's name."""
    played = []
    with pgn.open(encoding="utf-8") as games:
        while (game := chess.pgn.read_game(games)) is not None:
            board = game.board()
            book = []
            for node in game.mainline():
                if node.comment != "book":
                    break
                book.append(board.san_and_push(node.move))
            played.append((game.board().fen(), tuple(book), game.headers["White"]))
    return played


@pytest.mark.parametrize(
    ("book", "played", "order"),
    [
        ("openings/book.pgn", "openings/sequential-start3-plies4.pgn",
         BookOrder(start=3, plies=4)),
        ("openings/book.pgn", "openings/random-srand42-start2-plies2.pgn",
         BookOrder(OpeningOrder.RANDOM, start=2, plies=2, seed=42)),
        ("openings/book.pgn", "openings/random-srand12345678901234567890.pgn",
         BookOrder(OpeningOrder.RANDOM, seed=12345678901234567890)),
        ("book.epd", "openings/epd-random-srand7-start5.pgn",
         BookOrder(OpeningOrder.RANDOM, start=5, seed=7)),
    ],
)
def test_a_book_is_played_in_the_order_fastchess_plays_it(
    book: str, played: str, order: BookOrder
) -> None:
    openings = order.arrange(load_openings(FASTCHESS / book))
    games = fastchess_openings(FASTCHESS / played)
    settings = MatchSettings(games=len(games), openings=openings)
    ours = [(settings.opening(game).fen, settings.opening(game).moves)
            for game in range(1, len(games) + 1)]  # fmt: skip
    assert ours == [(fen, moves) for fen, moves, _ in games]
    # Each opening with both colours: fastchess's -repeat, our game pairs.
    assert [white for *_, white in games] == ["A", "B"] * (len(games) // 2)
    assert [MatchSettings.white_port(game) for game in range(1, len(games) + 1)] == [
        "a", "b"] * (len(games) // 2)  # fmt: skip


def test_the_shuffle_draws_from_cs_mt19937_64() -> None:
    # C++ [rand.predef]: the 10000th number of a default-constructed std::mt19937_64.
    draw = MersenneTwister64(5489)
    for _ in range(9999):
        draw()
    assert draw() == 9981545732273789042


def test_the_same_seed_gives_the_same_order_and_another_seed_another() -> None:
    openings = tuple(opening_from_fen(fen) for fen in (
        "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", "4k3/8/8/8/8/8/3P4/4K3 w - - 0 1",
        "4k3/8/8/8/8/8/2P5/4K3 w - - 0 1", "4k3/8/8/8/8/8/1P6/4K3 w - - 0 1",
        "4k3/8/8/8/8/8/P7/4K3 w - - 0 1", "4k3/8/8/8/8/8/5P2/4K3 w - - 0 1"))  # fmt: skip
    shuffled = BookOrder(OpeningOrder.RANDOM, seed=3)
    assert shuffled.arrange(openings) == BookOrder(OpeningOrder.RANDOM, seed=3).arrange(openings)
    assert sorted(shuffled.arrange(openings), key=openings.index) == list(openings)
    assert {BookOrder(OpeningOrder.RANDOM, seed=seed).arrange(openings) for seed in range(5)} != {
        shuffled.arrange(openings)}  # fmt: skip
    assert BookOrder(start=8).arrange(openings) == openings[1:] + openings[:1]  # wraps round


def test_the_book_order_is_part_of_the_match_it_makes() -> None:
    assert BookOrder().describe() == ""  # a journal of a book played as written resumes as before
    assert (BookOrder(OpeningOrder.RANDOM, start=3, plies=8, seed=7).describe()
            == ", random order (seed 7), from opening 3, 8 plies")  # fmt: skip
