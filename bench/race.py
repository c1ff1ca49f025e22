"""Referee cost per ply, measured side by side: serialref, fastchess and cutechess-cli.

    python bench/race.py --engine "PATH/replay PATH/games.txt" \\
        [--fastchess PATH] [--cutechess PATH] [--games 20] [--tc 60+1] [--repeats 1]

The same two players (two copies of the ``--engine`` command, a UCI engine; a
zero-cost one such as a replayer of prepared games shows the referee's own cost)
play the same match under each referee, one referee after the other; repeats are
interleaved so that every referee sees the same machine load. serialref runs as a
real ``serialref run`` process, its players as two real ``serialref client``
processes, joined by pseudo-terminal null-modem cables (``serialref.wire.nullmodem``).
fastchess and cutechess-cli start the engines themselves. A peer whose path is not
given is reported as not measured.

Figures per ply (plies counted in each referee's PGN output):

- referee CPU: user + system time of the referee process alone, read from
  ``/proc/PID/stat`` once it has exited and before it is reaped (its engines' CPU is
  its children's and is not counted);
- match wall: from the line ``Started game 1 of`` to the last ``Finished game`` line
  on the referee's stdout (all three print them), so process start-up is left out;
- clients CPU: serialref's two ``serialref client`` bridges, measured the same way
  (the engines behind them excluded): what a player PC spends on the protocol;
- peak RSS of the referee and of a client (``VmHWM``, sampled every 0.1 s);
- serialref's referee memory against the game's length: one more ``serialref run``
  referees one long game between two instant players in this process, and its resident
  memory (``VmRSS``) is read as ply 20 and ply 400 are asked for (a referee that keeps
  per-move state would grow);
- the referee's turnaround at 115200 baud with its journal written ahead of the relay:
  one game of ``bench/line_time.py`` (a reply's line end read to the next ``respond``
  written, median).

The last lines set each figure against its target.

The machine, its load and the date are printed with the figures: compare only
figures from one run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import chess.pgn
import serial

from serialref import records
from serialref.epd.operations import Operation
from serialref.epd.writer import format_record
from serialref.testing import quiet_game
from serialref.wire.nullmodem import null_modem_cable

TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_EVERY = 0.1
MATCH_TIMEOUT = 1800.0
PORTS_TIMEOUT = 120.0
STARTED = re.compile(r"^Started game 1 of ")
FINISHED = re.compile(r"^Finished game \d+ ")
REFEREES = ("serialref", "fastchess", "cutechess-cli")
RSS_PLIES = (20, 400)
"""The plies at which the long game reads the referee's resident memory."""
TURNAROUND_PLIES = 200
# The targets the report sets the figures against.
CPU_TARGET = 2.0  # serialref's referee CPU per ply against fastchess's
RSS_TARGET = 25.0  # MB, the referee's peak
FLAT_TARGET = 1.1  # RSS at the later ply against the earlier
TURNAROUND_TARGET = 0.5  # ms, median at 115200 baud


@dataclass
class Cost:
    """What one process spent: its own CPU (children excluded) and its peak memory."""

    cpu: float
    peak_rss_kb: int
    returncode: int


@dataclass
class Run:
    """One match under one referee."""

    referee: str
    games: int = 0
    plies: int = 0
    referee_cost: Cost | None = None
    clients: list[Cost] = field(default_factory=list)
    match_wall: float | None = None
    problem: str = ""

    @property
    def usable(self) -> bool:
        return not self.problem and self.plies > 0 and self.referee_cost is not None

    def referee_cpu(self) -> float | None:
        """Milliseconds of the referee's CPU per ply."""
        return self._per_ply(self.referee_cost.cpu if self.referee_cost else None)

    def wall(self) -> float | None:
        """Milliseconds of match wall time per ply."""
        return self._per_ply(self.match_wall)

    def clients_cpu(self) -> float | None:
        """Milliseconds of both clients' CPU per ply (serialref only)."""
        return self._per_ply(sum(client.cpu for client in self.clients) if self.clients else None)

    def referee_rss(self) -> float | None:
        return self.referee_cost.peak_rss_kb / 1024 if self.referee_cost else None

    def client_rss(self) -> float | None:
        return max(client.peak_rss_kb for client in self.clients) / 1024 if self.clients else None

    def _per_ply(self, seconds: float | None) -> float | None:
        return None if seconds is None or not self.plies else seconds / self.plies * 1000.0


class Watcher:
    """Samples the peak RSS of child processes until stopped."""

    def __init__(self) -> None:
        self._peaks: dict[int, int] = {}
        self._lock = threading.Lock()
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self._thread.start()

    def watch(self, pid: int) -> None:
        with self._lock:
            self._peaks.setdefault(pid, 0)
        self.sample(pid)

    def sample(self, pid: int) -> None:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return
        found = re.search(r"^VmHWM:\s+(\d+) kB", status, flags=re.MULTILINE)
        if found is not None:
            with self._lock:
                self._peaks[pid] = max(self._peaks.get(pid, 0), int(found.group(1)))

    def peak(self, pid: int) -> int:
        with self._lock:
            return self._peaks.get(pid, 0)

    def stop(self) -> None:
        self._halt.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._halt.wait(SAMPLE_EVERY):
            with self._lock:
                pids = list(self._peaks)
            for pid in pids:
                self.sample(pid)


def own_cpu(pid: int) -> float:
    """utime + stime of a process (a zombie too), without its children's."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def finish(process: subprocess.Popen[bytes], watcher: Watcher, timeout: float) -> Cost:
    """Wait for ``process`` to end, read its CPU while it is a zombie, then reap it."""
    killer = threading.Timer(timeout, process.kill)
    killer.start()
    try:
        watcher.sample(process.pid)
        os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
        cpu = own_cpu(process.pid)
        returncode = process.wait()
    finally:
        killer.cancel()
    return Cost(cpu=cpu, peak_rss_kb=watcher.peak(process.pid), returncode=returncode)


class OutputStamps:
    """Copies a referee's stdout to a log, noting when the match's first game started and
    its last game finished."""

    def __init__(self, stream: IO[bytes], log: IO[bytes]) -> None:
        self.first_start: float | None = None
        self.last_end: float | None = None
        self._stream, self._log = stream, log
        self._thread = threading.Thread(target=self._run, name="stdout-stamps", daemon=True)
        self._thread.start()

    def join(self) -> None:
        self._thread.join(10.0)

    @property
    def match_wall(self) -> float | None:
        if self.first_start is None or self.last_end is None:
            return None
        return self.last_end - self.first_start

    def _run(self) -> None:
        for raw in iter(self._stream.readline, b""):
            now = time.perf_counter()
            self._log.write(raw)
            line = raw.decode("utf-8", "replace")
            if self.first_start is None and STARTED.match(line):
                self.first_start = now
            elif FINISHED.match(line):
                self.last_end = now


class LineWaiter:
    """Copies a stream to a log and lets the caller wait for a number of matching lines."""

    def __init__(self, stream: IO[bytes], log: IO[bytes], pattern: str, count: int) -> None:
        self.ready = threading.Event()
        self._stream, self._log = stream, log
        self._pattern, self._count = re.compile(pattern), count
        self._thread = threading.Thread(target=self._run, name="line-waiter", daemon=True)
        self._thread.start()

    def join(self) -> None:
        self._thread.join(10.0)

    def _run(self) -> None:
        seen = 0
        for raw in iter(self._stream.readline, b""):
            self._log.write(raw)
            seen += bool(self._pattern.search(raw.decode("utf-8", "replace")))
            if seen >= self._count:
                self.ready.set()


def count_plies(pgn: Path) -> tuple[int, int]:
    """Games and plies in a PGN file (0, 0 if there is none)."""
    if not pgn.exists():
        return 0, 0
    games = plies = 0
    with pgn.open(encoding="utf-8", errors="replace") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games += 1
            plies += sum(1 for _ in game.mainline_moves())
    return games, plies


def peer_command(referee: str, binary: Path, engine: list[str], games: int, tc: str,
                 pgn: Path) -> list[str]:  # fmt: skip
    """The command line of fastchess or cutechess-cli for the same match."""
    rounds = ["-rounds", str(games // 2), "-games", "2", "-concurrency", "1"]
    if referee == "fastchess":
        extra = [f"args={shlex.join(engine[1:])}"] if engine[1:] else []
        engine_args = [f"cmd={engine[0]}", *extra]
        return [str(binary), "-engine", *engine_args, "name=A", "-engine", *engine_args, "name=B",
                "-each", f"tc={tc}", "proto=uci", *rounds, "-pgnout", f"file={pgn}"]  # fmt: skip
    engine_args = [f"cmd={engine[0]}", *(f"arg={word}" for word in engine[1:])]
    return [str(binary), "-engine", *engine_args, "name=A", "-engine", *engine_args, "name=B",
            "-each", f"tc={tc}", "proto=uci", *rounds, "-pgnout", str(pgn)]  # fmt: skip


def run_peer(referee: str, binary: Path, engine: list[str], games: int, tc: str,
             workdir: Path, watcher: Watcher) -> Run:  # fmt: skip
    """One match under fastchess or cutechess-cli, which start the engines themselves."""
    pgn = workdir / "games.pgn"
    result = Run(referee)
    command = peer_command(referee, binary, engine, games, tc, pgn)
    with (workdir / "referee.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=workdir, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
        watcher.watch(process.pid)
        assert process.stdout is not None
        stamps = OutputStamps(process.stdout, log)
        result.referee_cost = finish(process, watcher, MATCH_TIMEOUT)
        stamps.join()
        process.stdout.close()
    result.match_wall = stamps.match_wall
    result.games, result.plies = count_plies(pgn)
    if result.referee_cost.returncode != 0:
        result.problem = describe_exit(result.referee_cost.returncode)
    return result


@contextmanager
def cables() -> Iterator[tuple[list[str], list[str]]]:
    """Two null-modem cables: the referee's ends and the players' ends."""
    with null_modem_cable() as first, null_modem_cable() as second:
        yield [first.path_a, second.path_a], [first.path_b, second.path_b]


def run_serialref(
    engine: list[str], games: int, tc: str, workdir: Path, watcher: Watcher, profile: str
) -> Run:
    """One match under ``serialref run``, its players two ``serialref client`` processes.

    ``profile`` "cprofile" runs each process under cProfile (``PROCESS.prof`` in
    ``workdir``); "callgrind" runs each under valgrind's callgrind (``PROCESS.cg``), which
    counts instructions and so reads the same on a busy machine. Either way the other
    figures then measure the profiler too.
    """
    pgn = workdir / "games.pgn"
    result = Run("serialref")

    def serialref(process: str) -> list[str]:
        if profile == "callgrind":
            out = f"--callgrind-out-file={workdir / f'{process}.cg'}"
            return ["valgrind", "--tool=callgrind", out, sys.executable, "-m", "serialref"]
        profiler = ["-m", "cProfile", "-o", str(workdir / f"{process}.prof")] if profile else []
        return [sys.executable, *profiler, "-m", "serialref"]

    with ExitStack() as stack, cables() as (referee_ends, player_ends):
        log = stack.enter_context((workdir / "referee.log").open("wb"))
        errors = stack.enter_context((workdir / "referee.err").open("wb"))
        process = subprocess.Popen(
            [*serialref("referee"), "run", *referee_ends, "--games", str(games), "--tc", tc,
             "--pgn", str(pgn), "--reset-delay", "0", "--conclude-delay", "0",
             "--log-level", "info"],
            cwd=workdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        watcher.watch(process.pid)
        assert process.stdout is not None and process.stderr is not None
        stamps = OutputStamps(process.stdout, log)
        # Players start once both ports are open: a sign-on sent earlier would be lost.
        opened = LineWaiter(process.stderr, errors, r" opened ", 2)
        clients: list[subprocess.Popen[bytes]] = []
        if opened.ready.wait(PORTS_TIMEOUT):
            for index, end in enumerate(player_ends):
                client_log = stack.enter_context((workdir / f"client-{index}.log").open("wb"))
                clients.append(subprocess.Popen(
                    [*serialref(f"client-{index}"), "client", end, "--engine", shlex.join(engine),
                     "--once", "--log-level", "warning"],
                    cwd=workdir, stdin=subprocess.DEVNULL, stdout=client_log, stderr=client_log,
                ))  # fmt: skip
                watcher.watch(clients[-1].pid)
        else:
            process.kill()
            result.problem = "serialref run did not open its ports (see referee.err)"
        result.referee_cost = finish(process, watcher, MATCH_TIMEOUT)
        result.clients = [finish(client, watcher, 60.0) for client in clients]
        stamps.join()
        opened.join()
        process.stdout.close()
        process.stderr.close()
    result.match_wall = stamps.match_wall
    result.games, result.plies = count_plies(pgn)
    if not result.problem and result.referee_cost.returncode != 0:
        result.problem = describe_exit(result.referee_cost.returncode)
    return result


def resident_kb(pid: int) -> int:
    """A process's resident memory now (``VmRSS``), in kB."""
    found = re.search(r"^VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    return int(found.group(1)) if found else 0


def rss_by_ply(workdir: Path) -> dict[int, int]:
    """The resident memory (kB) of a ``serialref run`` process by ply, in one long game.

    Two instant players in this process answer every ``respond`` of a prepared game of
    more than ``max(RSS_PLIES)`` plies; before answering the one for a ply of
    ``RSS_PLIES`` they read the referee's ``VmRSS``. The side to move after the last
    prepared move resigns. Empty when the game could not be played (see ``rss.err``).
    """
    game = quiet_game(max(RSS_PLIES) + 2)
    found: dict[int, int] = {}
    with ExitStack() as stack, cables() as (referee_ends, player_ends):
        errors = stack.enter_context((workdir / "rss.err").open("wb"))
        process = subprocess.Popen(
            [sys.executable, "-m", "serialref", "run", *referee_ends, "--games", "1",
             "--tc", "3600", "--pgn", str(workdir / "rss.pgn"), "--reset-delay", "0",
             "--conclude-delay", "0", "--log-level", "info"],
            cwd=workdir, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        assert process.stderr is not None
        opened = LineWaiter(process.stderr, errors, r" opened ", 2)
        if not opened.ready.wait(PORTS_TIMEOUT):
            process.kill()
            process.wait()
            return found
        ports = [stack.enter_context(serial.serial_for_url(end, timeout=30.0))
                 for end in player_ends]  # fmt: skip
        sides = zip(ports, (chess.WHITE, chess.BLACK), strict=True)
        players = [threading.Thread(target=answer_prepared,
                                    args=(port, side, game, process.pid, found), daemon=True)
                   for port, side in sides]  # fmt: skip
        for port, name in zip(ports, ("White", "Black"), strict=True):
            port.write(format_record(records.sign_on(chess.Board(), name)).encode() + b"\r\n")
        for player in players:
            player.start()
        try:
            process.wait(MATCH_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for player in players:
            player.join(10.0)
        opened.join()
        process.stderr.close()
    return found


def answer_prepared(port: serial.Serial, side: chess.Color, game: list[str], pid: int,
                    found: dict[int, int]) -> None:  # fmt: skip
    """Play ``side`` of ``game`` instantly until ``disconnect``, noting the referee's
    memory at the plies of ``RSS_PLIES``; resign when ``game`` has no move left."""
    board = chess.Board()
    while True:
        line = port.read_until(b"\n")
        if not line.endswith(b"\n") or b"refcom disconnect" in line:
            return
        if b"refcom respond" not in line:
            continue
        while board.turn != side:  # the opponent's move, which the respond relays
            board.push_uci(game[len(board.move_stack)])
        ply = len(board.move_stack)
        if ply in RSS_PLIES:
            found[ply] = resident_kb(pid)
        if ply < len(game):
            move = chess.Move.from_uci(game[ply])
            port.write(format_record(records.reply(board, move)).encode() + b"\r\n")
            board.push(move)
        else:
            resignation = records.reply(board, None, Operation("resign"))
            port.write(format_record(resignation).encode() + b"\r\n")


def turnaround(workdir: Path) -> float | None:
    """The median turnaround (ms) of one ``bench/line_time.py`` game at 115200 baud,
    journal on; None if that game failed (its error is printed)."""
    import line_time  # beside this script

    tree = Path(__file__).resolve().parent.parent
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            median = line_time.run(115200, TURNAROUND_PLIES, workdir, tree)
    except (SystemExit, AssertionError, OSError, ValueError) as exc:
        print(f"turnaround not measured: {exc!r}", file=sys.stderr)
        return None
    return median * 1000


def describe_exit(code: int) -> str:
    if code < 0:
        name = signal.Signals(-code).name
        hint = " (an instruction this CPU lacks: built for another CPU)" if name == "SIGILL" else ""
        return f"killed by {name}{hint}"
    return f"exit {code}"


def median(runs: Sequence[Run], value: Callable[[Run], float | None]) -> float | None:
    values = [found for run in runs if run.usable and (found := value(run)) is not None]
    return statistics.median(values) if values else None


def python_chess_floor(pgn: Path, rounds: int = 5) -> float | None:
    """CPU ms per ply of the python-chess work no referee built on it can skip, or None.

    For every ply of the games in ``pgn``: read the reply's SAN (which checks that the
    move is legal), play it, look for the endings that need no claim (checkmate,
    stalemate, insufficient material, 75 moves, fivefold repetition) and write the
    position the next ``respond`` carries. Median of ``rounds`` passes, in this process.
    """
    if not pgn.exists():
        return None
    games: list[list[str]] = []
    with pgn.open(encoding="utf-8", errors="replace") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            board, sans = game.board(), []
            for move in game.mainline_moves():
                sans.append(board.san(move))
                board.push(move)
            games.append(sans)
    plies = sum(len(sans) for sans in games)
    if not plies:
        return None
    passes = []
    for _ in range(rounds):
        started = time.process_time()
        for sans in games:
            board = chess.Board()
            for san in sans:
                board.push(board.parse_san(san))
                _ = board.is_checkmate() or board.is_stalemate()
                _ = board.is_insufficient_material() or board.is_seventyfive_moves()
                _ = board.is_fivefold_repetition()
                board.epd()
        passes.append((time.process_time() - started) / plies * 1000)
    return statistics.median(passes)


def report(
    results: dict[str, list[Run]],
    given: dict[str, bool],
    header: str,
    floor: float | None,
    by_ply: dict[int, int],
    turnaround_ms: float | None = None,
) -> None:
    print(header)
    print(f"{'referee':14} {'games':>5} {'plies':>6} {'referee CPU':>12} {'match wall':>11}"
          f" {'clients CPU':>12} {'referee RSS':>12} {'client RSS':>11}")  # fmt: skip
    print(f"{'':14} {'':>5} {'':>6} {'ms/ply':>12} {'ms/ply':>11} {'ms/ply':>12}"
          f" {'MB':>12} {'MB':>11}")  # fmt: skip
    figures: dict[str, tuple[float, float | None]] = {}
    for referee in REFEREES:
        runs = results.get(referee, [])
        if not given[referee]:
            print(f"{referee:14} not measured (no --{referee.split('-')[0]} PATH given)")
            continue
        usable = [run for run in runs if run.usable]
        if not usable:
            problems = "; ".join(sorted({run.problem or "no games played" for run in runs}))
            print(f"{referee:14} not measured: {problems} (its log is in the folder above)")
            continue
        cpu = median(usable, Run.referee_cpu)
        wall = median(usable, Run.wall)
        clients = median(usable, Run.clients_cpu)
        rss = median(usable, Run.referee_rss)
        client_rss = median(usable, Run.client_rss)
        plies = median(usable, lambda run: float(run.plies))
        assert cpu is not None and plies is not None
        figures[referee] = (cpu, wall)
        print(f"{referee:14} {usable[0].games:>5} {plies:>6.0f}"
              f" {cpu:>12.3f} {fmt(wall, 11)} {fmt(clients, 12)} {fmt(rss, 12, 1)}"
              f" {fmt(client_rss, 11, 1)}")  # fmt: skip
    print()
    for peer in REFEREES[1:]:
        if "serialref" in figures and peer in figures:
            ours, theirs = figures["serialref"], figures[peer]
            ratio = f"{ours[1] / theirs[1]:.2f}x" if ours[1] and theirs[1] else "not measured"
            print(f"serialref / {peer}: referee CPU {ours[0] / theirs[0]:.2f}x, match wall {ratio}")
        else:
            print(f"serialref / {peer}: not measured")
    early, late = (by_ply.get(ply) for ply in RSS_PLIES)
    if early and late:
        print(f"serialref referee RSS in one long game: {early / 1024:.1f} MB at ply"
              f" {RSS_PLIES[0]}, {late / 1024:.1f} MB at ply {RSS_PLIES[1]}: ratio"
              f" {late / early:.3f}")  # fmt: skip
    else:
        print("serialref referee RSS in one long game: not measured (see rss.err in the logs)")
    print("serialref's referee against the targets:")
    ours_cpu = figures.get("serialref", (None,))[0]
    fastchess_cpu = figures.get("fastchess", (None,))[0]
    peak = median(results.get("serialref", []), Run.referee_rss)
    print(target_line("referee CPU per ply / fastchess's",
                      ours_cpu / fastchess_cpu if ours_cpu and fastchess_cpu else None,
                      "x", CPU_TARGET))  # fmt: skip
    print(target_line("referee peak RSS", peak, " MB", RSS_TARGET, digits=1))
    print(target_line(f"referee RSS at ply {RSS_PLIES[1]} / ply {RSS_PLIES[0]}",
                      late / early if early and late else None, "", FLAT_TARGET))  # fmt: skip
    print(target_line("turnaround at 115200 baud, journal written ahead (median)",
                      turnaround_ms, " ms", TURNAROUND_TARGET))  # fmt: skip
    if floor is not None:
        print(f"python-chess's own work per ply, which no referee built on it can skip (read the"
              f" SAN, play it, look for the automatic endings, write the position):"
              f" {floor:.3f} ms")  # fmt: skip
        for referee, (cpu, _) in figures.items():
            print(f"{referee} / that work: referee CPU {cpu / floor:.2f}x")


def target_line(name: str, value: float | None, unit: str, target: float,
                digits: int = 3) -> str:  # fmt: skip
    """``  NAME: VALUE (target <= TARGET): met`` (or ``not met``, or not measured)."""
    if value is None:
        return f"  {name}: not measured"
    verdict = "met" if value <= target else "not met"
    return f"  {name}: {value:.{digits}f}{unit} (target <= {target:g}{unit}): {verdict}"


def fmt(value: float | None, width: int, digits: int = 3) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def machine() -> str:
    model = next((line.split(":", 1)[1].strip()
                  for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor() or "?")  # fmt: skip
    return f"{platform.node()}, {platform.system()} {platform.release()} {platform.machine()}, " \
           f"{os.cpu_count()} CPUs ({model})"


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", required=True, metavar="COMMAND",
                        help='the players\' UCI engine, e.g. "/tmp/replay games.txt"')  # fmt: skip
    parser.add_argument("--fastchess", type=Path, metavar="PATH", help="fastchess binary")
    parser.add_argument("--cutechess", type=Path, metavar="PATH", help="cutechess-cli binary")
    parser.add_argument("--games", type=int, default=20, help="games per match (even; default 20)")
    parser.add_argument("--tc", default="60+1", help="time control (default 60+1)")
    parser.add_argument("--repeats", type=int, default=1, help="matches per referee (default 1)")
    parser.add_argument("--profile", choices=("cprofile", "callgrind"), default="",
                        help="run serialref's processes under cProfile (PROCESS.prof in the"
                             " logs) or callgrind (PROCESS.cg)")
    args = parser.parse_args()
    engine = shlex.split(args.engine)
    if args.games < 2 or args.games % 2:
        parser.error("--games must be even: every pairing plays both colours")
    peers = {"fastchess": args.fastchess, "cutechess-cli": args.cutechess}
    given = {"serialref": True, **{name: path is not None for name, path in peers.items()}}
    started = time.strftime("%Y-%m-%d %H:%M %Z")
    load_before = loadavg()
    workroot = Path(tempfile.mkdtemp(prefix="serialref-race-"))
    results: dict[str, list[Run]] = {}
    watcher = Watcher()
    try:
        for repeat in range(1, args.repeats + 1):
            for referee in REFEREES:
                if not given[referee]:
                    continue
                workdir = workroot / f"{referee}-{repeat}"
                workdir.mkdir()
                print(f"[{time.strftime('%H:%M:%S')}] {referee}, match {repeat} of {args.repeats}",
                      file=sys.stderr, flush=True)  # fmt: skip
                path = peers.get(referee)
                if path is None:
                    run = run_serialref(engine, args.games, args.tc, workdir, watcher, args.profile)
                else:
                    run = run_peer(referee, path, engine, args.games, args.tc, workdir, watcher)
                results.setdefault(referee, []).append(run)
        by_ply = rss_by_ply(workroot)
        turnaround_ms = turnaround(workroot)
    finally:
        watcher.stop()
    header = (
        f"bench/race.py: {args.games} games of {args.tc} per match, {args.repeats} match(es) per"
        f" referee (medians), players: {args.engine}\n"
        f"{started} on {machine()}; load {load_before} -> {loadavg()}; logs in {workroot}"
    )
    floor = python_chess_floor(workroot / "serialref-1" / "games.pgn")
    report(results, given, header, floor, by_ply, turnaround_ms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
