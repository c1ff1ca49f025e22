"""The seats a game holds: every record it sends is noted by the seat it goes to, and the
rejoin windows of the players that left."""

from __future__ import annotations

import chess
from doubles import EventRecorder, InstantWire, SteppedClock

from serialref.happenings import PlayerSignedOff, PlayerSignedOn
from serialref.referee.game.seats import GameSeats
from serialref.referee.host import RefereeHost
from serialref.referee.publisher import Publisher
from serialref.referee.session import PortSession, SessionState


def seats_of_game(number: int = 1) -> tuple[GameSeats, InstantWire, EventRecorder]:
    clock = SteppedClock(100.0)
    ports = InstantWire(clock)
    record = EventRecorder()
    publisher = Publisher([record], [], wall_clock=lambda: 0.0, on_storage_failure=print)
    host = RefereeHost(ports, publisher, clock=clock)
    sessions = {"a": PortSession("a", "Alpha"), "b": PortSession("b")}  # b takes its own name
    return GameSeats(number, sessions, host), ports, record


def test_a_player_reset_for_this_game_is_not_reset_again() -> None:
    seats, ports, record = seats_of_game(3)
    seats.signed_on("a", None)
    seats.signed_on("b", "Bravo")
    seats.reset("a", chess.Board())
    seats.reset_the_rest(chess.Board())
    assert (ports.commands("a"), ports.commands("b")) == (["reset"], ["reset"])
    assert seats["b"].name == "Bravo" and seats["a"].state is SessionState.RESETTING
    assert [event.name for event in record.of(PlayerSignedOn)] == ["Alpha", "Bravo"]
    assert seats.reset_deadline(2.0) == 102.0


def test_a_fault_leaves_the_player_signed_off_and_conclude_goes_to_those_present() -> None:
    seats, ports, record = seats_of_game()
    for port in "ab":
        seats.signed_on(port, None)
    seats.reset_present(chess.Board())
    seats.inform(chess.Board().fen(), [])
    seats.fault("b", chess.Board().fen(), "illegal move")
    assert not seats.present("b") and not seats.all_present()
    assert record.of(PlayerSignedOff)[-1].reason == "fault: illegal move"
    seats.conclude(chess.Board().fen(), [], (0, 0))
    assert ports.commands("a")[-2:] == ["inform", "conclude"]
    assert ports.commands("b")[-1] == "fault"


def test_rejoin_windows_close_in_turn_and_the_referees_stall_lengthens_them() -> None:
    seats, _, _ = seats_of_game()
    seats.await_return("a", 130.0)
    seats.await_return("b", 110.0)
    assert seats.rejoin_deadline() == 110.0
    seats.not_running(5.0)
    assert seats.not_back(112.0) == []
    assert seats.not_back(115.0) == ["b"]
    assert seats.rejoin_deadline() == 135.0
    seats.forget_absences()
    assert seats.rejoin_deadline() is None and seats.not_back(1000.0) == []
