"""A decision as the reply PROTOCOL.md section 4 allows, checked before it is sent."""

from __future__ import annotations

import chess
import pytest

from serialref.client.players import Analysis, Decision
from serialref.client.replies import reply_in_finished_position, reply_to
from serialref.epd.writer import format_record
from serialref.errors import EngineError

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
E4 = chess.Move.from_uci("e2e4")


def text(decision: Decision, *, draw_offered: bool = False) -> str:
    record, _ = reply_to(chess.Board(), decision, draw_offered=draw_offered, claim_draws=True)
    return format_record(record)


def test_a_move_with_its_analysis() -> None:
    pv = (E4, chess.Move.from_uci("e7e5"), chess.Move.from_uci("a1a8"))
    decision = Decision(E4, analysis=Analysis(centipawns=35, pv=pv, nodes=10, seconds=1))
    record, move = reply_to(chess.Board(), decision, draw_offered=False, claim_draws=True)
    assert move == E4
    # The variation stops at its first illegal move.
    assert format_record(record) == (
        f"{START} acn 10; acs 1; ce 35; fmvn 1; hmvc 0; pv e4 e5; refreq reply; sm e4;"
    )


def test_a_resignation_plays_no_move() -> None:
    record, move = reply_to(
        chess.Board(), Decision(E4, resign=True), draw_offered=False, claim_draws=True
    )
    assert move is None
    assert format_record(record) == f"{START} fmvn 1; hmvc 0; refreq reply; resign;"


def test_accepting_an_offered_draw_plays_no_move() -> None:
    accepted = text(Decision(E4, draw_accept=True), draw_offered=True)
    assert accepted == f"{START} draw_accept; fmvn 1; hmvc 0; refreq reply;"


@pytest.mark.parametrize(
    ("decision", "reason"),
    [
        (Decision(None), "the player chose no move"),
        (Decision(chess.Move.from_uci("e2e5")), "the player chose an illegal move e2e5"),
        (Decision(None, draw_claim=True), "the player chose no move"),
    ],
)
def test_a_decision_that_cannot_be_sent_is_refused(decision: Decision, reason: str) -> None:
    with pytest.raises(EngineError, match=reason):
        reply_to(chess.Board(), decision, draw_offered=False, claim_draws=True)


def test_values_the_spec_cannot_carry_are_left_out() -> None:
    analysis = Analysis(centipawns=40_000, nodes=-1, seconds=3)
    assert text(Decision(E4, analysis=analysis)) == (
        f"{START} acs 3; fmvn 1; hmvc 0; refreq reply; sm e4;"
    )


def test_a_finished_position_is_answered_without_a_move() -> None:
    mated = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
    assert format_record(reply_in_finished_position(mated)).endswith(
        "fmvn 3; hmvc 1; refreq reply;"
    )
