"""A soak of real engines at engine testing's time controls, through serialref end to end.

    python bench/engines.py [--phase GAMES@TC ...] [--keep DIR]

Stockfish (``--nodes 3000``) against GNU Chess started as plain ``gnuchess`` with no
``--protocol`` (the client finds XBoard by itself; ``--depth 2``, which GNU Chess 6.2.7
ignores, so it plays on its clock), by default 50 games at ``10+0.1`` and then 20 at
``40/20:10+0.2``: ``serialref run`` and two ``serialref client`` processes over pty
null-modem cables, each engine wrapped in the timing relay of ``bench/overhead.py``.
Prints, for each phase, the results, the time forfeits, rules infractions, failed
starts and engine restarts (all should be zero), how often a client had to stop its
engine at the deadline, and the overhead figures of ``bench/overhead.py``.
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
    "failed starts": ("is not a UCI or XBoard engine", "is not a working"),
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


PHASES = ("50@10+0.1", "20@40/20:10+0.2")
"""The soak's matches, ``GAMES@TC`` each: engine testing's control, and one with periods."""


def phase(text: str) -> tuple[int, str]:
    """``GAMES@TC`` read as its number of games and its time control."""
    games, _, tc = text.partition("@")
    if not games.isdigit() or not tc:
        raise argparse.ArgumentTypeError(f"{text!r}: expected GAMES@TC, as 50@10+0.1")
    return int(games), tc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--phase", type=phase, action="append", dest="phases",
        help=f"a match of GAMES games at TC, as GAMES@TC (default {' and '.join(PHASES)})",
    )  # fmt: skip
    parser.add_argument("--keep", type=Path, help="keep the journals, PGN and logs here")
    args = parser.parse_args()
    phases = args.phases or [phase(text) for text in PHASES]
    with tempfile.TemporaryDirectory() as scratch:
        for number, (games, tc) in enumerate(phases, 1):
            directory = (args.keep or Path(scratch)) / f"phase-{number}"
            directory.mkdir(parents=True, exist_ok=True)
            print(f"== {games} games at {tc}")
            match = run_match(
                directory,
                [
                    ("stockfish", [STOCKFISH], ["--nodes=3000"]),
                    ("gnuchess", [GNUCHESS], ["--depth=2"]),
                ],
                games=games,
                tc=tc,
            )
            if match.referee_exit != 0:
                print(f"serialref run ended with exit code {match.referee_exit}")
            summary(match)
            report(match)


if __name__ == "__main__":
    main()
