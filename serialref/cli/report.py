"""``serialref report``: the final report of an event from its PGN file(s)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from serialref.cli.base import EXIT_OK, Verbs, common_options
from serialref.errors import recorder_error

__all__ = ["add_verbs"]


def add_verbs(verbs: Verbs) -> None:
    """``report``."""
    report = verbs.add_parser(
        "report",
        parents=[common_options("warning")],
        help="standings and crosstable of the games in PGN files (ours, cutechess's, fastchess's)",
        description="Read the tags of every game in the PGN files and print the standings "
        "(points, W-L-D, Sonneborn-Berger, score, Elo against the field), the crosstable and "
        "each pair's score with its Elo difference and LOS. --html writes the same as a "
        "static web page.",
    )
    report.add_argument("pgn", nargs="+", type=Path, metavar="PGN", help="PGN file(s)")
    report.add_argument("--html", type=Path, metavar="FILE", help="also write an HTML page")
    report.add_argument("--title", default="", help="a title above the report")
    report.add_argument(
        "--sprt",
        nargs="+",
        metavar="KEY=VALUE",
        help="for a match of two players, the SPRT line too: elo0=0 elo1=5 alpha=0.05 "
        "beta=0.05 [model=cutechess|logistic|normalized]",
    )
    report.set_defaults(handler=_run_report)


def _run_report(args: argparse.Namespace) -> int:
    from serialref.sprt import parse_sprt
    from serialref.tournament.report import html_report, report_from_pgn, text_report

    sprt = parse_sprt(args.sprt) if args.sprt else None
    table = report_from_pgn(args.pgn)
    sys.stdout.write(text_report(table, title=args.title, sprt=sprt))
    if args.html is not None:
        page = html_report(table, title=args.title or "Event report")
        try:
            args.html.write_text(page, encoding="utf-8")
        except OSError as exc:
            raise recorder_error("write", args.html, exc) from exc
        print(f"HTML report: {args.html}")
    return EXIT_OK
