"""``serialref ctl``: the supervisor's commands to a running referee, over its control socket."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from serialref.cli.base import EXIT_OK, EXIT_REJECTED, Verbs, common_options

__all__ = ["add_verbs", "status_lines"]

_COMMANDS = """commands:
  status                    the match, the game, the clocks and both lines
  pause | resume            stop and restart both clocks (the next respond waits)
  adjudicate RESULT [WHY]   end the game: 1-0, 0-1, 1/2-1/2 or * (Termination adjudication)
  restore A|B               send that player its game again (reset, inform, execute)
  restart-game              start the game again from its initial position
  abort [WHY]               end the match in order (disconnect to both players)
  add-time SIDE SECONDS     give white or black more time (negative takes some away)

For an event: status lists every board being played; the other commands go to the
board given with --board N (needed when several are being played); abort without
--board ends every board and the event, in order (run the event again to resume it).
"""


def add_verbs(verbs: Verbs) -> None:
    """``ctl``."""
    ctl = verbs.add_parser(
        "ctl",
        parents=[common_options("warning")],
        help="send a supervisor's command to a running referee (status, pause, adjudicate...)",
        description="Send one command to the referee listening on its control socket and "
        "print the match's status after it. Every command but status is journaled with "
        "your user id. Exit codes: 0 done, 1 refused by the referee (the reason is "
        "printed), 5 no referee could be reached.",
        epilog=_COMMANDS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ctl.add_argument(
        "--socket",
        type=Path,
        metavar="PATH",
        help="the referee's control socket (default: $RUNTIME_DIRECTORY/control.sock, "
        "else /run/serialref/control.sock)",
    )
    ctl.add_argument("--board", type=_board_number, metavar="N",
                     help="the board of an event the command is for (see status)")  # fmt: skip
    ctl.add_argument("--json", action="store_true", help="print the status as JSON")
    ctl.add_argument("command", metavar="COMMAND", help="see the list below")
    ctl.add_argument("args", nargs="*", metavar="ARG", help="the command's arguments")
    ctl.set_defaults(handler=_run_ctl)


def _run_ctl(args: argparse.Namespace) -> int:
    from serialref.control.client import default_socket, send_request
    from serialref.control.protocol import Request

    path = args.socket or default_socket()
    reply = send_request(path, Request(args.command, tuple(args.args), args.board))
    if not reply.ok:
        print(f"serialref: refused: {_safe(reply.error)}", file=sys.stderr)
        return EXIT_REJECTED
    status = reply.status or {}
    if args.json:
        print(json.dumps(status, indent=2, sort_keys=True))
    else:
        print("\n".join(status_lines(status)))
    return EXIT_OK


def _board_number(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"not a board number: {text!r}")
    return number


def status_lines(status: Mapping[str, Any]) -> list[str]:
    """The status as a person reads it: an event's boards, or the match, game and ports."""
    event = status.get("event")
    if isinstance(event, Mapping):
        boards = status.get("boards") or []
        lines = [f"event: {_safe(str(event.get('name')))}, {len(boards)} board(s) being played"]
        open_seats = event.get("open_seats") or []
        if open_seats:
            names = ", ".join(_safe(str(name)) for name in open_seats)
            lines.append(f"OPEN SEATS (no token, no address: whoever signs on with the name "
                         f"takes the seat): {names}")  # fmt: skip
        for board in boards:
            lines.append(f"board {board.get('board')}: {_safe(str(board.get('title')))}")
            lines.extend("  " + line for line in _match_lines(board))
        return lines
    if "board" in status:
        return [f"board {status.get('board')}: {_safe(str(status.get('title')))}",
                *_match_lines(status)]  # fmt: skip
    return _match_lines(status)


def _match_lines(status: Mapping[str, Any]) -> list[str]:
    """One match: its state and score, its game and clocks, each port and its last records."""
    match = status.get("match") or {}
    score = match.get("score") or [0, 0]
    lines = [
        f"match: {match.get('state')}, {match.get('games_done')} of {match.get('games')} games "
        f"played, score A {_points(score[0])} - B {_points(score[1])}"
        + (", PAUSED" if match.get("paused") else "")
    ]
    game = status.get("game")
    if game:
        clocks = game.get("clocks") or [None, None]
        running = game.get("running")
        lines.append(
            f"game {game.get('number')}: {game.get('state')}, ply {game.get('ply')}, "
            f"{game.get('turn')} to move; White (port {str(game.get('white_port')).upper()}) "
            f"{_clock(clocks[0])}, Black {_clock(clocks[1])}"
            + (f"; {running}'s clock runs" if running else "; no clock runs")
        )
        moves = game.get("moves") or []
        if moves:
            lines.append("moves: " + _safe(" ".join(str(move) for move in moves[-12:])))
    for port, seat in (status.get("ports") or {}).items():
        lines.append(f"port {str(port).upper()}: {_safe(str(seat.get('name')))} "
                     f"({seat.get('state')})")  # fmt: skip
        for line in (seat.get("recent") or [])[-3:]:
            arrow = "->" if line.get("to") else "<-"
            lines.append(f"  {arrow} {_safe(str(line.get('text')))}")
    return lines


def _points(value: float) -> str:
    return f"{value:g}"


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "untimed"
    from serialref.clock import format_clock

    sign = "-" if seconds < 0 else ""
    return sign + format_clock(abs(seconds))


def _safe(text: str) -> str:
    from serialref.observers.output import printable

    return printable(text)
