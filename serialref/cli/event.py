"""``serialref event``: many pairs at once, with standings, Elo and SPRT (see the README)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from serialref.cli.base import EXIT_INTERRUPTED, EXIT_OK, Verbs, common_options

__all__ = ["add_verbs"]


def add_verbs(verbs: Verbs) -> None:
    """``event``."""
    event = verbs.add_parser(
        "event",
        parents=[common_options("warning")],
        help="referee an event: a match, a round robin or a gauntlet, several boards at once",
        description="Play every pairing of the event described by --config (players and "
        "their seats, format, rounds, games per pairing, concurrency, the match settings of "
        "`serialref run`). Journals, PGN files and player logs go to its directory; run the "
        "same command again after a crash and the event resumes where it stopped. Progress "
        "and the standings go to stdout as games finish; the final report at the end. "
        f"Exit codes: {EXIT_OK} event complete, {EXIT_INTERRUPTED} stopped (SIGTERM/SIGINT).",
    )
    event.add_argument("--config", type=Path, required=True, metavar="FILE",
                       help="the event's TOML file")  # fmt: skip
    event.add_argument(
        "--sprt",
        nargs="+",
        metavar="KEY=VALUE",
        help="for a match: stop when the SPRT decides (elo0=0 elo1=5 alpha=0.05 beta=0.05 "
        "[model=cutechess|logistic|normalized]); overrides the file's sprt",
    )
    event.add_argument("--quiet", action="store_true", help="nothing on stdout")
    event.add_argument(
        "--pairings",
        action="store_true",
        help="check the file and print the schedule (pairings, rounds, byes); play nothing",
    )
    event.set_defaults(handler=_run_event)


def _run_event(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from serialref.errors import ConfigError
    from serialref.sprt import parse_sprt
    from serialref.tournament.config import load_tournament_config
    from serialref.tournament.pairings import TournamentFormat
    from serialref.tournament.runner import TournamentRunner

    config = load_tournament_config(args.config)
    if args.sprt:
        if config.format is not TournamentFormat.MATCH:
            raise ConfigError("--sprt", 'an SPRT needs a match of two players (format = "match")')
        config = replace(config, sprt=parse_sprt(args.sprt))
    if args.pairings:
        for pairing in config.pairings():
            byes = f"  (bye: {', '.join(pairing.byes)})" if pairing.byes else ""
            print(f"pairing {pairing.number:>3}  round {pairing.round:>2}  "
                  f"{pairing.first} - {pairing.second}{byes}")  # fmt: skip
        return EXIT_OK
    runner = TournamentRunner(config, out=None if args.quiet else sys.stdout)
    return EXIT_OK if runner.run() else EXIT_INTERRUPTED
