"""What ``serialref client`` costs each move beyond the engine's own thinking.

    python bench/overhead.py [--games N] [--engine PATH] [--nodes N] [--tc TC]
                             [--against DIR]... [--floor] [--rounds N]

A match of two ``serialref client --engine ...`` processes under ``serialref run``, all
separate processes, over pseudo-terminal null-modem cables (``serialref.wire.nullmodem``).
Each client's engine is wrapped in a relay (this script with ``--relay``) that stamps,
with the system-wide monotonic clock, the moment ``go`` reaches the engine and the
moment its answer (``bestmove``, or an XBoard ``move``) leaves it. The referee's journal
stamps the same clock when a ``respond`` has left the referee and when the ``reply``'s
line end arrived. So for every move::

    overhead = (reply arrived - respond left) - (answer left engine - go reached engine)

is what the move cost on top of the engine's thinking: the two crossings of the cable
(its relay thread copies each line once), the client reading, parsing and answering,
and python-chess's exchange with the engine. The cable's own crossing time is measured
apart and printed next to it. Also printed: each client's CPU per move it played and
both clients' together per ply (from ``/proc``, between the first and the last move of
the match, so start-up is not counted), and their peak resident memory.

With ``--against DIR`` (another checkout of serialref, an older commit say; repeatable)
the same match is played with that tree's clients too, alternating ``--rounds`` times
between the trees under this tree's referee, so that all sets of figures come from one
run on the same machine load, side by side. The load average is printed with them.
``--floor`` adds the floor bridge (``bench/bridge_floor.py``) to the rotation: what a
bridge that only copies lines and writes SANs costs on this machine at this hour, the
yardstick for the targets below.

Targets: overhead median <= 0.5 ms, p99 <= 2 ms; both clients <= 0.3 ms CPU per ply;
client RSS <= 25 MB.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import select
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(__file__).resolve()
FLOOR = SCRIPT.with_name("bridge_floor.py")
TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_EVERY = 0.05
"""Seconds between samples of the clients' CPU time while the match runs."""


# -- the relay between a client and its engine --------------------------------------------


def relay(stamps_path: Path, command: Sequence[str]) -> int:
    """Copy stdin to the engine and its output back, stamping ``go`` and the answer."""
    engine = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert engine.stdin is not None and engine.stdout is not None
    to_engine, from_engine = engine.stdin.fileno(), engine.stdout.fileno()
    going: float | None = None
    inbound, outbound = b"", b""
    with stamps_path.open("a") as stamps:
        while True:
            ready, _, _ = select.select([0, from_engine], [], [])
            if 0 in ready:
                data = os.read(0, 65536)
                now = time.monotonic()
                if not data:
                    engine.stdin.close()
                    break
                inbound, lines = _lines(inbound + data)
                if any(line.startswith(b"go") for line in lines):
                    going = now
                os.write(to_engine, data)
            if from_engine in ready:
                data = os.read(from_engine, 65536)
                if not data:
                    break
                outbound, lines = _lines(outbound + data)
                now = time.monotonic()
                os.write(1, data)
                if going is not None and any(_is_answer(line) for line in lines):
                    stamps.write(f"{going} {now}\n")
                    stamps.flush()
                    going = None
    return engine.wait()


def _lines(data: bytes) -> tuple[bytes, list[bytes]]:
    *lines, rest = data.split(b"\n")
    return rest, [line.strip() for line in lines]


def _is_answer(line: bytes) -> bool:
    return line.startswith((b"bestmove", b"move ", b"My move is"))


# -- a match ------------------------------------------------------------------------------


@dataclass
class Client:
    """One ``serialref client`` process and what is measured of it."""

    name: str
    process: subprocess.Popen[bytes]
    stamps: Path
    stderr: Path
    samples: list[tuple[int, float, int]] = field(default_factory=list)
    """(moves in the match so far, CPU seconds, peak RSS in kB)."""


@dataclass
class Match:
    """What a refereed match leaves behind, for the figures."""

    journal: Path
    clients: list[Client]
    referee_exit: int
    cable_crossing: float


def run_match(
    directory: Path,
    players: Sequence[tuple[str, Sequence[str], Sequence[str]]],
    *,
    games: int,
    tc: str,
    clients_from: Path | None = ROOT,
) -> Match:
    """``serialref run`` and a client per ``(name, engine command, client options)``.

    The clients run from the source tree ``clients_from`` (``python -m serialref``
    finds the package in its working directory first), or are the floor bridge
    (``bench/bridge_floor.py``) when it is None; the referee runs from this tree.
    """
    # Not needed by the relay, which starts fast.
    from serialref.wire.nullmodem import null_modem_cable

    journal = directory / "journal.jsonl"
    with ExitStack() as stack:
        cables = [stack.enter_context(null_modem_cable()) for _ in players]
        crossing = cable_crossing(cables[0].path_a, cables[0].path_b)
        referee = subprocess.Popen(
            [sys.executable, "-m", "serialref", "run", cables[0].path_a, cables[1].path_a,
             f"--games={games}", f"--tc={tc}", f"--journal={journal}",
             f"--pgn={directory / 'match.pgn'}", "--reset-delay=0.1", "--conclude-delay=0.1",
             "--log-level=error"],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        while not (journal.exists() and journal.stat().st_size):
            if referee.poll() is not None:
                raise SystemExit(f"serialref run failed with exit code {referee.returncode}")
            time.sleep(0.01)
        clients = []
        for cable, (name, engine, options) in zip(cables, players, strict=True):
            stamps = directory / f"{name}.stamps"
            stderr = directory / f"{name}.stderr"
            wrapped = [sys.executable, str(SCRIPT), "--relay", str(stamps), "--", *engine]
            bridge = [sys.executable, "-m", "serialref", "client"] if clients_from else [
                sys.executable, str(FLOOR)]  # fmt: skip
            process = subprocess.Popen(
                [*bridge, cable.path_b, "--engine", shlex.join(wrapped), "--log-level=info",
                 *options],
                cwd=clients_from or ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=stack.enter_context(stderr.open("wb")),
            )  # fmt: skip
            clients.append(Client(name, process, stamps, stderr))
        sampler = threading.Thread(target=_sample, args=(journal, clients), daemon=True)
        sampler.start()
        _await_referee(referee, clients)
        for client in clients:
            # This tree's client stays on its line for the next match: it is asked to leave.
            client.process.terminate()
            client.process.wait(timeout=60)
        sampler.join()
    return Match(journal, clients, referee.returncode, crossing)


def _await_referee(referee: subprocess.Popen[bytes], clients: list[Client]) -> None:
    """Wait for the match to end; a client that fails first ends it (the referee would wait)."""
    while referee.poll() is None:
        for client in clients:
            if client.process.poll() not in (None, 0):
                for process in (referee, *(other.process for other in clients)):
                    process.terminate()
                    process.wait()
                reason = client.stderr.read_text(errors="replace").strip().splitlines()[-1:]
                raise SystemExit(f"client {client.name} failed: {' '.join(reason)}")
        time.sleep(0.1)


def cable_crossing(path_a: str, path_b: str, rounds: int = 200) -> float:
    """Median seconds a short line takes from one end of a cable to the other."""
    import serial

    times = []
    with serial.Serial(path_a, timeout=1) as sender, serial.Serial(path_b, timeout=1) as receiver:
        for _ in range(rounds):
            started = time.monotonic()
            sender.write(b"x" * 80 + b"\r\n")
            received = b""
            while not received.endswith(b"\r\n"):
                received += receiver.read(receiver.in_waiting or 1)
            times.append(time.monotonic() - started)
    return statistics.median(times)


def _sample(journal: Path, clients: list[Client]) -> None:
    """Record the clients' CPU and memory against the number of moves played so far."""
    moves, offset = 0, 0
    while any(client.process.poll() is None for client in clients):
        with journal.open("rb") as handle:
            handle.seek(offset)
            chunk = handle.read()
        complete = chunk.rfind(b"\n") + 1
        offset += complete
        moves += chunk[:complete].count(b'"event": "MovePlayed"')
        for client in clients:
            usage = _usage(client.process.pid)
            if usage is not None:
                client.samples.append((moves, *usage))
        time.sleep(SAMPLE_EVERY)


def _usage(pid: int) -> tuple[float, int] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS
    peaks = [int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM")]
    return (cpu, peaks[0]) if peaks else None  # none once the process has ended


# -- figures ------------------------------------------------------------------------------


def events(journal: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in journal.read_text().splitlines()]


def overheads(match: Match) -> dict[str, list[float]]:
    """Seconds per move beyond the engine's own time, by client, every move answered."""
    journal = events(match.journal)
    ports = [str(event["ports"][index]) for event in journal[:1] for index in (0, 1)]  # type: ignore[index]
    result: dict[str, list[float]] = {}
    for port, client in zip(ports, match.clients, strict=True):
        stamps = sorted(
            tuple(map(float, line.split())) for line in client.stamps.read_text().splitlines()
        )
        starts = [start for start, _ in stamps]
        measured = result.setdefault(client.name, [])
        pending: float | None = None
        for event in journal:
            if event.get("port") != port:
                continue
            text = str(event.get("text", ""))
            if event["event"] == "RecordSent" and "refcom respond" in text:
                pending = float(event["left_at"])  # type: ignore[arg-type]
            elif event["event"] == "LineReceived" and "refreq reply" in text and pending:
                arrived = float(event["at"])  # type: ignore[arg-type]
                index = bisect.bisect_left(starts, pending)
                if index < len(stamps) and stamps[index][1] <= arrived:
                    go, answer = stamps[index]
                    measured.append((arrived - pending) - (answer - go))
                pending = None
    return result


def _figures(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"median {statistics.median(ordered) * 1000:.3f} ms, p99 {p99 * 1000:.3f} ms, "
        f"max {ordered[-1] * 1000:.3f} ms ({len(ordered)} moves)"
    )


def cpu_used(client: Client) -> tuple[float, int] | None:
    """CPU seconds and plies of the match between the first and last move sampled."""
    played = [sample for sample in client.samples if sample[0] > 0]
    if len(played) < 2:
        return None
    first = played[0]
    last = next(sample for sample in reversed(played) if sample[0] == played[-1][0])
    plies = last[0] - first[0]
    return (last[1] - first[1], plies) if plies else None


def report(*matches: Match) -> None:
    """Print the overhead, CPU and memory figures of one or more matches of the same clients."""
    by_client: dict[str, list[float]] = {}
    for match in matches:
        for name, measured in overheads(match).items():
            by_client.setdefault(name, []).extend(measured)
    every = [seconds for measured in by_client.values() for seconds in measured]
    if every:
        print(f"overhead per move: {_figures(every)}")
        for name, measured in by_client.items():
            if measured:
                print(f"  {name} client: {_figures(measured)}")
    crossing = statistics.median(match.cable_crossing for match in matches)
    print(f"  of which the cable, twice: {2 * crossing * 1000:.3f} ms (median)")
    together = 0.0
    for index, client in enumerate(matches[0].clients):
        runs = [match.clients[index] for match in matches]
        cpu = [figure for figure in map(cpu_used, runs) if figure is not None]
        peak = max((sample[2] for run in runs for sample in run.samples), default=0)
        seconds, plies = sum(figure[0] for figure in cpu), sum(figure[1] for figure in cpu)
        if not plies:
            print(f"{client.name}: too few samples for a CPU figure")
            continue
        per_ply = seconds / plies
        together += per_ply
        print(
            f"{client.name} client: {2 * per_ply * 1000:.3f} ms CPU per move it played, "
            f"peak RSS {peak / 1024:.1f} MB"
        )
    print(f"both clients together: {together * 1000:.3f} ms CPU per ply")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--relay":
        separator = sys.argv.index("--")
        raise SystemExit(relay(Path(sys.argv[2]), sys.argv[separator + 1 :]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="games to play (default 4)")
    parser.add_argument("--engine", default=shutil.which("stockfish") or "/usr/games/stockfish")
    parser.add_argument("--nodes", type=int, default=1, help="node limit a move (default 1)")
    parser.add_argument("--tc", default="300+1", help="time control (default 300+1)")
    parser.add_argument(
        "--against",
        type=Path,
        action="append",
        default=[],
        help="another serialref tree whose clients to measure alongside (repeatable)",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="matches per tree, alternated (default 1)"
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also measure the floor bridge, the least a Python bridge can do per move",
    )
    args = parser.parse_args()
    trees: list[tuple[str, Path | None]] = [("this tree", ROOT)]
    for other in args.against:
        if not (other / "serialref" / "__init__.py").is_file():
            raise SystemExit(f"--against {str(other)!r}: no serialref package there")
        trees.append((f"{other}", other.resolve()))
    if args.floor:
        trees.append(("the floor bridge (bench/bridge_floor.py)", None))
    options = [f"--nodes={args.nodes}", "--protocol=uci"]
    matches: dict[str, list[Match]] = {label: [] for label, _ in trees}
    with tempfile.TemporaryDirectory() as scratch:
        for round_number in range(args.rounds):
            for index, (label, tree) in enumerate(trees):
                directory = Path(scratch) / f"{round_number}-{index}"
                directory.mkdir()
                match = run_match(
                    directory,
                    [("a", [args.engine], options), ("b", [args.engine], options)],
                    games=args.games,
                    tc=args.tc,
                    clients_from=tree,
                )
                if match.referee_exit != 0:
                    raise SystemExit(f"serialref run failed with exit code {match.referee_exit}")
                matches[label].append(match)
        loads = " ".join(f"{load:.2f}" for load in os.getloadavg())
        print(f"load average {loads} on {os.cpu_count()} cores")
        for label, _ in trees:
            print(f"-- clients of {label}: {args.rounds} x {args.games} games, nodes {args.nodes}")
            report(*matches[label])


if __name__ == "__main__":
    main()
