"""serialref.clock: the chess clock on fake time, and its clock face."""

from __future__ import annotations

import json
import math

import chess
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import move_times, timed_controls

from serialref.clock import ChessClock, format_clock, side_index
from serialref.errors import ConfigError, ProgrammingError
from serialref.timecontrol import TimeControl

WHITE, BLACK = chess.WHITE, chess.BLACK


def play(clock: ChessClock, side: chess.Color, start: float, elapsed: float) -> float:
    """One move of ``side`` lasting ``elapsed`` from ``start``; returns the end time."""
    clock.start(side, start)
    clock.stop(start + elapsed)
    return start + elapsed


def play_moves(clock: ChessClock, side: chess.Color, count: int, elapsed: float) -> None:
    """``count`` moves of one side only: enough to walk it through its periods."""
    now = 0.0
    for _ in range(count):
        now = play(clock, side, now, elapsed)


# --- allotment and periods -------------------------------------------------------------


def test_increment_is_added_after_the_move() -> None:
    clock = ChessClock(TimeControl.parse("300+2"))
    assert clock.remaining(WHITE) == 300.0
    clock.start(WHITE, 100.0)
    assert clock.remaining(WHITE, 110.0) == 290.0  # no increment while thinking
    assert clock.stop(110.0) == 10.0
    assert clock.remaining(WHITE) == 292.0
    assert clock.remaining(BLACK) == 300.0
    assert clock.moves_made(WHITE) == 1
    assert clock.moves_made(BLACK) == 0


def test_next_period_is_added_when_the_move_count_is_reached() -> None:
    clock = ChessClock(TimeControl.parse("40/7200:3600"))
    play_moves(clock, WHITE, 39, 1.0)
    assert clock.remaining(WHITE) == 7200.0 - 39
    play_moves(clock, WHITE, 1, 1.0)
    assert clock.remaining(WHITE) == 7200.0 + 3600.0 - 40
    play_moves(clock, WHITE, 100, 1.0)  # sudden death: no further bonus
    assert clock.remaining(WHITE) == 7200.0 + 3600.0 - 140
    assert clock.remaining(BLACK) == 7200.0


def test_last_move_count_period_repeats() -> None:
    clock = ChessClock(TimeControl.parse("40/7200"))
    play_moves(clock, WHITE, 80, 0.0)
    assert clock.remaining(WHITE) == 3 * 7200.0
    play_moves(clock, WHITE, 39, 0.0)
    assert clock.remaining(WHITE) == 3 * 7200.0


def test_second_move_count_period_repeats_not_the_first() -> None:
    clock = ChessClock(TimeControl.parse("40/7200:20/3600"))
    play_moves(clock, WHITE, 40, 0.0)
    assert clock.remaining(WHITE) == 7200.0 + 3600.0
    play_moves(clock, WHITE, 20, 0.0)
    assert clock.remaining(WHITE) == 7200.0 + 2 * 3600.0
    play_moves(clock, WHITE, 20, 0.0)
    assert clock.remaining(WHITE) == 7200.0 + 3 * 3600.0


def test_increments_follow_the_period_each_move_was_played_in() -> None:
    clock = ChessClock(TimeControl.parse("2/100+10:50+1"))
    play_moves(clock, WHITE, 2, 0.0)
    assert clock.remaining(WHITE) == 100.0 + 2 * 10 + 50.0
    play_moves(clock, WHITE, 3, 0.0)
    assert clock.remaining(WHITE) == 100.0 + 2 * 10 + 50.0 + 3 * 1


def test_sandclock_moves_the_movers_time_to_the_opponent() -> None:
    clock = ChessClock(TimeControl.parse("*180"))
    assert clock.remaining(WHITE) == clock.remaining(BLACK) == 90.0
    clock.start(WHITE, 0.0)
    assert clock.remaining(WHITE, 10.0) == 80.0
    assert clock.remaining(BLACK, 10.0) == 100.0
    clock.stop(10.0)
    play(clock, BLACK, 10.0, 30.0)
    assert clock.remaining(WHITE) == 110.0
    assert clock.remaining(BLACK) == 70.0
    clock.start(WHITE, 40.0)
    assert clock.flag_deadline() == 150.0
    assert not clock.flag_fell(149.9)
    assert clock.flag_fell(150.0)
    assert clock.remaining(BLACK, 150.0) == 180.0


@pytest.mark.parametrize("text", ["?", "-"])
def test_untimed_controls_never_flag_but_still_count(text: str) -> None:
    clock = ChessClock(TimeControl.parse(text))
    clock.start(WHITE, 0.0)
    assert clock.flag_deadline() is None
    assert not clock.flag_fell(1e9)
    assert clock.remaining(WHITE, 1e9) == math.inf
    clock.stop(90.5)
    assert clock.consumed_ms() == (90_500, 0)
    assert clock.moves_made(WHITE) == 1


# --- running move, flag, cc ------------------------------------------------------------


def test_consumed_includes_the_running_move_only_when_at_is_given() -> None:
    clock = ChessClock(TimeControl.parse("300"))
    play(clock, WHITE, 0.0, 5.0)
    clock.start(BLACK, 5.0)
    assert clock.running == BLACK
    assert clock.consumed(BLACK) == 0.0
    assert clock.consumed(BLACK, 12.0) == 7.0
    assert clock.consumed(WHITE, 12.0) == 5.0
    assert clock.consumed_ms(12.0) == (5_000, 7_000)


def test_flag_deadline_and_negative_remaining() -> None:
    clock = ChessClock(TimeControl.parse("60"))
    clock.start(WHITE, 1000.0)
    deadline = clock.flag_deadline()
    assert deadline == 1060.0
    assert not clock.flag_fell(1059.999)
    assert clock.flag_fell(deadline)
    assert clock.remaining(WHITE, 1070.0) == -10.0
    assert clock.stop(1070.0) == 70.0
    assert clock.remaining(WHITE) == -10.0
    assert clock.flag_deadline() is None
    assert not clock.flag_fell(2000.0)  # nothing running


def test_flag_fell_at_the_deadline_despite_float_rounding() -> None:
    clock = ChessClock(TimeControl.parse("300+1"))
    now = 0.1
    for _ in range(7):
        now = play(clock, WHITE, now, 0.3)
    clock.start(WHITE, now + 0.7)
    deadline = clock.flag_deadline()
    assert deadline is not None
    assert clock.flag_fell(deadline)
    assert clock.remaining(WHITE, deadline) == pytest.approx(0.0, abs=1e-9)


def test_a_move_that_ended_before_its_start_costs_nothing() -> None:
    # A reply's line time taken off its arrival can reach back before the clock started.
    clock = ChessClock(TimeControl.parse("60"))
    clock.start(WHITE, 10.0)
    assert clock.stop(9.98) == 0.0
    assert clock.consumed(WHITE) == 0.0
    assert clock.remaining(WHITE) == 60.0


@pytest.mark.parametrize(
    ("times", "expected"),
    [
        ((59.999,), 59_999),
        ((59.9999,), 59_999),
        ((0.2, 0.7, 0.1), 1_000),
        ((0.0,), 0),
        ((3601.5,), 3_601_500),
        ((0.001, 0.002), 3),
    ],
)
def test_ccms_rounds_consumed_time_down(times: tuple[float, ...], expected: int) -> None:
    clock = ChessClock(TimeControl.parse("7200"))
    for side in (WHITE, BLACK):
        for elapsed in times:
            play(clock, side, 0.0, elapsed)  # from 0, so each charge is exactly `elapsed`
    assert clock.consumed_ms() == (expected, expected)


def test_start_twice_and_stop_idle_are_errors() -> None:
    clock = ChessClock(TimeControl.parse("60"))
    with pytest.raises(ProgrammingError, match="no move running"):
        clock.stop(1.0)
    clock.start(WHITE, 0.0)
    with pytest.raises(ProgrammingError, match="still running"):
        clock.start(BLACK, 1.0)
    assert clock.running == WHITE


# --- pause and unpause -----------------------------------------------------------------


def test_paused_time_is_charged_to_no_one() -> None:
    clock = ChessClock(TimeControl.parse("60"))
    clock.start(WHITE, 0.0)
    clock.pause(10.0)
    assert clock.paused
    assert clock.running == WHITE
    assert clock.flag_deadline() is None
    assert clock.consumed(WHITE, 500.0) == 10.0
    assert clock.consumed(WHITE) == 10.0  # banked before the pause: known without `at`
    clock.pause(20.0)  # a repeated fault changes nothing
    clock.unpause(500.0)
    assert clock.flag_deadline() == 550.0
    assert clock.stop(505.0) == 15.0
    assert clock.consumed(BLACK) == 0.0


def test_start_while_paused_charges_from_the_unpause() -> None:
    clock = ChessClock(TimeControl.parse("60"))
    clock.pause(0.0)
    clock.start(BLACK, 5.0)
    assert clock.consumed(BLACK, 100.0) == 0.0
    clock.unpause(100.0)
    clock.unpause(150.0)  # not paused: changes nothing
    assert clock.stop(110.0) == 10.0


def test_stop_while_paused_charges_the_time_before_the_pause() -> None:
    clock = ChessClock(TimeControl.parse("60"))
    clock.start(WHITE, 0.0)
    clock.pause(4.0)
    assert clock.flag_fell(100.0) is False
    assert clock.stop(100.0) == 4.0
    assert clock.paused


def test_paused_flag_fell_uses_the_time_before_the_pause() -> None:
    clock = ChessClock(TimeControl.parse("60"))
    clock.start(WHITE, 0.0)
    clock.pause(59.0)
    assert not clock.flag_fell(100.0)
    clock.unpause(200.0)
    assert clock.flag_fell(201.0)


# --- restore ---------------------------------------------------------------------------


def test_index_convention_is_white_first() -> None:
    assert side_index(WHITE) == 0
    assert side_index(BLACK) == 1
    clock = ChessClock(TimeControl.parse("300"), consumed=(10.0, 20.0), moves_made=(3, 2))
    assert clock.consumed(WHITE) == 10.0
    assert clock.consumed(BLACK) == 20.0
    assert clock.moves_made(WHITE) == 3
    assert clock.consumed_ms() == (10_000, 20_000)


def test_constructor_rejects_bad_pairs() -> None:
    control = TimeControl.parse("300")
    with pytest.raises(ConfigError, match="consumed"):
        ChessClock(control, consumed=(-1.0, 0.0))
    with pytest.raises(ConfigError, match="moves_made"):
        ChessClock(control, moves_made=(1, -1))


def test_snapshot_round_trips_between_moves_with_period_bookkeeping() -> None:
    control = TimeControl.parse("40/7200:3600")
    clock = ChessClock(control)
    now = 0.0
    for _ in range(45):
        now = play(clock, WHITE, now, 2.5)
        now = play(clock, BLACK, now, 1.25)
    snapshot = json.loads(json.dumps(clock.snapshot()))
    restored = ChessClock.restore(control, snapshot)
    for side in (WHITE, BLACK):
        assert restored.remaining(side) == clock.remaining(side)
        assert restored.moves_made(side) == 45
    assert restored.remaining(WHITE) == 7200.0 + 3600.0 - 45 * 2.5
    assert restored.consumed_ms() == clock.consumed_ms()
    assert restored.running is None
    assert restored.snapshot() == snapshot


def test_snapshot_mid_move_carries_the_spent_time_into_the_resumed_move() -> None:
    control = TimeControl.parse("300+5")
    clock = ChessClock(control)
    play(clock, WHITE, 0.0, 4.0)
    clock.start(BLACK, 4.0)
    snapshot = json.loads(json.dumps(clock.snapshot(at=10.0)))
    assert snapshot["move"] == {"side": "black", "elapsed": 6.0}

    restored = ChessClock.restore(control, snapshot)
    assert restored.running is None
    assert restored.consumed(BLACK) == 6.0
    assert restored.consumed_ms() == (4_000, 6_000)
    assert restored.snapshot() == snapshot
    with pytest.raises(ProgrammingError, match="black's move in progress"):
        restored.start(WHITE, 7000.0)
    restored.start(BLACK, 7000.0)  # the referee's downtime is charged to no one
    assert restored.remaining(BLACK, 7001.0) == 300.0 - 7.0
    assert restored.stop(7001.0) == 7.0
    assert restored.remaining(BLACK) == 300.0 - 7.0 + 5.0


def test_snapshot_without_at_keeps_only_banked_time() -> None:
    clock = ChessClock(TimeControl.parse("300"))
    clock.start(WHITE, 0.0)
    clock.pause(3.0)
    assert clock.snapshot()["move"] == {"side": "white", "elapsed": 3.0}


def test_restore_refuses_another_control() -> None:
    clock = ChessClock(TimeControl.parse("300"))
    with pytest.raises(ConfigError, match="does not match"):
        ChessClock.restore(TimeControl.parse("600"), clock.snapshot())
    with pytest.raises(ConfigError, match="does not match"):
        ChessClock.restore(TimeControl.parse("300"), {**clock.snapshot(), "control": "5 min"})


def test_restore_accepts_the_same_control_written_differently() -> None:
    clock = ChessClock(TimeControl.parse("10+0.10"), consumed=(1.25, 0.5), moves_made=(3, 3))
    restored = ChessClock.restore(TimeControl.parse("10+0.1"), clock.snapshot())
    assert restored.remaining(WHITE) == pytest.approx(10 - 1.25 + 0.3)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"consumed": [1.0]}, "pair"),
        ({"consumed": "1,2"}, "pair"),
        ({"consumed": [1.0, "2"]}, "not a number"),
        ({"consumed": [1.0, -2.0]}, "times >= 0"),
        ({"moves_made": [1, 2.0]}, "whole move counts"),
        ({"moves_made": [True, 2]}, "not a number"),
        ({"move": "white"}, "mapping"),
        ({"move": {"side": "red", "elapsed": 1.0}}, "white or black"),
        ({"move": {"side": "white", "elapsed": -1.0}}, "time >= 0"),
        ({"move": {"side": "white"}}, "time >= 0"),
    ],
)
def test_restore_rejects_corrupt_snapshots(change: dict[str, object], reason: str) -> None:
    control = TimeControl.parse("300")
    snapshot = ChessClock(control).snapshot() | change
    with pytest.raises(ConfigError, match=reason):
        ChessClock.restore(control, snapshot)


# --- format_clock ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.0, "0:00:00"),
        (59.999, "0:00:59"),
        (60.0, "0:01:00"),
        (3661.5, "1:01:01"),
        (36000.0, "10:00:00"),
        (-5.0, "0:00:00"),
        (0.2 + 0.7 + 0.1, "0:00:01"),
    ],
)
def test_format_clock(seconds: float, text: str) -> None:
    assert format_clock(seconds) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.0, "0:00:00.0"),
        (0.05, "0:00:00.0"),
        (0.3, "0:00:00.3"),
        (4.99, "0:00:04.9"),
        (59.96, "0:00:59.9"),
        (3725.55, "1:02:05.5"),
        (-0.4, "0:00:00.0"),
        (0.2 + 0.7 + 0.1, "0:00:01.0"),
    ],
)
def test_format_clock_with_tenths(seconds: float, text: str) -> None:
    assert format_clock(seconds, tenths=True) == text


# --- properties ------------------------------------------------------------------------
def granted_time(control: TimeControl, moves: int) -> float:
    """Initial time + increments + period bonuses, by playing the periods move by move."""
    periods = control.periods
    index, in_period = 0, 0
    granted = periods[0].seconds
    for _ in range(moves):
        granted += periods[index].increment
        in_period += 1
        if periods[index].moves == in_period:
            index, in_period = min(index + 1, len(periods) - 1), 0
            granted += periods[index].seconds
    return granted


@given(control=timed_controls, times=move_times)
def test_remaining_plus_consumed_is_the_time_granted(
    control: TimeControl, times: list[float]
) -> None:
    clock = ChessClock(control)
    now = 0.0
    for ply, elapsed in enumerate(times):
        side = WHITE if ply % 2 == 0 else BLACK
        clock.start(side, now)
        assert clock.stop(now + elapsed) == pytest.approx(elapsed)
        now += elapsed
    for side in (WHITE, BLACK):
        moves = clock.moves_made(side)
        balance = clock.remaining(side) + clock.consumed(side) - granted_time(control, moves)
        assert balance == pytest.approx(0.0, abs=1e-6)
    restored = ChessClock.restore(control, json.loads(json.dumps(clock.snapshot())))
    for side in (WHITE, BLACK):
        assert restored.remaining(side) == clock.remaining(side)


@given(seconds=st.integers(1, 10_000), times=move_times)
def test_sandclock_keeps_the_total_sand(seconds: int, times: list[float]) -> None:
    clock = ChessClock(TimeControl.parse(f"*{seconds}"))
    now = 0.0
    for ply, elapsed in enumerate(times):
        now = play(clock, WHITE if ply % 2 == 0 else BLACK, now, elapsed)
    assert clock.remaining(WHITE) + clock.remaining(BLACK) == pytest.approx(seconds)


@given(control=timed_controls, spent=st.floats(0.0, 5000.0), started=st.floats(0.0, 1e6))
def test_flag_falls_exactly_at_the_deadline(
    control: TimeControl, spent: float, started: float
) -> None:
    clock = ChessClock(control, consumed=(spent, 0.0))
    clock.start(WHITE, started)
    deadline = clock.flag_deadline()
    assert deadline is not None
    assert clock.flag_fell(deadline)
    if clock.remaining(WHITE, started) > 1e-3:
        assert not clock.flag_fell(deadline - 1e-3)
