"""The built-in players, the thinking budget and the player factory."""

from __future__ import annotations

import asyncio
import math
import time

import chess
import chess.engine
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serialref.client import make_builtin_player
from serialref.client.players import (
    GreedyPlayer,
    RandomPlayer,
    ThinkingBudget,
    ThinkRequest,
)
from serialref.clock import ChessClock
from serialref.errors import ConfigError
from serialref.timecontrol import TimeControl


def request(board: chess.Board) -> ThinkRequest:
    return ThinkRequest(board=board, budget=ThinkingBudget(turn=board.turn))


def test_think_answers_as_decide_does() -> None:
    board = chess.Board()
    thought = asyncio.run(GreedyPlayer(3).think(request(board)))
    assert thought == GreedyPlayer(3).decide(board)


def test_the_pace_gives_way_to_the_deadline() -> None:
    board = chess.Board()
    player = RandomPlayer(1, pace=30.0)
    started = time.monotonic()
    deadline = started + 0.05
    budget = ThinkingBudget(turn=board.turn)
    decision = asyncio.run(player.think(ThinkRequest(board, budget, deadline=deadline)))
    assert decision.move in board.legal_moves
    assert time.monotonic() - started < 10.0  # far below the 30 s pace


def play_out(white: RandomPlayer, black: RandomPlayer, plies: int) -> list[str]:
    board = chess.Board()
    players = {chess.WHITE: white, chess.BLACK: black}
    while not board.is_game_over() and len(board.move_stack) < plies:
        move = players[board.turn].decide(board).move
        assert move is not None
        assert move in board.legal_moves
        board.push(move)
    return [move.uci() for move in board.move_stack]


@pytest.mark.parametrize("kind", [RandomPlayer, GreedyPlayer])
def test_a_seed_replays_the_same_game(kind: type[RandomPlayer]) -> None:
    first = play_out(kind(7), kind(8), 60)
    assert play_out(kind(7), kind(8), 60) == first
    assert play_out(kind(9), kind(8), 60) != first


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_random_player_moves_are_legal_until_the_game_ends(seed: int) -> None:
    moves = play_out(RandomPlayer(seed), GreedyPlayer(seed + 1), 400)
    assert moves


def test_random_player_leaves_the_board_as_it_found_it() -> None:
    board = chess.Board()
    board.push_uci("e2e4")
    before = (board.fen(), list(board.move_stack))
    RandomPlayer(1).decide(board)
    GreedyPlayer(1).decide(board)
    assert (board.fen(), list(board.move_stack)) == before


def test_random_player_covers_every_legal_move() -> None:
    board = chess.Board()
    seen = {RandomPlayer(seed).decide(board).move for seed in range(400)}
    assert seen == set(board.legal_moves)


def test_unseeded_random_player_varies_its_choice() -> None:
    player = RandomPlayer()
    board = chess.Board()
    assert len({player.decide(board).move for _ in range(100)}) > 1


def test_a_seeded_player_answers_a_position_asked_twice_the_same_way() -> None:
    # After a referee restart the move in flight is asked for again.
    board = chess.Board()
    board.push_uci("e2e4")
    player = RandomPlayer(5)
    first = player.decide(board).move
    player.decide(chess.Board())
    assert player.decide(board).move == first


def test_greedy_mates_in_one_rather_than_capture() -> None:
    # Rxb1 wins a knight; Ra8 is mate (the king on g8 is boxed in by its own pawns).
    board = chess.Board("6k1/5ppp/8/8/8/8/8/Rn4K1 w - - 0 1")
    move = GreedyPlayer(1).decide(board).move
    assert move == chess.Move.from_uci("a1a8")


def test_greedy_takes_the_most_valuable_piece() -> None:
    # The white knight on d5 can take the pawn on b6 or c7... or the queen on f6.
    board = chess.Board("4k3/2p5/1p3q2/3N4/8/8/8/4K3 w - - 0 1")
    for seed in range(10):
        assert GreedyPlayer(seed).decide(board).move == chess.Move.from_uci("d5f6")


def test_greedy_counts_en_passant_as_a_pawn() -> None:
    board = chess.Board("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1")
    assert GreedyPlayer(0).decide(board).move == chess.Move.from_uci("e5d6")


def test_greedy_mates_in_one_when_nothing_can_be_taken() -> None:
    board = chess.Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
    for seed in range(10):
        assert GreedyPlayer(seed).decide(board).move == chess.Move.from_uci("a1a8")


def test_greedy_prefers_a_capture_to_a_mate() -> None:
    board = chess.Board("6k1/5ppp/8/8/8/8/p7/R5K1 w - - 0 1")
    assert GreedyPlayer(0).decide(board).move == chess.Move.from_uci("a1a2")


def test_greedy_never_offers_or_resigns() -> None:
    decision = GreedyPlayer(0).decide(chess.Board())
    assert not (decision.draw_offer or decision.draw_claim or decision.resign)
    assert decision.analysis is None


def test_players_name_themselves() -> None:
    assert RandomPlayer().name == "serialref random"
    assert GreedyPlayer().name == "serialref greedy"


def test_factory_builds_the_named_player() -> None:
    assert isinstance(make_builtin_player("random", 1), RandomPlayer)
    assert isinstance(make_builtin_player("greedy", 1), GreedyPlayer)
    assert make_builtin_player("greedy", 5).decide(chess.Board()).move == (
        GreedyPlayer(5).decide(chess.Board()).move
    )


def test_factory_refuses_unknown_kinds() -> None:
    with pytest.raises(ConfigError, match="greedy, random"):
        make_builtin_player("stockfish", None)


def test_a_budget_is_the_clocks_as_an_engine_limit() -> None:
    budget = ThinkingBudget(turn=chess.WHITE, remaining=(30.0, 20.0), increment=(1.0, 1.0))
    limit = budget.limit()
    assert limit is not None and limit.white_clock == 30.0 and limit.black_inc == 1.0
    assert math.isinf(ThinkingBudget(turn=chess.WHITE).remaining[0])


def test_untimed_budget_has_no_limit() -> None:
    for control in (None, TimeControl.parse("-"), TimeControl.parse("?")):
        budget = ThinkingBudget.from_clocks(
            control, consumed=(5, 5), moves_made=(3, 3), turn=chess.WHITE
        )
        assert budget.remaining == (math.inf, math.inf)
        assert not budget.timed
        assert budget.limit() is None


def test_increment_budget_becomes_an_engine_limit() -> None:
    budget = ThinkingBudget.from_clocks(
        TimeControl.parse("300+2"), consumed=(100, 50), moves_made=(10, 9), turn=chess.BLACK
    )
    assert budget.remaining == (220.0, 268.0)
    assert budget.limit() == chess.engine.Limit(
        white_clock=220.0, black_clock=268.0, white_inc=2.0, black_inc=2.0, remaining_moves=None
    )


def test_move_count_periods_give_moves_to_go_for_the_side_to_move() -> None:
    control = TimeControl.parse("40/7200:20/3600")
    budget = ThinkingBudget.from_clocks(
        control, consumed=(7000, 100), moves_made=(45, 44), turn=chess.WHITE
    )
    assert budget.remaining == (7200 + 3600 - 7000, 7200 + 3600 - 100)
    assert budget.moves_to_go == 15
    repeated = ThinkingBudget.from_clocks(
        control, consumed=(0, 0), moves_made=(65, 65), turn=chess.BLACK
    )
    assert repeated.moves_to_go == 15


def test_sudden_death_after_a_period_has_no_moves_to_go() -> None:
    budget = ThinkingBudget.from_clocks(
        TimeControl.parse("40/5400+30:1800+30"),
        consumed=(0, 0),
        moves_made=(41, 40),
        turn=chess.WHITE,
    )
    assert budget.moves_to_go is None
    assert budget.increment == (30.0, 30.0)


@pytest.mark.parametrize("text", ["40/20:10+0.2", "40/8:4+0.2", "40/7200:20/3600", "300+2"])
def test_moves_to_go_and_increments_are_what_the_referees_clock_does(text: str) -> None:
    """The bonus comes after the move told ``movestogo 1``, the increment told after each."""
    control = TimeControl.parse(text)
    clock = ChessClock(control)
    now = 0.0
    for _ in range(100):
        for side in (chess.WHITE, chess.BLACK):
            budget = ThinkingBudget.from_clocks(
                control,
                consumed=(clock.consumed(chess.WHITE), clock.consumed(chess.BLACK)),
                moves_made=(clock.moves_made(chess.WHITE), clock.moves_made(chess.BLACK)),
                turn=side,
            )
            assert budget.remaining == (clock.remaining(chess.WHITE), clock.remaining(chess.BLACK))
            index = 0 if side == chess.WHITE else 1
            before = clock.remaining(side)
            clock.start(side, now)
            now += 0.25
            clock.stop(now)
            added = clock.remaining(side) - (before - 0.25)
            bonus = added - budget.increment[index]
            if budget.moves_to_go == 1:
                assert bonus == pytest.approx(control.period_of(clock.moves_made(side)).seconds)
            else:
                assert bonus == pytest.approx(0.0)


def test_fallen_flag_still_gives_the_engine_a_positive_time() -> None:
    budget = ThinkingBudget.from_clocks(
        TimeControl.parse("60"), consumed=(75, 0), moves_made=(20, 20), turn=chess.WHITE
    )
    limit = budget.limit()
    assert limit is not None
    assert limit.white_clock is not None
    assert 0 < limit.white_clock < 0.01


def test_sandclock_moves_time_between_the_chambers() -> None:
    budget = ThinkingBudget.from_clocks(
        TimeControl.parse("*180"), consumed=(30, 10), moves_made=(5, 5), turn=chess.WHITE
    )
    assert budget.remaining == (70.0, 110.0)
    assert budget.moves_to_go is None
