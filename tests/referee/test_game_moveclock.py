"""serialref.referee.game.moveclock: when a move's clock starts, on fake time."""

from __future__ import annotations

import chess
import pytest

from serialref.clock import ChessClock
from serialref.referee.game.moveclock import MoveClock, Pause
from serialref.timecontrol import TimeControl

WHITE = chess.WHITE


def a_move_clock(grace: float = 0.0, pause: Pause | None = None) -> MoveClock:
    return MoveClock(ChessClock(TimeControl.parse("60")), grace, pause or Pause())


def test_a_respond_that_left_at_once_starts_the_move_then() -> None:
    moves = a_move_clock()
    moves.asked("a", WHITE, 10.0)
    assert moves.counting and moves.clock.consumed(WHITE, 12.5) == pytest.approx(2.5)


def test_a_held_back_respond_starts_the_move_when_it_leaves() -> None:
    moves = a_move_clock()
    moves.asked("a", WHITE, None)
    assert not moves.counting and moves.awaits_departure_to("a")
    moves.left("b", 11.0)  # another port's record: nothing
    assert not moves.counting
    moves.left("a", 14.0)
    assert moves.clock.consumed(WHITE, 15.0) == pytest.approx(1.0)


def test_a_respond_sent_again_for_the_same_move_does_not_restart_it() -> None:
    moves = a_move_clock()
    moves.asked("a", WHITE, 10.0)
    moves.asked("a", WHITE, 30.0)  # a restore
    assert moves.clock.consumed(WHITE, 31.0) == pytest.approx(21.0)


def test_a_player_gone_before_its_respond_left_has_its_clock_run() -> None:
    moves = a_move_clock()
    moves.asked("a", WHITE, None)
    moves.gone("a", 20.0)
    assert moves.clock.consumed(WHITE, 25.0) == pytest.approx(5.0)


def test_a_stopped_move_resumes_from_the_respond_after_the_pause() -> None:
    moves = a_move_clock()
    moves.asked("a", WHITE, 0.0)
    moves.stop(4.0)
    assert not moves.counting
    moves.asked("a", WHITE, 100.0)  # every player back: asked again
    assert moves.clock.consumed(WHITE, 101.0) == pytest.approx(5.0)


def test_the_flag_timer_waits_for_a_reply_still_on_the_line() -> None:
    moves = a_move_clock(grace=0.2)
    moves.asked("a", WHITE, 0.0)
    assert moves.flag_deadline() == pytest.approx(60.2)
    assert moves.flag_fell_by(60.1) is None
    assert moves.flag_fell_by(60.25) == pytest.approx(60.0)  # it fell at the deadline


def test_time_the_referee_did_not_run_is_charged_to_no_one() -> None:
    moves = a_move_clock()
    moves.asked("a", WHITE, 0.0)
    moves.not_running(2.0, 12.0)
    assert moves.clock.consumed(WHITE, 13.0) == pytest.approx(3.0)


def test_the_supervisors_pause_holds_the_move_until_it_is_released() -> None:
    pause = Pause()
    moves = a_move_clock(pause=pause)
    moves.asked("a", WHITE, 0.0)
    pause.on = True
    moves.hold(2.0)
    assert not moves.counting and moves.held
    moves.left("a", 5.0)  # nothing it waited for: the clock stays held
    pause.on = False
    moves.release_move(10.0)
    assert moves.clock.consumed(WHITE, 11.0) == pytest.approx(3.0)


def test_a_move_whose_respond_waits_starts_when_it_leaves_after_the_pause() -> None:
    pause = Pause()
    moves = a_move_clock(pause=pause)
    pause.on = True
    moves.hold(0.0)
    moves.asked("a", WHITE, None)  # sent before the pause began, still in the port
    pause.on = False
    moves.release_move(3.0)
    assert not moves.counting  # its respond has not left: nothing to charge yet
    moves.left("a", 7.0)
    assert moves.clock.consumed(WHITE, 8.0) == pytest.approx(1.0)


def test_a_suspended_move_stays_stopped_when_the_pause_ends() -> None:
    pause = Pause()
    moves = a_move_clock(pause=pause)
    moves.asked("a", WHITE, 0.0)
    moves.stop(4.0)  # suspended
    pause.on = True
    moves.hold(5.0)
    pause.on = False
    moves.release(9.0)  # no move is asked for: the clock waits for the next respond
    assert moves.clock.consumed(WHITE, 20.0) == pytest.approx(4.0)
    moves.asked("a", WHITE, 20.0)
    assert moves.clock.consumed(WHITE, 21.0) == pytest.approx(5.0)
