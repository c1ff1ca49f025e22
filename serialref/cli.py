"""The ``serialref`` command line: parses arguments, runs a verb, turns errors into messages.

This is the only module that prints. Every verb returns an exit code; any
:class:`SerialrefError` becomes one line on stderr (a traceback only with ``--debug``).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO, TextIO

from serialref import __version__
from serialref.errors import SerialrefError

LOGGER = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2
EXIT_PORT = 3
EXIT_INTERRUPTED = 4
EXIT_FAILURE = 5

Handler = Callable[[argparse.Namespace], int]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _setup_logging(args)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return handler(args)
    except SerialrefError as exc:
        if args.debug:
            raise
        print(f"serialref: error: {exc}", file=sys.stderr)
        return _exit_code_for(exc)
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("serialref: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped into `head` and the like: not an error of ours.
        sys.stderr.close()
        return EXIT_OK


def _exit_code_for(exc: SerialrefError) -> int:
    from serialref.errors import ConfigError, PortOpenError

    if isinstance(exc, ConfigError):
        return EXIT_USAGE
    if isinstance(exc, PortOpenError):
        return EXIT_PORT
    return EXIT_FAILURE


def _setup_logging(args: argparse.Namespace) -> None:
    level = logging.DEBUG if args.debug else getattr(logging, args.log_level.upper())
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    """The whole argument grammar, one sub-parser per verb."""
    parser = argparse.ArgumentParser(
        prog="serialref",
        description="Serial-line chess referee speaking the EPD referee protocol.",
        parents=[_common_options(argparse.SUPPRESS)],
    )
    parser.set_defaults(debug=False, log_level="warning")
    # Sub-parsers repeat the options with SUPPRESS defaults so that
    # `serialref --debug run ...` and `serialref run --debug ...` both work.
    common = _common_options(argparse.SUPPRESS)
    parser.add_argument("--version", action="version", version=f"serialref {__version__}")
    verbs = parser.add_subparsers(title="commands", metavar="COMMAND")
    _add_epd_verbs(verbs, common)
    return parser


def _common_options(default: object) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug", action="store_true", default=default, help="show tracebacks and debug logging"
    )
    common.add_argument(
        "--log-level",
        default=default,
        choices=["debug", "info", "warning", "error"],
        help="how much to log on stderr (default: warning)",
    )
    return common


def _add_epd_verbs(verbs: argparse._SubParsersAction[argparse.ArgumentParser],
                   common: argparse.ArgumentParser) -> None:
    epd = verbs.add_parser("epd", parents=[common], help="process EPD files (spec section 7)")
    epd_verbs = epd.add_subparsers(title="EPD verbs", metavar="VERB")

    normalize = epd_verbs.add_parser(
        "normalize", parents=[common], help="write the normalised form of each record (spec 7.1 pfdn)"
    )
    normalize.add_argument("file", nargs="?", default="-", help="EPD file, or - for stdin (default)")
    normalize.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    normalize.set_defaults(handler=_run_epd_normalize)

    purge = epd_verbs.add_parser(
        "purge", parents=[common], help="remove one operation from every record (spec 7.4 pfop)"
    )
    purge.add_argument("opcode", help="the opcode to remove, e.g. id")
    purge.add_argument("file", nargs="?", default="-", help="EPD file, or - for stdin (default)")
    purge.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    purge.set_defaults(handler=_run_epd_purge)

    check = epd_verbs.add_parser(
        "check", parents=[common], help="report every record whose position is not legal"
    )
    check.add_argument("file", nargs="?", default="-", help="EPD file, or - for stdin (default)")
    check.set_defaults(handler=_run_epd_check)


def _run_epd_verb(args: argparse.Namespace, verb: Callable[..., int], *extra: object) -> int:
    with ExitStack() as stack:
        source, name = _open_input(stack, args.file)
        output = _open_output(stack, getattr(args, "output", "-"))
        rejected = verb(*extra, source=source, name=name, out=output, err=sys.stderr)
    return EXIT_REJECTED if rejected else EXIT_OK


def _run_epd_normalize(args: argparse.Namespace) -> int:
    from serialref.epdverbs import normalize_stream

    return _run_epd_verb(args, normalize_stream)


def _run_epd_purge(args: argparse.Namespace) -> int:
    from serialref.epdverbs import purge_stream

    return _run_epd_verb(args, purge_stream, args.opcode)


def _run_epd_check(args: argparse.Namespace) -> int:
    from serialref.epdverbs import check_stream

    return _run_epd_verb(args, check_stream)


def _open_input(stack: ExitStack, path: str) -> tuple[BinaryIO, str]:
    if path == "-":
        return sys.stdin.buffer, "<stdin>"
    try:
        return stack.enter_context(Path(path).open("rb")), path
    except OSError as exc:
        raise SerialrefError(f"cannot read {path!r}: {exc.strerror}") from exc


def _open_output(stack: ExitStack, path: str) -> TextIO:
    if path == "-":
        return sys.stdout
    try:
        return stack.enter_context(Path(path).open("w", encoding="ascii", newline="\n"))
    except OSError as exc:
        raise SerialrefError(f"cannot write {path!r}: {exc.strerror}") from exc
