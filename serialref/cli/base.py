"""What every verb shares: exit codes, one-line usage errors, ``--debug`` and ``--log-level``."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeAlias

from serialref.appliance.logsetup import LOG_LEVEL_HELP, LOG_LEVELS

__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PORT",
    "EXIT_REJECTED",
    "EXIT_USAGE",
    "Handler",
    "Parser",
    "Verbs",
    "common_options",
]

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2
EXIT_PORT = 3
EXIT_INTERRUPTED = 4
EXIT_FAILURE = 5

Handler = Callable[[argparse.Namespace], int]
Verbs: TypeAlias = "argparse._SubParsersAction[Parser]"
"""Where a module adds its verbs: ``verbs.add_parser(...)``."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors, and options and operands in any order.

    A usage block of a dozen lines hides the one line that says what is wrong; the
    full usage is a ``--help`` away. Options may come after the operands, as users
    of Unix tools expect: ``serialref epd purge bm -o out.epd in.epd``.

    Options are never abbreviated (``--game 2`` is not taken for ``--games 2``: a
    referee box's service file must mean the same after an update adds an option),
    and an unknown one is named with the closest the verb has, by the verb itself, so
    the pointer is to that verb's ``--help`` (``serialref run --help``), where its
    options are listed.
    """

    _intermixing = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"serialref: error: {message}; see `{self.prog} --help`\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # Intermixed parsing cannot handle sub-commands, and calls this method itself.
        if self._subparsers is not None or self._intermixing:
            return super().parse_known_args(args, namespace)
        # An unknown option first: it explains a missing one (`--engin` for `--engine`).
        self._refuse_unknown_options(args or [])
        self._intermixing = True
        try:
            parsed, extras = self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def _refuse_unknown_options(self, args: Sequence[str]) -> None:
        """A usage error for the first option this verb does not have, with the closest
        one it has; values that merely start with ``-`` (``-300``, ``-``) are no options."""
        for arg in args:
            if arg == "--":
                return
            written = arg.split("=", 1)[0]
            if (
                not arg.startswith("-")
                or arg == "-"
                or written in self._option_string_actions
                or self._negative_number_matcher.match(arg)
            ):
                continue
            # Compared without their dashes, which every option shares.
            names = {option.lstrip("-"): option for option in self._option_string_actions}
            close = difflib.get_close_matches(written.lstrip("-"), names, n=1)
            hint = f" (did you mean {names[close[0]]}?)" if close else ""
            self.error(f"unknown option {written}{hint}")


def common_options(log_level: str, *, own_log_level: bool = True) -> Parser:
    """``--debug`` and ``--log-level``, with a verb's default log level.

    A verb that reads a configuration file takes ``--log-level`` from the option table
    instead (``own_log_level=False``), since the file may set it too.
    """
    common = Parser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="log everything, and print an error's traceback above its line "
        "(the exit code stays the same)",
    )
    if own_log_level:
        common.add_argument(
            "--log-level",
            default=argparse.SUPPRESS,
            choices=LOG_LEVELS,
            help=f"{LOG_LEVEL_HELP} (default: {log_level})",
        )
    common.set_defaults(verb_log_level=log_level)
    return common
