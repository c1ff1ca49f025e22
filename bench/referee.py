"""Referee cost per ply with instant players over pseudo-terminal pairs.

    python bench/referee.py [--games N]

The referee in this process opens one end of two pty pairs, as it would two
serial ports; two player processes each hold the other end of one pair and
replay a long legal game instantly (one side each, thinking once for 10 s).
Each game is played twice in one run, with the journal and the PGN (fsync
included) and without any recorder, so the two figures are measured side by
side. Prints CPU and wall time per ply (median, p99), the journal's own share,
the ratio of per-ply cost around ply 400 to around ply 20, and the referee's CPU
use while a player thinks. ``bench/race.py`` puts the whole ``serialref run``
process next to fastchess and cutechess-cli.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tty
from dataclasses import dataclass, field
from pathlib import Path

import chess
from games import long_game

from serialref import records
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.happenings import MatchEvent, MatchListener, MovePlayed, Recorder
from serialref.recorders.journal import JournalRecorder
from serialref.recorders.pgn import PgnRecorder
from serialref.referee.daemon import PortPlan, RefereeDaemon
from serialref.referee.settings import MatchSettings
from serialref.timecontrol import TimeControl
from serialref.wire.framing import Line, LineFramer

PLIES = 440
THINK_PLY = 30  # the ply at which White thinks for THINK_SECONDS
THINK_SECONDS = 10.0


def open_pty_pair() -> tuple[int, int, str]:
    """A raw pty pair, echo off: (master fd, slave fd, slave path), like a null-modem cable.

    The bench keeps the slave descriptor open, so the line never hangs up between games.
    """
    master, slave = os.openpty()
    for fd in (master, slave):
        tty.setraw(fd)
    return master, slave, os.ttyname(slave)


def player_process(fd_text: str, colour: str, moves_file: str, think: str) -> None:
    """Play one side of the scripted game instantly on the pty master ``fd_text``.

    It thinks once, for THINK_SECONDS at THINK_PLY, so the referee's idle CPU can be measured.
    """
    fd = int(fd_text)
    moves = json.loads(Path(moves_file).read_text())
    side = chess.WHITE if colour == "white" else chess.BLACK
    framer = LineFramer()

    def send(record: EpdRecord) -> None:
        os.write(fd, format_record(record).encode("ascii") + b"\r\n")

    send(records.sign_on(chess.Board(), f"replay-{colour}"))
    board = chess.Board()
    thought = think == "0"
    while data := os.read(fd, 4096):
        for line in framer.feed(data):
            assert isinstance(line, Line)
            record = parse_record(line.text)
            command = records.referee_command(record).value
            if command == "disconnect":
                return
            if command == "reset":
                board = chess.Board()
            elif command == "respond":
                if "sm" in record:
                    board.push(record.move("sm", board))
                assert board.turn == side
                ply = len(board.move_stack)
                if ply == len(moves):
                    continue  # the game is played out: the bench stops the referee now
                if ply == THINK_PLY and not thought:
                    thought = True
                    time.sleep(THINK_SECONDS)  # the player thinks; the referee must idle
                move = chess.Move.from_uci(moves[ply])
                send(records.reply(board, move))
                board.push(move)


class TimedJournal(JournalRecorder):
    """The journal recorder, timing its own CPU per ply (its three entries and the fsync)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.per_ply: list[float] = []
        self._ply = 0.0

    def handle(self, event: MatchEvent) -> None:
        before = time.thread_time()
        super().handle(event)
        self._ply += time.thread_time() - before

    def sync(self) -> None:
        """The move's fsync, after the step: it closes the ply's account."""
        before = time.thread_time()
        super().sync()
        self._ply += time.thread_time() - before
        if self._ply:
            self.per_ply.append(self._ply)
            self._ply = 0.0


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


@dataclass
class Samples:
    """Per-ply figures of one configuration, over every game played with it."""

    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    early: list[float] = field(default_factory=list)  # CPU per ply around ply 20
    late: list[float] = field(default_factory=list)  # CPU per ply around ply 400
    idle: list[float] = field(default_factory=list)  # CPU share while a player thinks

    def add(self, stamps: list[tuple[int, float, float]], think_ply: int | None) -> None:
        for (_, cpu0, wall0), (ply1, cpu1, wall1) in itertools.pairwise(stamps):
            if think_ply is not None and ply1 - 1 == think_ply:
                self.idle.append((cpu1 - cpu0) / (wall1 - wall0))
                continue
            self.cpu.append(cpu1 - cpu0)
            self.wall.append(wall1 - wall0)
            if 10 <= ply1 <= 30:
                self.early.append(cpu1 - cpu0)
            if 390 <= ply1 <= 410:
                self.late.append(cpu1 - cpu0)


def play_game(
    workdir: Path, moves_file: Path, recorded: bool, think: bool
) -> tuple[list[tuple[int, float, float]], list[float]]:
    """One scripted game over two fresh pty pairs: the referee's stamps and journal CPU per ply."""
    me = [sys.executable, str(Path(__file__).resolve())]
    pairs = [open_pty_pair(), open_pty_pair()]
    timer = PlyTimer()
    stopper = StopAfter(PLIES)
    observers: list[MatchListener] = [timer, stopper]
    recorders: list[Recorder] = []
    journal: TimedJournal | None = None
    if recorded:
        number = len(list(workdir.glob("journal-*.jsonl")))
        journal = TimedJournal(workdir / f"journal-{number}.jsonl")
        recorders = [journal, PgnRecorder(workdir / "games.pgn")]
    settings = MatchSettings(
        games=1, time_control=TimeControl.parse("3600"), reset_delay=0.1, conclude_delay=0.1
    )
    players: list[subprocess.Popen[bytes]] = []

    def start_players() -> None:
        for (master, _, _), colour in zip(pairs, ("white", "black"), strict=True):
            command = [*me, "--player", str(master), colour, str(moves_file), str(int(think))]
            players.append(subprocess.Popen(command, pass_fds=[master]))

    daemon = RefereeDaemon(
        settings,
        [PortPlan("a", pairs[0][2]), PortPlan("b", pairs[1][2])],
        recorders,
        observers,
        on_ready=start_players,
    )
    stopper.daemon = daemon
    gc.freeze()  # as serialref run does before its match
    try:
        daemon.run()
        for process in players:
            process.wait(timeout=30)
    finally:
        for listener in [*recorders, *observers]:
            listener.close()
        for master, slave, _ in pairs:
            os.close(master)
            os.close(slave)
    return timer.stamps, journal.per_ply if journal else []


def report(label: str, samples: Samples, journal_cost: list[float] | None = None) -> None:
    ms = 1000.0
    print(f"{label} ({len(samples.cpu)} plies)")
    print(
        f"  referee CPU per ply : median {statistics.median(samples.cpu) * ms:.3f} ms, "
        f"p99 {percentile(samples.cpu, 0.99) * ms:.3f} ms   (target <= 0.25 ms median)"
    )
    if journal_cost:
        print(
            f"    of which the journal (3 entries and an fsync): median "
            f"{statistics.median(journal_cost) * ms:.3f} ms"
        )
    print(
        f"  wall time per ply   : median {statistics.median(samples.wall) * ms:.3f} ms, "
        f"p99 {percentile(samples.wall, 0.99) * ms:.3f} ms"
    )
    ratio = statistics.median(samples.late) / statistics.median(samples.early)
    print(f"  CPU per ply at ply ~400 / at ply ~20: {ratio:.2f}   (target <= 1.2)")
    if samples.idle:
        print(
            f"  referee CPU while a player thinks {THINK_SECONDS:.0f} s: "
            f"{max(samples.idle) * 100:.3f} %   (target < 0.5 %)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2, help="games per configuration")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="serialref-bench-"))
    moves_file = workdir / "moves.json"
    moves_file.write_text(json.dumps(long_game(PLIES)))
    recorded, bare = Samples(), Samples()
    journal_cost: list[float] = []
    for game in range(args.games):
        # Alternate the configurations so that both see the same machine load.
        think = game == 0
        stamps, journal_per_ply = play_game(workdir, moves_file, True, think)
        recorded.add(stamps, THINK_PLY if think else None)
        journal_cost.extend(journal_per_ply)
        bare.add(play_game(workdir, moves_file, False, False)[0], None)
    print(f"{args.games} games of {PLIES} plies per configuration, instant players")
    report("with journal and PGN (fsync per move)", recorded, journal_cost)
    report("without recorders", bare)


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
    if sys.argv[1:2] == ["--player"]:
        player_process(*sys.argv[2:6])
    else:
        os.environ.setdefault("PYTHONHASHSEED", "0")
        main()
