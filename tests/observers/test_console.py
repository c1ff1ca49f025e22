"""The console observer: live board with coordinates redrawn in place; plain lines elsewhere."""

from __future__ import annotations

import io
import math

import chess
from matchevents import untimed_game

from serialref.happenings import GameEnded, GameStarted, MatchEnded, MovePlayed, PlayerSignedOn
from serialref.observers.console import ConsoleObserver, board_with_coordinates
from serialref.observers.progress import ProgressObserver

TAGS = {"White": "Alpha", "Black": "Beta", "TimeControl": "60+1"}
FINAL = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"


def move(ply: int, san: str, fen: str, remaining: tuple[float, float] = (61.0, 59.5)) -> MovePlayed:
    return MovePlayed(game=1, ply=ply, san=san, uci="", elapsed=1.0, remaining=remaining,
                      consumed=(1.0, 12.5), moves_made=(1, 0), fen=fen)  # fmt: skip


def play_one(*observers: ConsoleObserver | ProgressObserver, untimed: bool = False) -> None:
    board = chess.Board()
    remaining = (math.inf, math.inf) if untimed else (61.0, 59.5)
    events = [PlayerSignedOn("a", "Alpha"), GameStarted(1, "a", "b", chess.STARTING_FEN, TAGS)]
    for ply, san in enumerate(["f3", "e5", "g4", "Qh4#"], start=1):
        board.push_san(san)
        events.append(move(ply, san, board.fen(), remaining))
    events += [GameEnded(1, "0-1", "normal", "Black mates", board.fen(), (2.0, 2.0)),
               MatchEnded(complete=True, score=(0.0, 1.0))]  # fmt: skip
    for event in events:
        for observer in observers:
            observer.handle(event)
    for observer in observers:
        observer.close()


def test_the_board_has_its_coordinates() -> None:
    lines = board_with_coordinates(chess.Board(FINAL))
    assert lines == [
        "8 r n b . k b n r",
        "7 p p p p . p p p",
        "6 . . . . . . . .",
        "5 . . . . p . . .",
        "4 . . . . . . P q",
        "3 . . . . . P . .",
        "2 P P P P P . . P",
        "1 R N B Q K B N R",
        "  a b c d e f g h",
    ]


def test_on_a_terminal_the_board_is_redrawn_in_place_above_the_progress() -> None:
    out = io.StringIO()
    now = [0.0]

    def clock() -> float:
        now[0] += 1.0  # every move is worth a redraw
        return now[0]

    play_one(ConsoleObserver(out, live=True, clock=clock), ProgressObserver(out))
    text = out.getvalue()
    assert text.count("\x1b[10F") == 4  # four redraws over the first drawing
    assert "ply   4  2...Qh4#" in text
    assert "Alpha 0:01:01  Beta 0:00:59" in text
    assert "  a b c d e f g h\x1b[K\n" in text
    assert text.startswith("port a: Alpha signed on\nStarted game 1 of 0 (Alpha vs Beta)\n8 ")
    # The final position stays; the game's result and the score come after it, not over it.
    assert text.endswith(
        "\x1b[K\nFinished game 1 (Alpha vs Beta): 0-1 {Black mates}\n"
        "Score of Alpha vs Beta: 0 - 1 - 0  [0.000] 1\n"
        "Elo difference: -inf +/- nan, LOS: 15.9 %, DrawRatio: 0.0 %\nFinished match\n"
    )


def test_into_a_file_only_final_positions() -> None:
    out = io.StringIO()
    play_one(ConsoleObserver(out, live=False))
    lines = out.getvalue().splitlines()
    assert "\x1b" not in out.getvalue()
    assert lines[0] == "port a: Alpha signed on"
    assert lines[1:10] == board_with_coordinates(chess.Board(FINAL))
    assert lines[10].startswith("ply   4  2...Qh4#")
    assert len(lines) == 11


def test_a_game_without_clocks_shows_the_time_used() -> None:
    out = io.StringIO()
    play_one(ConsoleObserver(out, live=True, clock=lambda: 0.0), untimed=True)
    assert "Alpha 0:00:01 used  Beta 0:00:12 used" in out.getvalue()


def test_an_untimed_game_as_the_referee_publishes_it() -> None:
    # ``--tc -``: the clocks are infinite; the board shows the time each side used.
    live, into_file = io.StringIO(), io.StringIO()
    observers = [ConsoleObserver(live, live=True, clock=lambda: 1.0),
                 ConsoleObserver(into_file, live=False)]  # fmt: skip
    for event in untimed_game():
        for observer in observers:
            observer.handle(event)
    for observer in observers:
        observer.close()
    final = "ply   4  2...Qh4#     Alpha 0:00:03 used  Beta 0:00:03 used"
    assert into_file.getvalue().splitlines() == [
        "port a: Alpha signed on",
        "port b: Beta signed on",
        *board_with_coordinates(chess.Board(FINAL)),
        final,
    ]
    assert "ply   1  1.f3       Alpha 0:00:01 used  Beta 0:00:00 used\x1b[K\n" in live.getvalue()
    assert live.getvalue().endswith(f"{final}\x1b[K\n")
