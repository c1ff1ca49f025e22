"""``serialref`` that dies by SIGKILL the moment its N-th relayed move has been written.

    python killed_after_relay.py N run PORT_A PORT_B [options]

A crash at the worst moment for the write-ahead rule (PROTOCOL.md 7): the ``respond``
that tells the opponent of the N-th move has just been handed to the port, and the
process gets no chance to do anything after it. No signal sent from outside could
land between those two instructions every time.
"""

from __future__ import annotations

import os
import signal
import sys

from serialref.__main__ import run
from serialref.wire.transport import SerialTransport

RELAY = b"refcom respond; sm "
"""A ``respond`` that carries the opponent's move (the first of a game carries none)."""


def kill_after_relay(relays: int) -> None:
    """Make the ``relays``-th respond written to a port the process's last act."""
    write_nowait = SerialTransport.write_nowait
    written = 0

    def write_then_die(self: SerialTransport, data: bytes) -> int:
        nonlocal written
        taken = write_nowait(self, data)
        if RELAY in data:
            written += 1
            if written == relays:
                os.kill(os.getpid(), signal.SIGKILL)
        return taken

    SerialTransport.write_nowait = write_then_die  # type: ignore[method-assign]


if __name__ == "__main__":
    kill_after_relay(int(sys.argv[1]))
    sys.argv = ["serialref", *sys.argv[2:]]
    sys.exit(run())
