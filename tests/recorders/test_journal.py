"""Tests for serialref.recorders.journal: JSON Lines round trip, crashes, full disks, games."""

from __future__ import annotations

import errno
import json
import logging
import math
import os
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref.errors import RecorderError
from serialref.happenings import (
    EVENT_TYPES,
    GameEnded,
    GameStarted,
    Infraction,
    LineReceived,
    LinesIgnored,
    MatchEnded,
    MatchEvent,
    MatchStarted,
    MovePlayed,
    PgnAppended,
    PlayerSignedOff,
    PlayerSignedOn,
    RecordSent,
    RefereeStalled,
    SupervisorCommand,
)
from serialref.recorders.journal import (
    JournalGame,
    JournalRecorder,
    games_from_journal,
    read_journal,
)

AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


def move(game: int, ply: int, san: str = "e4", uci: str = "e2e4") -> MovePlayed:
    return MovePlayed(
        game=game, ply=ply, san=san, uci=uci, elapsed=1.5, remaining=(298.5, 300.0),
        consumed=(1.5, 0.0), moves_made=(1, 0), fen=AFTER_E4,
    )


def started(game: int) -> GameStarted:
    return GameStarted(
        game=game, white_port="/dev/ttyUSB0", black_port="/dev/ttyUSB1", fen=chess.STARTING_FEN,
        tags={"White": "alpha", "Black": "beta", "Round": str(game)},
    )


def ended(game: int) -> GameEnded:
    return GameEnded(
        game=game, result="1-0", termination="normal", reason="checkmate", fen=AFTER_E4,
        consumed=(1.5, 0.0),
    )


EVERY_EVENT: list[MatchEvent] = [
    MatchStarted(games=2, time_control="40/7200:3600", ports=("/dev/ttyS0", "socket://h:1"),
                 settings={"reset_delay": 5.0, "policy": "lose", "names": ["a", "b"]},
                 identity={"games": 2, "names": ["Crafty", None]}),
    PlayerSignedOn(port="/dev/ttyS0", name="Crafty 23.4"),
    RecordSent(port="/dev/ttyS0", text="refcom reset;", wall=1.7e9, left_at=12.25),
    RecordSent(port="/dev/ttyS0", text="refcom respond;", wall=1.7e9, left_at=12.5, queued=True),
    LineReceived(port="/dev/ttyS0", text="refreq \\x1b[2J", wall=1.7e9 + 1, at=13.5,
                 malformed=True, note="not EPD"),
    started(1),
    GameStarted(game=2, white_port="b", black_port="a", fen="8/8/8/4k3/8/8/8/4K2R w K - 0 1",
                tags={"White": "Müller \"the\" \\ one"}, opening_moves=("O-O", "Kd4")),
    move(1, 1),
    MovePlayed(game=1, ply=2, san="e5", uci="e7e5", elapsed=0.25, remaining=(math.inf, -0.5),
               consumed=(1.5, 0.25), moves_made=(1, 1), fen="x", draw_offer=True,
               analysis={"ce": "35", "pv": "Nf3 Nc6"}),
    Infraction(port="/dev/ttyS1", reason="reply out of turn", text="refreq reply;"),
    ended(1),
    PlayerSignedOff(port="/dev/ttyS1", reason="line lost"),
    LinesIgnored(port="/dev/ttyS1", count=4211),
    RefereeStalled(seconds=10.25),
    SupervisorCommand(command="add-time", args=("white", "30"), uid=1000, game=1),
    PgnAppended(game=1),
    MatchEnded(complete=False, score=(1.0, 0.0), reason="SIGTERM",
               clocks={"control": "300", "consumed": [1.5, 0.0], "moves_made": [1, 0],
                       "move": {"side": "black", "elapsed": 0.75}}),
]


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "journal.jsonl"


@pytest.fixture
def recorder(journal_path: Path) -> Iterator[JournalRecorder]:
    journal = JournalRecorder(journal_path)
    yield journal
    journal.close()


def write(path: Path, events: list[MatchEvent]) -> None:
    journal = JournalRecorder(path)
    for event in events:
        journal.handle(event)
    journal.close()


# --- round trip ------------------------------------------------------------------------

def test_the_sample_covers_every_event_type() -> None:
    assert {type(event).__name__ for event in EVERY_EVENT} == set(EVENT_TYPES)


def test_every_event_type_reads_back_equal(journal_path: Path) -> None:
    write(journal_path, EVERY_EVENT)
    assert read_journal(journal_path) == EVERY_EVENT


def test_tuples_come_back_as_tuples(journal_path: Path) -> None:
    write(journal_path, EVERY_EVENT)
    restored = read_journal(journal_path)
    played = next(event for event in restored if isinstance(event, MovePlayed))
    opening = [event for event in restored if isinstance(event, GameStarted)][1]
    assert isinstance(played.remaining, tuple)
    assert isinstance(played.moves_made, tuple)
    assert isinstance(opening.opening_moves, tuple)


@given(st.text(), st.text())
def test_any_text_round_trips(tmp_path_factory: pytest.TempPathFactory, port: str, text: str
                              ) -> None:
    path = tmp_path_factory.mktemp("journal") / "journal.jsonl"
    event = LineReceived(port=port, text=text, wall=1.0, at=2.0)
    write(path, [event])
    assert read_journal(path) == [event]


def test_each_line_is_ascii_json_with_the_event_name_and_wall_time(journal_path: Path) -> None:
    write(journal_path, EVERY_EVENT)
    lines = journal_path.read_bytes().split(b"\n")
    assert lines.pop() == b""
    entries = [json.loads(line.decode("ascii")) for line in lines]
    assert [entry["event"] for entry in entries] == [type(e).__name__ for e in EVERY_EVENT]
    assert all(isinstance(entry["wall"], float) for entry in entries)


def test_events_keep_their_own_wall_time(journal_path: Path) -> None:
    sent = RecordSent(port="p", text="refcom reset;", wall=123.5, left_at=4.0)
    write(journal_path, [sent, PlayerSignedOn(port="p", name="x")])
    first, second = (json.loads(line) for line in journal_path.read_text().splitlines())
    assert first["wall"] == 123.5
    assert second["wall"] > 1e9  # the time of writing


def test_every_line_is_on_disk_before_close(recorder: JournalRecorder, journal_path: Path) -> None:
    recorder.handle(EVERY_EVENT[2])  # RecordSent: flushed though not synced
    assert read_journal(journal_path) == [EVERY_EVENT[2]]


def test_a_resumed_run_appends(journal_path: Path) -> None:
    write(journal_path, EVERY_EVENT[:3])
    write(journal_path, EVERY_EVENT[3:])
    assert read_journal(journal_path) == EVERY_EVENT


# --- crashes and bad files -------------------------------------------------------------

def test_a_last_line_cut_by_a_crash_is_dropped_with_a_warning(
    journal_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(journal_path, EVERY_EVENT[:4])
    with journal_path.open("ab") as out:
        out.write(b'{"event": "MovePlayed", "wall": 1.7e9, "game": 1, "pl')
    with caplog.at_level(logging.WARNING):
        assert read_journal(journal_path) == EVERY_EVENT[:4]
    assert "line 5" in caplog.text
    assert "cut by a crash" in caplog.text


def test_reopening_cuts_the_torn_tail_so_new_entries_stay_readable(
    journal_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(journal_path, EVERY_EVENT[:4])
    with journal_path.open("ab") as out:
        out.write(b'{"event": "Move')
    with caplog.at_level(logging.WARNING):
        write(journal_path, EVERY_EVENT[4:])
    assert "cut off 15 bytes" in caplog.text
    assert read_journal(journal_path) == EVERY_EVENT


def test_a_torn_first_line_leaves_an_empty_journal(journal_path: Path) -> None:
    journal_path.write_bytes(b"\x00\x00\x00")  # a power cut can leave zeros instead of data
    write(journal_path, [EVERY_EVENT[0]])
    assert read_journal(journal_path) == [EVERY_EVENT[0]]


@pytest.mark.parametrize(
    ("bad_line", "why"),
    [
        (b'{"event": "MovePlayed", "ga', "Unterminated string"),
        (b'{"event": "Teleported", "wall": 1.0}', "unknown event 'Teleported'"),
        (b'{"event": "PlayerSignedOn", "port": "p", "name": "x", "elo": 1}', "unknown fields"),
        (b'{"event": "PlayerSignedOn", "port": "p"}', "name"),
        (b'["PlayerSignedOn"]', "expected a JSON object"),
        (b'{"event": "PlayerSignedOn", "port": "p\xe9", "name": "x"}', "ascii"),
        (b"", "Expecting value"),
        (b"[" * 100_000 + b"]" * 100_000, "recursion"),
    ],
)
def test_a_bad_line_in_the_middle_names_its_number(
    journal_path: Path, bad_line: bytes, why: str
) -> None:
    write(journal_path, EVERY_EVENT[:2])
    with journal_path.open("ab") as out:
        out.write(bad_line + b"\n")
    write(journal_path, EVERY_EVENT[2:4])
    with pytest.raises(RecorderError, match=r"journal\.jsonl, line 3: not a journal entry") as info:
        read_journal(journal_path)
    assert why in str(info.value)


def test_a_missing_journal_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(RecorderError, match=r"cannot read .*nothing\.jsonl: No such file"):
        read_journal(tmp_path / "nothing.jsonl")


# --- write failures --------------------------------------------------------------------

def test_a_missing_directory_is_an_error_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "dir" / "journal.jsonl"
    with pytest.raises(RecorderError) as info:
        JournalRecorder(path)
    assert str(info.value) == (
        f"cannot open {path}: No such file or directory "
        f"(create the directory {str(path.parent)!r} first)"
    )
    assert not path.parent.exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_a_full_disk_is_a_recorder_error_naming_the_file() -> None:
    journal = JournalRecorder(Path("/dev/full"))
    with pytest.raises(RecorderError) as info:
        journal.handle(EVERY_EVENT[0])
    assert str(info.value) == "cannot write /dev/full: No space left on device"
    assert isinstance(info.value.__cause__, OSError)
    assert info.value.__cause__.errno == errno.ENOSPC
    journal.close()  # the failure was reported: closing does not raise it again


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_after_a_failed_write_the_journal_refuses_more() -> None:
    journal = JournalRecorder(Path("/dev/full"))
    with pytest.raises(RecorderError):
        journal.handle(EVERY_EVENT[0])
    with pytest.raises(RecorderError, match=r"No space left on device.*journal stopped"):
        journal.handle(EVERY_EVENT[1])
    journal.close()


def test_a_failing_fsync_is_a_recorder_error(
    recorder: JournalRecorder, monkeypatch: pytest.MonkeyPatch, journal_path: Path
) -> None:
    def fail(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fdatasync", fail)
    with pytest.raises(RecorderError, match=rf"cannot write {journal_path}: No space left"):
        recorder.handle(started(1))


def test_a_failing_sync_after_the_step_is_a_recorder_error(
    recorder: JournalRecorder, monkeypatch: pytest.MonkeyPatch, journal_path: Path
) -> None:
    def fail(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fdatasync", fail)
    recorder.handle(move(1, 1))
    with pytest.raises(RecorderError, match=rf"cannot sync {journal_path}: Input/output error"):
        recorder.sync()
    with pytest.raises(RecorderError, match="journal stopped at that error"):
        recorder.handle(move(1, 2))


# --- durability ------------------------------------------------------------------------

def test_fsync_after_every_event_a_restore_needs(
    recorder: JournalRecorder, fsyncs: list[str], journal_path: Path
) -> None:
    synced_after = {}
    for event in EVERY_EVENT:
        before = len(fsyncs)
        recorder.handle(event)
        synced_after[type(event).__name__] = len(fsyncs) - before
    assert synced_after == {
        "MatchStarted": 1, "PlayerSignedOn": 1, "PlayerSignedOff": 1, "GameStarted": 1,
        "MovePlayed": 0, "GameEnded": 1, "MatchEnded": 1, "PgnAppended": 1,
        "RecordSent": 0, "LineReceived": 0, "Infraction": 0, "LinesIgnored": 0,
        "RefereeStalled": 0, "SupervisorCommand": 1,
    }
    assert set(fsyncs) == {str(journal_path)}


def test_a_move_is_synced_when_the_step_is_over_once(
    recorder: JournalRecorder, fsyncs: list[str]
) -> None:
    recorder.handle(EVERY_EVENT[0])  # MatchStarted: synced at once
    assert len(fsyncs) == 1
    recorder.handle(move(1, 1))
    recorder.handle(RecordSent(port="a", text="refcom respond;", wall=1.7e9, left_at=3.0))
    assert len(fsyncs) == 1  # the respond went out before the move reached the disk
    recorder.sync()
    recorder.sync()
    assert len(fsyncs) == 2


# --- games -----------------------------------------------------------------------------

def test_games_are_grouped_in_order() -> None:
    events: list[MatchEvent] = [
        EVERY_EVENT[0], started(1), move(1, 1), EVERY_EVENT[2], move(1, 2), ended(1),
        started(2), move(2, 1),
    ]
    assert games_from_journal(events) == [
        JournalGame(started=started(1), moves=[move(1, 1), move(1, 2)], ended=ended(1)),
        JournalGame(started=started(2), moves=[move(2, 1)], ended=None),
    ]


def test_a_resumed_run_continues_the_unfinished_game() -> None:
    first_run: list[MatchEvent] = [EVERY_EVENT[0], started(1), move(1, 1)]
    resumed_run: list[MatchEvent] = [EVERY_EVENT[0], move(1, 2), ended(1), started(2)]
    games = games_from_journal(first_run + resumed_run)
    assert [game.moves for game in games] == [[move(1, 1), move(1, 2)], []]
    assert games[0].ended == ended(1)


def test_a_repeated_start_of_an_unfinished_game_keeps_its_moves() -> None:
    restarted = GameStarted(game=1, white_port="x", black_port="y", fen=chess.STARTING_FEN,
                            tags={})
    games = games_from_journal([started(1), move(1, 1), restarted, move(1, 2)])
    assert games == [JournalGame(started=started(1), moves=[move(1, 1), move(1, 2)], ended=None)]


def test_a_finished_game_number_started_again_is_a_new_game() -> None:
    games = games_from_journal([started(1), ended(1), started(1), move(1, 1)])
    assert [(game.ended, game.moves) for game in games] == [(ended(1), []), (None, [move(1, 1)])]


@pytest.mark.parametrize(
    "events",
    [[move(1, 1)], [started(1), ended(1), move(1, 1)], [started(1), ended(2)]],
    ids=["never started", "after its end", "other game"],
)
def test_a_move_or_end_outside_its_game_is_an_error(events: list[MatchEvent]) -> None:
    with pytest.raises(RecorderError, match=r"for game \d, which is not in progress"):
        games_from_journal(events)


def test_games_read_back_from_a_journal_file(journal_path: Path) -> None:
    write(journal_path, EVERY_EVENT)
    games = games_from_journal(read_journal(journal_path))
    assert [(game.started.game, len(game.moves), game.ended is None) for game in games] == [
        (1, 2, False), (2, 0, True),
    ]
