"""One player's seat: its states, which replies are stale, how ignored lines are counted, and
when a sign_on is answered."""

from __future__ import annotations

from collections.abc import Callable

import chess
import pytest

from serialref import records
from serialref.errors import ProgrammingError
from serialref.referee.session import (
    IgnoredLines,
    PortSession,
    SessionState,
    SignOnPace,
    reply_keys,
)

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"
AFTER_E4_E5 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2"


def key(fen: str) -> str:
    return " ".join(fen.split(" ")[:4])


def test_reply_keys_accept_both_spellings_of_en_passant() -> None:
    assert reply_keys(START) == (key(START),)
    assert reply_keys(AFTER_E4) == (
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3",
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -",
    )


def in_game(port: str = "a") -> PortSession:
    session = PortSession(port, "Alpha")
    session.note_sign_on(None)
    session.note_reset(1, 10.0)
    session.note_joined()
    return session


def test_a_seat_through_a_game() -> None:
    session = PortSession("a", "Alpha")
    assert (session.state, session.signed_on, session.to_move) == (
        SessionState.OFFLINE, False, False,
    )  # fmt: skip
    session.note_sign_on(None)
    assert session.state is SessionState.SIGNED_ON and session.signed_on
    session.note_reset(1, 10.0)
    assert (session.state, session.reset_for_game, session.reset_at) == (
        SessionState.RESETTING, 1, 10.0,
    )  # fmt: skip
    session.note_joined()
    session.note_respond(START)
    assert session.state is SessionState.TO_MOVE and session.to_move
    session.note_reply()
    assert session.state is SessionState.IDLE and not session.to_move
    session.note_conclude()
    assert session.state is SessionState.SIGNED_ON
    session.note_disconnect()
    assert session.state is SessionState.DISCONNECTED and not session.signed_on


def test_a_reset_that_waits_in_the_port_keeps_the_last_time() -> None:
    session = in_game()
    session.note_reset(1, None)
    assert (session.reset_for_game, session.reset_at) == (1, 10.0)


@pytest.mark.parametrize(
    ("note", "trigger"),
    [
        (PortSession.note_reply, "reply_taken"),
        (lambda session: session.note_respond(START), "respond_sent"),
        (PortSession.note_joined, "game_joined"),
        (PortSession.note_conclude, "conclude_sent"),
        (lambda session: session.note_reset(1, 0.0), "reset_sent"),
    ],
)
def test_an_impossible_step_raises_for_a_seat_nobody_is_on(
    note: Callable[[PortSession], None], trigger: str
) -> None:
    with pytest.raises(ProgrammingError, match=f"{trigger} has no row when offline"):
        note(PortSession("a", "Alpha"))


def test_no_sign_on_after_disconnect() -> None:
    session = in_game()
    session.note_disconnect()
    assert session.disconnected
    with pytest.raises(ProgrammingError):
        session.note_sign_on(None)
    session.note_disconnect()  # told again: nothing changes
    assert session.disconnected


def test_a_name_given_at_sign_on_counts_unless_one_is_configured() -> None:
    configured, unnamed = PortSession("a", "Configured"), PortSession("b")
    assert (configured.name, unnamed.name) == ("Configured", "Player B")
    for session in (configured, unnamed):
        session.note_sign_on("FromTcsi")
    assert (configured.name, unnamed.name) == ("Configured", "FromTcsi")
    unnamed.note_sign_on(None)  # a sign_on without a name keeps the last one
    assert unnamed.name == "FromTcsi"


def test_a_player_can_leave_and_sign_on_again_from_any_state() -> None:
    for prepare in (lambda s: None, lambda s: s.note_respond(START)):
        session = in_game()
        prepare(session)
        session.note_left()
        assert session.state is SessionState.OFFLINE
        session.note_sign_on(None)
        assert session.state is SessionState.SIGNED_ON


def test_the_outstanding_respond_is_not_stale_the_answered_one_is() -> None:
    session = in_game()
    session.note_respond(AFTER_E4)
    assert not session.is_stale(key(AFTER_E4))
    session.note_reply()
    assert session.is_stale(key(AFTER_E4))
    assert session.is_stale("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -")
    assert not session.is_stale(key(AFTER_E4_E5))


def test_a_respond_sent_again_retires_the_one_before() -> None:
    session = in_game()
    session.note_respond(START)
    session.note_respond(AFTER_E4_E5)  # a restore asks again
    assert session.is_stale(key(START))
    assert not session.is_stale(key(AFTER_E4_E5))


def test_a_reply_to_the_previous_game_is_stale_then_forgotten() -> None:
    session = in_game()
    session.note_respond(AFTER_E4)
    session.note_conclude()  # crossed on the wire by the reply to that respond
    session.note_reset(2, 20.0)
    assert session.is_stale(key(AFTER_E4))
    session.note_joined()
    session.note_conclude()
    session.note_reset(3, 30.0)
    assert not session.is_stale(key(AFTER_E4))


def test_a_reset_for_the_same_game_keeps_its_answers() -> None:
    session = in_game()
    session.note_respond(AFTER_E4)
    session.note_reply()
    session.note_reset(1, 12.0)  # a restore of the same game
    assert session.is_stale(key(AFTER_E4))


# --- IgnoredLines ---------------------------------------------------------------------------


def test_a_burst_is_recorded_then_lines_are_counted() -> None:
    lines = IgnoredLines(burst=3, window=1.0)
    assert [lines.admit(5.0 + n * 0.1) for n in range(5)] == [
        (True, 0), (True, 0), (True, 0), (False, 0), (False, 0),
    ]  # fmt: skip
    assert lines.admit(6.0) == (True, 2)  # a new window: the two left out are reported once
    assert lines.admit(6.1) == (True, 0)


def test_flush_reports_what_was_left_out_once() -> None:
    lines = IgnoredLines(burst=1, window=10.0)
    lines.admit(0.0)
    lines.admit(1.0)
    lines.admit(2.0)
    assert lines.flush() == 2
    assert lines.flush() == 0
    assert lines.admit(3.0) == (False, 0)  # still the same window


def test_window_over_starts_a_new_window_only_when_it_is_over() -> None:
    lines = IgnoredLines(burst=1, window=1.0)
    lines.admit(0.0)
    lines.admit(0.5)
    assert lines.window_over(0.9) == 0
    assert lines.window_over(1.0) == 1
    assert lines.admit(1.1) == (True, 0)


def test_defaults_record_five_a_second() -> None:
    lines = IgnoredLines()
    assert sum(lines.admit(0.01 * n)[0] for n in range(50)) == 5


# --- SignOnPace ---------------------------------------------------------------------------

SIGN_ON = records.sign_on(chess.Board(), "Beta")


def test_a_first_sign_on_is_answered_at_once_and_one_within_the_pause_is_held() -> None:
    pace = SignOnPace(first=1.0, longest=60.0)
    assert pace.hold(SIGN_ON, 10.0) is False
    assert pace.due() is None
    assert pace.hold(SIGN_ON, 10.2) is True
    assert pace.due() == 11.0
    assert pace.release(10.9) is None
    assert pace.release(11.0) is SIGN_ON
    assert pace.due() is None


def test_sign_ons_that_keep_coming_are_answered_ever_more_rarely() -> None:
    pace = SignOnPace(first=1.0, longest=8.0)
    answered = []
    now = 0.0
    while now < 40.0:  # a sign_on every 10 ms, each answer as soon as it is due
        if not pace.hold(SIGN_ON, now):
            answered.append(now)
        if pace.release(now) is not None:
            answered.append(now)
        now = round(now + 0.01, 2)
    assert answered == [0.0, 1.0, 3.0, 7.0, 15.0, 23.0, 31.0, 39.0]


def test_a_player_quiet_for_a_whole_longest_pause_starts_again_at_the_first() -> None:
    pace = SignOnPace(first=1.0, longest=8.0)
    pace.hold(SIGN_ON, 0.0)
    pace.hold(SIGN_ON, 0.5)
    assert pace.release(1.0) is SIGN_ON  # the next pause is 2 s, up to 3.0
    assert pace.hold(SIGN_ON, 10.9) is False  # 7.9 s past the end of the pause
    assert pace.hold(SIGN_ON, 11.0) is True
    assert pace.due() == 10.9 + 4.0
    pace.drop()
    assert pace.hold(SIGN_ON, 40.0) is False  # 25 s past it: 1 s again
    assert pace.hold(SIGN_ON, 40.5) is True
    assert pace.due() == 41.0


def test_a_seat_holds_a_sign_on_within_the_pause_and_ignores_one_while_unread() -> None:
    session = PortSession("b", "Beta")
    assert session.sign_on_waits(SIGN_ON, 1.0, unread=True) == ""  # not signed on yet
    session.note_sign_on(None)
    assert session.sign_on_waits(SIGN_ON, 1.1, unread=True).startswith("ignored: ")
    assert session.sign_on_waits(SIGN_ON, 1.2, unread=False).startswith("held: ")
    assert session.sign_ons.due() == 2.0
    session.note_left()
    assert session.sign_ons.due() is None  # gone: nobody to answer
