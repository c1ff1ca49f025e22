"""Setting up a referee box: its serial ports, and the configuration file its service reads."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from serialref.cli.base import EXIT_OK, EXIT_REJECTED, Verbs, common_options

__all__ = ["add_verbs"]


def add_verbs(verbs: Verbs) -> None:
    """``config check``, ``config keys`` and ``ports``."""
    common = common_options("warning")
    config = verbs.add_parser("config", parents=[common], help="work with configuration files")
    config_verbs = config.add_subparsers(title="config verbs", metavar="VERB", required=True)
    check = config_verbs.add_parser(
        "check",
        parents=[common],
        help="validate a match's or an event's configuration file without opening ports",
        description="Check FILE exactly as `serialref run --config FILE` reads it (or, for "
        "an event's file, one with players, as `serialref event --config FILE` does), "
        "without opening a port: print `FILE: ok` (and what the command line would still "
        f"have to give), exit {EXIT_OK}; or one line for each wrong key, naming it, and "
        f"with several a last line counting them, exit {EXIT_REJECTED}.",
    )
    check.add_argument("file", type=Path, help="TOML configuration file")
    check.set_defaults(handler=_run_config_check)
    keys = config_verbs.add_parser(
        "keys",
        parents=[common],
        help="print every configuration key: type, default, option, meaning (Markdown)",
    )
    keys.set_defaults(handler=_run_config_keys)
    ports = verbs.add_parser(
        "ports", parents=[common], help="list serial ports and the udev rules that name them"
    )
    ports.set_defaults(handler=_run_ports)


def _run_config_check(args: argparse.Namespace) -> int:
    """What ``run --config FILE`` (or ``event --config FILE``) checks before it opens a
    port: the same file passes both.

    A file that cannot be read is an error like any other verb's (exit 5); a file
    that is read and refused is a rejected input (exit 1), each wrong key named.
    """
    from serialref.appliance.config import read_toml
    from serialref.errors import ConfigError, GroupedConfigError
    from serialref.tournament.config import is_tournament_file

    try:
        if is_tournament_file(read_toml(args.file)):
            verdict = _checked_event(args.file)
        else:
            verdict = _checked_match(args.file)
    except ConfigError as exc:
        errors = exc.errors if isinstance(exc, GroupedConfigError) else (exc,)
        for error in errors:
            print(error if error.source else f"{args.file}: {error}", file=sys.stderr)
        if len(errors) > 1:
            print(f"{args.file}: {len(errors)} errors", file=sys.stderr)
        return EXIT_REJECTED
    print(f"{args.file}: ok{verdict}")
    return EXIT_OK


def _checked_match(path: Path) -> str:
    """A match's file checked; what the command line must still give, if anything."""
    from serialref.appliance.config import check_config, missing_for_run
    from serialref.standby.keys import load_key

    config = check_config(path)
    if config.replicate is not None and config.replicate_key is not None:
        load_key(config.replicate_key, option="replicate_key")  # as run reads it
    missing = missing_for_run(config)
    listed = " and ".join((", ".join(missing[:-1]), missing[-1]) if missing[1:] else missing)
    return f"; the command line must still give {listed}" if missing else ""


def _checked_event(path: Path) -> str:
    """An event's file checked as ``serialref event`` reads it; what it plays."""
    from serialref.tournament.config import load_tournament_config

    config = load_tournament_config(path)
    pairings = len(config.pairings())
    return (f" (an event: {config.format.value} of {len(config.players)} players, "
            f"{pairings} pairing{'s' if pairings != 1 else ''})")  # fmt: skip


def _run_config_keys(args: argparse.Namespace) -> int:
    from serialref.appliance.reference import reference

    print(reference(), end="")
    return EXIT_OK


def _run_ports(args: argparse.Namespace) -> int:
    from serialref.appliance.ports import format_ports, list_serial_ports

    print(format_ports(list_serial_ports()))
    return EXIT_OK
