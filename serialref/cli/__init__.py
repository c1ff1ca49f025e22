"""The ``serialref`` command line: parses arguments, runs a verb, turns errors into messages.

This package is the only code that prints. Each of its modules adds one group of verbs
(:mod:`~serialref.cli.referee` the match, :mod:`~serialref.cli.box` the referee box's
ports and configuration, :mod:`~serialref.cli.client` the player side,
:mod:`~serialref.cli.epd` the EPD files); every verb returns an exit code, and any
:class:`SerialrefError` becomes one line on stderr (a traceback only with ``--debug``).

A command that names its verb imports and builds that verb's group alone: ``run``'s
arguments come from the referee's option table, whose modules (the referee's openings,
rules, statistics) cost a client a fifth of its start-up and 2 MB it would keep for
its life. Without a known verb (``serialref --help``, a typo) every group is built.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence

from serialref import __version__
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
    given = sys.argv[1:] if argv is None else argv
    parser = build_parser(_verb_named(given))
    args = parser.parse_args(given)
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


_VERB_GROUPS = (
    ("referee", ("run", "standby", "keygen", "demo")),
    ("client", ("client",)),
    ("box", ("config", "ports")),
    ("epd", ("epd",)),
    ("event", ("event",)),
    ("report", ("report",)),
    ("ctl", ("ctl",)),
    ("watch", ("watch",)),
)
"""Each module of this package that adds verbs, with their names, in ``--help``'s order."""


def _verb_named(argv: Sequence[str]) -> str | None:
    """The verb ``argv`` names: its first operand, ``--log-level``'s value aside."""
    arguments = iter(argv)
    for argument in arguments:
        if argument == "--log-level":
            next(arguments, None)
        elif not argument.startswith("-"):
            return argument
    return None


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The argument grammar, one sub-parser per verb: of ``verb``'s group alone if it
    is one of ours, else of every verb."""
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
    named = [module for module, names in _VERB_GROUPS if verb in names]
    for module in named or [module for module, _ in _VERB_GROUPS]:
        importlib.import_module(f"serialref.cli.{module}").add_verbs(verbs)
    return parser
