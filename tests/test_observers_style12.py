"""The Style 12 feed: every line read back by an independent parser, and its TCP clients."""

from __future__ import annotations

import random
import socket
import time
from collections.abc import Iterator

import chess
import pytest
from matchevents import CRAZYHOUSE_MATE, FOOLS_MATE, played_match

from serialref.events import GameEnded, GameStarted, MatchStarted, MovePlayed
from serialref.observers.feed import MAX_BUFFERED
from serialref.observers.style12 import Style12Feed, Style12Observer, style12_line
from serialref.rules import find_rules
from serialref.wire.address import Address

style12 = pytest.importorskip("mekk.fics.datatypes.style12", reason="pip install mekk.fics")

# Castling both ways, en passant, a promotion with capture, and a double push at once.
SPECIAL = [
    "e4", "d5", "exd5", "c5", "dxc6", "Nf6", "cxb7", "e6", "bxa8=Q", "Bc5", "Nf3", "O-O",
    "Qxa7", "Qxd2+", "Nbxd2", "Bb4", "Qe2", "Nc6", "b3", "Nd4", "Bb2", "Nb5", "O-O-O",
]  # fmt: skip


def started(game: int = 1) -> GameStarted:
    tags = {"White": "Deep Thought", "Black": "Hi-Tech 2", "TimeControl": "900+5"}
    return GameStarted(game=game, white_port="a", black_port="b", fen=chess.STARTING_FEN, tags=tags)


def played(sans: list[str], game: int = 1) -> Iterator[tuple[MovePlayed, chess.Board]]:
    board = chess.Board()
    remaining = [900.0, 900.0]
    for ply, san in enumerate(sans, start=1):
        move = board.parse_san(san)
        side = 0 if board.turn == chess.WHITE else 1
        remaining[side] += 5 - (ply % 7 + 0.37)
        board.push(move)
        yield MovePlayed(
            game=game, ply=ply, san=san, uci=move.uci(), elapsed=ply % 7 + 0.37,
            remaining=(remaining[0], remaining[1]), consumed=(0.0, 0.0),
            moves_made=(ply // 2, (ply - 1) // 2), fen=board.fen(),
        ), board.copy()  # fmt: skip


def random_game(seed: int) -> list[str]:
    board, choices, sans = chess.Board(), random.Random(seed), []
    while not board.is_game_over() and len(sans) < 300:
        move = choices.choice(sorted(board.legal_moves, key=chess.Move.uci))
        sans.append(board.san(move))
        board.push(move)
    return sans


def check_line(line: str, board: chess.Board, move: MovePlayed) -> None:
    """mekk.fics reads back the board, side to move, castling, en passant file, clocks, move."""
    parsed = style12.Style12(line)
    placement, turn, castling, _, halfmoves, fullmove = parsed.fen.split()
    assert placement == board.board_fen()
    assert turn == ("w" if board.turn == chess.WHITE else "b")
    assert castling == (board.castling_xfen() or "-")
    assert halfmoves == str(board.halfmove_clock) and fullmove == str(board.fullmove_number)
    last = chess.Move.from_uci(move.uci)
    double_push = board.piece_type_at(last.to_square) == chess.PAWN and abs(
        chess.square_rank(last.to_square) - chess.square_rank(last.from_square)) == 2  # fmt: skip
    pushed_file = chess.square_name(last.to_square)[0] if double_push else None
    assert parsed.after_double_push == pushed_file
    assert (parsed.white_remaining_time, parsed.black_remaining_time) == (
        int(move.remaining[0]), int(move.remaining[1]))  # fmt: skip
    assert parsed.last_move_text == move.san
    assert parsed.last_move_time_spent == int(move.elapsed)
    assert (parsed.clock.base_min, parsed.clock.inc_sec) == (15, 5)
    assert str(parsed.white) == "Deep_Thought" and str(parsed.black) == "Hi_Tech_2"
    assert parsed.observer_role == style12.OBSERVER_WATCHING_GAME
    assert parsed.is_clock_ticking and not parsed.board_flipped
    assert str(parsed) == line  # every field, in order, and nothing else


@pytest.mark.parametrize(
    "sans",
    [SPECIAL, random_game(3), random_game(11)],
    ids=["castling, en passant, promotion", "random 3", "random 11"],
)
def test_mekk_fics_reads_every_line_of_a_whole_game(sans: list[str]) -> None:
    feed = Style12Feed()
    feed.update(MatchStarted(games=1, time_control="900+5", ports=("a", "b")))
    first = feed.update(started()).decode()
    assert style12.Style12(first.strip()).fen.split()[0] == chess.Board().board_fen()
    for move, board in played(sans):
        lines = feed.update(move).decode().splitlines()
        assert len(lines) == 1
        check_line(lines[0], board, move)


def test_the_verbose_moves_are_those_fics_writes() -> None:
    verbose = [style12.Style12(style12_line(board, game=1, names=("a", "b"), control=(0, 0),
                                            clocks=(0, 0), move=move, ticking=True))
               .last_move_coord_text for move, board in played(SPECIAL)]  # fmt: skip
    by_san = dict(zip(SPECIAL, verbose, strict=True))
    assert by_san["e4"] == "P/e2-e4"
    assert by_san["dxc6"] == "P/d5-c6"  # en passant
    assert by_san["bxa8=Q"] == "P/b7-a8=Q"
    assert by_san["O-O"] == "o-o"
    assert by_san["O-O-O"] == "o-o-o"
    assert by_san["Nbxd2"] == "N/b1-d2"


def test_the_end_of_a_game_stops_the_clock_and_says_why() -> None:
    feed = Style12Feed()
    feed.update(started())
    text = feed.update(GameEnded(game=1, result="1-0", termination="adjudication",
                                 reason="adjudicated\x1b[2J", fen=chess.STARTING_FEN,
                                 consumed=(0, 0))).decode()  # fmt: skip
    line, end = text.splitlines()
    assert not style12.Style12(line).is_clock_ticking
    assert end == "{Game 1 (Deep_Thought vs. Hi_Tech_2) adjudicated?[2J} 1-0"


def read_line(client: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = client.recv(4096)
        assert chunk, "the feed closed the connection"
        data += chunk
    return data.decode()


def wait_until(condition: object, what: str) -> None:
    """Another thread's state: polled, there is no event to await from here."""
    deadline = time.monotonic() + 5
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


def test_a_client_gets_the_position_at_once_then_a_line_per_move() -> None:
    with Style12Observer(Address("127.0.0.1", 0)) as feed:
        moves = list(played(["e4", "e5"]))
        feed.handle(started())
        feed.handle(moves[0][0])
        with socket.create_connection(feed.address, timeout=5) as client:
            now = style12.Style12(read_line(client).strip())
            assert now.last_move_text == "e4"
            feed.handle(moves[1][0])
            assert style12.Style12(read_line(client).strip()).last_move_text == "e5"


def test_a_client_that_never_reads_is_dropped_and_the_others_go_on() -> None:
    with Style12Observer(Address("127.0.0.1", 0)) as feed:
        feed.handle(started())
        with socket.socket() as stuck:
            stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            stuck.connect(feed.address)
            wait_until(lambda: feed.clients == 1, "the client")
            moves = [move for move, _ in played(random_game(5))]
            for sent in range(8 * MAX_BUFFERED // 150):  # each line is over 150 bytes
                feed.handle(moves[sent % len(moves)])
            wait_until(lambda: feed.clients == 0, "the stuck client to be dropped")
        with socket.create_connection(feed.address, timeout=5) as reader:
            assert style12.Style12(read_line(reader).strip()).game_no == 1


@pytest.mark.parametrize("time_control", ["-", "300+3"])
def test_a_match_as_the_referee_publishes_it(time_control: str) -> None:
    feed = Style12Feed()
    text = b"".join(feed.update(event) for event in played_match(time_control)).decode()
    lines = text.splitlines()
    twelves = [style12.Style12(line) for line in lines if line.startswith("<12>")]
    assert [line.last_move_text for line in twelves] == [None, *FOOLS_MATE, "Qh4#"]
    assert twelves[-1].fen.split()[0] == "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR"
    assert not twelves[-1].is_clock_ticking and twelves[-2].is_clock_ticking
    expected = 0 if time_control == "-" else 300 - 2 * 1.5 + 2 * 3  # two moves, two increments
    assert twelves[-1].white_remaining_time == expected
    assert lines[-1] == "{Game 1 (Alpha vs. Beta) Black mates} 0-1"


def test_a_variant_game_is_followed_on_its_own_board() -> None:
    feed = Style12Feed()
    events = played_match("60+1", games=[CRAZYHOUSE_MATE], rules=find_rules("crazyhouse"))
    text = b"".join(feed.update(event) for event in events).decode()
    lines = text.splitlines()
    twelves = [style12.Style12(line) for line in lines if line.startswith("<12>")]
    assert twelves[-1].fen.split()[0] == "rnbqkb1r/pp1ppppp/8/2p1N3/5Pn1/8/PPPPPp1P/RNBQKB1R"
    assert lines[-1] == "{Game 1 (Alpha vs. Beta) Black mates} 0-1"
