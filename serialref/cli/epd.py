"""``serialref epd``: the EPD processing verbs of spec section 7, on files or stdin."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from serialref.cli.base import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REJECTED,
    Parser,
    Verbs,
    common_options,
)
from serialref.errors import ConfigError, InputError, SerialrefError, escape

__all__ = ["add_verbs"]


def add_verbs(verbs: Verbs) -> None:
    """``epd normalize``, ``purge``, ``check``, ``analyse``, ``mate``, ``targets``, ``report``."""
    common = common_options("warning")
    epd = verbs.add_parser("epd", parents=[common], help="process EPD files (spec section 7)")
    epd_verbs = epd.add_subparsers(title="EPD verbs", metavar="VERB", required=True)

    normalize = epd_verbs.add_parser(
        "normalize",
        parents=[common],
        help="write the normalised form of each record (spec 7.1 pfdn)",
    )
    normalize.add_argument(
        "file", nargs="?", default="-", help="EPD file, or - for stdin (default)"
    )
    normalize.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    normalize.set_defaults(handler=_run_normalize)

    purge = epd_verbs.add_parser(
        "purge", parents=[common], help="remove one operation from every record (spec 7.4 pfop)"
    )
    purge.add_argument("opcode", help="the opcode to remove, e.g. id")
    purge.add_argument("file", nargs="?", default="-", help="EPD file, or - for stdin (default)")
    purge.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    purge.set_defaults(handler=_run_purge)

    check = epd_verbs.add_parser(
        "check", parents=[common], help="report every record whose position is not legal"
    )
    check.add_argument("file", nargs="?", default="-", help="EPD file, or - for stdin (default)")
    check.add_argument(
        "--variant",
        default="standard",
        help="check by a variant's rules, e.g. crazyhouse, 3check, chess960 (default standard)",
    )
    check.set_defaults(handler=_run_check)

    analyse = _engine_verb(
        epd_verbs, common, "analyse", "add each position's analysis: pv, ce, pm, sm, acn, acs "
        "(spec 7.2 pfga)"
    )
    analyse.set_defaults(handler=_run_analysis, task="analyse")
    mate = _engine_verb(
        epd_verbs, common, "mate", "search for forced mates: found ones get dm and pm "
        "(spec 7.3 pfms)"
    )
    mate.add_argument(
        "--moves",
        required=True,
        metavar="N|FIRST..LAST",
        help="mate length in fullmoves; FIRST..LAST runs a pass for each length, shortest first",
    )
    mate.set_defaults(handler=_run_analysis, task="mate")
    targets = _engine_verb(
        epd_verbs, common, "targets", "predict a move for each record with bm or am: pm, pv, acn, "
        "acs (spec 7.5 pfts)"
    )
    targets.set_defaults(handler=_run_analysis, task="targets")

    report = epd_verbs.add_parser(
        "report",
        parents=[common],
        help="solved/missed, node and time distributions, comparisons of result files",
    )
    report.add_argument("files", nargs="+", metavar="RESULT", help="EPD files written by analyse "
                        "or targets; two or more are compared")
    report.add_argument("--html", metavar="OUT", help="also write the report as an HTML page")
    report.set_defaults(handler=_run_report)


def _engine_verb(epd_verbs: Any, common: Parser, name: str, what: str) -> Parser:
    """A verb that runs an engine over a file: the options they share."""
    verb: Parser = epd_verbs.add_parser(name, parents=[common], help=what)
    verb.add_argument("file", nargs="?", default="-", help="EPD file, or - for stdin (default)")
    verb.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    verb.add_argument(
        "--engine",
        required=True,
        metavar="CMD",
        help="UCI or XBoard engine command, e.g. stockfish (looked for on PATH, then in "
        "/usr/games and /usr/local/games)",
    )
    verb.add_argument(
        "--protocol", choices=["uci", "xboard"], help="engine protocol (default: found out)"
    )
    verb.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE",
        help="engine option, repeatable (e.g. Hash=64)",
    )
    limit = verb.add_mutually_exclusive_group()
    limit.add_argument("--depth", type=int, metavar="N", help="search each position to depth N")
    limit.add_argument("--nodes", type=int, metavar="N", help="search N nodes per position")
    limit.add_argument(
        "--movetime", type=int, metavar="MS",
        help=f"search MS milliseconds per position (the default, {DEFAULT_MOVETIME} ms)",
    )
    verb.add_argument(
        "--soft", action="store_true",
        help="with --movetime: let the engine's time management spend more or less per position",
    )
    verb.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="run N engine processes (default 1)"
    )
    verb.add_argument(
        "--strict", action="store_true", help="leave bad records out instead of copying them"
    )
    verb.add_argument(
        "--resume", action="store_true", help="skip the records OUT already holds, and append"
    )
    return verb


DEFAULT_MOVETIME = 1000
"""Milliseconds per position when no limit is given."""


def _run_analysis(args: argparse.Namespace) -> int:
    from serialref.analysis.files import run_file
    from serialref.analysis.run import Run
    from serialref.analysis.tasks import Analyse, Effort, Mate, Targets, Task
    from serialref.client.options import EngineSettings, parse_engine_options
    from serialref.client.startup import EngineProtocol

    if args.jobs < 1:
        raise ConfigError("jobs", f"must be at least 1, not {args.jobs}")
    movetime = args.movetime
    if movetime is None and args.depth is None and args.nodes is None:
        movetime = DEFAULT_MOVETIME
    effort = Effort(
        depth=args.depth,
        nodes=args.nodes,
        movetime=None if movetime is None else movetime / 1000,
        soft=args.soft,
    )
    task: Task
    if args.task == "mate":
        task = Mate(effort, *_mate_lengths(args.moves))
    elif args.task == "targets":
        task = Targets(effort)
    else:
        task = Analyse(effort)
    engine = EngineSettings.from_command_line(
        args.engine,
        protocol=None if args.protocol is None else EngineProtocol(args.protocol),
        options=parse_engine_options(args.option),
    )
    finished = run_file(
        task,
        Run(engine, jobs=args.jobs, strict=args.strict, patience=effort.patience),
        source=args.file,
        output=args.output,
        resume=args.resume,
        err=sys.stderr,
        argv=sys.argv[1:],
    )
    return EXIT_OK if finished else EXIT_INTERRUPTED


def _mate_lengths(text: str) -> tuple[int, int]:
    first, dots, last = text.partition("..")
    try:
        lengths = (int(first), int(last if dots else first))
    except ValueError:
        raise ConfigError("moves", f"expected N or FIRST..LAST, not {escape(text)!r}") from None
    return lengths


def _run_report(args: argparse.Namespace) -> int:
    from serialref.analysis.report import read_results, text_report

    results = [read_results(path) for path in args.files]
    sys.stdout.write(text_report(results))
    if args.html:
        from serialref.analysis.page import write_page

        write_page(results, Path(args.html))
    return EXIT_OK


def _run_verb(args: argparse.Namespace, verb: Callable[..., int], *extra: object) -> int:
    with ExitStack() as stack:
        source, name = _open_input(stack, args.file)
        output = _open_output(stack, getattr(args, "output", "-"))
        rejected = verb(*extra, source=source, name=name, out=output, err=sys.stderr)
    return EXIT_REJECTED if rejected else EXIT_OK


def _run_normalize(args: argparse.Namespace) -> int:
    from serialref.epd.verbs import normalize_stream

    return _run_verb(args, normalize_stream)


def _run_purge(args: argparse.Namespace) -> int:
    from serialref.epd.verbs import purge_stream

    return _run_verb(args, purge_stream, args.opcode)


def _run_check(args: argparse.Namespace) -> int:
    from serialref.epd.verbs import check_stream
    from serialref.rules import find_rules

    rules = find_rules(args.variant, "--variant")
    return _run_verb(args, check_stream, rules.board)


def _open_input(stack: ExitStack, path: str) -> tuple[BinaryIO, str]:
    if path == "-":
        return sys.stdin.buffer, "<stdin>"
    try:
        return stack.enter_context(Path(path).open("rb")), path
    except OSError as exc:
        raise InputError(f"cannot read {path!r}: {exc.strerror}") from exc


def _open_output(stack: ExitStack, path: str) -> TextIO:
    if path == "-":
        return sys.stdout
    try:
        return stack.enter_context(Path(path).open("w", encoding="ascii", newline="\n"))
    except OSError as exc:
        raise SerialrefError(f"cannot write {path!r}: {exc.strerror}") from exc
