"""Positions per second of ``serialref epd analyse`` against a plain python-chess loop.

    python bench/epd_analyse.py [--suite FILE] [--nodes N] [--rounds R] [--engine CMD]

Three ways to analyse the same suite with the same engine and node limit, side by
side in one run, each from engine start to the last record:

- **plain**: python-chess's asyncio API, ``await engine.analyse(board, limit)`` in a
  loop over the positions of the file (no output);
- **jobs 1** and **jobs 2**: ``epd analyse`` in this process (the verb's own code,
  without the interpreter start-up of the command), writing the output file.

The variants take turns, ``--rounds`` times, and each is reported by its median.
The figure of merit is the time per position of ``--jobs 1`` over the plain loop's
(the target is 1.05 at most); ``--jobs 2`` shows what a second engine brings on
this machine (about 2x on two idle cores, less when the cores are busy).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import chess
import chess.engine

from serialref.analysis.files import run_file
from serialref.analysis.run import Run
from serialref.analysis.tasks import Analyse, Effort
from serialref.client.options import EngineSettings
from serialref.client.startup import find_program

SUITE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "epd" / "silent-but-deadly.epd"


def plain_positions(suite: Path) -> list[chess.Board]:
    """The positions of the suite as a short script would read them: the first four
    fields of each line (python-chess's ``Board.from_epd`` refuses these files' bare
    ``id`` words), bad and finished positions left out."""
    boards = []
    for raw in suite.read_bytes().decode("latin-1").splitlines():
        fields = raw.strip(" \t\0").split()[:4]
        if len(fields) < 4:
            continue
        try:
            board = chess.Board(" ".join(fields) + " 0 1")
        except ValueError:
            continue
        if board.is_valid() and not board.is_game_over():
            boards.append(board)
    return boards


async def plain(command: list[str], boards: list[chess.Board], nodes: int) -> float:
    """Seconds for the plain loop, engine start included."""
    started = time.perf_counter()
    _, engine = await chess.engine.popen_uci(command)
    try:
        for board in boards:
            await engine.analyse(board, chess.engine.Limit(nodes=nodes))
    finally:
        await engine.quit()
    return time.perf_counter() - started


def verb(command: list[str], suite: Path, nodes: int, jobs: int, output: Path) -> tuple[float, int]:
    """Seconds for ``epd analyse --jobs N``, and the positions it searched."""
    err = io.StringIO()
    started = time.perf_counter()
    run_file(
        Analyse(Effort(nodes=nodes)),
        Run(EngineSettings(command=tuple(command)), jobs=jobs),
        source=str(suite),
        output=str(output),
        resume=False,
        err=err,
        argv=[],
    )
    seconds = time.perf_counter() - started
    searched = int(err.getvalue().split(" searched")[0].rsplit(" ", 1)[1])
    return seconds, searched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", type=Path, default=SUITE)
    parser.add_argument("--nodes", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engine", default="stockfish")
    args = parser.parse_args()
    command = shlex.split(args.engine)
    command[0] = find_program(command[0])
    boards = plain_positions(args.suite)
    rates: dict[str, list[float]] = {"plain": [], "jobs 1": [], "jobs 2": []}
    counts: dict[str, int] = {"plain": len(boards)}
    with tempfile.TemporaryDirectory() as scratch:
        output = Path(scratch) / "out.epd"
        for round_number in range(1, args.rounds + 1):
            seconds = asyncio.run(plain(command, boards, args.nodes))
            rates["plain"].append(len(boards) / seconds)
            for jobs in (1, 2):
                seconds, searched = verb(command, args.suite, args.nodes, jobs, output)
                counts[f"jobs {jobs}"] = searched
                rates[f"jobs {jobs}"].append(searched / seconds)
            print(
                f"round {round_number}: "
                + ", ".join(f"{name} {values[-1]:.2f}/s" for name, values in rates.items()),
                file=sys.stderr,
            )
    print(
        f"suite {args.suite.name}, {Path(command[0]).name} --nodes {args.nodes}, "
        f"{args.rounds} rounds (medians)"
    )
    plain_rate = statistics.median(rates["plain"])
    for name, values in rates.items():
        rate = statistics.median(values)
        print(
            f"  {name:7} {counts[name]:4d} positions  {rate:7.2f} positions/s  "
            f"time per position x{plain_rate / rate:.3f} of plain"
        )


if __name__ == "__main__":
    main()
