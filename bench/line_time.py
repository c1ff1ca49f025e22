"""Wall time per ply against the line's own limit, at 9600 and 115200 baud.

    python bench/line_time.py [--plies-9600 60] [--plies-115200 200] [--baseline DIR]
                              [--rounds N]

A real ``serialref run`` process (journal on, an ``fsync`` per move, ``line_delay =
"on"``) referees one game between two instant players on the far ends of the project's
paced null-modem cables. Each player's replies (with ``acn``/``acs``/``ce`` as an
engine's would be) are written before the game, so a player's whole work per move is
one line read and one line written: what is measured is the line and the referee.
From the referee's own journal it prints, per ply:

- wall time against the line-time limit, ``(respond + reply) x 10 / baud``: what the
  cable itself needs, so a ratio of 1.0 is the best any referee can do;
- the referee's turnaround: a reply's line end read to the next respond written
  (journal entries and their fsync included), median and 99th percentile;
- the time charged to each side for the whole game (an instant player's: next to
  nothing when the line's time is allowed both ways).

With ``--baseline DIR`` (another serialref source tree, such as ``git archive main |
tar -x -C DIR``) each round runs that tree's referee too, the two taking turns, and the
end gives both trees' median turnarounds round by round, so that a change is measured
against the tree before it on the same (possibly busy) machine in one run. The machine's
load average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import chess
import serial

from serialref import records
from serialref.epd.operations import Operation
from serialref.epd.writer import format_record
from serialref.happenings import GameEnded, LineReceived, MatchEvent, RecordSent
from serialref.recorders.journal import read_journal
from serialref.testing import quiet_game
from serialref.wire.nullmodem import null_modem_cable

ANALYSIS = (Operation.of("acn", 123456), Operation.of("acs", 1), Operation.of("ce", -35))


def run(baud: int, plies: int, directory: Path, tree: Path) -> float:
    """One game over the cables with ``tree``'s referee; its median turnaround."""
    game = quiet_game(plies)
    journal = directory / f"journal-{baud}.jsonl"
    journal.unlink(missing_ok=True)  # the last run's, whose MatchStarted would be waited on
    config = directory / "lines.toml"
    config.write_text('[ports.a]\nline_delay = "on"\n[ports.b]\nline_delay = "on"\n')
    with null_modem_cable(baudrate=baud) as cable_a, null_modem_cable(baudrate=baud) as cable_b:
        cables = (cable_a, cable_b)
        referee = subprocess.Popen(
            [sys.executable, "-m", "serialref", "run", cable_a.path_a, cable_b.path_a,
             "--baud", str(baud), "--config", str(config), "--journal", str(journal),
             "--tc", "3600", "--reset-delay", "0.1", "--conclude-delay", "0.1", "--quiet"],
            env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree,
        )  # fmt: skip
        while not journal.exists() or b"MatchStarted" not in journal.read_bytes():
            if referee.poll() is not None:
                raise SystemExit(f"the referee ended with code {referee.returncode} at start")
            time.sleep(0.01)  # the referee has opened its ports
        ports = [
            serial.serial_for_url(cable.path_b, exclusive=True, timeout=PLAYER_TIMEOUT)
            for cable in cables
        ]
        players = [
            threading.Thread(target=answer_prepared, args=(port, replies), daemon=True)
            for port, replies in zip(ports, prepared_replies(game), strict=True)
        ]
        for port, name in zip(ports, ("Alpha", "Beta"), strict=True):
            port.write(format_record(records.sign_on(chess.Board(), name)).encode() + b"\r\n")
        for player in players:
            player.start()
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        referee.wait()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_seconds = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
        for player in players:
            player.join()
        for port in ports:
            port.close()
    return report(baud, plies, read_journal(journal), cpu_seconds)


PLAYER_TIMEOUT = 30.0
"""Seconds a player waits for a line before it gives up (the referee has gone)."""


def prepared_replies(game: list[str]) -> tuple[list[bytes], list[bytes]]:
    """White's and Black's replies to ``game``, in order; the side to move last resigns."""
    board = chess.Board()
    replies: tuple[list[bytes], list[bytes]] = ([], [])
    for uci in game:
        record = records.reply(board, chess.Move.from_uci(uci), *ANALYSIS)
        replies[board.ply() % 2].append(format_record(record).encode() + b"\r\n")
        board.push_uci(uci)
    resignation = records.reply(board, None, Operation("resign"), *ANALYSIS)
    replies[board.ply() % 2].append(format_record(resignation).encode() + b"\r\n")
    return replies


def answer_prepared(port: serial.Serial, replies: list[bytes]) -> None:
    """Answer the k-th ``respond`` with the k-th reply, until ``disconnect``.

    The referee checks every reply (a wrong one would be an infraction), and
    :func:`report` checks that the game ended as the replies say.
    """
    answered = iter(replies)
    while True:
        line = port.read_until(b"\n")
        if not line.endswith(b"\n") or b"refcom disconnect" in line:
            return
        if b"refcom respond" in line:
            port.write(next(answered))


def report(baud: int, plies: int, events: list[MatchEvent], cpu_seconds: float) -> float:
    """Print the figures, all from the referee's own clock; the median turnaround."""
    char = 10 / baud
    turnarounds, reply_at, first, last, line_bytes = [], None, None, None, 0
    for event in events:
        if isinstance(event, LineReceived) and "refreq reply" in event.text:
            reply_at = last = event.at
            line_bytes += len(event.text) + 2
        elif isinstance(event, RecordSent) and "refcom respond" in event.text:
            line_bytes += len(event.text) + 2
            written = event.left_at - (len(event.text) + 2) * char  # the line was idle
            first = written if first is None else first
            if reply_at is not None:
                turnarounds.append(written - reply_at)
                reply_at = None
    (ended,) = [event for event in events if isinstance(event, GameEnded)]
    assert (ended.termination, ended.reason) == ("normal", "White resigns"), ended
    assert first is not None and last is not None
    wall = (last - first) / plies
    limit = line_bytes * char / (plies + 1)
    turnarounds.sort()
    p99 = turnarounds[min(len(turnarounds) - 1, int(len(turnarounds) * 0.99))]
    print(f"{baud} baud, {plies} plies, journal on, line_delay on")
    print(f"  wall per ply {wall * 1000:.2f} ms, line-time limit {limit * 1000:.2f} ms:"
          f" ratio {wall / limit:.3f}   (target <= 1.05)")
    print(f"  referee turnaround per ply: median {statistics.median(turnarounds) * 1000:.3f} ms,"
          f" p99 {p99 * 1000:.3f} ms   (target < 0.5 ms)")
    print(f"  referee CPU for the whole run (start-up included) per ply:"
          f" {cpu_seconds / plies * 1000:.3f} ms")
    print(f"  charged for the whole game: White {ended.consumed[0]:.3f} s,"
          f" Black {ended.consumed[1]:.3f} s")
    return statistics.median(turnarounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plies-9600", type=int, default=60)
    parser.add_argument("--plies-115200", type=int, default=200)
    parser.add_argument("--baseline", type=Path, help="another serialref tree to run too")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each tree (default 1)")
    args = parser.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M')} on {sys.platform}, python {sys.version.split()[0]},"
          f" load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    trees = {"this": Path(__file__).resolve().parent.parent}
    if args.baseline is not None:
        trees = {"baseline": args.baseline.resolve(), **trees}
    medians: dict[tuple[str, int], list[float]] = {}
    with tempfile.TemporaryDirectory() as directory:
        for _ in range(args.rounds):
            for baud, plies in ((9600, args.plies_9600), (115200, args.plies_115200)):
                for name, tree in trees.items():
                    print(f"[{name}] ", end="")
                    median = run(baud, plies, Path(directory), tree)
                    medians.setdefault((name, baud), []).append(median)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    for (name, baud), found in medians.items():
        runs = ", ".join(f"{median * 1000:.3f}" for median in found)
        print(f"{name:>8} {baud:>6} baud: median turnaround per run {runs} ms")


if __name__ == "__main__":
    main()
