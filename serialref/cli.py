"""The ``serialref`` command line: parses arguments, runs a verb, turns errors into messages.

This is the only module that prints. Every verb returns an exit code; any
:class:`SerialrefError` becomes one line on stderr (a traceback only with ``--debug``).
"""

from __future__ import annotations

import argparse
import logging
import sys
import traceback
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NoReturn, TextIO, cast

from serialref import __version__
from serialref.errors import InputError, SerialrefError

if TYPE_CHECKING:
    from serialref.appliance.config import MatchConfig

LOGGER = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2
EXIT_PORT = 3
EXIT_INTERRUPTED = 4
EXIT_FAILURE = 5

Handler = Callable[[argparse.Namespace], int]


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
    from serialref.errors import ConfigError, PortOpenError

    if isinstance(exc, ConfigError):
        return EXIT_USAGE
    if isinstance(exc, PortOpenError):
        return EXIT_PORT
    return EXIT_FAILURE


def _setup_logging(args: argparse.Namespace) -> None:
    from serialref.appliance.logsetup import configure_logging

    configure_logging("debug" if args.debug else args.log_level or args.verb_log_level)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors, and options and operands in any order.

    A usage block of a dozen lines hides the one line that says what is wrong; the
    full usage is a ``--help`` away. Options may come after the operands, as users
    of Unix tools expect: ``serialref epd purge bm -o out.epd in.epd``.
    """

    _intermixing = False

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"serialref: error: {message}; see `{self.prog} --help`\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # Intermixed parsing cannot handle sub-commands, and calls this method itself.
        if self._subparsers is not None or self._intermixing:
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def build_parser() -> argparse.ArgumentParser:
    """The whole argument grammar, one sub-parser per verb."""
    parser = _Parser(
        prog="serialref",
        description="Serial-line chess referee speaking the EPD referee protocol.",
        parents=[_common_options("warning")],
    )
    parser.set_defaults(debug=False, log_level=None)
    parser.add_argument("--version", action="version", version=f"serialref {__version__}")
    verbs = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(title="commands", metavar="COMMAND", required=True),
    )
    # Each verb repeats the options, so that `serialref --debug run ...` and
    # `serialref run --debug ...` both work, with its own default log level.
    _add_run_verb(verbs, _common_options(_MATCH_LOG_LEVEL, from_config=True))
    _add_standby_verb(verbs, _common_options(_MATCH_LOG_LEVEL, from_config=True))
    _add_keygen_verb(verbs, _common_options("warning"))
    _add_demo_verb(verbs, _common_options("warning"))
    _add_client_verb(verbs, _common_options("info"))
    _add_config_verbs(verbs, _common_options("warning"))
    _add_ports_verb(verbs, _common_options("warning"))
    _add_epd_verbs(verbs, _common_options("warning"))
    return parser


_MATCH_LOG_LEVEL = "info"
"""``run`` and ``standby`` log as the configuration's ``log_level`` says, which defaults to this."""


def _common_options(log_level: str, *, from_config: bool = False) -> argparse.ArgumentParser:
    """``--debug`` and ``--log-level``, with a verb's default log level.

    ``from_config``: the verb reads a ``--config`` file, whose ``log_level`` comes first.
    """
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="log everything, and print an error's traceback above its line "
        "(the exit code stays the same)",
    )
    from_file = " or the --config file's log_level" if from_config else ""
    common.add_argument(
        "--log-level",
        default=argparse.SUPPRESS,
        choices=["debug", "info", "warning", "error"],
        help=f"how much to log on stderr (default: {log_level}{from_file})",
    )
    common.set_defaults(verb_log_level=log_level)
    return common


def _add_epd_verbs(
    verbs: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
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
    from serialref.epd.verbs import normalize_stream

    return _run_epd_verb(args, normalize_stream)


def _run_epd_purge(args: argparse.Namespace) -> int:
    from serialref.epd.verbs import purge_stream

    return _run_epd_verb(args, purge_stream, args.opcode)


def _run_epd_check(args: argparse.Namespace) -> int:
    from serialref.epd.verbs import check_stream

    return _run_epd_verb(args, check_stream)


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


# --------------------------------------------------------------------------- run


def _add_run_verb(
    verbs: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    run = verbs.add_parser(
        "run",
        parents=[common],
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
    _add_match_options(run)
    run.add_argument(
        "--replicate-key",
        type=Path,
        metavar="FILE",
        help="the key shared with the standby (`serialref keygen FILE`); needed by --replicate",
    )
    run.add_argument(
        "--new-match",
        action="store_true",
        help="keep an existing journal aside (as JOURNAL.1, .2, ...) and start a new match"
        " instead of resuming it",
    )
    run.add_argument(
        "--quiet",
        action="store_true",
        help="nothing on stdout: no progress lines, no live board",
    )
    run.set_defaults(handler=_run_match)


def _add_match_options(parser: argparse.ArgumentParser) -> None:
    """PORT_A, PORT_B and every match option: `run` and `standby` take the same."""
    parser.add_argument("port_a", nargs="?", metavar="PORT_A", help="player A's port")
    parser.add_argument("port_b", nargs="?", metavar="PORT_B", help="player B's port")
    parser.add_argument("--config", type=Path, help="TOML configuration file")
    parser.add_argument("--games", type=int, help="games to play (default 1)")
    parser.add_argument("--tc", help="PGN TimeControl, e.g. 300+3 or 40/7200:3600 (default 300+3)")
    parser.add_argument("--fen", help="start every game from this position")
    parser.add_argument(
        "--openings", type=Path, help="EPD or PGN file; each opening is played with both colours"
    )
    parser.add_argument("--pgn", type=Path, help="append finished games to this PGN file")
    parser.add_argument("--journal", type=Path, help="JSON Lines transcript of the match")
    parser.add_argument("--event", help="PGN Event tag")
    parser.add_argument("--site", help="PGN Site tag (default: this host's name)")
    parser.add_argument("--name-a", help="player A's name (default: its sign-on name)")
    parser.add_argument("--name-b", help="player B's name (default: its sign-on name)")
    parser.add_argument(
        "--reset-delay",
        type=float,
        metavar="SECONDS",
        help="wait after reset (default 5, spec 8.1.6)",
    )
    parser.add_argument(
        "--conclude-delay",
        type=float,
        metavar="SECONDS",
        help="wait after conclude (default 5, spec 8.1.1)",
    )
    parser.add_argument("--baud", type=int, help="line rate of both ports (default 9600)")
    parser.add_argument("--newline", choices=["crlf", "lf"], help="line end sent (default crlf)")
    parser.add_argument(
        "--on-infraction",
        choices=["forfeit", "fault"],
        help="a rules infraction loses the game (forfeit, default) or stops the "
        "clocks and calls the supervisor (fault)",
    )
    parser.add_argument(
        "--replicate",
        metavar="HOST:PORT",
        help="stream the journal to a hot standby (`serialref standby`) at this address",
    )
    parser.add_argument(
        "--rejoin-window",
        type=float,
        metavar="SECONDS",
        help="how long a player that left may take to come back",
    )


_MATCH_OPTIONS = (
    "port_a",
    "port_b",
    "games",
    "tc",
    "fen",
    "openings",
    "pgn",
    "journal",
    "event",
    "site",
    "name_a",
    "name_b",
    "reset_delay",
    "conclude_delay",
    "baud",
    "newline",
    "on_infraction",
    "rejoin_window",
    "replicate",
    "replicate_key",
)


def _match_config(args: argparse.Namespace) -> MatchConfig:
    from serialref.appliance.config import load_config

    overrides = {name: getattr(args, name, None) for name in _MATCH_OPTIONS}
    return load_config(args.config, overrides)


def _run_match(args: argparse.Namespace) -> int:
    from serialref.appliance.assembly import run_referee
    from serialref.events import MatchListener

    config = _match_config(args)
    _configure_match_logging(args, config)
    extra: list[MatchListener] = []
    if config.replicate is not None:
        from serialref.errors import ConfigError
        from serialref.standby.primary import JournalReplicator

        if config.journal is None:
            raise ConfigError("replicate", "needs --journal: the standby is sent the journal file")
        key = _replication_key(args, config, option="--replicate-key")
        extra.append(JournalReplicator(config.replicate, config.journal, key))
    quiet = args.quiet
    complete = run_referee(
        config,
        console=sys.stdout if sys.stdout.isatty() and not quiet else None,
        progress=None if quiet else sys.stdout,
        extra_listeners=extra,
        new_match=args.new_match,
    )
    return EXIT_OK if complete else EXIT_INTERRUPTED


def _configure_match_logging(args: argparse.Namespace, config: MatchConfig) -> None:
    """The file's log_level applies unless the command line gave one."""
    if args.log_level is None and not args.debug:
        from serialref.appliance.logsetup import configure_logging

        configure_logging(config.log_level)


def _add_standby_verb(
    verbs: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    standby = verbs.add_parser(
        "standby",
        parents=[common],
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
    _add_match_options(standby)
    standby.add_argument(
        "--key",
        dest="replicate_key",
        type=Path,
        metavar="FILE",
        help="the key shared with the primary (`serialref keygen FILE`; replicate_key in --config)",
    )
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

    config = _match_config(args)
    _configure_match_logging(args, config)
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


def _add_keygen_verb(
    verbs: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    keygen = verbs.add_parser(
        "keygen",
        parents=[common],
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


# -------------------------------------------------------------------------- demo


def _add_demo_verb(
    verbs: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    demo = verbs.add_parser(
        "demo",
        parents=[common],
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
    demo.set_defaults(handler=_run_demo)


def _run_demo(args: argparse.Namespace) -> int:
    from serialref.demo import run_demo

    result = run_demo(args.dir, games=args.games, tc=args.tc, console=sys.stdout)
    print(f"PGN:     {result.pgn}")
    print(f"journal: {result.journal}")
    print(f"player logs: {', '.join(str(path) for path in result.player_logs)}")
    return EXIT_OK if result.complete else EXIT_INTERRUPTED


# ------------------------------------------------------------------------ client


def _add_client_verb(
    verbs: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    client = verbs.add_parser(
        "client",
        parents=[common],
        help="play on a serial line for a built-in player or a UCI/XBoard engine",
    )
    client.add_argument("port", metavar="PORT", help="device path or pyserial URL")
    who = client.add_mutually_exclusive_group(required=True)
    who.add_argument(
        "--engine",
        metavar="CMD",
        help="UCI or XBoard engine command, e.g. stockfish or 'gnuchess --xboard' (looked for "
        "on PATH, then in /usr/games and /usr/local/games)",
    )
    who.add_argument(
        "--player",
        choices=["random", "greedy"],
        help="a built-in player: random moves, or greedy (mates in one, else takes the most)",
    )
    client.add_argument(
        "--protocol",
        choices=["uci", "xboard"],
        help="engine protocol (default: found out, UCI tried first, then XBoard)",
    )
    client.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="engine option, repeatable (e.g. Hash=64)",
    )
    client.add_argument("--seed", type=int, help="seed of a built-in player's choices")
    client.add_argument(
        "--pace",
        type=int,
        default=0,
        metavar="MS",
        help="a built-in player waits MS milliseconds before each move (to watch a game)",
    )
    limit = client.add_mutually_exclusive_group()
    limit.add_argument(
        "--nodes", type=int, metavar="N", help="search at most N nodes (the clock still counts)"
    )
    limit.add_argument(
        "--depth", type=int, metavar="N", help="search at most to depth N (the clock still counts)"
    )
    limit.add_argument(
        "--movetime", type=int, metavar="MS", help="search at most MS milliseconds a move"
    )
    for option, what in (
        ("--draw-offer-below", "offer a draw with the move when |score| is below CP"),
        ("--draw-accept-below", "UCI: accept a draw offer when |score| is below CP"),
        ("--resign-below", "UCI: resign when the score stays at or below -CP"),
    ):
        client.add_argument(option, type=int, metavar="CP", help=what)
    client.add_argument(
        "--resign-moves",
        type=int,
        default=3,
        metavar="N",
        help="moves in a row the --resign-below score must hold (default 3)",
    )
    client.add_argument("--name", help="name given at sign-on (default: the player's own)")
    client.add_argument("--baud", type=int, default=9600, help="line rate (default 9600)")
    client.add_argument(
        "--newline", choices=["crlf", "lf"], default="crlf", help="line end sent (default crlf)"
    )
    client.add_argument(
        "--log",
        type=Path,
        help="write the transcript (every line in and out, timestamped) to this file",
    )
    client.set_defaults(handler=_run_client)


def _run_client(args: argparse.Namespace) -> int:
    from serialref.client import make_builtin_player
    from serialref.client.engine import EnginePlayer
    from serialref.client.options import EngineSettings, parse_engine_options
    from serialref.client.players import Player
    from serialref.client.runner import run_client
    from serialref.client.startup import EngineProtocol
    from serialref.errors import ConfigError
    from serialref.wire.transport import PortSettings

    player: Player
    if args.engine is not None:
        player = EnginePlayer(
            EngineSettings.from_command_line(
                args.engine,
                protocol=None if args.protocol is None else EngineProtocol(args.protocol),
                options=parse_engine_options(args.option),
                nodes=args.nodes,
                depth=args.depth,
                movetime=None if args.movetime is None else args.movetime / 1000,
                draw_offer_below=args.draw_offer_below,
                draw_accept_below=args.draw_accept_below,
                resign_below=args.resign_below,
                resign_moves=args.resign_moves,
            )
        )
    else:
        engine_only = (
            "protocol",
            "option",
            "nodes",
            "depth",
            "movetime",
            "draw_offer_below",
            "draw_accept_below",
            "resign_below",
        )
        for name in engine_only:
            if getattr(args, name) not in (None, []):
                raise ConfigError(name.replace("_", "-"), "only applies to an --engine")
        player = make_builtin_player(args.player, args.seed, pace=args.pace / 1000)
    return run_client(
        args.port,
        player,
        settings=PortSettings(baudrate=args.baud),
        newline=b"\r\n" if args.newline == "crlf" else b"\n",
        name=args.name,
        log_path=args.log,
    )


# ------------------------------------------------------------------ config, ports


def _add_config_verbs(
    verbs: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    config = verbs.add_parser("config", parents=[common], help="work with configuration files")
    config_verbs = config.add_subparsers(title="config verbs", metavar="VERB", required=True)
    check = config_verbs.add_parser(
        "check", parents=[common], help="validate a configuration file without opening ports"
    )
    check.add_argument("file", type=Path, help="TOML configuration file")
    check.set_defaults(handler=_run_config_check)


def _run_config_check(args: argparse.Namespace) -> int:
    """What ``run --config FILE`` checks before it opens a port: the same file passes both.

    A file that cannot be read is an error like any other verb's (exit 5); a file
    that is read and refused is a rejected input (exit 1), named in the message.
    """
    from serialref.appliance.assembly import match_settings
    from serialref.appliance.config import check_config, missing_port_paths
    from serialref.errors import ConfigError

    try:
        config = check_config(args.file)
        match_settings(config)  # the openings book and the start position, as run reads them
    except ConfigError as exc:
        print(exc if exc.source else f"{args.file}: {exc}", file=sys.stderr)
        return EXIT_REJECTED
    missing = missing_port_paths(config)
    still = f"; the command line must still give {' and '.join(missing)}" if missing else ""
    print(f"{args.file}: ok{still}")
    return EXIT_OK


def _add_ports_verb(
    verbs: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    ports = verbs.add_parser(
        "ports", parents=[common], help="list serial ports and the udev rules that name them"
    )
    ports.set_defaults(handler=_run_ports)


def _run_ports(args: argparse.Namespace) -> int:
    from serialref.appliance.ports import format_ports, list_serial_ports

    print(format_ports(list_serial_ports()))
    return EXIT_OK
