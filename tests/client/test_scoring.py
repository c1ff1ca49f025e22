"""From a search to a decision: the spec 6.7 scores, the analysis and the score policies."""

from __future__ import annotations

import chess
import chess.engine
import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref.client.options import EngineSettings
from serialref.client.players import Analysis, ThinkingBudget, ThinkRequest
from serialref.client.scoring import ScorePolicy, spec_centipawns

E4, E5 = chess.Move.from_uci("e2e4"), chess.Move.from_uci("e7e5")


def result(
    score: chess.engine.Score, *, move: chess.Move | None = E4, **flags: bool
) -> chess.engine.PlayResult:
    info: chess.engine.InfoDict = {
        "score": chess.engine.PovScore(score, chess.WHITE),
        "nodes": 1234,
        "time": 2.5,
        "depth": 19,
    }
    return chess.engine.PlayResult(move, None, info, **flags)


def request(*, draw_offered: bool = False) -> ThinkRequest:
    board = chess.Board()
    return ThinkRequest(board, ThinkingBudget(turn=board.turn), draw_offered=draw_offered)


def policy(**settings: object) -> ScorePolicy:
    return ScorePolicy(EngineSettings(command=("engine",), **settings))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (chess.engine.Mate(1), 32766),
        (chess.engine.Mate(5), 32758),
        (chess.engine.Mate(-1), -32765),
        (chess.engine.Mate(-5), -32757),
        (chess.engine.Cp(-37), -37),
        (chess.engine.Cp(50_000), 31_999),
    ],
)
def test_spec_centipawns_uses_the_mate_encodings_of_spec_6_7(
    score: chess.engine.Score, expected: int
) -> None:
    assert spec_centipawns(score) == expected


@given(st.integers(min_value=1, max_value=100_000))
def test_mates_for_and_against_stay_in_their_bands(moves: int) -> None:
    assert 32000 < spec_centipawns(chess.engine.Mate(moves)) <= 32766
    assert -32767 < spec_centipawns(chess.engine.Mate(-moves)) < -32000


def test_the_analysis_carries_score_variation_nodes_whole_seconds_and_depth() -> None:
    decision = policy().decide("E", request(), result(chess.engine.Cp(25)), (E4, E5), xboard=False)
    assert decision.move == E4
    assert decision.analysis == Analysis(centipawns=25, pv=(E4, E5), nodes=1234, seconds=2,
                                         depth=19)  # fmt: skip


def test_a_variation_that_does_not_start_with_the_move_is_replaced_by_the_move() -> None:
    decision = policy().decide("E", request(), result(chess.engine.Cp(0)), (E5,), xboard=False)
    assert decision.analysis is not None and decision.analysis.pv == (E4,)


@pytest.mark.parametrize(
    ("score", "accepts"),
    [
        (chess.engine.Cp(10), True),
        (chess.engine.Cp(-10), True),
        (chess.engine.Cp(300), False),
        (chess.engine.Mate(3), False),
    ],
)
def test_a_uci_engine_accepts_a_draw_by_score(score: chess.engine.Score, accepts: bool) -> None:
    decision = policy(draw_accept_below=50).decide(
        "E", request(draw_offered=True), result(score), (), xboard=False
    )
    assert decision.draw_accept is accepts
    assert (decision.move is None) is accepts


def test_an_xboard_engine_accepts_a_draw_by_offering_one() -> None:
    offered = result(chess.engine.Cp(400), draw_offered=True)
    decision = policy().decide("E", request(draw_offered=True), offered, (), xboard=True)
    assert decision.draw_accept and decision.move is None
    decision = policy().decide("E", request(), offered, (), xboard=True)
    assert decision.draw_offer and decision.move == E4


def test_a_uci_engine_offers_a_draw_by_score() -> None:
    decision = policy(draw_offer_below=20).decide(
        "E", request(), result(chess.engine.Cp(5)), (), xboard=False
    )
    assert decision.draw_offer and decision.move == E4


def test_a_uci_engine_resigns_after_enough_bad_moves() -> None:
    judge = policy(resign_below=600, resign_moves=2)
    losing = result(chess.engine.Cp(-900))
    assert not judge.decide("E", request(), losing, (), xboard=False).resign
    second = judge.decide("E", request(), losing, (), xboard=False)
    assert second.resign and second.move is None
    judge.new_game()
    assert not judge.decide("E", request(), losing, (), xboard=False).resign


def test_an_engines_own_resignation_is_passed_on() -> None:
    decision = policy().decide(
        "E", request(), result(chess.engine.Cp(-50), move=None, resigned=True), (), xboard=True
    )
    assert decision.resign and decision.move is None
