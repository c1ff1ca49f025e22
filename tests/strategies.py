"""Hypothesis strategies shared by test modules: time controls and clocks, games at random."""

from __future__ import annotations

import chess
from hypothesis import strategies as st

from serialref.timecontrol import TimeControl, TimeControlPeriod

move_count_periods = st.builds(
    TimeControlPeriod,
    moves=st.integers(1, 5),
    seconds=st.integers(1, 10_000).map(float),
    increment=st.integers(0, 30).map(float),
)
final_periods = st.one_of(
    move_count_periods,
    st.builds(
        TimeControlPeriod,
        moves=st.none(),
        seconds=st.integers(1, 10_000).map(float),
        increment=st.integers(0, 30).map(float),
    ),
)
timed_controls = st.builds(
    lambda first, last: TimeControl.parse(":".join(str(p) for p in (*first, last))),
    st.lists(move_count_periods, max_size=3),
    final_periods,
)
move_times = st.lists(st.floats(0.0, 50.0, allow_nan=False), max_size=40)


@st.composite
def played_boards(draw: st.DrawFn, max_plies: int) -> chess.Board:
    """A board some random legal moves into a game (``max_plies`` at most, fewer at its end)."""
    board = chess.Board()
    for _ in range(draw(st.integers(0, max_plies))):
        moves = sorted(board.legal_moves, key=chess.Move.uci)
        if not moves:
            break
        board.push(draw(st.sampled_from(moves)))
    return board
