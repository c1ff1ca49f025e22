"""The ``serialref`` command line: parses arguments, runs a verb, turns errors into messages.

This package is the only code that prints. Each of its modules adds one group of verbs
(:mod:`~serialref.cli.referee` the match, :mod:`~serialref.cli.box` the referee box's
ports and configuration, :mod:`~serialref.cli.client` the player side,
:mod:`~serialref.cli.epd` the EPD files); every verb returns an exit code, and any
:class:`SerialrefError` becomes one line on stderr (a traceback only with ``--debug``).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from serialref import __version__
from serialref.cli import box, client, ctl, epd, event, referee, report, watch
from serialref.cli.base import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PORT,
    EXIT_REJECTED,
    EXIT_USAGE,
    Handler,
    Parser,
    common_options,
)
from serialref.errors import SerialrefError

__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PORT",
    "EXIT_REJECTED",
    "EXIT_USAGE",
    "build_parser",
    "main",
]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code.

    ``--debug`` adds the traceback to an error's line on stderr; it never changes
    the exit code, so scripts behave the same while someone investigates.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        _setup_logging(args)
        return handler(args)
    except SerialrefError as exc:
        return _fail(args, f"serialref: error: {exc}", _exit_code_for(exc))
    except KeyboardInterrupt:
        return _fail(args, "serialref: interrupted", EXIT_INTERRUPTED)
    except BrokenPipeError:
        # Output piped into `head` and the like: not an error of ours.
        sys.stderr.close()
        return EXIT_OK
    except Exception as exc:
        # A bug of ours. The referee's journal holds the match, so a restart
        # (systemd's Restart=on-failure) resumes it; the user gets one line.
        hint = "" if args.debug else " (run again with --debug for the traceback)"
        return _fail(args, f"serialref: internal error: {exc!r}{hint}", EXIT_FAILURE)


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    """One line on stderr, after the traceback when debugging; the exit code either way."""
    if args.debug:
        traceback.print_exc(file=sys.stderr)
    print(message, file=sys.stderr)
    return code


def _exit_code_for(exc: SerialrefError) -> int:
    from serialref.errors import ConfigError, MissingExtraError, PortOpenError

    if isinstance(exc, (ConfigError, MissingExtraError)):
        return EXIT_USAGE
    if isinstance(exc, PortOpenError):
        return EXIT_PORT
    return EXIT_FAILURE


def _setup_logging(args: argparse.Namespace) -> None:
    from serialref.appliance.logsetup import configure_logging

    configure_logging("debug" if args.debug else args.log_level or args.verb_log_level)


def build_parser() -> argparse.ArgumentParser:
    """The whole argument grammar, one sub-parser per verb."""
    parser = Parser(
        prog="serialref",
        description="Serial-line chess referee speaking the EPD referee protocol.",
        epilog="Each command has options of its own, which `serialref COMMAND --help` lists: "
        "`serialref run --help` a match's (--games, --tc, --pgn, --journal, --config, ...), "
        "`serialref client --help` a player's (--engine, --player, --name, ...).",
        parents=[common_options("warning")],
    )
    parser.set_defaults(debug=False, log_level=None)
    parser.add_argument("--version", action="version", version=f"serialref {__version__}")
    verbs = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    # Each verb repeats the common options, so that `serialref --debug run ...` and
    # `serialref run --debug ...` both work, with its own default log level.
    referee.add_verbs(verbs)
    client.add_verbs(verbs)
    box.add_verbs(verbs)
    epd.add_verbs(verbs)
    event.add_verbs(verbs)
    report.add_verbs(verbs)
    ctl.add_verbs(verbs)
    watch.add_verbs(verbs)
    return parser
