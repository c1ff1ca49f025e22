"""What ``serialref client`` costs, as ratios measured side by side in one run.

    python bench/client_cost.py [--against DIR]... [--rounds N] [--games N] [--nodes N]
                                [--overhead-games N]

Three figures, each against its target, all from matches under ``serialref run`` with
two real ``serialref client`` processes over pseudo-terminal null-modem cables
(``bench/overhead.py`` plays them, its relay between each client and its engine):

- **CPU per ply with a real engine**: Debian's Stockfish, one thread, 16 MB hash,
  ``--nodes`` a move (default 3000, as the peers' ``race --player stockfish``), so
  every tree plays the same games. Both clients' CPU per ply, counted from the start of
  each process (what the race counts) and also between the first and the last move (the
  cost of a move alone). Target: both clients together <= 1.0 ms per ply.
- **Overhead per move against the floor**: ``bench/overhead.py``'s overhead (the reply's
  arrival less the respond's departure, less the engine's own time) at one node a move,
  this tree's clients and the floor bridge (``bench/bridge_floor.py``) taking turns.
  Target: the median <= 1.2 x the floor's.
- **Memory**: each client's peak resident memory (<= 25 MB), and its peak after 400
  plies of the match against its peak after 20 (flat in the length of play: <= 1.1).

With ``--against DIR`` (another checkout, an older commit say; repeatable) that tree's
clients play the same matches, alternating with this tree's ``--rounds`` times, so that
every figure comes from the same hour's load. The machine runs code it has not run for a
while many times slower: compare only figures from one run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import overhead  # the sibling script, found through the path set above

ROOT = Path(__file__).resolve().parents[1]
STOCKFISH = shutil.which("stockfish") or "/usr/games/stockfish"
CPU_TARGET = 1.0
OVERHEAD_TARGET = 1.2
RSS_TARGET = 25.0
RSS_GROWTH_TARGET = 1.1
EARLY_PLY, LATE_PLY = 20, 400


def stockfish_options(nodes: int) -> list[str]:
    """The race's Stockfish: one thread, 16 MB hash, ``nodes`` a move."""
    return [f"--nodes={nodes}", "--option=Threads=1", "--option=Hash=16"]


def play(
    scratch: Path,
    label: str,
    tree: Path | None,
    options: Sequence[str],
    games: int,
) -> overhead.Match:
    """One match of two clients from ``tree`` (None: the floor bridge) with ``options``."""
    directory = Path(tempfile.mkdtemp(prefix=f"{label}-", dir=scratch))
    match = overhead.run_match(
        directory,
        [("a", [STOCKFISH], options), ("b", [STOCKFISH], options)],
        games=games,
        tc="60+1",
        clients_from=tree,
    )
    if match.referee_exit != 0:
        raise SystemExit(f"serialref run failed with exit code {match.referee_exit}")
    return match


def whole_life_cpu(match: overhead.Match) -> tuple[float, int]:
    """Both clients' CPU from their start to their last sample, and the match's plies."""
    seconds = sum(client.samples[-1][1] for client in match.clients if client.samples)
    plies = max((client.samples[-1][0] for client in match.clients if client.samples), default=0)
    return seconds, plies


def per_move_cpu(match: overhead.Match) -> tuple[float, int]:
    """Both clients' CPU between the first and the last move, and the plies in between."""
    used = [figure for figure in map(overhead.cpu_used, match.clients) if figure is not None]
    # Each client's CPU covers the same stretch of the match: the plies count once.
    return sum(seconds for seconds, _ in used), max((plies for _, plies in used), default=0)


def peak_at(samples: list[tuple[int, float, int]], ply: int) -> int | None:
    """The peak resident memory (kB) sampled once the match had ``ply`` plies."""
    return next((rss for moves, _, rss in samples if moves >= ply), None)


def ratio(figures: list[tuple[float, int]]) -> float | None:
    """Milliseconds per ply over all ``(seconds, plies)``."""
    plies = sum(count for _, count in figures)
    return sum(seconds for seconds, _ in figures) / plies * 1000 if plies else None


def verdict(value: float | None, target: float, unit: str = "") -> str:
    if value is None:
        return "not measured"
    mark = "ok" if value <= target else "MISSED"
    return f"{value:.3f}{unit} (target <= {target:g}{unit}: {mark})"


def report_cpu(label: str, matches: list[overhead.Match]) -> None:
    life = ratio([whole_life_cpu(match) for match in matches])
    moves = ratio([per_move_cpu(match) for match in matches])
    alone = "not measured" if moves is None else f"{moves:.3f} ms/ply"
    print(f"  {label}: both clients {verdict(life, CPU_TARGET, ' ms/ply')}, moves alone {alone}")


def report_memory(label: str, matches: list[overhead.Match]) -> None:
    peaks: list[int] = []
    growths: list[float] = []
    ends: list[tuple[float, int]] = []
    for match in matches:
        for client in match.clients:
            early, late = peak_at(client.samples, EARLY_PLY), peak_at(client.samples, LATE_PLY)
            peaks.extend(rss for _, _, rss in client.samples)
            if early and late:
                growths.append(late / early)
            if early and client.samples:
                ends.append((client.samples[-1][2] / early, client.samples[-1][0]))
    peak = max(peaks) / 1024 if peaks else None
    growth = max(growths) if growths else None
    print(f"  {label}: peak RSS {verdict(peak, RSS_TARGET, ' MB')};"
          f" ply {LATE_PLY} / ply {EARLY_PLY} {verdict(growth, RSS_GROWTH_TARGET)}")  # fmt: skip
    if ends:
        end, plies = max(ends)
        print(f"    at the match's end (ply {plies}) / ply {EARLY_PLY}: {end:.3f}")


def median_overhead(matches: list[overhead.Match]) -> float | None:
    every = [
        seconds
        for match in matches
        for measured in overhead.overheads(match).values()
        for seconds in measured
    ]
    return statistics.median(every) * 1000 if every else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--against",
        type=Path,
        action="append",
        default=[],
        help="another serialref tree whose clients to measure alongside",
    )
    parser.add_argument("--rounds", type=int, default=2, help="matches per tree (default 2)")
    parser.add_argument(
        "--games", type=int, default=6, help="games per Stockfish match (default 6)"
    )
    parser.add_argument("--nodes", type=int, default=3000, help="Stockfish's nodes a move")
    parser.add_argument(
        "--overhead-games",
        type=int,
        default=4,
        help="games per one-node match against the floor (default 4)",
    )
    args = parser.parse_args()  # fmt: skip
    trees: list[tuple[str, Path]] = [("this tree", ROOT)]
    for other in args.against:
        if not (other / "serialref" / "__init__.py").is_file():
            raise SystemExit(f"--against {str(other)!r}: no serialref package there")
        trees.append((str(other), other.resolve()))
    started = time.strftime("%Y-%m-%d %H:%M %Z")
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    engine_runs: dict[str, list[overhead.Match]] = {label: [] for label, _ in trees}
    floor_runs: dict[str, list[overhead.Match]] = {label: [] for label, _ in trees}
    floor_label = "the floor bridge"
    floor_runs[floor_label] = []
    with tempfile.TemporaryDirectory() as name:
        scratch = Path(name)
        steps: list[tuple[str, Callable[[], overhead.Match], list[overhead.Match]]] = []
        for label, tree in trees:
            run = _bind(scratch, label, tree, stockfish_options(args.nodes), args.games)
            steps.append((f"{label}, Stockfish", run, engine_runs[label]))
        bridges: list[tuple[str, Path | None]] = [*trees, (floor_label, None)]
        for label, bridge in bridges:
            options = [*stockfish_options(1), "--protocol=uci"]
            run = _bind(scratch, label, bridge, options, args.overhead_games)
            steps.append((f"{label}, one node", run, floor_runs[label]))
        for round_number in range(1, args.rounds + 1):
            for title, step, results in steps:
                print(f"[{time.strftime('%H:%M:%S')}] round {round_number}: {title}",
                      file=sys.stderr, flush=True)  # fmt: skip
                results.append(step())
        print(
            f"bench/client_cost.py, {started}, {os.cpu_count()} cores, load {load} ->"
            f" {' '.join(f'{value:.2f}' for value in os.getloadavg())}; {args.rounds} round(s)"
        )
        print(f"Stockfish, {args.nodes} nodes a move, {args.games} games a match:")
        for label, _ in trees:
            report_cpu(label, engine_runs[label])
        floor = median_overhead(floor_runs[floor_label])
        print(f"overhead per move at one node, median (floor bridge {floor:.3f} ms):"
              if floor is not None else "overhead per move: floor not measured")  # fmt: skip
        for label, _ in trees:
            median = median_overhead(floor_runs[label])
            relative = None if median is None or not floor else median / floor
            shown = "not measured" if median is None else f"{median:.3f} ms"
            print(f"  {label}: {shown}, {verdict(relative, OVERHEAD_TARGET, ' x the floor')}")
        print("memory of a client, over all its matches:")
        for label, _ in trees:
            report_memory(label, engine_runs[label] + floor_runs[label])


def _bind(
    scratch: Path, label: str, tree: Path | None, options: Sequence[str], games: int
) -> Callable[[], overhead.Match]:
    slug = "".join(character if character.isalnum() else "-" for character in label)
    return lambda: play(scratch, slug, tree, options, games)


if __name__ == "__main__":
    main()
