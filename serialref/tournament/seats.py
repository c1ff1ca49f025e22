"""A player's seat on one board: where the referee talks to it, and who starts it.

A player with a ``seat`` is the operator's program on that port (a serial device, a
pyserial URL) or, for a ``listen://`` seat, connecting over TCP: the event only opens
the seat. A built-in player or an engine is started by the event for each of its
pairings, as a ``serialref client`` process on the far end of a virtual null-modem
cable of its own (the same code paths as a PC on a real cable), or connecting to its
TCP seat with ``socket://``.

Those processes must not outlive the event, even one killed with SIGKILL (it is then
resumed by running it again, which starts them afresh): each asks the kernel to end
it when the thread that started it goes away (:mod:`serialref.children`).
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from serialref.children import end_with_parent
from serialref.tournament.config import PlayerConfig
from serialref.tournament.tcpseats import TcpSeats
from serialref.wire.nullmodem import null_modem_cable

__all__ = ["Seat", "open_seat"]

_EXIT_WAIT = 1.0  # after ``disconnect`` a player leaves at once; this one did not hear it
_TERM_WAIT = 5.0


@dataclass
class Seat:
    """The referee's end of a player's line, and the player process to start once it is open."""

    url: str
    command: list[str] | None = None
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self) -> None:
        """Start the player (nothing for an operator's seat); the port must be open by now."""
        if self.command is not None:
            self.processes.append(subprocess.Popen(
                self.command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                preexec_fn=end_with_parent,  # noqa: PLW1509 - only prctl, before exec
            ))  # fmt: skip

    def exit_code(self) -> int | None:
        """The exit code of a started player that has ended, else None (running, or none)."""
        for process in self.processes:
            code = process.poll()
            if code is not None:
                return code
        return None

    def reap(self) -> None:
        """Players leave by themselves after ``disconnect``; one that did not hear it is ended.

        A match resumed with every game already played ends before its players sign
        on: they get no ``disconnect`` and are asked to sign off (SIGTERM), then killed.
        """
        for process in self.processes:
            try:
                process.wait(timeout=_EXIT_WAIT)
            except subprocess.TimeoutExpired:
                process.terminate()
                try:
                    process.wait(timeout=_TERM_WAIT)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def open_seat(stack: ExitStack, player: PlayerConfig, log: Path, tcp: TcpSeats) -> Seat:
    """The player's seat for one board; cables, TCP seats and processes end with ``stack``."""
    if player.listen is not None:
        url, far_end = stack.enter_context(tcp.seat(player)), tcp.connect_url(player)
    elif player.seat is not None:
        return Seat(player.seat)
    else:
        cable = stack.enter_context(null_modem_cable())
        url, far_end = cable.path_a, cable.path_b
    if not player.started_by_event:
        return Seat(url)
    # Started for this pairing alone: it ends at the pairing's ``disconnect``.
    command = [sys.executable, "-m", "serialref", "client", far_end, *player.client_arguments(),
               "--once", "--log", str(log), "--log-level", "warning"]  # fmt: skip
    seat = Seat(url, command)
    stack.callback(seat.reap)
    return seat
