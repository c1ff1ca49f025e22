"""serialref.referee.incidents: what went wrong for each player, from the referee's events."""

from __future__ import annotations

import io
from pathlib import Path

import chess
from doubles import Harness

from serialref import records
from serialref.epd.operations import Operand, Operation
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.happenings import LineReceived, MatchEvent, MatchStarted
from serialref.observers.progress import ProgressObserver
from serialref.referee.incidents import MatchIncidents, PlayerIncidents
from serialref.referee.resume import unfinished_match
from serialref.referee.settings import MatchSettings
from serialref.timecontrol import TimeControl

E4 = chess.Move.from_uci("e2e4")


def reply_e4(restarts: int | None = None) -> EpdRecord:
    """White's first move, with the client's count of its engine's restarts if given."""
    reply = records.reply(chess.Board(), E4)
    if restarts is None:
        return reply
    return reply.with_operations(Operation(records.ENGINE_RESTARTS, (Operand(str(restarts)),)))


def troubled_match() -> list[MatchEvent]:
    """Four games in which each kind of incident happens, as the referee publishes them.

    Alpha (port a) reports 3 engine restarts, loses its line and then game 4 on time;
    Beta (port b) makes a rules infraction, loses game 2 on time and reports a fault.
    """
    settings = MatchSettings(games=4, time_control=TimeControl.parse("60+1"),
                             reset_delay=1.0, conclude_delay=1.0)  # fmt: skip
    match = Harness(settings)
    match.send("a", records.sign_on(chess.Board(), "Alpha"))
    match.send("b", records.sign_on(chess.Board(), "Beta"))
    match.advance(1.0)  # game 1, Alpha White
    match.send("a", reply_e4(restarts=1), after=1.0)
    wrong = records.reply(chess.Board(), chess.Move.from_uci("e7e5"))  # not Black's position
    match.send("b", wrong, after=1.0)
    match.advance(1.0)
    match.advance(1.0)  # game 2, Beta White, whose flag falls
    match.advance(62.0)
    match.advance(1.0)
    match.advance(1.0)  # game 3, Alpha White again, Beta cannot go on
    match.send("a", reply_e4(restarts=3), after=1.0)
    after_e4 = chess.Board()
    after_e4.push(E4)
    match.send("b", records.player_fault(after_e4, "engine gone"), after=1.0)
    match.advance(1.0)
    match.advance(1.0)  # game 4, Beta White; Alpha's line goes, and its flag falls
    match.send("b", reply_e4(), after=1.0)
    match.referee.lines.on_line_lost("a", "the cable was pulled")
    match.advance(62.0)
    match.advance(1.0)
    assert match.referee.complete
    return match.events.events


def test_each_kind_of_incident_is_counted_for_its_player() -> None:
    incidents = MatchIncidents.of_events(troubled_match())
    assert incidents.of("a") == PlayerIncidents(timeouts=1, disconnections=1, engine_restarts=3)
    assert incidents.of("b") == PlayerIncidents(timeouts=1, infractions=1, faults=1)


def test_the_match_ends_with_fastchess_block_for_each_player_in_trouble() -> None:
    out = io.StringIO()
    observer = ProgressObserver(out)
    for event in troubled_match():
        observer.handle(event)
    lines = out.getvalue().splitlines()
    assert lines[-13:] == [
        "Player: Alpha",
        "  Timeouts: 1",
        "  Rules infractions: 0",
        "  Disconnections: 1",
        "  Faults: 0",
        "  Engine restarts: 3",
        "Player: Beta",
        "  Timeouts: 1",
        "  Rules infractions: 1",
        "  Disconnections: 0",
        "  Faults: 1",
        "  Engine restarts: 0",
        "Finished match",
    ]


def test_a_resumed_match_counts_on_from_its_journal(tmp_path: Path) -> None:
    events = troubled_match()
    # The referee stopped after game 3 began: its journal holds what came before.
    cut = next(index for index, event in enumerate(events)
               if isinstance(event, LineReceived)
               and "engine_restarts 3" in event.text)  # fmt: skip
    settings = MatchSettings(games=4, time_control=TimeControl.parse("60+1"))
    found = unfinished_match(events[:cut], settings, tmp_path / "journal.jsonl")
    assert found is not None
    assert found.point.incidents.of("a") == PlayerIncidents(engine_restarts=1)
    resumed = MatchIncidents(found.point.incidents)
    for event in events[cut:]:
        if not isinstance(event, MatchStarted):
            resumed.add(event)
    whole = MatchIncidents.of_events(events)
    assert [resumed.of(port) for port in "ab"] == [whole.of(port) for port in "ab"]
    assert found.point.incidents.of("a") == PlayerIncidents(engine_restarts=1)  # a copy


def test_a_clean_match_has_no_block() -> None:
    incidents = MatchIncidents()
    assert incidents.summary({"a": "Alpha", "b": "Beta"}) == []


def test_engine_restarts_add_up_and_a_new_client_counts_from_nothing() -> None:
    incidents = MatchIncidents()
    for count in (1, 1, 2, 1, 3):  # the client restarted after "2": its count began anew
        incidents.add(LineReceived("a", format_record(reply_e4(count)), 0.0, 0.0))
    assert incidents.of("a").engine_restarts == 2 + 1 + 2
    for text in ("garbage engine_restarts", "8/8/8/8 w - - engine_restarts x; refreq reply;"):
        incidents.add(LineReceived("a", text, 0.0, 0.0))
    incidents.add(LineReceived("a", "engine_restarts 9", 0.0, 0.0, malformed=True))
    assert incidents.of("a").engine_restarts == 5
