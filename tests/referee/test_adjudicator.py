"""serialref.referee.adjudicator: scores, game length and tables, ply for ply as cutechess-cli."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serialref.errors import ConfigError
from serialref.referee.adjudicator import (
    AdjudicationRules,
    DrawRule,
    ResignRule,
    adjudicate,
    parse_draw_rule,
    parse_resign_rule,
    reported_score,
)
from serialref.referee.rulings import Termination, Verdict
from serialref.referee.tablebase import SyzygyTables
from serialref.result import Result

TABLES = Path(__file__).resolve().parents[1] / "fixtures" / "syzygy"

# Knights out and back: plies without a capture or a pawn move, as long as wanted.
SHUFFLE = ["Nf3", "Nf6", "Ng1", "Ng8"]


def shuffled(plies: int, board: chess.Board | None = None) -> chess.Board:
    board = board or chess.Board()
    for ply in range(plies):
        board.push_san(SHUFFLE[ply % 4])
    return board


def first_verdict(
    rules: AdjudicationRules, board: chess.Board, moves: Sequence[str], scores: Sequence[int | None]
) -> tuple[int, Verdict] | None:
    """Play ``moves`` with their ``scores``: the ply (1-based) and verdict of the first
    adjudication, or None."""
    played: list[int | None] = []
    for ply, (san, score) in enumerate(zip(moves, scores, strict=True), start=1):
        board.push_san(san)
        played.append(score)
        verdict = adjudicate(rules, board, played)
        if verdict is not None:
            return ply, verdict
    return None


def loop(plies: int) -> list[str]:
    return [SHUFFLE[ply % 4] for ply in range(plies)]


DRAW = Verdict(Result.DRAW, Termination.ADJUDICATION, "Draw by adjudication")


def test_a_draw_needs_movecount_moves_of_each_side_within_the_score() -> None:
    rules = AdjudicationRules(draw=DrawRule(move_number=2, move_count=3, score=10))
    found = first_verdict(rules, chess.Board(), loop(12), [5, -10, 0, 3, 7, 2, 1, 0, 0, 0, 0, 0])
    assert found == (6, DRAW)


def test_a_draw_waits_for_movenumber_full_moves() -> None:
    rules = AdjudicationRules(draw=DrawRule(move_number=5, move_count=1, score=10))
    assert first_verdict(rules, chess.Board(), loop(12), [0] * 12) == (10, DRAW)


def test_a_score_beyond_the_draw_score_counts_again_from_nothing() -> None:
    rules = AdjudicationRules(draw=DrawRule(move_number=1, move_count=2, score=10))
    scores = [0, 0, 0, 11, 0, 0, 0, 0, 0]
    assert first_verdict(rules, chess.Board(), loop(9), scores) == (8, DRAW)


def test_a_capture_or_pawn_move_restarts_the_draw_count_and_counts_as_its_first() -> None:
    rules = AdjudicationRules(draw=DrawRule(move_number=1, move_count=2, score=10))
    moves = ["Nf3", "Nf6", "Ng1", "e6", "Nf3", "Ng8", "Ng1"]
    # Without the pawn move the 4th ply would draw; with it, plies 4-7 are the count.
    assert first_verdict(rules, chess.Board(), moves, [0] * 7) == (7, DRAW)


def test_a_move_without_a_score_adjudicates_nothing_and_restarts_the_counts() -> None:
    rules = AdjudicationRules(
        draw=DrawRule(move_number=1, move_count=1, score=10),
        resign=ResignRule(move_count=2, score=500),
    )
    assert first_verdict(rules, chess.Board(), loop(4), [None, None, None, None]) is None
    scores = [0, None, 0, 0]
    assert first_verdict(rules, chess.Board(), loop(4), scores) == (4, DRAW)
    resign_only = AdjudicationRules(resign=ResignRule(move_count=2, score=500))
    scores = [-600, 0, None, 0, -600, 0, -600]
    verdict = first_verdict(resign_only, chess.Board(), loop(7), scores)
    assert verdict == (7, Verdict(Result.BLACK_WINS, Termination.ADJUDICATION,
                                  "Black wins by adjudication"))  # fmt: skip


def test_movenumber_zero_turns_the_draw_off_as_in_cutechess() -> None:
    rules = AdjudicationRules(draw=DrawRule(move_number=0, move_count=1, score=10))
    assert first_verdict(rules, chess.Board(), loop(8), [0] * 8) is None


def test_the_mover_loses_after_movecount_own_moves_at_minus_score() -> None:
    rules = AdjudicationRules(resign=ResignRule(move_count=3, score=500))
    # White (odd plies) is lost by its own account; Black's scores do not matter.
    scores = [-500, 900, -800, 20, -32000, -3]
    found = first_verdict(rules, chess.Board(), loop(6), scores)
    assert found == (5, Verdict(Result.BLACK_WINS, Termination.ADJUDICATION,
                                "Black wins by adjudication"))  # fmt: skip


def test_a_mate_score_in_the_specs_encoding_counts_as_lost() -> None:
    rules = AdjudicationRules(resign=ResignRule(move_count=1, score=1000))
    mated_in_3 = -32767 + 6
    found = first_verdict(rules, chess.Board(), loop(2), [0, mated_in_3])
    assert found == (2, Verdict(Result.WHITE_WINS, Termination.ADJUDICATION,
                                "White wins by adjudication"))  # fmt: skip


def test_two_sided_resign_needs_the_winners_agreement() -> None:
    rules = AdjudicationRules(resign=ResignRule(move_count=2, score=500, two_sided=True))
    one_sided = [-600, 100, -600, 100, -600, 600, -600, 600, -600]
    found = first_verdict(rules, chess.Board(), loop(9), one_sided)
    assert found is not None and found[0] == 9


def test_maxmoves_draws_after_that_many_full_moves_scored_or_not() -> None:
    rules = AdjudicationRules(max_moves=3)
    found = first_verdict(rules, chess.Board(), loop(8), [None] * 8)
    assert found == (6, Verdict(Result.DRAW, Termination.ADJUDICATION,
                                "Draw by adjudication: maximal game length"))  # fmt: skip


def test_movenumber_and_maxmoves_count_an_openings_moves_too() -> None:
    opening = shuffled(4)
    rules = AdjudicationRules(max_moves=3)
    assert first_verdict(rules, opening, loop(4), [0] * 4) == (2, DRAW_LENGTH)


DRAW_LENGTH = Verdict(Result.DRAW, Termination.ADJUDICATION,
                      "Draw by adjudication: maximal game length")  # fmt: skip


def test_no_rules_adjudicate_nothing() -> None:
    assert not AdjudicationRules()
    assert first_verdict(AdjudicationRules(), chess.Board(), loop(40), [0] * 40) is None


def test_the_score_of_a_reply_is_its_ce() -> None:
    assert reported_score({"ce": "-32761", "acd": "9"}) == -32761
    assert reported_score({"acd": "9"}) is None
    assert reported_score({"ce": "+-"}) is None


@pytest.mark.parametrize(
    ("words", "rule"),
    [
        (["movenumber=40", "movecount=8", "score=10"], DrawRule(40, 8, 10)),
        (["score=0", "movecount=0", "movenumber=1"], DrawRule(1, 0, 0)),
    ],
)
def test_draw_rules_are_read_as_cutechess_spells_them(words: list[str], rule: DrawRule) -> None:
    assert parse_draw_rule("--draw", words) == rule


@pytest.mark.parametrize(
    ("words", "rule"),
    [
        (["movecount=3", "score=1000"], ResignRule(3, 1000)),
        (["movecount=3", "score=1000", "twosided=true"], ResignRule(3, 1000, two_sided=True)),
        (["movecount=3", "score=1000", "twosided=false"], ResignRule(3, 1000)),
    ],
)
def test_resign_rules_are_read_as_cutechess_spells_them(words: list[str], rule: ResignRule) -> None:
    assert parse_resign_rule("--resign", words) == rule


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["movenumber=40", "movecount=8"], "--draw: score missing in 'movenumber=40 movecount=8'"),
        (["movenumber=40", "movecount=8", "score=-5"], "--draw: score must be a whole number"),
        (["movenumber=4", "movecount=8", "score=5", "movecount=2"], "--draw: movecount given"),
        (["movenumber=4", "moves=8"], "--draw: expected movenumber=, movecount=, score=: 'moves"),
    ],
)
def test_a_wrong_draw_rule_is_refused_with_what_is_wrong(words: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match="^" + message.replace("(", r"\(")):
        parse_draw_rule("--draw", words)


def test_a_wrong_twosided_is_refused() -> None:
    with pytest.raises(ConfigError, match="twosided must be true or false, not 'yes'"):
        parse_resign_rule("resign", ["movecount=1", "score=1", "twosided=yes"])


# ---------------------------------------------------------------- tables


@pytest.fixture
def tables() -> Iterator[SyzygyTables]:
    probe = SyzygyTables([TABLES])
    yield probe
    probe.close()


@pytest.mark.parametrize(
    ("fen", "reason"),
    [
        ("8/8/8/8/8/8/2k5/K6Q b - - 0 60", "White wins by adjudication: SyzygyTB"),
        ("4k3/4p3/2K5/8/8/8/8/8 b - - 0 60", "Black wins by adjudication: SyzygyTB"),
        ("8/8/4k3/8/8/8/4P3/4K3 w - - 0 60", "Draw by adjudication: SyzygyTB"),
        ("8/8/8/8/8/8/2k5/K1r4R w - - 0 60", "Draw by adjudication: SyzygyTB"),
    ],
)
def test_the_tables_adjudicate_the_position_after_the_move(
    tables: SyzygyTables, fen: str, reason: str
) -> None:
    verdict = adjudicate(AdjudicationRules(tables=tables), chess.Board(fen), [None])
    assert verdict is not None
    assert (verdict.termination, verdict.reason) == (Termination.ADJUDICATION, reason)


# ------------------------------------------- cutechess-cli's own adjudicator, ply by ply


class CutechessAdjudicator:
    """cutechess-cli 1.5.1's ``GameAdjudicator`` (``addEval``, ``resetDrawMoveCount``) as
    ``ChessGame::onMoveMade`` drives it, transcribed: the oracle :func:`adjudicate` must
    agree with on every ply. A move without a score is its ``depth() <= 0``; cutechess's
    maximal game length is checked after scored moves only."""

    def __init__(self, rules: AdjudicationRules) -> None:
        self.rules = rules
        self.draw_count = 0
        self.resign_count = [0, 0]
        self.win_count = [0, 0]

    def add(self, board: chess.Board, score: int | None) -> Result | None:
        side = 0 if board.turn == chess.BLACK else 1  # the side that moved: 0 is White
        if board.halfmove_clock == 0:
            self.draw_count = 0
        if score is None:
            self.draw_count = 0
            self.resign_count[side] = self.win_count[side] = 0
            return None
        draw, resign = self.rules.draw, self.rules.resign
        if draw is not None and draw.move_number > 0:
            self.draw_count = self.draw_count + 1 if abs(score) <= draw.score else 0
            if len(board.move_stack) // 2 >= draw.move_number and (
                self.draw_count >= draw.move_count * 2
            ):
                return Result.DRAW
        if resign is not None and resign.move_count > 0:
            self.resign_count[side] = self.resign_count[side] + 1 if score <= -resign.score else 0
            self.win_count[side] = self.win_count[side] + 1 if score >= resign.score else 0
            if self.resign_count[side] >= resign.move_count and (
                not resign.two_sided or self.win_count[1 - side] >= resign.move_count
            ):
                return Result.BLACK_WINS if side == 0 else Result.WHITE_WINS
        if self.rules.max_moves > 0 and len(board.move_stack) >= 2 * self.rules.max_moves:
            return Result.DRAW
        return None


@st.composite
def adjudication_rules(draw: st.DrawFn) -> AdjudicationRules:
    return AdjudicationRules(
        draw=draw(st.none() | st.builds(DrawRule, st.integers(0, 30), st.integers(0, 6),
                                        st.sampled_from([0, 10, 50]))),
        resign=draw(st.none() | st.builds(ResignRule, st.integers(0, 5),
                                          st.sampled_from([100, 500, 1000]), st.booleans())),
        max_moves=draw(st.sampled_from([0, 0, 40, 90])),
    )  # fmt: skip


scores = st.none() | st.sampled_from([0, 5, -5, 10, -10, 60, -60, 120, -120, 500, -500,
                                      1000, -1000, 32766, -32765])  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(rules=adjudication_rules(), seed=st.integers(0, 2**32), data=st.data())
def test_every_ply_is_adjudicated_as_cutechess_adjudicates_it(
    rules: AdjudicationRules, seed: int, data: st.DataObject
) -> None:
    import random

    chooser = random.Random(seed)
    board = chess.Board()
    oracle = CutechessAdjudicator(rules)
    played: list[int | None] = []
    for _ in range(160):
        moves = sorted(board.legal_moves, key=chess.Move.uci)
        if not moves or board.is_insufficient_material():
            return
        board.push(chooser.choice(moves))
        # Scores repeat, as an engine's do, so that counts grow long enough to adjudicate.
        repeated: bool = data.draw(st.booleans())
        score = played[-1] if played and repeated else data.draw(scores)
        played.append(score)
        expected = oracle.add(board, score)
        verdict = adjudicate(rules, board, played)
        if score is None and expected is None and verdict is not None:
            # The one difference: the game length counts unscored moves too.
            assert verdict.reason.endswith("maximal game length")
            return
        assert (verdict.result if verdict else None) == expected
        if expected is not None:
            return
