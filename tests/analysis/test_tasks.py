"""serialref.analysis.tasks: the effort of a search, its limits, and what a mate search takes."""

from __future__ import annotations

import chess
import chess.engine
import pytest

from serialref.analysis.tasks import SOFT_MOVES, Effort, Mate
from serialref.epd.parser import parse_lenient
from serialref.errors import ConfigError

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"


def test_effort_takes_exactly_one_positive_limit() -> None:
    with pytest.raises(ConfigError, match="exactly one"):
        Effort()
    with pytest.raises(ConfigError, match="exactly one"):
        Effort(depth=3, nodes=10)
    with pytest.raises(ConfigError, match="nodes: must be positive"):
        Effort(nodes=-5)
    with pytest.raises(ConfigError, match="--soft needs --movetime"):
        Effort(nodes=5, soft=True)


def test_hard_limits_are_the_engine_s_own_and_soft_ones_a_clock() -> None:
    assert Effort(nodes=500).limit() == chess.engine.Limit(nodes=500)
    assert Effort(depth=7).limit(mate=2) == chess.engine.Limit(depth=7, mate=2)
    assert Effort(movetime=0.5).limit() == chess.engine.Limit(time=0.5)
    soft = Effort(movetime=0.5, soft=True).limit()
    assert soft.time is None
    assert soft.white_clock == soft.black_clock == 0.5 * SOFT_MOVES
    assert soft.remaining_moves == SOFT_MOVES
    assert Effort(nodes=500).patience is None
    assert Effort(movetime=0.5).patience == pytest.approx(10.5)


def test_mate_lengths_and_which_records_it_searches() -> None:
    with pytest.raises(ConfigError, match="moves"):
        Mate(Effort(nodes=1), 3, 2)
    mate = Mate(Effort(nodes=1), 2, 4)
    board = chess.Board()
    assert mate.wants(parse_lenient(START), board)
    assert mate.wants(parse_lenient(START + " dm 3;"), board)
    assert not mate.wants(parse_lenient(START + " dm 2;"), board)
    mated = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
    assert not mate.wants(parse_lenient(mated.epd()), mated)
