"""How often ``serialref client --engine gnuchess`` starts its engine, on a busy machine.

    python bench/engine_starts.py [--starts N] [--busy N] [--engine CMD] [--against DIR]...

Each start is a fresh ``serialref client`` process on a pseudo-terminal cable
(``serialref.wire.nullmodem``), as an operator would start it: the bench waits for its log line
``engine ... started``, or for it to fail, then ends it with SIGINT. Two modes are
tried in turn, start after start: no ``--protocol`` (the client finds the protocol out)
and ``--protocol xboard``. Meanwhile ``--busy`` processes (default: one per core) spin
at full speed, the load under which GNU Chess 6's start-up used to fail.

Printed per tree and mode: successes/attempts, the start times (median and slowest, from
the client's process start to its engine's handshake done) and the first line of each
distinct failure. With ``--against DIR`` (another checkout of serialref; repeatable) the
same starts are made with that tree's client too, alternating with this tree's, so
that both sets of figures come from the same run under the same load.

Target: at least 19 of 20 starts succeed in each mode with both cores busy.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STARTED = re.compile(rb"engine .* started \((\w+)\)")
START_LIMIT = 90.0
"""Seconds after which a client that has neither started its engine nor failed is ended."""

MODES = {"found out": [], "--protocol xboard": ["--protocol=xboard"]}


@dataclass
class Starts:
    """What the starts of one tree in one mode came to."""

    times: list[float] = field(default_factory=list)
    failures: collections.Counter[str] = field(default_factory=collections.Counter)

    @property
    def attempts(self) -> int:
        return len(self.times) + sum(self.failures.values())


def start_once(tree: Path, engine: str, options: list[str], port: str, log: Path) -> str | float:
    """One client process: its start time in seconds, or why it failed."""
    began = time.monotonic()
    with log.open("wb") as stderr:
        client = subprocess.Popen(
            [sys.executable, "-m", "serialref", "client", port, "--engine", engine,
             "--log-level=info", *options],
            cwd=tree, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
    try:
        while time.monotonic() - began < START_LIMIT:
            text = log.read_bytes()
            if STARTED.search(text):
                return time.monotonic() - began
            if client.poll() is not None:
                lines = text.decode(errors="replace").strip().splitlines()
                return f"exit {client.returncode}: {lines[-1] if lines else '(no output)'}"
            time.sleep(0.02)
        return f"neither started nor failed within {START_LIMIT:g} s"
    finally:
        if client.poll() is None:
            client.send_signal(signal.SIGINT)
            try:
                client.wait(timeout=15)
            except subprocess.TimeoutExpired:
                client.kill()
                client.wait()


def busy_processes(count: int, stack: ExitStack) -> None:
    """``count`` processes that spin until the bench ends."""
    for _ in range(count):
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        stack.callback(spinner.wait)
        stack.callback(spinner.kill)


def report(label: str, mode: str, starts: Starts) -> None:
    times = sorted(starts.times)
    figures = (
        f"; start median {statistics.median(times):.2f} s, slowest {times[-1]:.2f} s"
        if times
        else ""
    )
    print(f"{label}, {mode}: {len(times)}/{starts.attempts} started{figures}")
    for reason, count in starts.failures.most_common():
        print(f"    {count} x {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=20, help="starts per mode (default 20)")
    parser.add_argument(
        "--busy", type=int, default=os.cpu_count() or 1,
        help="spinning processes meanwhile (default: one per core)",
    )  # fmt: skip
    parser.add_argument("--engine", default="gnuchess", help="engine command (default gnuchess)")
    parser.add_argument(
        "--against", type=Path, action="append", default=[],
        help="another serialref tree whose client to start alongside (repeatable)",
    )  # fmt: skip
    args = parser.parse_args()
    trees = [("this tree", ROOT)]
    for other in args.against:
        if not (other / "serialref" / "__init__.py").is_file():
            raise SystemExit(f"--against {str(other)!r}: no serialref package there")
        trees.append((str(other), other.resolve()))
    from serialref.wire.nullmodem import null_modem_cable

    results = {(label, mode): Starts() for label, _ in trees for mode in MODES}
    with ExitStack() as stack, tempfile.TemporaryDirectory() as scratch:
        cable = stack.enter_context(null_modem_cable())
        busy_processes(args.busy, stack)
        began = time.monotonic()
        for number in range(args.starts):
            for mode, options in MODES.items():
                for label, tree in trees:
                    log = Path(scratch) / f"{number}.log"
                    outcome = start_once(tree, args.engine, options, cable.path_b, log)
                    starts = results[label, mode]
                    if isinstance(outcome, float):
                        starts.times.append(outcome)
                    else:
                        starts.failures[outcome] += 1
        loads = " ".join(f"{load:.2f}" for load in os.getloadavg())
    print(
        f"{shlex.quote(args.engine)}: {args.starts} starts per tree and mode in "
        f"{time.monotonic() - began:.0f} s, {args.busy} busy processes, "
        f"load average {loads} on {os.cpu_count()} cores"
    )
    for (label, mode), starts in results.items():
        report(label, mode, starts)


if __name__ == "__main__":
    main()
