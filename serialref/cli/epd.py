"""``serialref epd``: the EPD processing verbs of spec section 7, on files or stdin."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO, TextIO

from serialref.cli.base import EXIT_OK, EXIT_REJECTED, Verbs, common_options
from serialref.errors import InputError, SerialrefError

__all__ = ["add_verbs"]


def add_verbs(verbs: Verbs) -> None:
    """``epd normalize``, ``epd purge`` and ``epd check``."""
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
    check.set_defaults(handler=_run_check)


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

    return _run_verb(args, check_stream)


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
