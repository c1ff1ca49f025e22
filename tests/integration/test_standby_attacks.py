"""A hot standby under attack: nothing without the key changes the mirror or causes a takeover.

Each test runs ``stand_by`` on a real :class:`JournalMirror` (its takeover is a stand-in
that records being called) and, in most, a real primary: a :class:`JournalRecorder` and
a :class:`JournalReplicator` playing a complete match entry by entry, while an attacker
on the same network does its worst. At the end the primary falls silent after a
complete match, which the standby must recognise ("standing by for the next one"), and
then its mirror must be the primary's journal byte for byte, with no takeover.

Attackers without the key connect on their own, or sit in the middle of the primary's
connection (:class:`Relay`), which lets them record, replay, alter, duplicate and
reorder what the primary sends, but not forge it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from standby_peers import (
    GAME_STARTED,
    KEY,
    MATCH_STARTED,
    OTHER_KEY,
    TIMEOUT,
    LogWatcher,
    ScriptedPrimary,
    played,
)

from serialref.appliance.assembly import match_settings
from serialref.appliance.config import MatchConfig, load_config
from serialref.happenings import GameEnded, MatchEnded, MatchEvent, PlayerSignedOn
from serialref.recorders.journal import JournalRecorder
from serialref.standby.channel import (
    PRIMARY_GREETING_SIZE,
    STANDBY_ANSWER_SIZE,
    TAG_SIZE,
    FrameKind,
    new_nonce,
    primary_greeting,
)
from serialref.standby.mirror import JournalMirror
from serialref.standby.primary import JournalReplicator
from serialref.standby.takeover import stand_by
from serialref.wire.address import parse_address

TAKEOVER_AFTER = 1.0
HANDSHAKE_TIMEOUT = 0.5
GAME = played(["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7", "Re1", "b5",
               "Bb3", "d6", "c3", "O-O", "h3", "Nb8", "d4", "Nbd7"])  # fmt: skip
FIRST_HALF: list[MatchEvent] = [
    MATCH_STARTED, PlayerSignedOn("a", "Alpha"), PlayerSignedOn("b", "Beta"), GAME_STARTED,
    *GAME[:10],
]  # fmt: skip
SECOND_HALF: list[MatchEvent] = [
    *GAME[10:],
    GameEnded(game=1, result="1/2-1/2", termination="normal", reason="draw agreed",
              fen=GAME[-1].fen, consumed=GAME[-1].consumed),
    MatchEnded(complete=True, score=(0.5, 0.5)),
]  # fmt: skip
FORGED_LINES = (
    b'{"event": "MatchStarted", "games": 1, "time_control": "60+1", "ports": ["a", "b"]}\n'
    b'{"event": "GameStarted", "game": 1, "white_port": "a", "black_port": "b", '
    b'"fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "tags": {}}\n'
    b'{"event": "GameEnded", "game": 1, "result": "1-0", "termination": "normal", '
    b'"reason": "FORGED: Black resigns", "fen": "x", "consumed": [0, 0]}\n'
)


class RecordingTakeover:
    """Stands in for the referee a takeover runs: it only notes that it was called."""

    def __init__(self) -> None:
        self.calls: list[MatchConfig] = []

    def __call__(self, config: MatchConfig) -> bool:
        self.calls.append(config)
        return True


class Standby:
    """``stand_by`` on its own thread, as ``serialref standby`` runs it."""

    def __init__(self, directory: Path) -> None:
        self.journal = directory / "mirror.jsonl"
        self.mirror = JournalMirror(
            "127.0.0.1:0", self.journal, KEY, takeover_after=TAKEOVER_AFTER,
            handshake_timeout=HANDSHAKE_TIMEOUT, max_newcomers=4,
        )  # fmt: skip
        self.address = self.mirror.address
        self.takeover = RecordingTakeover()
        config = load_config(None, {"port_a": "/dev/null-a", "port_b": "/dev/null-b",
                                    "tc": "60+1", "journal": self.journal})  # fmt: skip
        settings = match_settings(config)
        self.result: list[bool] = []
        self._thread = threading.Thread(
            target=lambda: self.result.append(
                stand_by(config, settings, self.mirror, self.takeover)
            ),
            name="test-standby",
        )
        self._thread.start()

    def still_standing_by(self, seconds: float) -> bool:
        """Whether it neither took over nor returned within ``seconds`` (a silence measured)."""
        self._thread.join(seconds)
        return self._thread.is_alive() and not self.takeover.calls

    def stop(self) -> None:
        """Stop and join it: a test ends with nothing left logging behind its back."""
        if not self._thread.is_alive() and self.mirror.stopped:
            return
        self.mirror.stop()
        self._thread.join(TIMEOUT)
        assert not self._thread.is_alive()
        self.mirror.close()


@pytest.fixture
def standby(tmp_path: Path) -> Iterator[Standby]:
    running = Standby(tmp_path)
    try:
        yield running
    finally:
        running.stop()


class LivePrimary:
    """A real primary's recorder and replicator, playing the match entry by entry."""

    def __init__(self, directory: Path, address: str, key: bytes = KEY) -> None:
        self.journal = directory / "primary.jsonl"
        self.recorder = JournalRecorder(self.journal)
        self.replicator = JournalReplicator(address, self.journal, key, heartbeat_interval=0.05)

    def play(self, events: list[MatchEvent]) -> None:
        for event in events:
            self.recorder.handle(event)
            self.replicator.handle(event)

    def close(self) -> None:
        self.replicator.close()
        self.recorder.close()


@contextmanager
def live_primary(directory: Path, address: str, key: bytes = KEY) -> Iterator[LivePrimary]:
    primary = LivePrimary(directory, address, key)
    try:
        yield primary
    finally:
        primary.close()


def assert_mirror_complete_and_no_takeover(
    standby: Standby, primary: LivePrimary, log: LogWatcher, *, then_stop: bool = True
) -> None:
    """The primary fell silent after its complete match: the mirror holds it all, no takeover.

    A primary cut off in transit may have been silent before, with the mirror still empty
    (nothing to take over either): its reconnection then brings the rest.
    """
    primary.close()
    while True:
        try:
            log.wait_for("standing by for the next one")
        except queue.Empty:
            pytest.fail(
                f"the standby did not stand by with the whole match: mirror "
                f"{standby.journal.stat().st_size} bytes, primary "
                f"{primary.journal.stat().st_size}, takeovers {len(standby.takeover.calls)}, "
                f"log {log.seen[-12:]}"
            )
        if standby.journal.read_bytes() == primary.journal.read_bytes():
            break
    if then_stop:
        standby.stop()
    assert standby.takeover.calls == []


def the_stream_was_undisturbed(log: LogWatcher) -> None:
    """The primary connected once, and its connection was never replaced nor dropped."""
    messages = log.seen + drain(log)
    assert sum("proved the key" in message for message in messages) == 1, messages
    assert not any("replaces" in message or "trying again" in message for message in messages)


def drain(log: LogWatcher) -> list[str]:
    messages = []
    while not log.messages.empty():
        messages.append(log.messages.get())
    return messages


def connect(address: str) -> socket.socket:
    sock = socket.create_connection(parse_address(address), timeout=TIMEOUT)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def closed_by_peer(sock: socket.socket) -> bool:
    """Read until the peer closes; True if it did (a reset counts) within the timeout."""
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    except TimeoutError:
        return False
    return True


# ------------------------------------------------------------------ attackers on their own


def test_a_forged_journal_without_the_key_is_refused_and_causes_no_takeover(
    standby: Standby, log: LogWatcher
) -> None:
    """The attack as it worked before: a protocol-1 greeting, a forged journal, silence."""
    with connect(standby.address) as attacker:
        attacker.sendall(b"serialref-primary 1 0\n" + FORGED_LINES)
        assert log.wait_for("older serialref (protocol 1, without a key)").startswith("peer ")
        assert closed_by_peer(attacker)
    assert standby.still_standing_by(2 * TAKEOVER_AFTER)
    assert standby.journal.read_bytes() == b""


def test_a_forged_journal_during_a_live_replication_changes_nothing(
    tmp_path: Path, standby: Standby, log: LogWatcher
) -> None:
    with live_primary(tmp_path, standby.address) as primary:
        primary.play(FIRST_HALF)
        log.wait_for("mirroring from byte 0")
        with connect(standby.address) as attacker:
            attacker.sendall(b"serialref-primary 1 0\n" + FORGED_LINES)
            assert closed_by_peer(attacker)
        primary.play(SECOND_HALF)
        assert_mirror_complete_and_no_takeover(standby, primary, log)
    the_stream_was_undisturbed(log)


def test_a_primary_with_the_wrong_key_is_refused_both_ways(
    tmp_path: Path, standby: Standby, log: LogWatcher
) -> None:
    """A real replicator with another key finds the standby out first; a scripted one that
    sends its proof regardless is found out by the standby."""
    intruder_dir = tmp_path / "intruder"
    intruder_dir.mkdir()
    with live_primary(intruder_dir, standby.address, key=OTHER_KEY) as intruder:
        intruder.play(FIRST_HALF)
        log.wait_for("closed the connection during the handshake")
    with connect(standby.address) as attacker:
        nonce_p = new_nonce()
        attacker.sendall(primary_greeting(nonce_p))
        answer = receive_exactly(attacker, STANDBY_ANSWER_SIZE)
        assert answer.startswith(b"serialref-standby 2\n")  # its nonce and proof, nothing more
        attacker.sendall(b"\0" * TAG_SIZE)
        log.wait_for(f"peer 127.0.0.1:{attacker.getsockname()[1]}: the primary did not prove")
        assert closed_by_peer(attacker)
    assert standby.still_standing_by(2 * TAKEOVER_AFTER)
    assert standby.journal.read_bytes() == b""


def test_a_second_connection_during_a_live_replication_disturbs_nothing(
    tmp_path: Path, standby: Standby, log: LogWatcher
) -> None:
    """Newcomers that stay silent, send garbage or never finish are dropped beside the
    primary's connection, which goes on as if they were not there."""
    with live_primary(tmp_path, standby.address) as primary:
        primary.play(FIRST_HALF)
        log.wait_for("mirroring from byte 0")
        with connect(standby.address) as silent, connect(standby.address) as garbage:
            with contextlib.suppress(OSError):  # it may be cut off before all is sent
                garbage.sendall(b"\x16\x03\x01" + os.urandom(1 << 16))
            primary.play(SECOND_HALF[:3])
            assert closed_by_peer(garbage)
            assert closed_by_peer(silent)  # after the handshake timeout
            primary.play(SECOND_HALF[3:])
        assert_mirror_complete_and_no_takeover(standby, primary, log)
    the_stream_was_undisturbed(log)


def test_garbage_costs_the_standby_only_the_bytes_it_refused(
    standby: Standby, log: LogWatcher
) -> None:
    with connect(standby.address) as attacker:
        attacker.sendall(b"GET / HTTP/1.1\r\n" + os.urandom(100))
        log.wait_for(f"peer 127.0.0.1:{attacker.getsockname()[1]}: not a serialref primary")
        assert closed_by_peer(attacker)
    with connect(standby.address) as attacker:  # a whole greeting, then far too much
        attacker.sendall(primary_greeting(new_nonce()))
        receive_exactly(attacker, STANDBY_ANSWER_SIZE)
        with contextlib.suppress(OSError):
            attacker.sendall(b"x" * 4096)
        log.wait_for(f"peer 127.0.0.1:{attacker.getsockname()[1]}: the primary did not prove")
        assert closed_by_peer(attacker)
    assert standby.still_standing_by(2 * TAKEOVER_AFTER)
    assert standby.journal.read_bytes() == b""


def test_an_oversized_frame_is_refused_by_its_header(
    tmp_path: Path, standby: Standby, log: LogWatcher
) -> None:
    """Even from a primary that proved the key, a frame over 1 MiB is never buffered."""
    primary = ScriptedPrimary(standby.address)
    primary.prove()
    primary.start()
    primary.send((1 << 31).to_bytes(4, "big") + bytes([FrameKind.ENTRIES]) + b"x" * 1000)
    assert "over the 1048576 allowed" in log.wait_for("allowed")
    assert closed_by_peer(primary.sock)
    primary.close()
    standby.stop()
    assert standby.journal.read_bytes() == b""


def test_slow_loris_peers_cannot_keep_the_primary_out(
    tmp_path: Path, standby: Standby, log: LogWatcher
) -> None:
    """Connections that never finish their handshake fill the waiting room for at most the
    handshake timeout; the primary, refused meanwhile, gets in when they are dropped."""
    lorises = [connect(standby.address) for _ in range(4)]
    try:
        for loris in lorises:
            loris.sendall(b"serialref-pri")  # a correct start, and then nothing
        for _ in lorises:
            log.wait_for("connected")
        with live_primary(tmp_path, standby.address) as primary:
            primary.play(FIRST_HALF)
            assert "in their handshake already" in log.wait_for("refused")
            for loris in lorises:
                assert closed_by_peer(loris)
            log.wait_for("mirroring from byte 0")
            primary.play(SECOND_HALF)
            assert_mirror_complete_and_no_takeover(standby, primary, log)
    finally:
        for loris in lorises:
            loris.close()
    messages = log.seen + drain(log)
    assert sum("no handshake within 0.5 s" in message for message in messages) == 4


# ------------------------------------------------------------------ attackers in the middle


Tamper = Callable[[int, bytes], list[bytes]]
"""What a relay sends on for unit ``n`` (0: greeting, 1: proof, 2: START, 3...: later frames)."""


class Relay:
    """A man in the middle of the primary's connection: records it, and may tamper with
    the first connection's units (the handshake's two messages, then whole frames)."""

    def __init__(self, target: str, tamper: Tamper | None = None) -> None:
        self.target = target
        self.tamper = tamper
        self.server = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.server.getsockname()[1]}"
        self.captured: list[bytes] = []  # the first connection's units, as the primary sent them
        self.connections = 0
        self._wake_r, self._wake_w = socket.socketpair()
        self._thread = threading.Thread(target=self._run, name="test-relay")
        self._thread.start()

    def close(self) -> None:
        self._wake_w.send(b"!")
        self._thread.join(TIMEOUT)
        for sock in (self.server, self._wake_r, self._wake_w):
            sock.close()

    def _run(self) -> None:
        while True:
            ready, _, _ = select.select([self.server, self._wake_r], [], [])
            if self._wake_r in ready:
                return
            down, _ = self.server.accept()
            with down, contextlib.suppress(OSError), connect(self.target) as up:
                if self._pump(down, up):
                    return
            self.connections += 1

    def _pump(self, down: socket.socket, up: socket.socket) -> bool:
        """Relay until either side closes; True when the relay itself is to stop."""
        units = _Units()
        while True:
            ready, _, _ = select.select([down, up, self._wake_r], [], [])
            if self._wake_r in ready:
                return True
            if up in ready:
                data = up.recv(65536)
                if not data:
                    return False
                down.sendall(data)
            if down in ready:
                data = down.recv(65536)
                if not data:
                    return False
                for number, unit in units.feed(data):
                    first = self.connections == 0
                    if first:
                        self.captured.append(unit)
                    for out in self.tamper(number, unit) if first and self.tamper else [unit]:
                        up.sendall(out)


class _Units:
    """Splits what a primary sends into its greeting, its proof and its frames."""

    def __init__(self) -> None:
        self.buffer = b""
        self.count = 0

    def feed(self, data: bytes) -> Iterator[tuple[int, bytes]]:
        self.buffer += data
        while True:
            if self.count == 0:
                size = PRIMARY_GREETING_SIZE
            elif self.count == 1:
                size = TAG_SIZE
            elif len(self.buffer) >= 5:
                size = 5 + int.from_bytes(self.buffer[:4], "big") + TAG_SIZE
            else:
                return
            if len(self.buffer) < size:
                return
            unit, self.buffer = self.buffer[:size], self.buffer[size:]
            yield self.count, unit
            self.count += 1


@contextmanager
def relay_to(standby: Standby, tamper: Tamper | None = None) -> Iterator[Relay]:
    relay = Relay(standby.address, tamper)
    try:
        yield relay
    finally:
        relay.close()


def receive_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        assert chunk, f"closed after {data!r}"
        data += chunk
    return data


def test_a_replayed_capture_of_a_real_session_is_refused(
    tmp_path: Path, standby: Standby, log: LogWatcher
) -> None:
    with relay_to(standby) as relay, live_primary(tmp_path, relay.address) as primary:
        primary.play(FIRST_HALF)
        log.wait_for("mirroring from byte 0")
        primary.play(SECOND_HALF)
        assert_mirror_complete_and_no_takeover(standby, primary, log, then_stop=False)
        captured = list(relay.captured)
    # The greeting, the proof, START and one frame or more of entries (a replicator that
    # starts late sends the whole journal in one).
    assert len(captured) >= 4
    mirror = standby.journal.read_bytes()
    with connect(standby.address) as replay:
        replay.sendall(captured[0])
        answer = receive_exactly(replay, STANDBY_ANSWER_SIZE)  # a fresh challenge...
        replay.sendall(b"".join(captured[1:]))  # ...that the recorded proof does not answer
        log.wait_for(f"peer 127.0.0.1:{replay.getsockname()[1]}: the primary did not prove")
        assert closed_by_peer(replay)
    assert answer[20:52] != captured[0][20:52]
    assert standby.still_standing_by(2 * TAKEOVER_AFTER)
    assert standby.journal.read_bytes() == mirror
    standby.stop()


def flip_a_byte_of(target: int) -> Tamper:
    def tamper(number: int, unit: bytes) -> list[bytes]:
        if number != target:
            return [unit]
        altered = bytearray(unit)
        altered[10] ^= 0x20  # a byte of the payload's first entry
        return [bytes(altered)]

    return tamper


def duplicate(target: int) -> Tamper:
    return lambda number, unit: [unit, unit] if number == target else [unit]


def swap_with_next(target: int) -> Tamper:
    held: list[bytes] = []

    def tamper(number: int, unit: bytes) -> list[bytes]:
        if number == target:
            held.append(unit)
            return []
        if number == target + 1:
            return [unit, *held]
        return [unit]

    return tamper


def drop(target: int) -> Tamper:
    return lambda number, unit: [] if number == target else [unit]


@pytest.mark.parametrize(
    ("tamper", "problem"),
    [
        (flip_a_byte_of(3), "frame 1 failed its authentication"),
        (duplicate(3), "frame 2 failed its authentication"),
        (swap_with_next(3), "frame 1 failed its authentication"),
        (drop(3), "frame 1 failed its authentication"),
        (flip_a_byte_of(1), "the primary did not prove the replication key"),
    ],
    ids=["altered", "duplicated", "reordered", "dropped", "altered-proof"],
)
def test_a_frame_altered_duplicated_reordered_or_dropped_in_transit_never_reaches_the_mirror(
    tmp_path: Path, standby: Standby, log: LogWatcher, tamper: Tamper, problem: str
) -> None:
    """The tampered connection is dropped; the primary reconnects (through the relay, which
    tampers only once) and sends what the mirror lacks, so the copy ends up exact."""
    with relay_to(standby, tamper) as relay, live_primary(tmp_path, relay.address) as primary:
        primary.play(FIRST_HALF[:4])  # frame 3 (unit 3) carries the first of these entries
        primary.play(FIRST_HALF[4:])
        primary.play(SECOND_HALF)
        log.wait_for(problem)
        log.wait_for("replicating")  # the primary is back, through the relay
        assert_mirror_complete_and_no_takeover(standby, primary, log)
        assert relay.connections >= 2  # the tampered connection ended, another one followed
