"""Referee cost per ply with instant players over pseudo-terminal null-modem cables.

    python bench/referee.py [--games N]

Three kinds of process, so that the referee's CPU time is its own: a cable
process relays two null-modem cables, two player processes replay a long legal
game instantly (one side each), and this process runs the referee (with its
journal and PGN recorders, fsync included). Prints CPU and wall time per ply
(median, p99), the ratio of per-ply cost around ply 400 to around ply 20, and
the referee's CPU use while a player thinks for 10 s.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import chess
from games import long_game

from serialref import records
from serialref.clock import TimeControl
from serialref.daemon import PortPlan, RefereeDaemon
from serialref.epd import format_record, parse_record
from serialref.events import MatchEvent, MovePlayed
from serialref.link import LineReceived, PortLink
from serialref.match import MatchSettings
from serialref.recorders.journal import JournalRecorder
from serialref.recorders.pgn import PgnRecorder
from serialref.transport import SerialTransport

PLIES = 440
THINK_PLY = 30  # the ply at which White thinks for THINK_SECONDS
THINK_SECONDS = 10.0


def cable_process() -> None:
    """Relay two null-modem cables until stdin closes; print their paths first."""
    from serialref.testing import null_modem_cable

    with null_modem_cable() as one, null_modem_cable() as two:
        print(json.dumps([one.path_a, one.path_b, two.path_a, two.path_b]), flush=True)
        sys.stdin.read()


def player_process(path: str, colour: str, moves_file: str) -> None:
    """Play one side of the scripted games instantly (thinking once, at THINK_PLY)."""
    import queue

    moves = json.loads(Path(moves_file).read_text())
    side = chess.WHITE if colour == "white" else chess.BLACK
    events: queue.SimpleQueue[object] = queue.SimpleQueue()
    link = PortLink(colour, SerialTransport.open(path), events)
    link.start()
    link.send_line(format_record(records.sign_on(chess.Board(), f"replay-{colour}")))
    board = chess.Board()
    thought = False
    while True:
        event = events.get()
        if not isinstance(event, LineReceived):
            break
        record = parse_record(event.text)
        command = records.referee_command(record).value
        if command == "disconnect":
            break
        if command == "reset":
            board = chess.Board()
        elif command == "respond":
            if "sm" in record:
                board.push(record.move("sm", board))
            assert board.turn == side
            ply = len(board.move_stack)
            if ply == THINK_PLY and not thought:
                thought = True
                time.sleep(THINK_SECONDS)  # the player thinks; the referee must idle
            move = chess.Move.from_uci(moves[ply])
            link.send_line(format_record(records.reply(board, move)))
            board.push(move)
    link.close()


class PlyTimer:
    """Stamps CPU and wall time as each move is accepted, on the referee thread."""

    def __init__(self) -> None:
        self.stamps: list[tuple[int, float, float]] = []

    def handle(self, event: MatchEvent) -> None:
        if isinstance(event, MovePlayed):
            self.stamps.append((event.ply, time.process_time(), time.perf_counter()))

    def close(self) -> None:
        pass


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--no-records", action="store_true")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="serialref-bench-"))
    moves_file = workdir / "moves.json"
    moves_file.write_text(json.dumps(long_game(PLIES)))
    me = [sys.executable, str(Path(__file__).resolve())]
    cables = subprocess.Popen(
        [*me, "--cables"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert cables.stdout is not None
    near_a, far_a, near_b, far_b = json.loads(cables.stdout.readline())
    timer = PlyTimer()
    recorders: list[JournalRecorder | PgnRecorder] = []
    if not args.no_records:
        recorders = [JournalRecorder(workdir / "journal.jsonl"), PgnRecorder(workdir / "games.pgn")]
    # One game: White on port a. Time control long enough that nobody flags.
    settings = MatchSettings(
        games=1, time_control=TimeControl.parse("3600"), reset_delay=0.1, conclude_delay=0.1
    )
    players: list[subprocess.Popen[bytes]] = []

    def start_players() -> None:
        players.append(subprocess.Popen([*me, "--player", far_a, "white", str(moves_file)]))
        players.append(subprocess.Popen([*me, "--player", far_b, "black", str(moves_file)]))

    cpu_per_ply: list[float] = []
    wall_per_ply: list[float] = []
    early: list[float] = []
    late: list[float] = []
    idle_cpu: list[float] = []
    for _ in range(args.games):
        timer.stamps.clear()
        # The scripted game is never ended by the rules: stop it after the last ply.
        stopper = StopAfter(PLIES)
        daemon = RefereeDaemon(
            settings,
            [PortPlan("a", near_a), PortPlan("b", near_b)],
            [*recorders, timer, stopper],
            on_ready=start_players,
        )
        stopper.daemon = daemon
        daemon.run()
        for process in players:
            process.wait(timeout=30)
        players.clear()
        stamps = timer.stamps
        for (_, cpu0, wall0), (ply1, cpu1, wall1) in itertools.pairwise(stamps):
            if ply1 - 1 == THINK_PLY:
                idle_cpu.append((cpu1 - cpu0) / (wall1 - wall0))
                continue
            cpu_per_ply.append(cpu1 - cpu0)
            wall_per_ply.append(wall1 - wall0)
            if 10 <= ply1 <= 30:
                early.append(cpu1 - cpu0)
            if 390 <= ply1 <= 410:
                late.append(cpu1 - cpu0)
    assert cables.stdin is not None
    cables.stdin.close()
    cables.wait()
    for recorder in recorders:
        recorder.close()

    ms = 1000.0
    print(f"plies measured: {len(cpu_per_ply)} over {args.games} games of {PLIES} plies")
    print(
        f"referee CPU per ply : median {statistics.median(cpu_per_ply) * ms:.3f} ms, "
        f"p99 {percentile(cpu_per_ply, 0.99) * ms:.3f} ms   (target <= 0.25 ms median)"
    )
    print(
        f"wall per ply        : median {statistics.median(wall_per_ply) * ms:.3f} ms, "
        f"p99 {percentile(wall_per_ply, 0.99) * ms:.3f} ms"
    )
    ratio = statistics.median(late) / statistics.median(early)
    print(f"CPU per ply at ply ~400 / at ply ~20: {ratio:.2f}   (target <= 1.2)")
    print(
        f"referee CPU while a player thinks {THINK_SECONDS:.0f} s: "
        f"{max(idle_cpu) * 100:.3f} %   (target < 0.5 %)"
    )
    print("for scale on this machine: fastchess 0.09 ms, cutechess-cli 0.17 ms CPU per ply")


class StopAfter:
    """Ends the match once the scripted game has been played out."""

    def __init__(self, plies: int) -> None:
        self.daemon: RefereeDaemon | None = None
        self._plies = plies

    def handle(self, event: MatchEvent) -> None:
        if isinstance(event, MovePlayed) and event.ply >= self._plies - 1 and self.daemon:
            self.daemon.request_stop("benchmark game played out")

    def close(self) -> None:
        pass


if __name__ == "__main__":
    if sys.argv[1:2] == ["--cables"]:
        cable_process()
    elif sys.argv[1:2] == ["--player"]:
        player_process(*sys.argv[2:5])
    else:
        os.environ.setdefault("PYTHONHASHSEED", "0")
        main()
