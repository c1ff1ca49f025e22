"""What the audience costs the referee: 100 Style 12 and 20 web clients, per ply.

    python bench/observers.py [--games N] [--style12 100] [--web 20]

The scripted game of ``bench/referee.py`` (instant players on pty pairs, no recorders)
is played alternately without observers and with the Style 12 feed and the web board
serving their clients on 127.0.0.1; the clients are another process that reads
everything it is sent. Printed side by side: the referee thread's CPU per ply (what
the match waits for), and the whole process's (the feeds' own threads included),
median and p99, and how many clients were still connected at the end.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from games import long_game
from referee import PLIES, StopAfter, open_pty_pair, percentile

from serialref.happenings import MatchEvent, MatchListener, MovePlayed
from serialref.observers.feed import FeedServer
from serialref.observers.style12 import Style12Observer
from serialref.observers.web import WebObserver
from serialref.referee.daemon import PortPlan, RefereeDaemon
from serialref.referee.settings import MatchSettings
from serialref.timecontrol import TimeControl
from serialref.wire.address import Address

REFEREE_BENCH = Path(__file__).resolve().with_name("referee.py")


class ThreadTimer:
    """Stamps the referee thread's and the process's CPU as each move is accepted."""

    def __init__(self) -> None:
        self.stamps: list[tuple[float, float]] = []

    def handle(self, event: MatchEvent) -> None:
        if isinstance(event, MovePlayed):
            self.stamps.append((time.thread_time(), time.process_time()))

    def close(self) -> None:
        pass

    def per_ply(self) -> tuple[list[float], list[float]]:
        pairs = list(zip(self.stamps, self.stamps[1:], strict=False))
        return [b[0] - a[0] for a, b in pairs], [b[1] - a[1] for a, b in pairs]


def audience(style12: Address, web: Address, counts: tuple[int, int]) -> None:
    """The clients (another process): connect them all, then read until the feeds close."""
    selector = selectors.DefaultSelector()
    for _ in range(counts[0]):
        selector.register(socket.create_connection(style12), selectors.EVENT_READ)
    for _ in range(counts[1]):
        browser = socket.create_connection(web)
        browser.sendall(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        selector.register(browser, selectors.EVENT_READ)
    print("connected", flush=True)
    while selector.get_map():
        for key, _ in selector.select():
            connection: socket.socket = key.fileobj  # type: ignore[assignment]
            if not connection.recv(1 << 16):
                selector.unregister(connection)
                connection.close()


def play(moves_file: Path, counts: tuple[int, int] | None) -> tuple[list[float], list[float], int]:
    """One scripted game; referee-thread and process CPU per ply, and clients at the end."""
    pairs = [open_pty_pair(), open_pty_pair()]
    timer = ThreadTimer()
    stopper = StopAfter(PLIES)
    feeds: list[FeedServer] = []
    clients: subprocess.Popen[str] | None = None
    if counts is not None:
        feeds = [Style12Observer(Address("127.0.0.1", 0)), WebObserver(Address("127.0.0.1", 0))]
        clients = subprocess.Popen(
            [sys.executable, __file__, "--audience", json.dumps(
                [list(feeds[0].address), list(feeds[1].address), list(counts)])],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert clients.stdout is not None and clients.stdout.readline().strip() == "connected"
    observers: list[MatchListener] = [timer, stopper, *feeds]
    players: list[subprocess.Popen[bytes]] = []

    def start_players() -> None:
        for (master, _, _), colour in zip(pairs, ("white", "black"), strict=True):
            players.append(subprocess.Popen(
                [sys.executable, str(REFEREE_BENCH), "--player", str(master), colour,
                 str(moves_file), "1"], pass_fds=[master],
            ))  # fmt: skip

    settings = MatchSettings(
        games=1, time_control=TimeControl.parse("3600"), reset_delay=0.1, conclude_delay=0.1
    )
    daemon = RefereeDaemon(settings, [PortPlan("a", pairs[0][2]), PortPlan("b", pairs[1][2])],
                           (), observers, on_ready=start_players)  # fmt: skip
    stopper.daemon = daemon
    gc.freeze()
    try:
        daemon.run()
        for process in players:
            process.wait(timeout=30)
    finally:
        connected = sum(feed.clients for feed in feeds)
        for feed in feeds:
            feed.close()
        if clients is not None:
            clients.wait(timeout=30)
        for master, slave, _ in pairs:
            os.close(master)
            os.close(slave)
    thread, process = timer.per_ply()
    return thread, process, connected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2, help="games per configuration")
    parser.add_argument("--style12", type=int, default=100, help="Style 12 clients")
    parser.add_argument("--web", type=int, default=20, help="web board clients")
    args = parser.parse_args()
    moves_file = Path(tempfile.mkdtemp(prefix="serialref-bench-")) / "moves.json"
    moves_file.write_text(json.dumps(long_game(PLIES)))
    results: dict[str, tuple[list[float], list[float], list[int]]] = {
        "without observers": ([], [], []),
        f"with {args.style12} Style 12 + {args.web} web clients": ([], [], []),
    }
    for _ in range(args.games):  # alternated, so both see the same machine load
        for label, counts in zip(results, (None, (args.style12, args.web)), strict=True):
            thread, process, connected = play(moves_file, counts)
            results[label][0].extend(thread)
            results[label][1].extend(process)
            results[label][2].append(connected)
    ms = 1000.0
    print(f"{args.games} games of {PLIES} plies per configuration, instant players, no recorders")
    medians = []
    for label, (thread, process, connected) in results.items():
        medians.append(statistics.median(thread))
        print(f"{label}:")
        print(f"  referee thread CPU per ply: median {statistics.median(thread) * ms:.3f} ms, "
              f"p99 {percentile(thread, 0.99) * ms:.3f} ms")  # fmt: skip
        print(f"  whole process CPU per ply : median {statistics.median(process) * ms:.3f} ms, "
              f"p99 {percentile(process, 0.99) * ms:.3f} ms")  # fmt: skip
        if any(connected):
            print(f"  clients still connected at the end: {connected}")
    print(f"observers add {(medians[1] - medians[0]) * ms:.3f} ms of referee thread CPU per ply "
          "(target < 0.1 ms)")  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1:2] == ["--audience"]:
        style12, web, counts = json.loads(sys.argv[2])
        audience(Address(*style12), Address(*web), (counts[0], counts[1]))
    else:
        os.environ.setdefault("PYTHONHASHSEED", "0")
        main()
