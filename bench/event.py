"""Event cost: referee CPU per ply and per board with 1, 2 and 4 boards at once; memory of 16 seats.

    python bench/event.py [--games 4] [--seats 16] [--baseline DIR]

Each run is an event in this process (``serialref.tournament.runner.TournamentRunner``): a round
robin of twice as many built-in random players (instant, in their own processes, each
on a virtual null-modem cable) as boards, ``concurrency`` = boards, stopped once
``--games`` games a board have finished. The CPU is this process's (the referee threads
and the cables' relay threads; the players are other processes), divided by the plies
every journal recorded; the referee's own share is the CPU of its threads (the loop's
thread, ``referee``; ``board-N`` threads where a tree runs a loop per board), sampled
from ``/proc`` as the event runs. The target is a flat cost per ply as boards are added, until
the machine's cores are busy. The last run plays ``--seats`` players, half of them on
boards at once, and reports the process's peak resident memory.

Each measurement runs in a process of its own. With ``--baseline DIR`` (another
serialref source tree, such as ``git archive main | tar -x -C DIR``) the same
measurements are made with that tree's referee too, alternating with this one's, so both
columns come from one run on the same (possibly busy) machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from serialref.happenings import MovePlayed
from serialref.recorders.journal import read_journal
from serialref.tournament.config import PlayerConfig, TournamentConfig
from serialref.tournament.pairings import TournamentFormat
from serialref.tournament.runner import TournamentRunner

_REFEREE_THREADS = ("referee", "board-")
_TICK = os.sysconf("SC_CLK_TCK")


def sample_referee_cpu(seen: dict[int, float]) -> None:
    """Record the CPU seconds of each referee thread alive now (``seen``: native id -> s)."""
    for thread in threading.enumerate():
        if thread.name.startswith(_REFEREE_THREADS) and thread.native_id is not None:
            try:
                fields = Path(f"/proc/self/task/{thread.native_id}/stat").read_text().split()
            except OSError:
                continue  # it has just ended
            # After the command (field 2, in brackets, without spaces here) come utime, stime.
            seen[thread.native_id] = (int(fields[13]) + int(fields[14])) / _TICK


def run(boards: int, games: int, directory: Path) -> tuple[float, float, int, int, float]:
    """(CPU s, referee threads' CPU s, plies, games, wall s) of one event of ``boards``."""
    players = tuple(PlayerConfig(f"P{i:02d}", player="random", client_options=("--seed", str(i)))
                    for i in range(2 * boards))  # fmt: skip
    config = TournamentConfig(
        name=f"bench {boards}", format=TournamentFormat.ROUND_ROBIN, players=players,
        directory=directory, games=2, concurrency=boards,
        match_settings={"tc": "600+5", "reset_delay": 0.05, "conclude_delay": 0.05},
    )  # fmt: skip
    runner = TournamentRunner(config)
    wanted = boards * games
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    thread = threading.Thread(target=runner.run)
    thread.start()
    referee_cpu: dict[int, float] = {}
    while thread.is_alive() and finished(directory) < wanted:
        sample_referee_cpu(referee_cpu)
        time.sleep(0.05)  # another thread's files: there is no event to wait on here
    sample_referee_cpu(referee_cpu)
    runner.request_stop("bench: enough games")
    thread.join()
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    plies = sum(isinstance(event, MovePlayed) for journal in directory.glob("pairing-*.jsonl")
                for event in read_journal(journal))  # fmt: skip
    return cpu, sum(referee_cpu.values()), plies, finished(directory), wall


def finished(directory: Path) -> int:
    return sum(path.read_text(encoding="utf-8").count("[Result ")
               for path in directory.glob("pairing-*.pgn"))  # fmt: skip


def measure(tree: Path, boards: int, games: int) -> dict[str, float]:
    """One event run in a fresh process with ``tree``'s serialref; its figures."""
    command = [sys.executable, str(Path(__file__).resolve()), "--one", str(boards),
               "--games", str(games)]  # fmt: skip
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, env=environment, cwd=tree, check=True,
                          capture_output=True, text=True)  # fmt: skip
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def one(boards: int, games: int) -> None:
    """``--one``: a single event in this process, its figures as one JSON line."""
    with tempfile.TemporaryDirectory() as tmp:
        cpu, referee, plies, finished_games, wall = run(boards, games, Path(tmp) / "event")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"cpu": cpu, "referee": referee, "plies": plies, "games": finished_games,
                      "wall": wall, "peak_mib": peak}))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="finished games a board (default 4)")
    parser.add_argument("--seats", type=int, default=16, help="players of the memory run")
    parser.add_argument("--baseline", type=Path, help="another serialref tree to measure too")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        one(args.one, args.games)
        return
    trees = {"this": Path(__file__).resolve().parent.parent}
    if args.baseline is not None:
        trees = {"baseline": args.baseline.resolve(), **trees}
    print(f"{'tree':>8} {'boards':>6} {'games':>6} {'plies':>7} {'CPU s':>7} {'wall s':>7} "
          f"{'CPU/ply ms':>10} {'CPU/board s':>11} {'referee/ply ms':>14}")  # fmt: skip
    for boards in (1, 2, 4):
        for name, tree in trees.items():
            f = measure(tree, boards, args.games)
            print(f"{name:>8} {boards:>6} {f['games']:>6.0f} {f['plies']:>7.0f} {f['cpu']:>7.2f} "
                  f"{f['wall']:>7.1f} {1000 * f['cpu'] / max(f['plies'], 1):>10.3f} "
                  f"{f['cpu'] / boards:>11.2f} "
                  f"{1000 * f['referee'] / max(f['plies'], 1):>14.3f}", flush=True)  # fmt: skip
    for name, tree in trees.items():
        f = measure(tree, args.seats // 2, 1)
        print(f"{name:>8}: {args.seats}-seat event ({args.seats // 2} boards at once): "
              f"peak resident memory of the referee process {f['peak_mib']:.1f} MiB")


if __name__ == "__main__":
    main()
