"""serialref.analysis.scores: an engine's score as the ce of spec 6.7, and back."""

from __future__ import annotations

import chess.engine
import pytest

from serialref.analysis.scores import centipawns, mate_in


@pytest.mark.parametrize(
    ("score", "ce"),
    [
        (chess.engine.Cp(35), 35),
        (chess.engine.Cp(-120), -120),
        (chess.engine.Cp(99999), 32000),
        (chess.engine.Cp(-99999), -32000),
        (chess.engine.Mate(1), 32766),  # spec 6.7's own examples
        (chess.engine.Mate(5), 32758),
        (chess.engine.Mate(-1), -32765),
        (chess.engine.Mate(-5), -32757),
        (chess.engine.Mate(0), -32767),
    ],
)
def test_scores_become_the_ce_of_spec_6_7(score: chess.engine.Score, ce: int) -> None:
    assert centipawns(score) == ce


@pytest.mark.parametrize("moves", [1, 2, 5, 40, 0, -1, -5, -40])
def test_a_mate_s_ce_reads_back_as_its_moves(moves: int) -> None:
    assert mate_in(centipawns(chess.engine.Mate(moves))) == moves


@pytest.mark.parametrize("ce", [0, 35, -120, 32000, -32000])
def test_an_evaluation_is_no_mate(ce: int) -> None:
    assert mate_in(ce) is None
