"""Tests for serialref.standby.mirror: the standby's validated mirror against scripted primaries.

The test plays the primary to a :class:`JournalMirror` over real loopback sockets. The only
waits that are not events are the silences the mirror itself is measuring.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from pathlib import Path

import pytest
from doubles import SteppedClock
from standby_peers import (
    COMPLETE_MATCH,
    KEY,
    UNFINISHED_MATCH,
    LogWatcher,
    MirrorThread,
    ScriptedPrimary,
    journal_bytes,
    lines_of,
    mirror_at,
)

from serialref.errors import ConfigError, ProtocolError
from serialref.recorders.journal import JournalRecorder
from serialref.standby.channel import FrameKind, primary_greeting
from serialref.standby.mirror import JournalMirror
from serialref.standby.primary import JournalReplicator


def proven(mirror: JournalMirror) -> ScriptedPrimary:
    primary = ScriptedPrimary(mirror)
    primary.prove()
    return primary


def test_mirror_tells_its_state_only_after_the_proof_and_appends_whole_entries(
    tmp_path: Path,
) -> None:
    data = journal_bytes(tmp_path, UNFINISHED_MATCH)
    journal = tmp_path / "mirror.jsonl"
    with mirror_at(journal) as mirror:
        waiting = MirrorThread(mirror)
        primary = proven(mirror)
        assert (primary.mirror_size, primary.mirror_digest) == (0, hashlib.sha256().digest())
        primary.start()
        primary.send_entries(b"".join(lines_of(data)[:2]))
        primary.heartbeat()
        primary.send_entries(b"".join(lines_of(data)[2:]))
        assert primary.channel is not None
        cut = primary.channel.seal(FrameKind.ENTRIES, b'{"event": "MatchEnded"}\n')
        primary.send(cut[:-5])  # a frame cut by a crash
        primary.close()
        assert waiting.join() is True
    assert journal.read_bytes() == data


def test_mirror_takes_over_only_after_the_silence_it_was_given(tmp_path: Path) -> None:
    silence = 1.0
    with mirror_at(tmp_path / "mirror.jsonl", takeover_after=silence) as mirror:
        waiting = MirrorThread(mirror)
        primary = proven(mirror)
        try:
            primary.start()
            for _ in range(5):  # heartbeats every 0.2 s keep the primary alive
                assert waiting.join(0.2) is None
                last_heartbeat = time.monotonic()  # taken before it can have arrived
                primary.heartbeat()
            assert waiting.join() is True
            assert waiting.returned_at - last_heartbeat >= silence
        finally:
            primary.close()


def test_a_mirror_that_never_heard_a_primary_waits_for_one(tmp_path: Path) -> None:
    with mirror_at(tmp_path / "mirror.jsonl", takeover_after=0.05) as mirror:
        waiting = MirrorThread(mirror)
        assert waiting.join(0.5) is None  # ten times the silence: no takeover
        greeting_only = ScriptedPrimary(mirror)
        greeting_only.send(b"serialref-pri")  # not even a whole greeting: not heard
        proven_only = proven(mirror)  # proved the key, never said where it starts: not heard
        assert waiting.join(0.5) is None
        waiting.stop()
        greeting_only.close()
        proven_only.close()


def test_mirror_cuts_its_own_torn_tail_and_continues_where_it_ends(tmp_path: Path) -> None:
    data = journal_bytes(tmp_path, COMPLETE_MATCH)
    kept = b"".join(lines_of(data)[:4])
    journal = tmp_path / "mirror.jsonl"
    journal.write_bytes(kept + lines_of(data)[4][:30])  # the standby itself crashed mid-write
    with mirror_at(journal) as mirror:
        assert journal.read_bytes() == kept
        waiting = MirrorThread(mirror)
        primary = proven(mirror)
        assert (primary.mirror_size, primary.mirror_digest) == (
            len(kept), hashlib.sha256(kept).digest()
        )  # fmt: skip
        primary.start()
        primary.send_entries(data[len(kept) :])
        primary.close()
        assert waiting.join() is True
    assert journal.read_bytes() == data


def test_mirror_of_another_journal_is_set_aside_when_the_primary_starts_over(
    tmp_path: Path,
) -> None:
    old = journal_bytes(tmp_path, COMPLETE_MATCH)
    new = journal_bytes(tmp_path, UNFINISHED_MATCH)
    journal = tmp_path / "mirror.jsonl"
    journal.write_bytes(old)
    (tmp_path / "mirror.jsonl.replaced-1").write_bytes(b"older still\n")
    with mirror_at(journal) as mirror:
        waiting = MirrorThread(mirror)
        primary = proven(mirror)
        primary.start(0)
        primary.send_entries(new)
        primary.close()
        assert waiting.join() is True
    assert journal.read_bytes() == new
    assert (tmp_path / "mirror.jsonl.replaced-2").read_bytes() == old
    assert (tmp_path / "mirror.jsonl.replaced-1").read_bytes() == b"older still\n"


def test_a_mirror_that_fails_its_checks_at_start_up_is_set_aside(
    tmp_path: Path, log: LogWatcher
) -> None:
    """A forged mirror written by an older standby is never taken over from."""
    good = journal_bytes(tmp_path, UNFINISHED_MATCH)
    forged = good + b'{"event": "GameEnded", "game": 1, "result": "1-0", "termination": "x"}\n'
    journal = tmp_path / "mirror.jsonl"
    journal.write_bytes(forged)
    with mirror_at(journal) as mirror:
        assert "mirror.jsonl, line 6: not a journal entry" in log.wait_for("line 6")
        assert journal.read_bytes() == b""
        waiting = MirrorThread(mirror)
        primary = proven(mirror)
        assert primary.mirror_size == 0
        primary.close()
        waiting.stop()
    assert (tmp_path / "mirror.jsonl.replaced-1").read_bytes() == forged


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (b'{"event": "MovePlayed", \n', "not a journal entry"),
        (b"[1, 2]\n", "expected a JSON object"),
        (b'{"event": "Bogus"}\n', "unknown event 'Bogus'"),
        (b'{"event": "GameEnded", "game": 2, "result": "1-0", "termination": "normal", '
         b'"reason": "forged", "fen": "8/8/8/8/8/8/8/8 w - - 0 1", "consumed": [0, 0]}\n',
         "game 2 is not in progress"),
        (b"\n", "not a journal entry"),
    ],
)  # fmt: skip
def test_a_bad_entry_drops_the_connection_and_the_good_ones_before_it_are_kept(
    tmp_path: Path, bad: bytes, problem: str, log: LogWatcher
) -> None:
    data = journal_bytes(tmp_path, UNFINISHED_MATCH)
    first = b"".join(lines_of(data)[:2])
    journal = tmp_path / "mirror.jsonl"
    with mirror_at(journal) as mirror:
        waiting = MirrorThread(mirror)
        primary = proven(mirror)
        primary.start()
        primary.send_entries(first)
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            primary.send_entries(data[len(first) :] + bad)  # good entries, then the bad one
        message = log.wait_for(problem)
        assert message.startswith(f"primary 127.0.0.1:{primary.port}: ")
        primary.assert_closed()
        primary.close()
        waiting.stop()
    assert journal.read_bytes() == data


def test_entries_that_do_not_end_a_line_are_refused_whole(tmp_path: Path, log: LogWatcher) -> None:
    data = journal_bytes(tmp_path, UNFINISHED_MATCH)
    first = b"".join(lines_of(data)[:2])
    journal = tmp_path / "mirror.jsonl"
    with mirror_at(journal) as mirror:
        waiting = MirrorThread(mirror)
        primary = proven(mirror)
        primary.start()
        primary.send_entries(first)
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            primary.send_entries(data[len(first) :] + b'{"event": "MatchEnded"')
        log.wait_for("entries that do not end a line")
        primary.assert_closed()
        primary.close()
        waiting.stop()
    assert journal.read_bytes() == first


@pytest.mark.parametrize(
    ("kind", "payload", "problem"),
    [
        (FrameKind.START, (7).to_bytes(8, "big"), "starts at byte 7, the mirror has 0"),
        (FrameKind.START, b"\0", "expected where the entries start, got START"),
        (FrameKind.ENTRIES, b"", "expected where the entries start, got ENTRIES"),
        (FrameKind.MIRROR, b"", "expected where the entries start, got MIRROR"),
    ],
)
def test_a_primary_must_say_where_its_entries_start(
    tmp_path: Path, kind: FrameKind, payload: bytes, problem: str, log: LogWatcher
) -> None:
    with mirror_at(tmp_path / "mirror.jsonl") as mirror:
        waiting = MirrorThread(mirror)
        primary = proven(mirror)
        primary.send_frame(kind, payload)
        assert log.wait_for(problem).startswith(f"primary 127.0.0.1:{primary.port}: ")
        primary.assert_closed()
        primary.close()
        waiting.stop()


def test_a_primary_sends_no_mirror_state(tmp_path: Path, log: LogWatcher) -> None:
    with mirror_at(tmp_path / "mirror.jsonl") as mirror:
        waiting = MirrorThread(mirror)
        primary = proven(mirror)
        primary.start()
        primary.send_frame(FrameKind.MIRROR, b"")
        assert "a MIRROR frame from the primary" in log.wait_for("MIRROR")
        primary.close()
        waiting.stop()


def test_a_primary_that_proves_the_key_replaces_the_old_one(
    tmp_path: Path, log: LogWatcher
) -> None:
    data = journal_bytes(tmp_path, UNFINISHED_MATCH)
    half = b"".join(lines_of(data)[:2])
    journal = tmp_path / "mirror.jsonl"
    with mirror_at(journal) as mirror:
        waiting = MirrorThread(mirror)
        old = proven(mirror)
        old.start()
        old.send_entries(half)
        assert old.channel is not None
        old.send(old.channel.seal(FrameKind.ENTRIES, lines_of(data)[2])[:20])
        new = ScriptedPrimary(mirror)
        new.prove()
        assert new.mirror_size in (0, len(half))  # the old one's last frames may be too late
        log.wait_for("replaces")
        old.assert_closed()
        new.start()
        new.send_entries(data[new.mirror_size :])
        new.close()
        old.close()
        assert waiting.join() is True
    assert journal.read_bytes() == data


def test_too_many_newcomers_are_refused_on_arrival(tmp_path: Path, log: LogWatcher) -> None:
    with mirror_at(tmp_path / "mirror.jsonl", max_newcomers=2) as mirror:
        waiting = MirrorThread(mirror)
        waiting_ones = [ScriptedPrimary(mirror) for _ in range(2)]
        for one in waiting_ones:
            one.send(b"serialref")
        crowd = ScriptedPrimary(mirror)
        assert "in their handshake already" in log.wait_for(f"peer 127.0.0.1:{crowd.port}")
        crowd.assert_closed()
        for one in waiting_ones:
            one.close()
        log.wait_for("closed the connection during the handshake")
        log.wait_for("closed the connection during the handshake")
        latecomer = proven(mirror)  # room again
        assert latecomer.mirror_size == 0
        for connection in (crowd, latecomer):
            connection.close()
        waiting.stop()


def test_the_handshake_deadline_runs_on_the_injected_clock(tmp_path: Path, log: LogWatcher) -> None:
    clock = SteppedClock()
    with mirror_at(tmp_path / "mirror.jsonl", handshake_timeout=10.0, clock=clock) as mirror:
        waiting = MirrorThread(mirror)
        slow = ScriptedPrimary(mirror)
        slow.send(primary_greeting(b"n" * 32)[:5])
        log.wait_for(f"peer 127.0.0.1:{slow.port} connected")
        clock.now += 9.0
        on_time = ScriptedPrimary(mirror)  # wakes the loop: 9 s are not 10
        log.wait_for(f"peer 127.0.0.1:{on_time.port} connected")
        clock.now += 1.0
        on_time.prove()  # wakes the loop again: 10 s are up for the slow one only
        assert "no handshake within 10.0 s" in log.wait_for(f"peer 127.0.0.1:{slow.port}")
        slow.assert_closed()
        for connection in (slow, on_time):
            connection.close()
        waiting.stop()


def test_a_mirror_given_only_a_port_listens_on_loopback(tmp_path: Path) -> None:
    with JournalMirror("0", tmp_path / "mirror.jsonl", KEY) as mirror:
        assert mirror.address.startswith("127.0.0.1:")


def test_mirror_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="takeover_after"):
        JournalMirror("127.0.0.1:0", tmp_path / "mirror.jsonl", KEY, takeover_after=0)
    with (
        mirror_at(tmp_path / "mirror.jsonl") as mirror,
        pytest.raises(ConfigError, match="cannot listen on"),
    ):
        JournalMirror(mirror.address, tmp_path / "other.jsonl", KEY)
    assert not (tmp_path / "mirror.jsonl").read_bytes()


def test_a_mirror_without_a_primary_lets_its_time_run_out(tmp_path: Path) -> None:
    with mirror_at(tmp_path / "mirror.jsonl") as mirror:
        started = time.monotonic()
        assert mirror.mirror_for(0.1) is False
        assert time.monotonic() - started >= 0.1
        assert not mirror.stopped


def test_replicator_and_mirror_make_a_byte_for_byte_copy(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    with mirror_at(tmp_path / "mirror.jsonl", takeover_after=0.3) as mirror:
        waiting = MirrorThread(mirror)
        recorder = JournalRecorder(journal)
        replicator = JournalReplicator(mirror.address, journal, KEY)
        for event in COMPLETE_MATCH:
            recorder.handle(event)
            replicator.handle(event)
        replicator.close()
        recorder.close()
        assert waiting.join() is True
    assert (tmp_path / "mirror.jsonl").read_bytes() == journal.read_bytes()


def test_a_scripted_primary_with_the_wrong_key_is_told_nothing(tmp_path: Path) -> None:
    """The helper's own check: proving with another key fails on the standby's answer."""
    with mirror_at(tmp_path / "mirror.jsonl") as mirror:
        waiting = MirrorThread(mirror)
        primary = ScriptedPrimary(mirror)
        with pytest.raises(ProtocolError, match="did not prove"):
            primary.prove(key=bytes(32))
        assert primary.mirror_size == -1
        primary.close()
        waiting.stop()
