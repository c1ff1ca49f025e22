"""Event cost: referee CPU per ply and per board with 1, 2 and 4 boards at once; memory of 16 seats.

    python bench/event.py [--games 4] [--seats 16]

Each run is an event in this process (``serialref.event.runner.EventRunner``): a round
robin of twice as many built-in random players (instant, in their own processes, each
on a virtual null-modem cable) as boards, ``concurrency`` = boards, stopped once
``--games`` games a board have finished. The CPU is this process's (the referee threads
and the cables' relay threads; the players are other processes), divided by the plies
every journal recorded. The target is a flat cost per ply as boards are added, until
the machine's cores are busy. The last run plays ``--seats`` players, half of them on
boards at once, and reports the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import threading
import time
from pathlib import Path

from serialref.event.config import EventConfig, PlayerConfig
from serialref.event.pairings import EventFormat
from serialref.event.runner import EventRunner
from serialref.events import MovePlayed
from serialref.recorders.journal import read_journal


def run(boards: int, games_per_board: int, directory: Path) -> tuple[float, int, int, float]:
    """(CPU seconds, plies, finished games, wall seconds) of one event with ``boards`` at once."""
    players = tuple(PlayerConfig(f"P{i:02d}", player="random", client_options=("--seed", str(i)))
                    for i in range(2 * boards))  # fmt: skip
    config = EventConfig(
        name=f"bench {boards}", format=EventFormat.ROUND_ROBIN, players=players,
        directory=directory, games=2, concurrency=boards,
        match_settings={"tc": "600+5", "reset_delay": 0.05, "conclude_delay": 0.05},
    )  # fmt: skip
    runner = EventRunner(config)
    wanted = boards * games_per_board
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    thread = threading.Thread(target=runner.run)
    thread.start()
    while thread.is_alive() and finished(directory) < wanted:
        time.sleep(0.05)  # another thread's files: there is no event to wait on here
    runner.request_stop("bench: enough games")
    thread.join()
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    plies = sum(isinstance(event, MovePlayed) for journal in directory.glob("pairing-*.jsonl")
                for event in read_journal(journal))  # fmt: skip
    return cpu, plies, finished(directory), wall


def finished(directory: Path) -> int:
    return sum(path.read_text(encoding="utf-8").count("[Result ")
               for path in directory.glob("pairing-*.pgn"))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="finished games a board (default 4)")
    parser.add_argument("--seats", type=int, default=16, help="players of the memory run")
    args = parser.parse_args()
    print(f"{'boards':>6} {'games':>6} {'plies':>7} {'CPU s':>7} {'wall s':>7} "
          f"{'CPU/ply ms':>10} {'CPU/board s':>11}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for boards in (1, 2, 4):
            cpu, plies, games, wall = run(boards, args.games, Path(tmp) / f"b{boards}")
            print(f"{boards:>6} {games:>6} {plies:>7} {cpu:>7.2f} {wall:>7.1f} "
                  f"{1000 * cpu / max(plies, 1):>10.3f} {cpu / boards:>11.2f}")  # fmt: skip
        run(args.seats // 2, 1, Path(tmp) / "memory")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{args.seats}-seat event ({args.seats // 2} boards at once): "
              f"peak resident memory of the referee process {peak:.1f} MiB")


if __name__ == "__main__":
    main()
