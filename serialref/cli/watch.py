"""``serialref watch``: the supervisor's terminal view, over the referee's control socket."""

from __future__ import annotations

import argparse
from pathlib import Path

from serialref.cli.base import EXIT_OK, Verbs, common_options

__all__ = ["add_verbs"]


def add_verbs(verbs: Verbs) -> None:
    """``watch``."""
    watch = verbs.add_parser(
        "watch",
        parents=[common_options("warning")],
        help="watch and steer a running referee in the terminal (needs serialref[watch])",
        description="A terminal view of the match a referee is playing: the board, the "
        "clocks, both players' lines and their last records, with keys for the "
        "supervisor's commands (see `serialref ctl --help`). It talks only to the "
        "referee's control socket.",
    )
    watch.add_argument(
        "--socket",
        type=Path,
        metavar="PATH",
        help="the referee's control socket (default: $RUNTIME_DIRECTORY/control.sock, "
        "else /run/serialref/control.sock)",
    )
    watch.add_argument("--board", type=int, metavar="N",
                       help="the board of an event to follow (see `ctl status`)")  # fmt: skip
    watch.set_defaults(handler=_run_watch)


def _run_watch(args: argparse.Namespace) -> int:
    from serialref.control.client import default_socket
    from serialref.watch.app import WatchApp

    WatchApp(args.socket or default_socket(), board=args.board).run()
    return EXIT_OK
