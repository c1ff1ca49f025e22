"""Tests for serialref.replication: replicator, mirror and takeover over real loopback sockets.

Each side is tested against a scripted peer on a real socket: the test plays the
standby to a :class:`JournalReplicator`, and the primary to a :class:`JournalMirror`.
Waits are on sockets, threads and log records, with timeouts; the only waits that
are not events are the silences the mirror itself is measuring.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import queue
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import chess
import pytest

from serialref import replication
from serialref.config import MatchConfig, load_config
from serialref.errors import ConfigError, PortOpenError
from serialref.events import (
    GameEnded,
    GameStarted,
    MatchEnded,
    MatchEvent,
    MatchStarted,
    MovePlayed,
    PlayerSignedOn,
)
from serialref.recorders.journal import JournalRecorder
from serialref.replication import (
    JournalMirror,
    JournalReplicator,
    parse_address,
    stand_by,
    take_over,
)

TIMEOUT = 5.0
EMPTY_DIGEST = hashlib.sha256(b"").hexdigest()
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"

MATCH_STARTED = MatchStarted(games=1, time_control="60+1", ports=("a", "b"))
GAME_STARTED = GameStarted(
    game=1, white_port="a", black_port="b", fen=chess.STARTING_FEN,
    tags={"White": "Alpha", "Black": "Beta"},
)  # fmt: skip
FIRST_MOVE = MovePlayed(
    game=1, ply=1, san="e4", uci="e2e4", elapsed=1.0, remaining=(60.0, 60.0),
    consumed=(1.0, 0.0), moves_made=(1, 0), fen=AFTER_E4,
)  # fmt: skip
UNFINISHED_MATCH: list[MatchEvent] = [
    MATCH_STARTED, PlayerSignedOn("a", "Alpha"), PlayerSignedOn("b", "Beta"),
    GAME_STARTED, FIRST_MOVE,
]  # fmt: skip
COMPLETE_MATCH: list[MatchEvent] = [
    *UNFINISHED_MATCH,
    GameEnded(game=1, result="1-0", termination="normal", reason="resigned", fen=AFTER_E4,
              consumed=(1.0, 0.0)),
    MatchEnded(complete=True, score=(1.0, 0.0)),
]  # fmt: skip


def journal_bytes(directory: Path, events: Sequence[MatchEvent]) -> bytes:
    """The lines a JournalRecorder writes for ``events``."""
    path = directory / "source.jsonl"
    path.unlink(missing_ok=True)
    recorder = JournalRecorder(path)
    for event in events:
        recorder.handle(event)
    recorder.close()
    return path.read_bytes()


def lines_of(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


class LogWatcher(logging.Handler):
    """Lets a test await a log message from another thread."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: queue.SimpleQueue[str] = queue.SimpleQueue()

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.put(record.getMessage())

    def wait_for(self, text: str) -> str:
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
            if text in message:
                return message


@pytest.fixture
def log() -> Iterator[LogWatcher]:
    logger = logging.getLogger("serialref.replication")
    watcher = LogWatcher()
    previous = logger.level
    logger.addHandler(watcher)
    logger.setLevel(logging.DEBUG)
    try:
        yield watcher
    finally:
        logger.removeHandler(watcher)
        logger.setLevel(previous)


class Connection:
    """One end of a test connection: whole lines in, bytes out."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sock.settimeout(TIMEOUT)
        self._buffer = b""

    def read_line(self) -> bytes:
        """The next line without its LF; a heartbeat is ``b""``."""
        while b"\n" not in self._buffer:
            chunk = self.sock.recv(65536)
            assert chunk, f"connection closed; unfinished line {self._buffer!r}"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def read_entries(self, count: int) -> list[bytes]:
        """The next ``count`` journal lines (with their LF), skipping heartbeats."""
        entries: list[bytes] = []
        while len(entries) < count:
            line = self.read_line()
            if line:
                entries.append(line + b"\n")
        return entries

    def read_until_heartbeat(self) -> list[bytes]:
        """Entries up to the next heartbeat: everything the primary had to send by then."""
        entries = []
        while line := self.read_line():
            entries.append(line + b"\n")
        return entries

    def assert_closed(self) -> None:
        """The peer closes the connection (a reset counts: it closed with data unread)."""
        with contextlib.suppress(ConnectionResetError):
            while self.sock.recv(65536):
                pass

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def close(self) -> None:
        self.sock.close()


class FakeStandby:
    """A listening socket that greets the replicator as a standby would."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(TIMEOUT)
        self.address = f"127.0.0.1:{self.server.getsockname()[1]}"
        self.connections: list[Connection] = []

    def accept(self, mirror: bytes = b"", *, digest: str | None = None) -> tuple[Connection, int]:
        """Accept the replicator, announce ``mirror``; the connection and the offset it chose."""
        sock, _ = self.server.accept()
        connection = Connection(sock)
        self.connections.append(connection)
        digest = digest or hashlib.sha256(mirror).hexdigest()
        connection.send(b"serialref-standby 1 %d %s\n" % (len(mirror), digest.encode()))
        reply = connection.read_line().split()
        assert reply[:2] == [b"serialref-primary", b"1"], reply
        return connection, int(reply[2])

    def close(self) -> None:
        for connection in self.connections:
            connection.close()
        self.server.close()


@pytest.fixture
def standby() -> Iterator[FakeStandby]:
    fake = FakeStandby()
    try:
        yield fake
    finally:
        fake.close()


@contextmanager
def replicator_on(
    journal: Path, address: str, **options: float
) -> Iterator[JournalReplicator]:
    options.setdefault("heartbeat_interval", 0.05)
    replicator = JournalReplicator(address, journal, **options)
    try:
        yield replicator
    finally:
        replicator.close()


# ------------------------------------------------------------------ addresses


@pytest.mark.parametrize(
    ("text", "expected"),
    [("127.0.0.1:7600", ("127.0.0.1", 7600)), ("[::1]:7600", ("::1", 7600)),
     ("standby.lan:1", ("standby.lan", 1)), ("localhost:0", ("localhost", 0))],
)  # fmt: skip
def test_addresses_are_split_into_host_and_port(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["7600", ":7600", "host:", "host:port", "::1:7600", "h:65536"])
def test_a_malformed_address_is_a_config_error_naming_the_option(text: str) -> None:
    with pytest.raises(ConfigError, match="HOST:PORT") as caught:
        parse_address(text, key="replicate")
    assert caught.value.key == "replicate"


# ------------------------------------------------------------------ replicator


def test_replicator_sends_the_whole_journal_then_each_new_line(
    tmp_path: Path, standby: FakeStandby
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
    tmp_path: Path, standby: FakeStandby
) -> None:
    journal = tmp_path / "journal.jsonl"
    with replicator_on(journal, standby.address) as replicator:
        replicator.handle(MATCH_STARTED)  # no journal yet: nothing to send but heartbeats
        connection, _ = standby.accept()
        assert [connection.read_line() for _ in range(3)] == [b"", b"", b""]


def test_replicator_holds_back_a_line_until_it_is_complete(
    tmp_path: Path, standby: FakeStandby
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


def test_replicator_continues_where_the_mirror_ends(tmp_path: Path, standby: FakeStandby) -> None:
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
    tmp_path: Path, standby: FakeStandby, log: LogWatcher
) -> None:
    journal = tmp_path / "journal.jsonl"
    data = journal_bytes(tmp_path, UNFINISHED_MATCH)
    journal.write_bytes(data)
    with replicator_on(journal, standby.address) as replicator:
        replicator.handle(MATCH_STARTED)
        connection, offset = standby.accept(b"x" * 10, digest=EMPTY_DIGEST)
        assert offset == 0
        assert b"".join(connection.read_entries(5)) == data
        log.wait_for("not a copy")


def test_replicator_reconnects_after_the_standby_went_away_and_resends_what_it_lacks(
    tmp_path: Path, standby: FakeStandby, log: LogWatcher
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
            file.write(data[len(received):])
        replicator.handle(FIRST_MOVE)
        log.wait_for("trying again")
        second, offset = standby.accept(received)
        assert offset == len(received)
        assert received + b"".join(second.read_entries(5)) == data


def test_replicator_waits_for_a_standby_started_later(
    tmp_path: Path, log: LogWatcher
) -> None:
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
            server.settimeout(TIMEOUT)
            sock, _ = server.accept()
            connection = Connection(sock)
            connection.send(b"serialref-standby 1 0 %s\n" % EMPTY_DIGEST.encode())
            assert connection.read_line() == b"serialref-primary 1 0"
            assert b"".join(connection.read_entries(5)) == data
            connection.close()
    finally:
        server.close()


def test_replicator_drops_a_peer_that_is_not_a_standby(
    tmp_path: Path, standby: FakeStandby, log: LogWatcher
) -> None:
    journal = tmp_path / "journal.jsonl"
    with replicator_on(journal, standby.address, io_timeout=0.5) as replicator:
        replicator.handle(MATCH_STARTED)
        sock, _ = standby.server.accept()
        impostor = Connection(sock)
        standby.connections.append(impostor)
        impostor.send(b"SSH-2.0-OpenSSH_9.2\n")
        assert "not a serialref standby" in log.wait_for("standby")
        impostor.assert_closed()


def test_handle_never_waits_for_a_standby_that_does_not_read(
    tmp_path: Path, standby: FakeStandby
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
    tmp_path: Path, standby: FakeStandby
) -> None:
    journal = tmp_path / "journal.jsonl"
    data = journal_bytes(tmp_path, COMPLETE_MATCH)
    journal.write_bytes(b"".join(lines_of(data)[:-1]))
    replicator = JournalReplicator(standby.address, journal, heartbeat_interval=60.0)
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


def test_a_replicator_that_saw_no_event_starts_no_thread_and_closes(
    tmp_path: Path, standby: FakeStandby
) -> None:
    threads = threading.active_count()
    replicator = JournalReplicator(standby.address, tmp_path / "journal.jsonl")
    assert threading.active_count() == threads
    replicator.close()
    replicator.handle(MATCH_STARTED)  # after close: still nothing starts
    assert threading.active_count() == threads


def test_close_gives_up_on_a_standby_that_is_never_there(tmp_path: Path, log: LogWatcher) -> None:
    server = socket.socket()
    try:
        server.bind(("127.0.0.1", 0))
        replicator = JournalReplicator(
            f"127.0.0.1:{server.getsockname()[1]}", tmp_path / "journal.jsonl"
        )
        replicator.handle(MATCH_STARTED)
        log.wait_for("trying again")
        replicator.close()
        assert "serialref-replicator" not in [thread.name for thread in threading.enumerate()]
    finally:
        server.close()


def test_the_replicator_address_is_checked_at_once(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="replicate"):
        JournalReplicator("nowhere", tmp_path / "journal.jsonl")


# ------------------------------------------------------------------ mirror


class MirrorThread:
    """``wait_for_silence`` on a thread, with its result once it returns."""

    def __init__(self, mirror: JournalMirror) -> None:
        self.mirror = mirror
        self.result: bool | None = None
        self.returned_at = 0.0
        self._thread = threading.Thread(target=self._run, name="test-mirror")
        self._thread.start()

    def _run(self) -> None:
        self.result = self.mirror.wait_for_silence()
        self.returned_at = time.monotonic()

    def join(self, timeout: float = TIMEOUT) -> bool | None:
        self._thread.join(timeout)
        return None if self._thread.is_alive() else self.result

    def stop(self) -> None:
        self.mirror.stop()
        assert self.join() is False


@contextmanager
def mirror_at(journal: Path, takeover_after: float = 0.3) -> Iterator[JournalMirror]:
    with JournalMirror("127.0.0.1:0", journal, takeover_after=takeover_after) as mirror:
        yield mirror


def connect(mirror: JournalMirror) -> tuple[Connection, list[bytes]]:
    """Connect as a primary; the connection and the standby's greeting fields."""
    host, port = parse_address(mirror.address)
    connection = Connection(socket.create_connection((host, port), timeout=TIMEOUT))
    return connection, connection.read_line().split()


def test_mirror_greets_with_its_size_and_digest_and_appends_whole_lines(tmp_path: Path) -> None:
    data = journal_bytes(tmp_path, UNFINISHED_MATCH)
    journal = tmp_path / "mirror.jsonl"
    with mirror_at(journal) as mirror:
        waiting = MirrorThread(mirror)
        primary, greeting = connect(mirror)
        assert greeting == [b"serialref-standby", b"1", b"0", EMPTY_DIGEST.encode()]
        cut = lines_of(data)[-1][:25]
        primary.send(b"serialref-primary 1 0\n" + data[:50])
        primary.send(data[50:] + b"\n" + cut)  # a heartbeat, then a line cut by a crash
        primary.close()
        assert waiting.join() is True
    assert journal.read_bytes() == data


def test_mirror_takes_over_only_after_the_silence_it_was_given(tmp_path: Path) -> None:
    with mirror_at(tmp_path / "mirror.jsonl", takeover_after=0.3) as mirror:
        waiting = MirrorThread(mirror)
        primary, _ = connect(mirror)
        primary.send(b"serialref-primary 1 0\n")
        for _ in range(8):  # heartbeats every 0.1 s keep the primary alive
            assert waiting.join(0.1) is None
            primary.send(b"\n")
            last_heartbeat = time.monotonic()
        assert waiting.join() is True
        assert waiting.returned_at - last_heartbeat >= 0.3
        primary.close()


def test_a_mirror_that_never_heard_a_primary_waits_for_one(tmp_path: Path) -> None:
    with mirror_at(tmp_path / "mirror.jsonl", takeover_after=0.05) as mirror:
        waiting = MirrorThread(mirror)
        assert waiting.join(0.5) is None  # ten times the silence: no takeover
        primary, _ = connect(mirror)
        primary.send(b"serialref-pri")  # not even a whole greeting: not heard
        assert waiting.join(0.5) is None
        waiting.stop()
        primary.close()


def test_mirror_cuts_its_own_torn_tail_and_continues_where_it_ends(tmp_path: Path) -> None:
    data = journal_bytes(tmp_path, COMPLETE_MATCH)
    kept = b"".join(lines_of(data)[:4])
    journal = tmp_path / "mirror.jsonl"
    journal.write_bytes(kept + lines_of(data)[4][:30])  # the standby itself crashed mid-write
    with mirror_at(journal) as mirror:
        assert journal.read_bytes() == kept
        waiting = MirrorThread(mirror)
        primary, greeting = connect(mirror)
        assert greeting[2:] == [b"%d" % len(kept), hashlib.sha256(kept).hexdigest().encode()]
        primary.send(b"serialref-primary 1 %d\n" % len(kept) + data[len(kept):])
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
        primary, _ = connect(mirror)
        primary.send(b"serialref-primary 1 0\n" + new)
        primary.close()
        assert waiting.join() is True
    assert journal.read_bytes() == new
    assert (tmp_path / "mirror.jsonl.replaced-2").read_bytes() == old
    assert (tmp_path / "mirror.jsonl.replaced-1").read_bytes() == b"older still\n"


GREETING = b"serialref-primary 1 0\n"


@pytest.mark.parametrize(
    ("greeting", "entries_first", "bad", "problem"),
    [
        (b"serialref-primary 1 7\n", False, b"", "starts at byte 7"),
        (b"serialref-primary 2 0\n", False, b"", "not a serialref primary"),
        (b"GET / HTTP/1.1\r\n", False, b"", "not a serialref primary"),
        (GREETING, True, b'{"event": "MovePlayed", \n', "not a journal entry"),
        (GREETING, True, b"[1, 2]\n", "not a journal entry"),
        (GREETING, True, b'{"wall": 1.5}\n', "no event named"),
        (GREETING, True, b"x" * (2 << 20), "over 1 MiB"),
    ],
)
def test_mirror_drops_a_connection_that_breaks_the_protocol(
    tmp_path: Path, greeting: bytes, entries_first: bool, bad: bytes, problem: str,
    log: LogWatcher,
) -> None:
    data = journal_bytes(tmp_path, UNFINISHED_MATCH) if entries_first else b""
    journal = tmp_path / "mirror.jsonl"
    with mirror_at(journal) as mirror:
        waiting = MirrorThread(mirror)
        primary, _ = connect(mirror)
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            primary.send(greeting + data + bad)
        peer = f"primary 127.0.0.1:{primary.sock.getsockname()[1]}: "
        assert log.wait_for(problem).startswith(peer)
        primary.assert_closed()
        primary.close()
        waiting.stop()
    assert journal.read_bytes() == data  # the good entries before the bad line are kept


def test_a_new_primary_connection_replaces_the_old_one(tmp_path: Path) -> None:
    data = journal_bytes(tmp_path, UNFINISHED_MATCH)
    half = b"".join(lines_of(data)[:2])
    journal = tmp_path / "mirror.jsonl"
    with mirror_at(journal) as mirror:
        waiting = MirrorThread(mirror)
        old, _ = connect(mirror)
        old.send(b"serialref-primary 1 0\n" + half + lines_of(data)[2][:5])
        new, greeting = connect(mirror)
        assert greeting[2] == b"%d" % len(half)
        old.assert_closed()
        new.send(b"serialref-primary 1 %d\n" % len(half) + data[len(half):])
        new.close()
        old.close()
        assert waiting.join() is True
    assert journal.read_bytes() == data


def test_mirror_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="takeover_after"):
        JournalMirror("127.0.0.1:0", tmp_path / "mirror.jsonl", takeover_after=0)
    with (
        mirror_at(tmp_path / "mirror.jsonl") as mirror,
        pytest.raises(ConfigError, match="cannot listen on"),
    ):
        JournalMirror(mirror.address, tmp_path / "other.jsonl")
    assert not (tmp_path / "mirror.jsonl").read_bytes()


def test_replicator_and_mirror_make_a_byte_for_byte_copy(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    with mirror_at(tmp_path / "mirror.jsonl", takeover_after=0.3) as mirror:
        waiting = MirrorThread(mirror)
        recorder = JournalRecorder(journal)
        replicator = JournalReplicator(mirror.address, journal)
        for event in COMPLETE_MATCH:
            recorder.handle(event)
            replicator.handle(event)
        replicator.close()
        recorder.close()
        assert waiting.join() is True
    assert (tmp_path / "mirror.jsonl").read_bytes() == journal.read_bytes()


# ------------------------------------------------------------------ takeover


def config_for(tmp_path: Path) -> MatchConfig:
    return load_config(
        None,
        {"port_a": "/dev/null-a", "port_b": "/dev/null-b", "tc": "60+1",
         "journal": tmp_path / "journal.jsonl"},
    )  # fmt: skip


class FakeReferee:
    """Stands in for run_referee: fails to open the ports ``busy`` times, then plays."""

    def __init__(self, busy: int) -> None:
        self.busy = busy
        self.journals: list[Path | None] = []

    def __call__(self, config: MatchConfig, *, console: object = None) -> bool:
        self.journals.append(config.journal)
        if len(self.journals) <= self.busy:
            raise PortOpenError("cannot open '/dev/null-a': the port is busy")
        return True


def test_take_over_retries_while_the_ports_are_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    referee = FakeReferee(busy=3)
    monkeypatch.setattr(replication, "run_referee", referee)
    assert take_over(config_for(tmp_path), first_pause=0.01, max_pause=0.02) is True
    assert len(referee.journals) == 4
    failures = [record.getMessage() for record in caplog.records]
    assert len(failures) == 3
    assert all("the port is busy" in text and "trying again" in text for text in failures)


def test_take_over_stands_by_again_when_the_primary_is_heard_during_a_pause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    referee = FakeReferee(busy=100)
    monkeypatch.setattr(replication, "run_referee", referee)
    journal = tmp_path / "mirror.jsonl"
    data = journal_bytes(tmp_path, UNFINISHED_MATCH)
    with mirror_at(journal) as mirror:
        # The primary was only cut off: it reconnects (and answers before it is asked,
        # since the mirror only greets it once take_over pumps it).
        primary = Connection(socket.create_connection(parse_address(mirror.address)))
        primary.send(b"serialref-primary 1 0\n" + data)
        assert take_over(config_for(tmp_path), mirror=mirror, first_pause=TIMEOUT) is None
        primary.close()
    assert len(referee.journals) == 1
    assert journal.read_bytes() == data  # the pause was spent mirroring


def test_take_over_gives_up_when_its_mirror_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    referee = FakeReferee(busy=100)
    monkeypatch.setattr(replication, "run_referee", referee)
    with mirror_at(tmp_path / "mirror.jsonl") as mirror:
        mirror.stop()
        assert take_over(config_for(tmp_path), mirror=mirror, first_pause=TIMEOUT) is False
        assert mirror.stopped
    assert len(referee.journals) == 1


def test_a_mirror_without_a_primary_lets_its_time_run_out(tmp_path: Path) -> None:
    with mirror_at(tmp_path / "mirror.jsonl") as mirror:
        started = time.monotonic()
        assert mirror.mirror_for(0.1) is False
        assert time.monotonic() - started >= 0.1
        assert not mirror.stopped


def test_stand_by_waits_out_a_complete_match_and_takes_over_an_unfinished_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log: LogWatcher
) -> None:
    referee = FakeReferee(busy=0)
    monkeypatch.setattr(replication, "run_referee", referee)
    complete = journal_bytes(tmp_path, COMPLETE_MATCH)
    unfinished = journal_bytes(tmp_path, [MatchStarted(games=1, time_control="60+1",
                                                       ports=("a", "b")), GAME_STARTED])
    journal = tmp_path / "mirror.jsonl"
    result: list[bool] = []
    with mirror_at(journal, takeover_after=0.2) as mirror:
        thread = threading.Thread(
            target=lambda: result.append(stand_by(config_for(tmp_path), mirror))
        )
        thread.start()
        first, _ = connect(mirror)
        first.send(b"serialref-primary 1 0\n" + complete)
        first.close()
        log.wait_for("standing by for the next one")
        second, greeting = connect(mirror)
        assert greeting[2] == b"%d" % len(complete)
        second.send(b"serialref-primary 1 %d\n" % len(complete) + unfinished)
        second.close()
        thread.join(TIMEOUT)
        assert not thread.is_alive()
    assert result == [True]
    assert referee.journals == [journal]
    assert journal.read_bytes() == complete + unfinished


def test_stand_by_returns_false_when_its_mirror_is_stopped(tmp_path: Path) -> None:
    with mirror_at(tmp_path / "mirror.jsonl") as mirror:
        mirror.stop()
        assert stand_by(config_for(tmp_path), mirror) is False


def test_a_standby_needs_a_journal(tmp_path: Path) -> None:
    config = load_config(None, {"port_a": "/dev/null-a", "port_b": "/dev/null-b"})
    with pytest.raises(ConfigError, match="journal"):
        replication.open_mirror(config, "127.0.0.1:0")
    with replication.open_mirror(config_for(tmp_path), "127.0.0.1:0") as mirror:
        assert mirror.journal == tmp_path / "journal.jsonl"
