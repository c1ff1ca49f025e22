"""Tests for serialref.clock: PGN TimeControl parsing and the chess clock, on fake time."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import chess
import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref.clock import (
    ChessClock,
    TimeControl,
    TimeControlPeriod,
    format_clock,
    side_index,
)
from serialref.errors import ConfigError, ProgrammingError

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


# --- parsing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "periods", "canonical"),
    [
        ("40/7200", (TimeControlPeriod(40, 7200.0),), "40/7200"),
        (
            "40/7200:3600",
            (TimeControlPeriod(40, 7200.0), TimeControlPeriod(None, 3600.0)),
            "40/7200:3600",
        ),
        ("300", (TimeControlPeriod(None, 300.0),), "300"),
        ("300+2", (TimeControlPeriod(None, 300.0, 2.0),), "300+2"),
        ("300+0", (TimeControlPeriod(None, 300.0),), "300"),
        ("*60", (TimeControlPeriod(None, 60.0, sandclock=True),), "*60"),
        (" 0300 ", (TimeControlPeriod(None, 300.0),), "300"),
        (
            "40/5400+30:1800+30",
            (TimeControlPeriod(40, 5400.0, 30.0), TimeControlPeriod(None, 1800.0, 30.0)),
            "40/5400+30:1800+30",
        ),
        (
            "40/7200:20/3600",
            (TimeControlPeriod(40, 7200.0), TimeControlPeriod(20, 3600.0)),
            "40/7200:20/3600",
        ),
        ("10+0.1", (TimeControlPeriod(None, 10.0, 0.1),), "10+0.1"),
        ("10+0.10", (TimeControlPeriod(None, 10.0, 0.1),), "10+0.1"),
        (
            "40/120.5:60+0.25",
            (TimeControlPeriod(40, 120.5), TimeControlPeriod(None, 60.0, 0.25)),
            "40/120.5:60+0.25",
        ),
        ("*0.5", (TimeControlPeriod(None, 0.5, sandclock=True),), "*0.5"),
        ("2.5", (TimeControlPeriod(None, 2.5),), "2.5"),
        ("60.000+0.000001", (TimeControlPeriod(None, 60.0, 0.000001),), "60+0.000001"),
    ],
)
def test_parse_timed(text: str, periods: tuple[TimeControlPeriod, ...], canonical: str) -> None:
    control = TimeControl.parse(text)
    assert control.periods == periods
    assert control.text == text.strip()  # the configured form, as the PGN tag shows it
    assert str(control) == text.strip()
    assert control.canonical == canonical
    assert not control.unknown
    assert not control.untimed
    assert TimeControl.parse(control.canonical) == control
    assert TimeControl.parse(str(control)) == control


def test_controls_are_equal_when_their_periods_are() -> None:
    written = TimeControl.parse("300+0")
    short = TimeControl.parse("300")
    assert written == short
    assert hash(written) == hash(short)
    assert written.text != short.text
    assert {written: "journal"}[short] == "journal"
    assert TimeControl.parse("10+0.1") == TimeControl.parse("10+0.10")
    assert TimeControl.parse("10+0.1") != TimeControl.parse("10+0.2")
    assert TimeControl.parse("?") != TimeControl.parse("-")


@pytest.mark.parametrize(("text", "unknown"), [("?", True), ("-", False)])
def test_parse_untimed(text: str, unknown: bool) -> None:
    control = TimeControl.parse(text)
    assert control.periods == ()
    assert str(control) == text
    assert control.unknown is unknown
    assert control.untimed


@pytest.mark.parametrize(
    ("text", "bad_part", "reason"),
    [
        ("", "", "empty time control"),
        ("300:40/7200", "'300'", "no period may follow it"),
        ("300+2:60", "'300+2'", "no period may follow it"),
        ("*60:300", "'*60'", "must be the only period"),
        ("40/7200:*60", "'*60'", "must be the only period"),
        ("40/0", "'40/0'", "time must be positive"),
        ("0/60", "'0/60'", "moves must be positive"),
        ("0", "'0'", "time must be positive"),
        ("abc", "'abc'", "expected 'moves/seconds'"),
        ("300+", "'300+'", "expected"),
        (".5", "'.5'", "seconds such as 300 or 0.5"),
        ("5.", "'5.'", "expected"),
        ("1e3", "'1e3'", "expected"),
        ("10+0.1.2", "'10+0.1.2'", "expected"),
        ("10+-0.1", "'10+-0.1'", "expected"),
        ("10+0.1234567", "0.1234567", "more than 6 digits after the point"),
        ("0.0", "'0.0'", "time must be positive"),
        ("40/0.000", "'40/0.000'", "time must be positive"),
        ("40.5/60", "'40.5/60'", "expected"),
        ("*0.5+0.1", "'*0.5+0.1'", "no move count or increment"),
        ("40 /7200", "'40 /7200'", "expected"),
        ("\u0663\u0660\u0660", "'\u0663\u0660\u0660'", "expected"),
        ("40/7200::3600", "'40/7200::3600'", "empty period"),
        ("?:300", "'?'", "only descriptor"),
        ("40/7200:-", "'-'", "only descriptor"),
        ("*40/60", "'*40/60'", "no move count or increment"),
        ("*60+1", "'*60+1'", "no move count or increment"),
        ("1" * 20, "1" * 20, "too large"),
        ("99999999", "'99999999'", "999 days"),
    ],
)
def test_parse_rejects_with_reason(text: str, bad_part: str, reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        TimeControl.parse(text)
    assert caught.value.key == "tc"
    assert bad_part in caught.value.reason
    assert reason in caught.value.reason


def test_direct_construction_checks_text_against_periods() -> None:
    with pytest.raises(ConfigError, match="does not match"):
        TimeControl(
            periods=(TimeControlPeriod(None, 300.0),), text="60", unknown=False, untimed=False
        )
    with pytest.raises(ConfigError, match="does not match"):
        TimeControl(
            periods=(TimeControlPeriod(None, 300.0),), text="5 min", unknown=False, untimed=False
        )
    written = TimeControl(
        periods=(TimeControlPeriod(None, 300.0),), text="300+0", unknown=False, untimed=False
    )
    assert written.text == "300+0"
    with pytest.raises(ConfigError, match="has periods"):
        TimeControl(
            periods=(TimeControlPeriod(None, 300.0),), text="300", unknown=True, untimed=True
        )
    with pytest.raises(ConfigError, match="without periods"):
        TimeControl(periods=(), text="300", unknown=False, untimed=True)


@pytest.mark.parametrize(
    "arguments",
    [
        {"moves": 0, "seconds": 60.0},
        {"moves": True, "seconds": 60.0},
        {"moves": None, "seconds": 0.0},
        {"moves": None, "seconds": math.inf},
        {"moves": None, "seconds": 60.0, "increment": -1.0},
        {"moves": 40, "seconds": 60.0, "sandclock": True},
    ],
)
def test_period_rejects_impossible_values(arguments: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        TimeControlPeriod(**arguments)  # type: ignore[arg-type]


def test_fractional_periods_format_without_losing_precision() -> None:
    period = TimeControlPeriod(None, 0.5, 0.25)
    assert str(period) == "0.5+0.25"
    assert TimeControl((period,), "0.5+0.25", unknown=False, untimed=False).text == "0.5+0.25"


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
    assert clock.cc_seconds() == (90, 0)
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
    assert clock.cc_seconds(12.0) == (5, 7)


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
    [((59.999,), 59), ((0.2, 0.7, 0.1), 1), ((0.0,), 0), ((3601.5,), 3601)],
)
def test_cc_rounds_consumed_time_down(times: tuple[float, ...], expected: int) -> None:
    clock = ChessClock(TimeControl.parse("7200"))
    for side in (WHITE, BLACK):
        for elapsed in times:
            play(clock, side, 0.0, elapsed)  # from 0, so each charge is exactly `elapsed`
    assert clock.cc_seconds() == (expected, expected)


def test_start_twice_and_stop_idle_are_errors() -> None:
    clock = ChessClock(TimeControl.parse("60"))
    with pytest.raises(ProgrammingError, match="no move running"):
        clock.stop(1.0)
    clock.start(WHITE, 0.0)
    with pytest.raises(ProgrammingError, match="still running"):
        clock.start(BLACK, 1.0)
    assert clock.running == WHITE


# --- pause and resume ------------------------------------------------------------------


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
    clock.resume(500.0)
    assert clock.flag_deadline() == 550.0
    assert clock.stop(505.0) == 15.0
    assert clock.consumed(BLACK) == 0.0


def test_start_while_paused_charges_from_resume() -> None:
    clock = ChessClock(TimeControl.parse("60"))
    clock.pause(0.0)
    clock.start(BLACK, 5.0)
    assert clock.consumed(BLACK, 100.0) == 0.0
    clock.resume(100.0)
    clock.resume(150.0)  # not paused: changes nothing
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
    clock.resume(200.0)
    assert clock.flag_fell(201.0)


# --- restore ---------------------------------------------------------------------------


def test_index_convention_is_white_first() -> None:
    assert side_index(WHITE) == 0
    assert side_index(BLACK) == 1
    clock = ChessClock(TimeControl.parse("300"), consumed=(10.0, 20.0), moves_made=(3, 2))
    assert clock.consumed(WHITE) == 10.0
    assert clock.consumed(BLACK) == 20.0
    assert clock.moves_made(WHITE) == 3
    assert clock.cc_seconds() == (10, 20)


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
    assert restored.cc_seconds() == clock.cc_seconds()
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
    assert restored.cc_seconds() == (4, 6)
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


@given(control=timed_controls)
def test_canonical_text_parses_back_to_the_same_control(control: TimeControl) -> None:
    assert TimeControl.parse(control.text) == control


# A reference parser for the grammar of PROTOCOL.md 5, written the plain way (string
# splitting and exact fractions) so that the regular expression and the range checks
# of the real one are tested against something that shares none of their code.


def reference_number(text: str) -> Fraction | None:
    whole, point, fraction = text.partition(".")
    if not whole.isascii() or not whole.isdigit():
        return None
    if point and (not fraction.isascii() or not fraction.isdigit() or len(fraction) > 6):
        return None
    if len(whole) > 9:
        return None
    return Fraction(text)


def reference_period(text: str) -> tuple[int | None, Fraction, Fraction, bool] | None:
    sandclock = text.startswith("*")
    body = text[1:] if sandclock else text
    moves: int | None = None
    if "/" in body:
        count, body = body.split("/", 1)
        if sandclock or not count.isascii() or not count.isdigit() or len(count) > 9:
            return None
        moves = int(count)
    seconds_text, plus, increment_text = body.partition("+")
    seconds = reference_number(seconds_text)
    increment = reference_number(increment_text) if plus else Fraction(0)
    if seconds is None or increment is None or (sandclock and plus):
        return None
    if moves == 0 or seconds == 0 or max(seconds, increment) > 999 * 24 * 3600:
        return None
    return moves, seconds, increment, sandclock


def reference_parse(text: str) -> list[tuple[int | None, Fraction, Fraction, bool]] | None:
    """The periods of a timed control, or None where the real parser must refuse it."""
    parts = [reference_period(part) for part in text.split(":")]
    if any(part is None for part in parts):
        return None
    periods = [part for part in parts if part is not None]
    if any(period[3] for period in periods) and len(periods) > 1:
        return None
    if any(period[0] is None for period in periods[:-1]):
        return None
    return periods


numbers = st.one_of(
    st.integers(0, 10**10).map(str),
    st.builds(
        lambda whole, fraction: f"{whole}.{fraction}",
        st.integers(0, 10**4),
        st.text("0123456789", min_size=1, max_size=8),
    ),
)
descriptors = st.builds(
    lambda star, moves, seconds, increment: f"{star}{moves}{seconds}{increment}",
    st.sampled_from(["", "", "", "*"]),
    st.one_of(st.just(""), st.integers(0, 200).map(lambda count: f"{count}/")),
    numbers,
    st.one_of(st.just(""), numbers.map(lambda number: f"+{number}")),
)
control_texts = st.lists(descriptors, min_size=1, max_size=4).map(":".join)
noisy_texts = st.one_of(
    control_texts,
    st.text("0123456789./+*:-? e", max_size=16),
)


@given(noisy_texts)
def test_the_parser_agrees_with_the_reference(text: str) -> None:
    written = text.strip(" ")  # surrounding blanks are not part of the control
    expected = None if written in ("?", "-") else reference_parse(written)
    try:
        control = TimeControl.parse(text)
    except ConfigError as exc:
        assert expected is None, (text, exc)
        assert exc.key == "tc"
        return
    if written in ("?", "-"):
        assert control.untimed and not control.periods
        return
    assert expected is not None, text
    assert control.text == written
    assert len(control.periods) == len(expected)
    for period, (moves, seconds, increment, sandclock) in zip(
        control.periods, expected, strict=True
    ):
        assert period.moves == moves
        assert period.seconds == float(seconds)
        assert period.increment == float(increment)
        assert period.sandclock == sandclock
    assert TimeControl.parse(control.canonical) == control


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


@pytest.mark.parametrize(
    ("text", "moves_made", "period", "to_go"),
    [
        ("40/7200:3600", 0, "40/7200", 40),
        ("40/7200:3600", 39, "40/7200", 1),
        ("40/7200:3600", 40, "3600", None),
        ("40/7200", 40, "40/7200", 40),  # the last move-count period repeats
        ("40/7200", 95, "40/7200", 25),
        ("40/5400+30:20/1800+30:900+30", 59, "20/1800+30", 1),
        ("40/5400+30:20/1800+30:900+30", 60, "900+30", None),
        ("300+2", 17, "300+2", None),
    ],
)
def test_the_period_of_the_next_move_and_the_moves_to_its_bonus(
    text: str, moves_made: int, period: str, to_go: int | None
) -> None:
    control = TimeControl.parse(text)
    assert str(control.period_of(moves_made)) == period
    assert control.moves_to_go(moves_made) == to_go
