"""Scripted peers and sample journals for the hot standby's tests.

A test plays the standby to a real :class:`JournalReplicator` (:class:`ScriptedStandby`),
or the primary to a real :class:`JournalMirror` (:class:`ScriptedPrimary`), over real
loopback sockets, speaking the protocol of :mod:`serialref.standby.channel` step by step, so
that it can also break any step on purpose.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import queue
import socket
import struct
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import chess
import pytest

from serialref.happenings import (
    GameEnded,
    GameStarted,
    MatchEnded,
    MatchEvent,
    MatchStarted,
    MovePlayed,
    PlayerSignedOn,
)
from serialref.recorders.journal import JournalRecorder
from serialref.standby.channel import (
    PRIMARY_GREETING_SIZE,
    STANDBY_ANSWER_SIZE,
    Channel,
    Frame,
    FrameKind,
    Side,
    new_nonce,
    primary_greeting,
    primary_proof,
    read_primary_greeting,
    read_standby_answer,
    standby_answer,
)
from serialref.standby.mirror import JournalMirror
from serialref.wire.address import parse_address

TIMEOUT = 5.0
KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
EMPTY_DIGEST = hashlib.sha256(b"").digest()
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"

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

_STATE = struct.Struct(">Q32s")
_OFFSET = struct.Struct(">Q")


def played(
    sans: Sequence[str], *, game: int = 1, board: chess.Board | None = None
) -> list[MovePlayed]:
    """MovePlayed entries as the referee writes them for ``sans`` played on ``board``."""
    board = board or chess.Board()
    entries = []
    for ply, san in enumerate(sans, start=1):
        move = board.parse_san(san)
        canonical = board.san(move)
        board.push(move)
        entries.append(MovePlayed(
            game=game, ply=ply, san=canonical, uci=move.uci(), elapsed=0.5,
            remaining=(59.0, 59.0), consumed=(0.5 * ((ply + 1) // 2), 0.5 * (ply // 2)),
            moves_made=((ply + 1) // 2, ply // 2), fen=board.fen(en_passant="fen"),
        ))  # fmt: skip
    return entries


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
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.put(record.getMessage())

    def wait_for(self, text: str, timeout: float = TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        while True:
            message = self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
            self.seen.append(message)
            if text in message:
                return message


@pytest.fixture
def log() -> Iterator[LogWatcher]:
    """Every message of ``serialref.standby`` and below, debug included, during the test.

    A fixture of every test (tests/conftest.py names this module a plugin).
    """
    logger = logging.getLogger("serialref.standby")
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
    """One end of a test connection: exact reads, frames once a channel is set."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sock.settimeout(TIMEOUT)
        self.channel: Channel | None = None
        self.sent: list[bytes] = []  # every chunk this end sent, for replay tests

    def send(self, data: bytes) -> None:
        self.sent.append(data)
        self.sock.sendall(data)

    def receive_exactly(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            assert chunk, f"connection closed after {data!r}"
            data += chunk
        return data

    def read_frame(self) -> Frame:
        assert self.channel is not None
        while (frame := self.channel.next_frame()) is None:
            chunk = self.sock.recv(65536)
            assert chunk, "connection closed"
            self.channel.feed(chunk)
        return frame

    def send_frame(self, kind: FrameKind, payload: bytes = b"") -> bytes:
        assert self.channel is not None
        frame = self.channel.seal(kind, payload)
        self.send(frame)
        return frame

    def assert_closed(self) -> None:
        """The peer closes the connection (a reset counts: it closed with data unread)."""
        with contextlib.suppress(ConnectionResetError):
            while self.sock.recv(65536):
                pass

    def close(self) -> None:
        self.sock.close()


# ------------------------------------------------------------------ the standby's part


class StandbyConnection(Connection):
    """The replicator's connection as a scripted standby sees it."""

    def read_entries(self, count: int) -> list[bytes]:
        """The next ``count`` journal lines (with their LF), skipping heartbeats."""
        entries: list[bytes] = []
        while len(entries) < count:
            frame = self.read_frame()
            if frame.kind is FrameKind.ENTRIES:
                entries.extend(lines_of(frame.payload))
        return entries

    def read_until_heartbeat(self) -> list[bytes]:
        """Entries up to the next heartbeat: everything the primary had to send by then."""
        entries: list[bytes] = []
        while (frame := self.read_frame()).kind is FrameKind.ENTRIES:
            entries.extend(lines_of(frame.payload))
        assert frame.kind is FrameKind.HEARTBEAT, frame
        return entries


class ScriptedStandby:
    """A listening socket that does the standby's part of the handshake with a given key."""

    def __init__(self, key: bytes = KEY) -> None:
        self.key = key
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(TIMEOUT)
        self.address = f"127.0.0.1:{self.server.getsockname()[1]}"
        self.connections: list[StandbyConnection] = []

    def accept_raw(self) -> StandbyConnection:
        sock, _ = self.server.accept()
        connection = StandbyConnection(sock)
        self.connections.append(connection)
        return connection

    def accept(
        self, mirror: bytes = b"", *, digest: bytes | None = None
    ) -> tuple[StandbyConnection, int]:
        """Accept the replicator, announce ``mirror``; the connection and the offset it chose."""
        connection = self.accept_raw()
        nonce_p = read_primary_greeting(connection.receive_exactly(PRIMARY_GREETING_SIZE))
        assert nonce_p is not None
        nonce_s = new_nonce()
        connection.send(standby_answer(self.key, nonce_p, nonce_s))
        proof = connection.receive_exactly(32)
        assert proof == primary_proof(self.key, nonce_p, nonce_s)
        connection.channel = Channel(self.key, nonce_p, nonce_s, side=Side.STANDBY)
        digest = digest or hashlib.sha256(mirror).digest()
        connection.send_frame(FrameKind.MIRROR, _STATE.pack(len(mirror), digest))
        start = connection.read_frame()
        assert start.kind is FrameKind.START, start
        return connection, _OFFSET.unpack(start.payload)[0]

    def close(self) -> None:
        for connection in self.connections:
            connection.close()
        self.server.close()


# ------------------------------------------------------------------ the primary's part


class ScriptedPrimary(Connection):
    """A connection to a mirror that does the primary's part of the handshake with a given key."""

    def __init__(self, mirror: JournalMirror | str) -> None:
        address = mirror if isinstance(mirror, str) else mirror.address
        super().__init__(socket.create_connection(parse_address(address), timeout=TIMEOUT))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as the primary does
        self.mirror_size = -1
        self.mirror_digest = b""

    @property
    def port(self) -> int:
        """This end's port: how the mirror's log names the peer."""
        return int(self.sock.getsockname()[1])

    def prove(self, key: bytes = KEY) -> None:
        """Both halves of the handshake, then read the mirror's state."""
        nonce_p = new_nonce()
        self.send(primary_greeting(nonce_p))
        nonce_s = read_standby_answer(key, nonce_p, self.receive_exactly(STANDBY_ANSWER_SIZE))
        self.send(primary_proof(key, nonce_p, nonce_s))
        self.channel = Channel(key, nonce_p, nonce_s, side=Side.PRIMARY)
        state = self.read_frame()
        assert state.kind is FrameKind.MIRROR, state
        self.mirror_size, self.mirror_digest = _STATE.unpack(state.payload)

    def start(self, offset: int | None = None) -> None:
        """Say where the entries continue (the mirror's end by default)."""
        self.send_frame(
            FrameKind.START, _OFFSET.pack(self.mirror_size if offset is None else offset)
        )

    def send_entries(self, data: bytes) -> bytes:
        return self.send_frame(FrameKind.ENTRIES, data)

    def heartbeat(self) -> bytes:
        return self.send_frame(FrameKind.HEARTBEAT)


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
def mirror_at(
    journal: Path, takeover_after: float = 0.3, **options: Any
) -> Iterator[JournalMirror]:
    with JournalMirror(
        "127.0.0.1:0", journal, KEY, takeover_after=takeover_after, **options
    ) as mirror:
        yield mirror
