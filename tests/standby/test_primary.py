"""Tests for serialref.standby.primary: the journal replicator against a scripted standby.

The test plays the standby to a :class:`JournalReplicator` over a real loopback socket;
waits are on sockets, threads and log records, with timeouts.
"""

from __future__ import annotations

import hashlib
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from standby_peers import (
    COMPLETE_MATCH,
    FIRST_MOVE,
    KEY,
    MATCH_STARTED,
    OTHER_KEY,
    TIMEOUT,
    UNFINISHED_MATCH,
    LogWatcher,
    ScriptedStandby,
    journal_bytes,
    lines_of,
)

from serialref.errors import ConfigError
from serialref.standby.channel import (
    PRIMARY_GREETING_SIZE,
    STANDBY_ANSWER_SIZE,
    FrameKind,
    new_nonce,
    standby_answer,
)
from serialref.standby.primary import JournalReplicator


@pytest.fixture
def standby() -> Iterator[ScriptedStandby]:
    fake = ScriptedStandby()
    try:
        yield fake
    finally:
        fake.close()


@contextmanager
def replicator_on(
    journal: Path, address: str, key: bytes = KEY, **options: float
) -> Iterator[JournalReplicator]:
    options.setdefault("heartbeat_interval", 0.05)
    replicator = JournalReplicator(address, journal, key, **options)
    try:
        yield replicator
    finally:
        replicator.close()


def test_replicator_sends_the_whole_journal_then_each_new_line(
    tmp_path: Path, standby: ScriptedStandby
) -> None:
    journal = tmp_path / "journal.jsonl"
    data = journal_bytes(tmp_path, COMPLETE_MATCH)
    first, rest = lines_of(data)[:3], lines_of(data)[3:]
    journal.write_bytes(b"".join(first))
    with replicator_on(journal, standby.address) as replicator:
        replicator.handle(MATCH_STARTED)
        connection, offset = standby.accept()
        assert offset == 0
        assert connection.read_entries(3) == first
        for line in rest:
            with journal.open("ab") as file:
                file.write(line)
            replicator.handle(FIRST_MOVE)
            assert connection.read_entries(1) == [line]


def test_replicator_sends_heartbeats_while_nothing_happens(
    tmp_path: Path, standby: ScriptedStandby
) -> None:
    journal = tmp_path / "journal.jsonl"
    with replicator_on(journal, standby.address) as replicator:
        replicator.handle(MATCH_STARTED)  # no journal yet: nothing to send but heartbeats
        connection, _ = standby.accept()
        kinds = [connection.read_frame().kind for _ in range(3)]
        assert kinds == [FrameKind.HEARTBEAT] * 3


def test_replicator_holds_back_a_line_until_it_is_complete(
    tmp_path: Path, standby: ScriptedStandby
) -> None:
    journal = tmp_path / "journal.jsonl"
    whole = lines_of(journal_bytes(tmp_path, UNFINISHED_MATCH))
    journal.write_bytes(whole[0] + whole[1][:10])
    with replicator_on(journal, standby.address) as replicator:
        replicator.handle(MATCH_STARTED)
        connection, _ = standby.accept()
        assert connection.read_until_heartbeat() == [whole[0]]
        with journal.open("ab") as file:
            file.write(whole[1][10:])
        replicator.handle(MATCH_STARTED)
        assert connection.read_entries(1) == [whole[1]]


def test_replicator_continues_where_the_mirror_ends(
    tmp_path: Path, standby: ScriptedStandby
) -> None:
    journal = tmp_path / "journal.jsonl"
    data = journal_bytes(tmp_path, UNFINISHED_MATCH)
    journal.write_bytes(data)
    mirror = b"".join(lines_of(data)[:2])
    with replicator_on(journal, standby.address) as replicator:
        replicator.handle(MATCH_STARTED)
        connection, offset = standby.accept(mirror)
        assert offset == len(mirror)
        assert connection.read_entries(3) == lines_of(data)[2:]


def test_replicator_resends_everything_to_a_mirror_of_another_journal(
    tmp_path: Path, standby: ScriptedStandby, log: LogWatcher
) -> None:
    journal = tmp_path / "journal.jsonl"
    data = journal_bytes(tmp_path, UNFINISHED_MATCH)
    journal.write_bytes(data)
    with replicator_on(journal, standby.address) as replicator:
        replicator.handle(MATCH_STARTED)
        connection, offset = standby.accept(b"x" * 10, digest=hashlib.sha256(b"").digest())
        assert offset == 0
        assert b"".join(connection.read_entries(5)) == data
        log.wait_for("not a copy")


def test_replicator_reconnects_after_the_standby_went_away_and_resends_what_it_lacks(
    tmp_path: Path, standby: ScriptedStandby, log: LogWatcher
) -> None:
    journal = tmp_path / "journal.jsonl"
    data = journal_bytes(tmp_path, COMPLETE_MATCH)
    journal.write_bytes(b"".join(lines_of(data)[:2]))
    with replicator_on(journal, standby.address) as replicator:
        replicator.handle(MATCH_STARTED)
        first, _ = standby.accept()
        received = b"".join(first.read_entries(2))
        first.close()  # the standby restarts
        with journal.open("ab") as file:  # the match went on meanwhile
            file.write(data[len(received) :])
        replicator.handle(FIRST_MOVE)
        log.wait_for("trying again")
        second, offset = standby.accept(received)
        assert offset == len(received)
        assert received + b"".join(second.read_entries(5)) == data


def test_replicator_waits_for_a_standby_started_later(tmp_path: Path, log: LogWatcher) -> None:
    journal = tmp_path / "journal.jsonl"
    data = journal_bytes(tmp_path, UNFINISHED_MATCH)
    journal.write_bytes(data)
    # Bound but not listening yet: connections are refused, as with no standby at all.
    server = socket.socket()
    try:
        server.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{server.getsockname()[1]}"
        with replicator_on(journal, address) as replicator:
            replicator.handle(MATCH_STARTED)
            assert "refused" in log.wait_for(f"standby {address}")
            server.listen()
            standby = ScriptedStandby()
            standby.server.close()
            standby.server = server
            server.settimeout(TIMEOUT)
            connection, offset = standby.accept()
            assert offset == 0
            assert b"".join(connection.read_entries(5)) == data
            connection.close()
    finally:
        server.close()


def test_replicator_drops_a_peer_that_is_not_a_standby(
    tmp_path: Path, standby: ScriptedStandby, log: LogWatcher
) -> None:
    journal = tmp_path / "journal.jsonl"
    with replicator_on(journal, standby.address, io_timeout=0.5) as replicator:
        replicator.handle(MATCH_STARTED)
        impostor = standby.accept_raw()
        impostor.send(b"SSH-2.0-OpenSSH_9.2\r\n".ljust(STANDBY_ANSWER_SIZE, b"\0"))
        assert "not a serialref standby" in log.wait_for("standby")
        impostor.assert_closed()


def test_replicator_sends_nothing_to_a_standby_with_another_key(
    tmp_path: Path, log: LogWatcher
) -> None:
    """The journal is for a standby that proved the key; this one cannot, so it gets none."""
    journal = tmp_path / "journal.jsonl"
    journal.write_bytes(journal_bytes(tmp_path, UNFINISHED_MATCH))
    impostor = ScriptedStandby(key=OTHER_KEY)
    try:
        with replicator_on(journal, impostor.address, io_timeout=0.5) as replicator:
            replicator.handle(MATCH_STARTED)
            connection = impostor.accept_raw()
            greeting = connection.receive_exactly(PRIMARY_GREETING_SIZE)
            connection.send(standby_answer(OTHER_KEY, greeting[-32:], new_nonce()))
            assert "did not prove the replication key" in log.wait_for("standby")
            received = b""
            while chunk := connection.sock.recv(65536):
                received += chunk
            assert received == b""  # not even the primary's proof
    finally:
        impostor.close()


def test_replicator_gives_up_on_a_standby_that_trickles_its_answer(
    tmp_path: Path, standby: ScriptedStandby, log: LogWatcher
) -> None:
    journal = tmp_path / "journal.jsonl"
    with replicator_on(journal, standby.address, io_timeout=0.3) as replicator:
        replicator.handle(MATCH_STARTED)
        slow = standby.accept_raw()
        slow.send(b"serialref-standby 2\n")  # and never the rest
        assert "no answer to the handshake in time" in log.wait_for("standby")
        slow.assert_closed()


def test_handle_never_waits_for_a_standby_that_does_not_read(
    tmp_path: Path, standby: ScriptedStandby
) -> None:
    journal = tmp_path / "journal.jsonl"
    line = lines_of(journal_bytes(tmp_path, [FIRST_MOVE]))[0]
    journal.write_bytes(line * 40_000)  # megabytes: far more than the socket buffers hold
    with replicator_on(journal, standby.address, io_timeout=0.5) as replicator:
        replicator.handle(MATCH_STARTED)
        standby.accept()  # ...and never reads

        def referee() -> None:
            for _ in range(10_000):
                replicator.handle(FIRST_MOVE)

        thread = threading.Thread(target=referee)
        thread.start()
        thread.join(TIMEOUT)
        assert not thread.is_alive(), "handle() waited for the standby"


def test_close_sends_the_last_entries_then_joins_the_thread(
    tmp_path: Path, standby: ScriptedStandby
) -> None:
    journal = tmp_path / "journal.jsonl"
    data = journal_bytes(tmp_path, COMPLETE_MATCH)
    journal.write_bytes(b"".join(lines_of(data)[:-1]))
    replicator = JournalReplicator(standby.address, journal, KEY, heartbeat_interval=60.0)
    replicator.handle(MATCH_STARTED)
    connection, _ = standby.accept()
    assert connection.read_entries(6) == lines_of(data)[:-1]
    with journal.open("ab") as file:
        file.write(lines_of(data)[-1])
    replicator.handle(COMPLETE_MATCH[-1])
    replicator.close()
    assert "serialref-replicator" not in [thread.name for thread in threading.enumerate()]
    assert connection.read_entries(1) == lines_of(data)[-1:]
    connection.assert_closed()


def test_close_reconnects_once_to_bring_a_standby_whose_link_broke_the_last_entries(
    tmp_path: Path, standby: ScriptedStandby, log: LogWatcher
) -> None:
    journal = tmp_path / "journal.jsonl"
    data = journal_bytes(tmp_path, COMPLETE_MATCH)
    journal.write_bytes(b"".join(lines_of(data)[:2]))
    # Heartbeats every 50 ms: the replicator notices the broken link by itself.
    replicator = JournalReplicator(standby.address, journal, KEY, heartbeat_interval=0.05)
    replicator.handle(MATCH_STARTED)
    first, _ = standby.accept()
    received = b"".join(first.read_entries(2))
    first.close()  # the link breaks as the match ends
    with journal.open("ab") as file:
        file.write(data[len(received) :])
    replicator.handle(COMPLETE_MATCH[-1])
    log.wait_for("trying again")
    closing = threading.Thread(target=replicator.close, name="test-close")
    closing.start()
    try:
        second, offset = standby.accept(received)
        assert offset == len(received)
        assert received + b"".join(second.read_entries(5)) == data
    finally:
        closing.join(TIMEOUT)
    assert not closing.is_alive()


def test_a_replicator_that_saw_no_event_starts_no_thread_and_closes(
    tmp_path: Path, standby: ScriptedStandby
) -> None:
    threads = threading.active_count()
    replicator = JournalReplicator(standby.address, tmp_path / "journal.jsonl", KEY)
    assert threading.active_count() == threads
    replicator.close()
    replicator.handle(MATCH_STARTED)  # after close: still nothing starts
    assert threading.active_count() == threads


def test_close_gives_up_on_a_standby_that_is_never_there(tmp_path: Path, log: LogWatcher) -> None:
    server = socket.socket()
    try:
        server.bind(("127.0.0.1", 0))
        replicator = JournalReplicator(
            f"127.0.0.1:{server.getsockname()[1]}", tmp_path / "journal.jsonl", KEY
        )
        replicator.handle(MATCH_STARTED)
        log.wait_for("trying again")
        replicator.close()
        assert "serialref-replicator" not in [thread.name for thread in threading.enumerate()]
    finally:
        server.close()


def test_the_replicator_address_is_checked_at_once(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="replicate"):
        JournalReplicator("nowhere", tmp_path / "journal.jsonl", KEY)
