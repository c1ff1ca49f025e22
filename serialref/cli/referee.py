"""The verbs that referee a match: ``run``, ``standby`` (and its ``keygen``), ``demo``.

``run`` and ``standby`` take the match options of the option table
(:mod:`serialref.appliance.options`): their arguments are made from its rows, and what
the user gave goes to :func:`~serialref.appliance.config.load_config` by the same names.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serialref.appliance.options import (
    MATCH_OPTIONS,
    RUN,
    STANDBY,
    MatchOption,
    Where,
    match_option,
)
from serialref.cli.base import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PORT,
    EXIT_USAGE,
    Verbs,
    common_options,
)

if TYPE_CHECKING:
    from serialref.appliance.config import MatchConfig

__all__ = ["add_match_options", "add_verbs", "match_config"]

_MATCH_LOG_LEVEL = str(match_option("log_level").default)
"""``run`` and ``standby`` log as the configuration's ``log_level`` says, which defaults to this."""


def add_verbs(verbs: Verbs) -> None:
    """``run``, ``standby``, ``keygen`` and ``demo``."""
    _add_run_verb(verbs)
    _add_standby_verb(verbs)
    _add_keygen_verb(verbs)
    _add_demo_verb(verbs)


def add_match_options(parser: argparse.ArgumentParser, verb: str) -> None:
    """``--config`` and every match option the table gives ``verb``, in the table's order.

    No option has a default here: a value not given is left to the file, then to the
    table's default, which the help states.
    """
    parser.add_argument(
        "--config", type=Path, metavar="FILE", help="TOML configuration file; the command "
        "line wins over it (see `serialref config keys`)",
    )  # fmt: skip
    for option in MATCH_OPTIONS:
        for port, flag in enumerate(option.flags.get(verb, ())):
            _add_match_option(parser, option, port, flag)


def _add_match_option(
    parser: argparse.ArgumentParser, option: MatchOption[Any], port: int, flag: str
) -> None:
    player = f"player {'AB'[port]}"
    where = f"ports.{'ab'[port]}.{option.key}" if option.where is Where.PORT else option.key
    also = "; it sets both ports, over their own tables" if option.where is Where.BOTH else ""
    default = option.default_text or _plain(option.default)
    help_text = (
        f"{option.help.format(player=player)} "
        f"(default: {default} or the --config file's {where}{also})"
    )
    kind = option.kind
    details: dict[str, Any] = {"default": argparse.SUPPRESS, "help": help_text}
    if kind.argument is not str:
        details["type"] = kind.argument
    if kind.choices is not None:
        details["choices"] = kind.choices
    if kind.nargs is not None:
        details["nargs"] = kind.nargs
    if not flag.startswith("-"):
        parser.add_argument(option.names[port], nargs="?", metavar=flag, **details)
        return
    if kind.metavar is not None and kind.choices is None:
        details["metavar"] = kind.metavar
    parser.add_argument(flag, dest=option.names[port], **details)


def _plain(value: object) -> str:
    """A default as a command line would write it: ``5``, not ``5.0``."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def match_config(args: argparse.Namespace) -> MatchConfig:
    """The configuration of the match: the ``--config`` file with the command line on top."""
    from serialref.appliance.config import load_config

    given = vars(args)
    overrides = {name: given[name] for option in MATCH_OPTIONS for name in option.names
                 if name in given}  # fmt: skip
    return load_config(args.config, overrides)


def _configured_match(args: argparse.Namespace) -> MatchConfig:
    """The match's configuration, whose ``log_level`` applies from here on (but ``--debug``'s)."""
    from serialref.appliance.assembly import with_runtime_socket

    config = with_runtime_socket(match_config(args))
    if not args.debug:
        from serialref.appliance.logsetup import configure_logging

        configure_logging(config.log_level)
    return config


def _add_run_verb(verbs: Verbs) -> None:
    run = verbs.add_parser(
        "run",
        parents=[common_options(_MATCH_LOG_LEVEL, own_log_level=False)],
        help="referee a match between the players on two serial ports",
        description="Referee a match between the players on PORT_A and PORT_B (device paths "
        "or pyserial URLs). The player on PORT_A has White in game 1; colours alternate. "
        "Every option can also come from the --config file; the command line wins. "
        "Progress goes to stdout as engine testers know it (games, score, Elo); on a "
        "terminal the board is shown live as well. "
        f"Exit codes: {EXIT_OK} match complete, {EXIT_USAGE} bad usage or configuration, "
        f"{EXIT_PORT} a port cannot be opened, {EXIT_INTERRUPTED} match interrupted "
        f"(SIGTERM/SIGINT), {EXIT_FAILURE} a file cannot be read or written, or another "
        "error; --debug never changes them.",
    )
    add_match_options(run, RUN)
    run.add_argument(
        "--new-match",
        action="store_true",
        help="keep an existing journal aside (as JOURNAL.1, .2, ...) and start a new match"
        " instead of resuming it",
    )
    run.add_argument(
        "--once",
        action="store_true",
        help="when the journal holds a match played out, end at once (exit 0) instead of "
        "starting another in the same journal and PGN; the service's setting, so that a "
        "reboot after the match does not play it again",
    )
    run.add_argument(
        "--quiet",
        action="store_true",
        help="nothing on stdout: no progress lines, no live board",
    )
    run.set_defaults(handler=_run_match)


def _run_match(args: argparse.Namespace) -> int:
    from serialref.appliance.assembly import run_referee
    from serialref.happenings import MatchListener

    config = _configured_match(args)
    extra: list[MatchListener] = []
    if config.replicate is not None:
        from serialref.errors import ConfigError
        from serialref.standby.primary import JournalReplicator

        if config.journal is None:
            raise ConfigError("replicate", "needs --journal: the standby is sent the journal file")
        key = _replication_key(args, config, option="--replicate-key")
        extra.append(JournalReplicator(str(config.replicate), config.journal, key))
    quiet = args.quiet
    complete = run_referee(
        config,
        console=sys.stdout if sys.stdout.isatty() and not quiet else None,
        progress=None if quiet else sys.stdout,
        extra_listeners=extra,
        new_match=args.new_match,
        once=args.once,
    )
    return EXIT_OK if complete else EXIT_INTERRUPTED


def _add_standby_verb(verbs: Verbs) -> None:
    standby = verbs.add_parser(
        "standby",
        parents=[common_options(_MATCH_LOG_LEVEL, own_log_level=False)],
        help="mirror a referee's journal and take its match over when it falls silent",
        description="Listen on ADDRESS (HOST:PORT) for a referee started with --replicate, "
        "check that it holds the same --key, mirror its journal to --journal, and when its "
        "heartbeat has been silent for --takeover-after seconds, open PORT_A and PORT_B "
        "(retrying while the other referee still holds them) and resume the match. "
        "See docs/standby.md.",
    )
    standby.add_argument(
        "address",
        metavar="ADDRESS",
        help="HOST:PORT to listen on (one interface, e.g. 192.168.1.20:7600); "
        "a PORT alone listens on 127.0.0.1, this machine only",
    )
    add_match_options(standby, STANDBY)
    standby.add_argument(
        "--takeover-after",
        type=float,
        default=3.0,
        metavar="SECONDS",
        help="silence of the primary's heartbeat before taking over (default 3)",
    )
    standby.set_defaults(handler=_run_standby)


def _run_standby(args: argparse.Namespace) -> int:
    from functools import partial

    from serialref.appliance.assembly import match_settings, run_referee
    from serialref.appliance.notify import SystemdNotifier
    from serialref.standby.takeover import open_mirror, stand_by

    config = _configured_match(args)
    key = _replication_key(args, config, option="--key")
    run_match = partial(run_referee, console=sys.stdout if sys.stdout.isatty() else None)
    settings = match_settings(config)
    with open_mirror(config, args.address, key, takeover_after=args.takeover_after) as mirror:
        complete = stand_by(config, settings, mirror, run_match, notifier=SystemdNotifier())
    return EXIT_OK if complete else EXIT_INTERRUPTED


def _replication_key(args: argparse.Namespace, config: MatchConfig, *, option: str) -> bytes:
    """The key file's bytes; the error names the option, or the file's key it came from."""
    from serialref.standby.keys import load_key, missing_key_error

    if config.replicate_key is None:
        raise missing_key_error(option)
    given_here = getattr(args, "replicate_key", None) is not None
    return load_key(config.replicate_key, option=option if given_here else "replicate_key")


def _add_keygen_verb(verbs: Verbs) -> None:
    keygen = verbs.add_parser(
        "keygen",
        parents=[common_options("warning")],
        help="make a key file for replication to a hot standby",
        description="Write 32 random bytes to the new file FILE, readable by its owner only "
        "(mode 0600); an existing file is never overwritten. Copy it to the standby's "
        "machine, keeping its mode, and give it to `serialref run --replicate-key` and "
        "`serialref standby --key`. See docs/standby.md.",
    )
    keygen.add_argument("file", type=Path, metavar="FILE", help="the key file to create")
    keygen.set_defaults(handler=_run_keygen)


def _run_keygen(args: argparse.Namespace) -> int:
    from serialref.standby.keys import generate_key

    generate_key(args.file)
    print(f"{args.file}: new replication key (mode 0600); copy it to the other machine")
    return EXIT_OK


def _add_demo_verb(verbs: Verbs) -> None:
    demo = verbs.add_parser(
        "demo",
        parents=[common_options("warning")],
        help="play a short match between built-in players over virtual null-modem cables",
    )
    demo.add_argument(
        "--dir",
        type=Path,
        default=Path("serialref-demo"),
        help="where the PGN and journal go (default ./serialref-demo)",
    )
    demo.add_argument("--games", type=int, default=2, help="games to play (default 2)")
    demo.add_argument("--tc", default="60+1", help="time control (default 60+1)")
    demo.add_argument(
        "--variant", default="standard", help="rules to play by, e.g. crazyhouse (default standard)"
    )
    demo.set_defaults(handler=_run_demo)


def _run_demo(args: argparse.Namespace) -> int:
    from serialref.demo import run_demo

    result = run_demo(
        args.dir, games=args.games, tc=args.tc, variant=args.variant, console=sys.stdout
    )
    print(f"PGN:     {result.pgn}")
    print(f"journal: {result.journal}")
    print(f"player logs: {', '.join(str(path) for path in result.player_logs)}")
    return EXIT_OK if result.complete else EXIT_INTERRUPTED
