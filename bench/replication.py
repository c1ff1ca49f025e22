"""What authenticated, checked replication to a hot standby costs.

    python bench/replication.py [--plies N]

One match journal (a game of N plies, three entries per ply as the referee writes them:
the reply received, the move, the next respond sent) is replicated over loopback TCP
two ways, side by side in one run:

- plain: the journal's lines as they are, the receiver checking that each is a JSON
  object naming an event, then writing and fsync-ing each batch: replication without
  a key or entry checks;
- serialref: ``JournalReplicator`` to ``JournalMirror``: the key proved both ways, an
  HMAC-SHA256 on every frame, every entry checked (decoded, field types, move legality
  on the game's board) before it is written, fsync per batch.

Figures:

1. throughput: every ply's entries at once, over a connection that is up, from the
   hand-over until the mirror holds them all, in entries per second;
2. latency per move: a ply's three entries written to the primary's journal (with its
   fsync) and handed over, until the mirror holds them; median and 99th percentile;
3. the parts of one ply: sealing and opening its frame, and checking its three entries.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import secrets
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import chess
from games import long_game

from serialref import records
from serialref.epd.writer import format_record
from serialref.happenings import (
    GameStarted,
    LineReceived,
    MatchEvent,
    MatchStarted,
    MovePlayed,
    PlayerSignedOn,
    RecordSent,
)
from serialref.recorders.journal import JournalRecorder
from serialref.standby.channel import Channel, FrameKind, Side
from serialref.standby.mirror import JournalMirror
from serialref.standby.primary import JournalReplicator
from serialref.standby.validation import JournalValidator

KEY = secrets.token_bytes(32)
TIMEOUT = 30.0


def match_events(plies: int) -> tuple[list[MatchEvent], list[list[MatchEvent]]]:
    """The match's opening entries, and each ply's three entries."""
    start: list[MatchEvent] = [
        MatchStarted(games=1, time_control="3600", ports=("a", "b")),
        PlayerSignedOn("a", "White"),
        PlayerSignedOn("b", "Black"),
        GameStarted(1, "a", "b", chess.STARTING_FEN, {"White": "White", "Black": "Black"}),
    ]
    board = chess.Board()
    per_ply = []
    for ply, uci in enumerate(long_game(plies), start=1):
        move = chess.Move.from_uci(uci)
        reply = format_record(records.reply(board, move))
        san = board.san(move)
        respond = format_record(records.respond(board, (ply // 2, ply // 2), san))
        board.push(move)
        per_ply.append([
            LineReceived("a" if ply % 2 else "b", reply, time.time(), time.monotonic()),
            MovePlayed(
                game=1, ply=ply, san=san, uci=uci, elapsed=0.5,
                remaining=(3600 - 0.5 * ((ply + 1) // 2), 3600 - 0.5 * (ply // 2)),
                consumed=(0.5 * ((ply + 1) // 2), 0.5 * (ply // 2)),
                moves_made=((ply + 1) // 2, ply // 2), fen=board.fen(en_passant="fen"),
            ),
            RecordSent("b" if ply % 2 else "a", respond, time.time(), time.monotonic()),
        ])  # fmt: skip
    return start, per_ply


class Grown:
    """How many bytes a mirror holds, for a waiter on another thread."""

    def __init__(self) -> None:
        self._size = 0
        self._changed = threading.Condition()

    def add(self, count: int) -> None:
        with self._changed:
            self._size += count
            self._changed.notify_all()

    def wait_for(self, size: int) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: self._size >= size, TIMEOUT):
                raise TimeoutError(f"the mirror holds {self._size} bytes, not {size}")


class TimedMirror(JournalMirror):
    """A mirror that tells a waiter each time it has written."""

    grown: Grown

    def _append(self, data: bytes) -> None:
        super()._append(data)
        self.grown.add(len(data))


class Replication:
    """One way of replicating: ``handed(journal)`` after each write, ``grown`` on arrival."""

    def __init__(self, handed: Callable[[], None], grown: Grown) -> None:
        self.handed = handed
        self.grown = grown


@contextmanager
def serialref_replication(directory: Path, journal: Path) -> Iterator[Replication]:
    mirror = TimedMirror("127.0.0.1:0", directory / "mirror.jsonl", KEY, takeover_after=60.0)
    mirror.grown = Grown()
    thread = threading.Thread(target=mirror.wait_for_silence)
    thread.start()
    replicator = JournalReplicator(mirror.address, journal, KEY)
    event = MatchStarted(games=1, time_control="3600", ports=("a", "b"))
    try:
        yield Replication(lambda: replicator.handle(event), mirror.grown)
    finally:
        replicator.close()
        mirror.stop()
        thread.join()
        mirror.close()


@contextmanager
def plain_replication(directory: Path, journal: Path) -> Iterator[Replication]:
    """Lines as they are, each checked to be a JSON object naming an event, fsync per batch."""
    server = socket.create_server(("127.0.0.1", 0))
    grown = Grown()

    def receive() -> None:
        connection, _ = server.accept()
        with connection, (directory / "plain-mirror.jsonl").open("ab") as mirror:
            pending = b""
            while data := connection.recv(65536):
                pending += data
                end = pending.rfind(b"\n") + 1
                batch, pending = pending[:end], pending[end:]
                for line in batch.splitlines():
                    entry = json.loads(line)
                    assert isinstance(entry, dict) and isinstance(entry.get("event"), str)
                mirror.write(batch)
                mirror.flush()
                os.fsync(mirror.fileno())
                grown.add(len(batch))

    thread = threading.Thread(target=receive)
    thread.start()
    sender = socket.create_connection(server.getsockname())
    sender.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sent = 0

    def handed() -> None:
        nonlocal sent
        with journal.open("rb") as source:
            source.seek(sent)
            data = source.read()
        end = data.rfind(b"\n") + 1
        sender.sendall(data[:end])
        sent += end

    try:
        yield Replication(handed, grown)
    finally:
        sender.close()
        thread.join()
        server.close()


WAYS = {"plain": plain_replication, "serialref": serialref_replication}


def throughput(way: str, start: list[MatchEvent], per_ply: list[list[MatchEvent]]) -> float:
    """Entries per second: all the plies at once, over a connection already up."""
    with tempfile.TemporaryDirectory(dir=".") as name:
        directory = Path(name)
        journal = directory / "journal.jsonl"
        recorder = JournalRecorder(journal)
        with WAYS[way](directory, journal) as replication:
            for event in start:
                recorder.handle(event)
            replication.handed()
            replication.grown.wait_for(journal.stat().st_size)
            for event in (event for ply in per_ply for event in ply):
                recorder.handle(event)
            began = time.perf_counter()
            replication.handed()
            replication.grown.wait_for(journal.stat().st_size)
            elapsed = time.perf_counter() - began
        recorder.close()
        return 3 * len(per_ply) / elapsed


def latencies(way: str, start: list[MatchEvent], per_ply: list[list[MatchEvent]]) -> list[float]:
    """Seconds from a ply's first journal write until the mirror holds the ply."""
    with tempfile.TemporaryDirectory(dir=".") as name:
        directory = Path(name)
        journal = directory / "journal.jsonl"
        recorder = JournalRecorder(journal)
        measured = []
        with WAYS[way](directory, journal) as replication:
            for event in start:
                recorder.handle(event)
            replication.handed()
            replication.grown.wait_for(journal.stat().st_size)
            for ply in per_ply:
                began = time.perf_counter()
                for event in ply:
                    recorder.handle(event)
                    replication.handed()
                replication.grown.wait_for(journal.stat().st_size)
                measured.append(time.perf_counter() - began)
        recorder.close()
        return measured


def parts(start: list[MatchEvent], per_ply: list[list[MatchEvent]]) -> tuple[float, float, float]:
    """Microseconds per ply: sealing its frame, opening it, checking its three entries."""
    with tempfile.TemporaryDirectory(dir=".") as name:
        journal = Path(name) / "journal.jsonl"
        recorder = JournalRecorder(journal)
        for event in [*start, *(event for ply in per_ply for event in ply)]:
            recorder.handle(event)
        recorder.close()
        lines = journal.read_bytes().splitlines()
    ply_lines = [lines[len(start) + 3 * index : len(start) + 3 * index + 3]
                 for index in range(len(per_ply))]  # fmt: skip
    payloads = [b"\n".join(three) + b"\n" for three in ply_lines]
    primary = Channel(KEY, b"p" * 32, b"s" * 32, side=Side.PRIMARY)
    standby = Channel(KEY, b"p" * 32, b"s" * 32, side=Side.STANDBY)
    began = time.perf_counter()
    frames = [primary.seal(FrameKind.ENTRIES, payload) for payload in payloads]
    sealed = time.perf_counter()
    for frame in frames:
        standby.feed(frame)
        assert standby.next_frame() is not None
    opened = time.perf_counter()
    validator = JournalValidator()
    for line in lines[: len(start)]:
        validator.check(line)
    checking = time.perf_counter()
    for three in ply_lines:
        for line in three:
            validator.check(line)
    checked = time.perf_counter()
    count = len(per_ply) / 1e6
    return (sealed - began) / count, (opened - sealed) / count, (checked - checking) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plies", type=int, default=300, help="plies of the game (default 300)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each way (default 3)")
    options = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # each run's connection ends with a warning
    start, per_ply = match_events(options.plies)
    rates: dict[str, list[float]] = {way: [] for way in WAYS}
    delays: dict[str, list[float]] = {way: [] for way in WAYS}
    for _ in range(options.rounds):  # alternating, so both ways see the same machine
        for way in WAYS:
            rates[way].append(throughput(way, start, per_ply))
            delays[way].extend(latencies(way, start, per_ply))
    seal, open_, check = parts(start, per_ply)
    entries = len(start) + 3 * len(per_ply)
    print(f"{options.plies}-ply game, {entries} entries, {options.rounds} rounds each")
    print("throughput (all the plies' entries at once), entries/s, median:")
    for way in WAYS:
        print(f"  {way:10} {statistics.median(rates[way]):10,.0f}")
    print("latency per move (3 entries written with fsync until mirrored), ms:")
    for way in WAYS:
        ordered = sorted(delays[way])
        p99 = ordered[int(0.99 * (len(ordered) - 1))]
        print(f"  {way:10} median {statistics.median(ordered) * 1000:.3f}   p99 {p99 * 1000:.3f}")
    added = statistics.median(delays["serialref"]) - statistics.median(delays["plain"])
    print(f"  added by the key and the checks: {added * 1000:+.3f} ms median per move")
    print(f"parts of one ply, µs: seal {seal:.1f}, open {open_:.1f}, check 3 entries {check:.1f}")


if __name__ == "__main__":
    main()
