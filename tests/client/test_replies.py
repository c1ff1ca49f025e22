"""A decision as the reply PROTOCOL.md section 4 allows, checked before it is sent."""

from __future__ import annotations

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import played_boards

from serialref.client.players import Analysis, Decision
from serialref.client.replies import reply_in_finished_position, reply_to
from serialref.epd.parser import parse_record
from serialref.epd.writer import format_record
from serialref.errors import EngineError

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
E4 = chess.Move.from_uci("e2e4")


def text(decision: Decision, *, draw_offered: bool = False) -> str:
    line, _ = reply_to(chess.Board(), decision, draw_offered=draw_offered, claim_draws=True)
    return line


def test_a_move_with_its_analysis() -> None:
    pv = (E4, chess.Move.from_uci("e7e5"), chess.Move.from_uci("a1a8"))
    analysis = Analysis(centipawns=35, pv=pv, nodes=10, seconds=1, depth=19)
    line, move = reply_to(chess.Board(), Decision(E4, analysis=analysis), draw_offered=False,
                          claim_draws=True)  # fmt: skip
    assert move == E4
    # The variation stops at its first illegal move; the depth is acd (spec 5.3 lets a
    # referee that does not know it ignore it).
    assert line == (
        f"{START} acd 19; acn 10; acs 1; ce 35; fmvn 1; hmvc 0; pv e4 e5; refreq reply; sm e4;"
    )


def test_a_player_whose_engine_was_restarted_says_how_often() -> None:
    assert text(Decision(E4, engine_restarts=2)) == (
        f"{START} engine_restarts 2; fmvn 1; hmvc 0; refreq reply; sm e4;"
    )
    assert text(Decision(None, resign=True, engine_restarts=1)) == (
        f"{START} engine_restarts 1; fmvn 1; hmvc 0; refreq reply; resign;"
    )


def test_a_resignation_plays_no_move() -> None:
    line, move = reply_to(
        chess.Board(), Decision(E4, resign=True), draw_offered=False, claim_draws=True
    )
    assert move is None
    assert line == f"{START} fmvn 1; hmvc 0; refreq reply; resign;"


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


@st.composite
def positions_and_decisions(draw: st.DrawFn) -> tuple[chess.Board, Decision, bool]:
    """A position some random moves into a game, a legal move there and what may go with it."""
    board = draw(played_boards(60))
    moves = sorted(board.legal_moves, key=chess.Move.uci)
    move = draw(st.sampled_from(moves)) if moves else None
    pv: list[chess.Move] = []
    line = board.copy()
    while move is not None and len(pv) < draw(st.integers(0, 6)):
        following = move if not pv else draw(st.sampled_from(sorted(line.legal_moves, key=str)))
        pv.append(following)
        line.push(following)
        if not any(line.legal_moves):
            break
    analysis = draw(
        st.none()
        | st.builds(
            Analysis,
            centipawns=st.none() | st.integers(-40_000, 40_000),
            pv=st.just(tuple(pv)),
            nodes=st.none() | st.integers(-1, 10**9),
            seconds=st.none() | st.integers(-1, 10**5),
        )
    )
    decision = Decision(
        move,
        draw_offer=draw(st.booleans()),
        draw_accept=draw(st.booleans()),
        draw_claim=move is None or draw(st.booleans()),
        resign=move is None or draw(st.booleans()),
        analysis=analysis,
    )
    return board, decision, draw(st.booleans())


@given(positions_and_decisions())
def test_a_reply_line_is_a_normalised_record_of_the_position_and_the_move(
    case: tuple[chess.Board, Decision, bool],
) -> None:
    board, decision, draw_offered = case
    line, move = reply_to(board, decision, draw_offered=draw_offered, claim_draws=True)
    record = parse_record(line)
    assert format_record(record) == line
    assert record.identifier("refreq") == "reply"
    assert record.board().epd(en_passant="fen") == board.epd(en_passant="fen")
    assert (record.integer("fmvn"), record.integer("hmvc")) == (
        board.fullmove_number,
        board.halfmove_clock,
    )
    assert ("sm" in record) == (move is not None)
    if move is not None:
        assert record.move("sm", board) == move
    if "pv" in record:
        line = board.copy()
        variation = [line.push_san(san) for san in record.operand_texts("pv")]
        assert decision.analysis is not None
        assert tuple(variation) == decision.analysis.pv[: len(variation)]
    flags = {"resign", "draw_accept", "draw_offer", "draw_claim"} & {
        operation.opcode for operation in record.operations
    }
    assert len(flags) <= 1
    assert ("resign" in flags) == decision.resign


@settings(max_examples=80, deadline=None)
@given(choices=st.lists(st.integers(0, 1000), min_size=1, max_size=40))
def test_a_move_is_claimed_exactly_when_python_chess_finds_a_repetition(
    choices: list[int],
) -> None:
    # Kings and knights only: repetitions come quickly and no move is irreversible.
    board = chess.Board("4k1n1/8/8/8/8/8/8/1N2K3 w - - 0 1")
    for choice in choices:
        moves = list(board.legal_moves)
        move = moves[choice % len(moves)]
        line, _ = reply_to(board, Decision(move), draw_offered=False, claim_draws=True)
        after = board.copy()
        after.push(move)
        expected = any(
            position.is_repetition(3) or position.is_fifty_moves() for position in (board, after)
        )
        assert ("draw_claim" in parse_record(line)) == expected
        board.push(move)


def test_the_shortest_threefold_repetition_is_claimed_with_its_move() -> None:
    board = chess.Board("4k1n1/8/8/8/8/8/8/1N2K3 w - - 0 1")
    claims = []
    for san in ["Nc3", "Nf6", "Nb1", "Ng8"] * 2:
        move = board.parse_san(san)
        line, _ = reply_to(board, Decision(move), draw_offered=False, claim_draws=True)
        claims.append("draw_claim" in parse_record(line))
        board.push(move)
    assert claims == [False] * 7 + [True]
