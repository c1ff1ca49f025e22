"""GameClocks: the referee's report of a game's clocks, and the budget it leaves the player."""

from __future__ import annotations

import math

import chess
import pytest

from serialref import records
from serialref.client.clocks import GameClocks, ReportedClocks, reported_clocks
from serialref.epd.parser import parse_record
from serialref.epd.writer import format_record


def after(*sans: str, fen: str = chess.STARTING_FEN) -> chess.Board:
    board = chess.Board(fen)
    for san in sans:
        board.push_san(san)
    return board


def test_ccms_counts_to_the_millisecond_and_cc_alone_at_its_worst() -> None:
    exact = parse_record(format_record(records.conclude(chess.Board(), (61_250, 59_875))))
    assert reported_clocks(exact) == ReportedClocks((61_250, 59_875))
    rounded = exact.without("ccms")
    assert reported_clocks(rounded) == ReportedClocks((61_000, 59_000), 1000)
    assert ReportedClocks.from_cc((61, 59)).most_consumed(0) == 62.0
    assert reported_clocks(parse_record(format_record(records.reset(chess.Board())))) is None


def test_the_budget_is_the_control_less_what_the_report_says_was_consumed() -> None:
    clocks = GameClocks(chess.Board())
    clocks.read_control("300+2")
    clocks.reported = ReportedClocks((10_250, 20_875))
    budget = clocks.budget(after("e4", "e5"), safety_margin=0.5)
    # Each side made one move (+2 s); the player's own time counts with the margin.
    assert budget.remaining == (300 - 10.75 + 2, 300 - 20.875 + 2)
    assert budget.turn == chess.WHITE


def test_the_moves_made_count_from_where_the_game_started() -> None:
    start = chess.Board("4k3/8/8/8/8/8/4P3/4K3 b - - 0 30")
    clocks = GameClocks(start)
    clocks.read_control("40/60")
    start.push_san("Kd7")
    budget = clocks.budget(start, safety_margin=0.0)
    assert budget.moves_to_go == 40  # White has made no move in this game yet
    assert budget.remaining == (60.0, 60.0)


def test_a_time_control_that_cannot_be_read_leaves_the_game_untimed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clocks = GameClocks(chess.Board())
    clocks.read_control("300+2")
    clocks.read_control("fast please")
    assert clocks.control is None
    assert math.isinf(clocks.budget(chess.Board(), safety_margin=0.1).remaining[0])
    assert "ignored the TimeControl tag" in caplog.text
