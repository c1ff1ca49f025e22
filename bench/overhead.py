"""What the serial referee costs per ply, against python-chess driving the engines directly.

    python bench/overhead.py [--games N] [--engine PATH]

(a) Two stockfish processes at ``nodes=1`` play each other in this process through
    ``chess.engine`` with no referee: once on an event loop owned by this thread (what
    ``serialref client`` does) and once through ``SimpleEngine`` (loop on a second
    thread), to show what the hand-over costs.
(b) The same match through two ``serialref client --engine stockfish --nodes 1``
    processes and ``serialref run`` over pseudo-terminal null-modem cables; the time per
    ply is taken from the referee's journal (the wall time between consecutive moves
    within a game), so reset and conclude delays do not count.

Prints the milliseconds per ply of each and the ratio of (b) to (a).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import chess
import chess.engine

from serialref.testing import null_modem_cable

ROOT = Path(__file__).resolve().parents[1]
LIMIT = chess.engine.Limit(nodes=1)
MAX_PLIES = 300
"""Games at nodes=1 can wander; each is cut here so both runs play comparable lengths."""


def direct_own_loop(engine: str, games: int) -> tuple[float, int]:
    """Seconds per ply with both engines on this thread's event loop; also the ply count."""
    loop = asyncio.new_event_loop()
    try:
        pair = [loop.run_until_complete(chess.engine.popen_uci(engine)) for _ in range(2)]
        plies, elapsed = 0, 0.0
        for game_number in range(games):
            board, game = chess.Board(), object()
            while not board.is_game_over(claim_draw=True) and len(board.move_stack) < MAX_PLIES:
                protocol = pair[(len(board.move_stack) + game_number) % 2][1]
                started = time.perf_counter()
                result = loop.run_until_complete(
                    protocol.play(board, LIMIT, game=game, info=chess.engine.INFO_ALL)
                )
                elapsed += time.perf_counter() - started
                assert result.move is not None
                board.push(result.move)
                plies += 1
        for transport, protocol in pair:
            loop.run_until_complete(protocol.quit())
            transport.close()
        return elapsed / plies, plies
    finally:
        loop.close()


def direct_simple_engine(engine: str, games: int) -> float:
    """Seconds per ply through ``SimpleEngine`` (its event loop runs on another thread)."""
    pair = [chess.engine.SimpleEngine.popen_uci(engine) for _ in range(2)]
    try:
        plies, elapsed = 0, 0.0
        for game_number in range(games):
            board, game = chess.Board(), object()
            while not board.is_game_over(claim_draw=True) and len(board.move_stack) < MAX_PLIES:
                player = pair[(len(board.move_stack) + game_number) % 2]
                started = time.perf_counter()
                result = player.play(board, LIMIT, game=game, info=chess.engine.INFO_ALL)
                elapsed += time.perf_counter() - started
                assert result.move is not None
                board.push(result.move)
                plies += 1
        return elapsed / plies
    finally:
        for player in pair:
            player.quit()


def through_referee(engine: str, games: int, directory: Path) -> tuple[float, int]:
    """Seconds per ply between consecutive moves of the refereed match; also the ply count."""
    journal = directory / "journal.jsonl"
    with ExitStack() as stack:
        cables = [stack.enter_context(null_modem_cable()) for _ in range(2)]
        clients = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "serialref",
                    "client",
                    cable.path_b,
                    f"--engine={engine}",
                    "--nodes=1",
                    f"--log={directory / f'client-{index}.log'}",
                ],
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
            )
            for index, cable in enumerate(cables)
        ]
        referee = subprocess.run(
            [
                sys.executable,
                "-m",
                "serialref",
                "run",
                cables[0].path_a,
                cables[1].path_a,
                f"--games={games}",
                "--tc=3600+0",
                f"--journal={journal}",
                f"--pgn={directory / 'match.pgn'}",
                "--reset-delay=0.1",
                "--conclude-delay=0.1",
                "--log-level=error",
            ],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        for client in clients:
            client.wait(timeout=30)
    if referee.returncode != 0:
        raise SystemExit(f"serialref run failed with exit code {referee.returncode}")
    gaps: list[float] = []
    previous: float | None = None
    for line in journal.read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "GameStarted":
            previous = None
        elif event["event"] == "MovePlayed":
            if previous is not None:
                gaps.append(event["wall"] - previous)
            previous = event["wall"]
    return statistics.fmean(gaps), len(gaps) + games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="games per run (default 4)")
    parser.add_argument("--engine", default=shutil.which("stockfish") or "/usr/games/stockfish")
    args = parser.parse_args()
    own_loop, direct_plies = direct_own_loop(args.engine, args.games)
    simple = direct_simple_engine(args.engine, args.games)
    with tempfile.TemporaryDirectory() as directory:
        refereed, refereed_plies = through_referee(args.engine, args.games, Path(directory))
    print(f"(a) direct, client-thread loop: {own_loop * 1000:7.3f} ms/ply ({direct_plies} plies)")
    print(f"    direct, SimpleEngine:       {simple * 1000:7.3f} ms/ply")
    print(f"(b) serialref over ptys:        {refereed * 1000:7.3f} ms/ply ({refereed_plies} plies)")
    print(f"ratio (b)/(a): {refereed / own_loop:.1f}")


if __name__ == "__main__":
    main()
