"""``serialref client``: a built-in player or a UCI/XBoard engine on the far end of a line."""

from __future__ import annotations

import argparse
from pathlib import Path

from serialref.cli.base import Verbs, common_options
from serialref.wire.link import NEWLINES

__all__ = ["add_verbs"]


def add_verbs(verbs: Verbs) -> None:
    """``client``."""
    client = verbs.add_parser(
        "client",
        parents=[common_options("info")],
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
    client.add_argument(
        "--token", help="the token a TCP seat (serialref event, listen://) asks of this player"
    )
    client.add_argument(
        "--once",
        action="store_true",
        help="end when the referee disconnects (default: stay on the line and sign on every "
        "5 s for the next match)",
    )
    client.add_argument("--baud", type=int, default=9600, help="line rate (default 9600)")
    client.add_argument(
        "--newline", choices=tuple(NEWLINES), default="crlf", help="line end sent (default crlf)"
    )
    client.add_argument(
        "--log",
        type=Path,
        help="write the transcript (every line in and out, timestamped) to this file",
    )
    client.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
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
        newline=NEWLINES[args.newline],
        name=args.name,
        log_path=args.log,
        token=args.token,
        once=args.once,
    )
