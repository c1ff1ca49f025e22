"""The supervisor's commands as the referee carries them out (EPD spec 3.2, tasks 9 and 11).

A command arrives as a :class:`~serialref.happenings.SupervisorCommand` (from the control
socket, on the referee's thread). It is checked first: one that cannot apply now is a
:class:`~serialref.errors.CommandError` and changes nothing, not even the journal. One
that can is published (so the journal holds it, with who gave it, before its effects)
and then acted on. A restart reads the same entries back
(:mod:`serialref.referee.resume`): a pause, time added and a game started again
survive it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import chess

from serialref.errors import CommandError
from serialref.happenings import SupervisorCommand
from serialref.referee.game.machine import GameReferee
from serialref.referee.match import MatchReferee
from serialref.referee.rulings import Termination, Verdict
from serialref.result import Result

__all__ = ["COMMANDS", "SIDES", "carry_out"]

SIDES = {"white": chess.WHITE, "w": chess.WHITE, "black": chess.BLACK, "b": chess.BLACK}
"""How a side is named in ``add-time``."""

_Action = Callable[[], object]


def carry_out(match: MatchReferee, command: SupervisorCommand) -> None:
    """Check ``command``, journal it (with the game it applies to), then act on it."""
    check = COMMANDS.get(command.command)
    if check is None:
        raise CommandError(f"unknown command {command.command!r}; known: {', '.join(COMMANDS)}")
    if match.done:
        raise CommandError("the match is over")
    act = check(match, command.args)
    game = match.game.number if match.game is not None else None
    match.publisher.publish(dataclasses.replace(command, game=game))
    act()


def _pause(match: MatchReferee, args: Sequence[str]) -> _Action:
    _no_arguments("pause", args)
    if not match.may_pause():
        raise CommandError("the match is paused already")
    return match.pause


def _unpause(match: MatchReferee, args: Sequence[str]) -> _Action:
    """``resume`` as the supervisor types it and the journal keeps it: the clocks run again.

    The code calls it an unpause: what resumes in the code is a match continued from its
    journal (:mod:`serialref.referee.resume`).
    """
    _no_arguments("resume", args)
    if not match.may_unpause():
        raise CommandError("the match is not paused")
    return match.unpause


def _adjudicate(match: MatchReferee, args: Sequence[str]) -> _Action:
    if not args:
        raise CommandError("adjudicate needs a RESULT: 1-0, 0-1, 1/2-1/2 or *")
    try:
        result = Result(args[0])
    except ValueError:
        raise CommandError(
            f"adjudicate: {args[0]!r} is not a result; use 1-0, 0-1, 1/2-1/2 or *"
        ) from None
    game = _begun_game(match, "adjudicate")
    reason = " ".join(args[1:]) or "adjudicated by the supervisor"
    verdict = Verdict(result, Termination.ADJUDICATION, reason)

    def act() -> None:
        game.end(verdict, at=match.host.now())

    return act


def _restore(match: MatchReferee, args: Sequence[str]) -> _Action:
    if len(args) != 1 or args[0].lower() not in match.sessions:
        raise CommandError(f"restore needs one port, A or B, not {' '.join(args)!r}")
    port = args[0].lower()
    game = _current_game(match, "restore")
    if not game.may_restore(port):
        raise CommandError(f"the player on port {port.upper()} is not signed on")
    return lambda: game.restore(port)  # as if it had signed on again


def _restart_game(match: MatchReferee, args: Sequence[str]) -> _Action:
    _no_arguments("restart-game", args)
    game = _current_game(match, "restart-game")

    def act() -> None:
        game.restart(at=match.host.now())

    return act


def _abort(match: MatchReferee, args: Sequence[str]) -> _Action:
    reason = " ".join(args) or "aborted by the supervisor"
    return lambda: match.stop(reason)


def _add_time(match: MatchReferee, args: Sequence[str]) -> _Action:
    if len(args) != 2 or args[0].lower() not in SIDES:
        raise CommandError(f"add-time needs SIDE (white or black) and SECONDS, not {args!r}")
    try:
        seconds = float(args[1])
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds == 0:
        raise CommandError(f"add-time: {args[1]!r} is not a number of seconds other than 0")
    game = _current_game(match, "add-time")
    side = SIDES[args[0].lower()]
    return lambda: game.sheet.chess_clock.add_time(side, seconds)


def _no_arguments(name: str, args: Sequence[str]) -> None:
    if args:
        raise CommandError(f"{name} takes no arguments, not {' '.join(args)!r}")


def _current_game(match: MatchReferee, name: str) -> GameReferee:
    if match.game is None:
        raise CommandError(f"{name}: no game is under way")
    return match.game


def _begun_game(match: MatchReferee, name: str) -> GameReferee:
    game = _current_game(match, name)
    if not game.may_end():
        raise CommandError(f"{name}: game {game.number} has not begun yet")
    return game


COMMANDS: dict[str, Callable[[MatchReferee, Sequence[str]], _Action]] = {
    "pause": _pause,
    "resume": _unpause,
    "adjudicate": _adjudicate,
    "restore": _restore,
    "restart-game": _restart_game,
    "abort": _abort,
    "add-time": _add_time,
}
"""Every command by its name; each checks its arguments and returns what it does."""
