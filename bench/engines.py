"""A soak of real engines at a real time control, through serialref end to end.

    python bench/engines.py [--games N] [--tc TC]

Stockfish (``--nodes 3000``) against GNU Chess (``--depth 2``, which GNU Chess 6.2.7
refuses, and no ``--protocol``: the client finds XBoard by itself) at ``--tc 5+0.05``:
``serialref run`` and two ``serialref client`` processes over pty null-modem cables,
each engine wrapped in the timing relay of ``bench/overhead.py``. Prints the results,
the time forfeits, rules infractions and engine restarts (all should be zero), how
often a client had to stop its engine at the deadline, and the overhead figures of
``bench/overhead.py`` for the whole soak.
"""

from __future__ import annotations

import argparse
import collections
import shutil
import tempfile
from pathlib import Path

from overhead import Match, events, report, run_match

STOCKFISH = shutil.which("stockfish") or "/usr/games/stockfish"
GNUCHESS = shutil.which("gnuchess") or "/usr/games/gnuchess"

CLIENT_NOTICES = {
    "start-up retries": ("starting it again (attempt",),
    "engine restarts": ("restarting the engine",),
    "stops at the deadline": ("clock is nearly out",),
    "moves without the engine's answer": ("did not answer 'stop'", "still starting"),
    "refused commands": (" refuses ",),
}
"""What the clients' logs are searched for, by what it is called in the summary."""


def summary(match: Match) -> None:
    """Print what the soak is for: no forfeits, no infractions, no restarts."""
    journal = events(match.journal)
    ended = [event for event in journal if event["event"] == "GameEnded"]
    names = {}
    for event in journal:
        if event["event"] == "PlayerSignedOn":
            names[event["port"]] = event["name"]
    results: collections.Counter[str] = collections.Counter()
    terminations: collections.Counter[str] = collections.Counter()
    for event in journal:
        if event["event"] == "GameStarted":
            white, black = names.get(event["white_port"]), names.get(event["black_port"])
        elif event["event"] == "GameEnded":
            result = str(event["result"])
            terminations[str(event["termination"])] += 1
            if result == "1-0":
                results[f"{white} wins"] += 1
            elif result == "0-1":
                results[f"{black} wins"] += 1
            else:
                results[f"result {result}"] += 1
    infractions = sum(event["event"] == "Infraction" for event in journal)
    print(f"games: {len(ended)}; " + ", ".join(f"{k}: {v}" for k, v in sorted(results.items())))
    print("terminations: " + ", ".join(f"{k} {v}" for k, v in sorted(terminations.items())))
    print(f"time forfeits: {terminations['time forfeit']}")
    print(f"rules infractions: {infractions}")
    for client in match.clients:
        log = client.stderr.read_text(errors="replace")
        counts = ", ".join(
            f"{label} {sum(log.count(text) for text in texts)}"
            for label, texts in CLIENT_NOTICES.items()
        )
        print(f"{client.name} client: {counts}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50, help="games to play (default 50)")
    parser.add_argument("--tc", default="5+0.05", help="time control (default 5+0.05)")
    parser.add_argument("--keep", type=Path, help="keep the journal, PGN and logs here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.keep or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        match = run_match(
            directory,
            [
                ("stockfish", [STOCKFISH], ["--nodes=3000"]),
                ("gnuchess", [GNUCHESS, "--xboard"], ["--depth=2"]),
            ],
            games=args.games,
            tc=args.tc,
        )
        if match.referee_exit != 0:
            print(f"serialref run ended with exit code {match.referee_exit}")
        summary(match)
        report(match)


if __name__ == "__main__":
    main()
