"""The console observer: live board redrawn in place on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io

import chess

from serialref.events import GameEnded, GameStarted, MatchEnded, MovePlayed
from serialref.observers.console import ConsoleObserver

TAGS = {"White": "Alpha", "Black": "Beta", "TimeControl": "60+1"}


def move(ply: int, san: str, fen: str) -> MovePlayed:
    return MovePlayed(game=1, ply=ply, san=san, uci="", elapsed=1.0, remaining=(61.0, 59.5),
                      consumed=(1.0, 0.5), moves_made=(1, 0), fen=fen)  # fmt: skip


def play_one(observer: ConsoleObserver) -> None:
    board = chess.Board()
    observer.handle(GameStarted(1, "a", "b", chess.STARTING_FEN, TAGS))
    for ply, san in enumerate(["f3", "e5", "g4", "Qh4#"], start=1):
        board.push_san(san)
        observer.handle(move(ply, san, board.fen()))
    observer.handle(GameEnded(1, "0-1", "normal", "Black mates", board.fen(), (2.0, 2.0)))
    observer.handle(MatchEnded(complete=True, score=(0.0, 1.0)))
    observer.close()


def test_on_a_terminal_the_board_is_redrawn_in_place() -> None:
    out = io.StringIO()
    now = [0.0]

    def clock() -> float:
        now[0] += 1.0  # every move is worth a redraw
        return now[0]

    play_one(ConsoleObserver(out, live=True, clock=clock))
    text = out.getvalue()
    assert text.count("\x1b[9F") == 4  # four redraws over the first drawing
    assert "ply   4  2...Qh4#" in text
    assert "Alpha 0:01:01  Beta 0:00:59" in text
    assert text.endswith("game 1: 0-1 (Black mates)\nmatch complete; score 0 - 1 (A - B)\n")


def test_into_a_file_only_starts_final_positions_and_results() -> None:
    out = io.StringIO()
    play_one(ConsoleObserver(out, live=False))
    lines = out.getvalue().splitlines()
    assert "\x1b" not in out.getvalue()
    assert lines[0] == "game 1: Alpha (White) - Beta (Black), 60+1"
    assert lines[1:9] == str(chess.Board(
        "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
    )).splitlines()  # fmt: skip
    assert lines[9].startswith("ply   4  2...Qh4#")
    assert lines[10:] == ["game 1: 0-1 (Black mates)", "match complete; score 0 - 1 (A - B)"]
