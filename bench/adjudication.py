"""serialref's adjudication against a live cutechess-cli, on the same scripted engines.

    python bench/adjudication.py --cutechess PATH [--games 2]

Each scenario is one match of ``--games`` games (colours alternating) between two copies
of tests/engines/scored_uci.py, whose moves are fixed and whose scores follow a script,
refereed by cutechess-cli (which starts the engines) and by ``serialref run`` (its players
two ``serialref client`` processes on pseudo-terminal null-modem cables), with the same
adjudication options in each one's spelling (``-resign ...`` and ``--resign ...``). For
every game the command prints the result, the ply the game was adjudicated at and the
reason each referee gave, side by side, and a last line ``agree: N of M games``; it exits
1 on any disagreement.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import chess.pgn

from serialref.testing import null_modem_cable

ROOT = Path(__file__).resolve().parent.parent
SCORED_UCI = ROOT / "tests" / "engines" / "scored_uci.py"
TABLES = ROOT / "tests" / "fixtures" / "syzygy"
TC = "10+0.1"


@dataclass(frozen=True)
class Scenario:
    """A match: each player's score script and the adjudication options (cutechess's words,
    without the dash: serialref's are the same with two)."""

    name: str
    scripts: tuple[str, str]
    options: tuple[str, ...]
    fen: str = ""


def script(*entries: tuple[int, str]) -> str:
    """A score script: ``(n, score)`` is ``n`` plies scored ``score``; the last repeats."""
    return ",".join(score for count, score in entries for _ in range(count))


SCENARIOS = (
    Scenario("draw", (script((6, "40"), (1, "-8"), (1, "3")), script((8, "-30"), (1, "5"))),
             ("draw", "movenumber=12", "movecount=4", "score=10")),
    Scenario("draw, scores leave the band",
             (script((20, "5"), (3, "25"), (1, "0")), script((30, "-5"), (1, "0"))),
             ("draw", "movenumber=5", "movecount=5", "score=10")),
    Scenario("resign", (script((20, "0"), (1, "-700")), script((1, "0"))),
             ("resign", "movecount=3", "score=600")),
    Scenario("resign, mate scores", (script((14, "30"), (1, "m-4")), script((1, "20"))),
             ("resign", "movecount=2", "score=1000")),
    Scenario("resign, two-sided",
             (script((10, "0"), (1, "-700")), script((16, "100"), (1, "650"))),
             ("resign", "movecount=3", "score=600", "twosided=true")),
    Scenario("resign, a move without a score",
             (script((10, "0"), (4, "-700"), (1, "-"), (1, "-700")), script((1, "0"))),
             ("resign", "movecount=3", "score=600")),
    Scenario("maxmoves", (script((1, "10")), script((1, "-10"))), ("maxmoves", "23")),
    Scenario("tables", (script((1, "0")), script((1, "0"))), ("tb", str(TABLES)),
             fen="8/8/8/3k4/8/8/1R6/K7 w - - 0 1"),
    # A win the fifty-move rule makes a draw: after the first move, 30 plies to a zeroing
    # move with 76 on the counter.
    Scenario("tables, the fifty-move counter", (script((1, "0")), script((1, "0"))),
             ("tb", str(TABLES)), fen="8/8/8/3k4/8/8/1R6/K7 w - - 75 60"),
)  # fmt: skip


@dataclass(frozen=True)
class Ending:
    """How one game ended: its result, its length in plies, the reason in its last comment."""

    result: str
    plies: int
    reason: str

    def __str__(self) -> str:
        return f"{self.result} at ply {self.plies}: {self.reason}"


def endings(pgn: Path, reasons: tuple[str, ...]) -> list[Ending]:
    """The games of ``pgn``; a reason is the known one the last move's comment ends with."""
    found = []
    with pgn.open(encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            comment = game.end().comment
            reason = next((why for why in reasons if comment.endswith(why)), comment)
            plies = sum(1 for _ in game.mainline_moves())
            found.append(Ending(game.headers["Result"], plies, reason))
    return found


def reasons() -> tuple[str, ...]:
    """Every reason an adjudication can give, the longest first (they share endings)."""
    winners = ("White wins by adjudication", "Black wins by adjudication",
               "Draw by adjudication")  # fmt: skip
    said = [f"{who}: {why}" for who in winners for why in ("SyzygyTB", "maximal game length")]
    return (*said, *winners)


def engine(script_text: str) -> list[str]:
    return [sys.executable, str(SCORED_UCI), script_text]


def book(directory: Path, scenario: Scenario) -> Path | None:
    """The scenario's start position as a PGN opening, which keeps its move counters."""
    if not scenario.fen:
        return None
    path = directory / "book.pgn"
    path.write_text(f'[SetUp "1"]\n[FEN "{scenario.fen}"]\n\n*\n', encoding="utf-8")
    return path


def under_cutechess(binary: Path, scenario: Scenario, games: int, directory: Path) -> Path:
    pgn = directory / "cutechess.pgn"
    option, *words = scenario.options
    opening = book(directory, scenario)
    openings = ["-openings", f"file={opening}", "format=pgn"] if opening else []
    players = []
    for name, script_text in zip(("A", "B"), scenario.scripts, strict=True):
        command = engine(script_text)
        players += ["-engine", f"cmd={command[0]}", *(f"arg={word}" for word in command[1:]),
                    f"name={name}"]  # fmt: skip
    subprocess.run(
        [str(binary), *players, "-each", f"tc={TC}", "proto=uci", "-games", str(games),
         "-concurrency", "1", f"-{option}", *words, *openings, "-pgnout", str(pgn)],
        cwd=directory, stdin=subprocess.DEVNULL, capture_output=True, check=True, timeout=300,
    )  # fmt: skip
    return pgn


def under_serialref(scenario: Scenario, games: int, directory: Path) -> Path:
    pgn, journal = directory / "serialref.pgn", directory / "serialref.jsonl"
    option, *words = scenario.options
    opening = book(directory, scenario)
    openings = ["--openings", str(opening)] if opening else []
    with null_modem_cable() as cable_a, null_modem_cable() as cable_b:
        referee = subprocess.Popen(
            [sys.executable, "-m", "serialref", "run", cable_a.path_a, cable_b.path_a,
             "--games", str(games), "--tc", TC, "--pgn", str(pgn), "--journal", str(journal),
             "--reset-delay", "0", "--conclude-delay", "0", "--log-level", "warning",
             f"--{option}", *words, *openings],
            cwd=directory, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while not (journal.exists() and b"MatchStarted" in journal.read_bytes()):
            if time.monotonic() > deadline or referee.poll() is not None:
                referee.kill()
                raise SystemExit(f"serialref run did not start: {referee.communicate()[1]}")
            threading.Event().wait(0.01)  # another process's file: nothing else to wait on
        clients = [
            subprocess.Popen(
                [sys.executable, "-m", "serialref", "client", cable.path_b, "--engine",
                 shlex.join(engine(script_text)), "--once", "--log-level", "warning"],
                cwd=directory, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for cable, script_text in zip((cable_a, cable_b), scenario.scripts, strict=True)
        ]
        _, err = referee.communicate(timeout=300)
        for client in clients:
            client.wait(timeout=30)
    if referee.returncode != 0:
        raise SystemExit(f"serialref run failed: {err}")
    return pgn


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cutechess", required=True, type=Path, help="cutechess-cli binary")
    parser.add_argument("--games", type=int, default=2, help="games per scenario")
    args = parser.parse_args()
    agree = total = 0
    known = reasons()
    for scenario in SCENARIOS:
        with tempfile.TemporaryDirectory(prefix="adjudication-") as scratch:
            directory = Path(scratch)
            theirs = endings(under_cutechess(args.cutechess, scenario, args.games, directory),
                             known)  # fmt: skip
            ours = endings(under_serialref(scenario, args.games, directory), known)
        print(f"{scenario.name}: -{' '.join(scenario.options)}")
        for number, (cutechess, serialref) in enumerate(zip(theirs, ours, strict=True), 1):
            same = cutechess == serialref
            agree += same
            total += 1
            print(f"  game {number}: cutechess-cli {cutechess}")
            print(f"  {'':7} serialref     {serialref}{'' if same else '   DIFFERENT'}")
    print(f"agree: {agree} of {total} games")
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
