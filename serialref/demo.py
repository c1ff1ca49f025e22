"""``serialref demo``: a whole match on one machine, no hardware needed.

Two virtual null-modem cables (pseudo-terminal pairs joined by a relay), a
built-in player as a separate ``serialref client`` process on the far end of
each, and the referee on the near ends: the same code paths as two PCs on real
cables.

Starting two Python processes takes a moment before anything can be shown, so
the demo says what it is doing until the players sign on; the players log
only warnings, which would otherwise tear the live board apart.
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from serialref.appliance.assembly import run_referee
from serialref.appliance.config import load_config
from serialref.errors import SerialrefError
from serialref.wire.nullmodem import null_modem_cable

__all__ = ["DemoResult", "run_demo"]

_PLAYERS = (("greedy", 1), ("random", 2))
_PLAYER_EXIT_WAIT = 10.0
_PACE_MS = "30"  # per move: games take seconds, and the board can be followed


@dataclass(frozen=True, slots=True)
class DemoResult:
    """Where the demo's records went and whether the match completed."""

    complete: bool
    pgn: Path
    journal: Path
    player_logs: tuple[Path, ...]


def run_demo(
    directory: Path,
    *,
    games: int = 2,
    tc: str = "60+1",
    variant: str = "standard",
    console: TextIO,
) -> DemoResult:
    """Play ``games`` games between a greedy and a random player; records go to ``directory``.

    ``variant`` names the rules (``crazyhouse`` shows the pieces in hand below the board).
    """
    pgn = directory / "demo.pgn"
    journal = directory / "journal.jsonl"
    logs = tuple(directory / f"player-{port}.log" for port in "ab")
    # Checked before anything is opened, started or removed (a variant whose library is
    # not installed included); the records' directory is made next, the ports are the
    # cables', known once they are open.
    config = load_config(
        None,
        {
            "games": games,
            "tc": tc,
            "variant": variant,
            "event": "serialref demo",
            "reset_delay": 0.5,
            "conclude_delay": 0.5,
        },
    )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SerialrefError(f"cannot create {str(directory)!r}: {exc.strerror}") from exc
    for stale in (pgn, journal, *logs):
        # Each demo is a new match: an old journal would otherwise be resumed.
        stale.unlink(missing_ok=True)
    with ExitStack() as stack:
        _say(console, "opening two virtual null-modem cables")
        cables = [stack.enter_context(null_modem_cable()) for _ in _PLAYERS]
        players: list[subprocess.Popen[bytes]] = []
        stack.callback(_reap, players)

        def start_players() -> None:
            kinds = " and ".join(f"{kind} (port {port})" for (kind, _), port in zip(
                _PLAYERS, "ab", strict=True))  # fmt: skip
            _say(console, f"starting the players, {kinds}, as serialref client processes")
            for cable, (kind, seed), log in zip(cables, _PLAYERS, logs, strict=True):
                command = [sys.executable, "-m", "serialref", "client", cable.path_b,
                           "--player", kind, "--seed", str(seed), "--pace", _PACE_MS, "--once",
                           "--log", str(log), "--log-level", "warning"]  # fmt: skip
                players.append(subprocess.Popen(command, stdin=subprocess.DEVNULL))
            _say(console, "waiting for both players to sign on")

        config = replace(
            config,
            pgn=pgn,
            journal=journal,
            port_a=replace(config.port_a, path=cables[0].path_a),
            port_b=replace(config.port_b, path=cables[1].path_a),
        )
        complete = run_referee(
            config, console=console, progress=console, on_ready=start_players
        )
    return DemoResult(complete=complete, pgn=pgn, journal=journal, player_logs=logs)


def _say(console: TextIO, text: str) -> None:
    console.write(f"{text} ...\n")
    console.flush()


def _reap(players: list[subprocess.Popen[bytes]]) -> None:
    """Players leave by themselves after ``disconnect``; a stuck one is ended."""
    for process in players:
        try:
            process.wait(timeout=_PLAYER_EXIT_WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
