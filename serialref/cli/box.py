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
        help="validate a configuration file without opening ports",
        description="Check FILE exactly as `serialref run --config FILE` reads it, without "
        "opening a port: print `FILE: ok` (and what the command line would still have to "
        f"give), exit {EXIT_OK}; or one line naming the key at fault, exit {EXIT_REJECTED}.",
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
    """What ``run --config FILE`` checks before it opens a port: the same file passes both.

    A file that cannot be read is an error like any other verb's (exit 5); a file
    that is read and refused is a rejected input (exit 1), named in the message.
    """
    from serialref.appliance.config import check_config, missing_for_run
    from serialref.errors import ConfigError
    from serialref.standby.keys import load_key

    try:
        config = check_config(args.file)
        if config.replicate is not None and config.replicate_key is not None:
            load_key(config.replicate_key, option="replicate_key")  # as run reads it
    except ConfigError as exc:
        print(exc if exc.source else f"{args.file}: {exc}", file=sys.stderr)
        return EXIT_REJECTED
    missing = missing_for_run(config)
    listed = " and ".join((", ".join(missing[:-1]), missing[-1]) if missing[1:] else missing)
    still = f"; the command line must still give {listed}" if missing else ""
    print(f"{args.file}: ok{still}")
    return EXIT_OK


def _run_config_keys(args: argparse.Namespace) -> int:
    from serialref.appliance.reference import reference

    print(reference(), end="")
    return EXIT_OK


def _run_ports(args: argparse.Namespace) -> int:
    from serialref.appliance.ports import format_ports, list_serial_ports

    print(format_ports(list_serial_ports()))
    return EXIT_OK
