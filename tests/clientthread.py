"""``run_client`` on a thread of its own, for the tests that drive a client in-process.

:class:`ClientThread` runs it; :func:`client_on` runs a player on a port until the test
ends (a ``disconnect`` from the test's end of the line ends a client still running);
:func:`read_request` reads what the client sends there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import chess

from serialref import records
from serialref.client.players import Player
from serialref.client.runner import run_client
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.testing import Peer

TIMEOUT = 5.0


class ClientThread:
    """``run_client`` on a thread; its exit code (or its exception) once it has returned."""

    def __init__(self, run: Callable[[], int]) -> None:
        self.exit_code: int | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(run,), name="test-client")

    def _run(self, run: Callable[[], int]) -> None:
        try:
            self.exit_code = run()
        except BaseException as exc:
            self.error = exc

    def start(self) -> None:
        self._thread.start()

    def result(self, timeout: float = TIMEOUT) -> int:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "run_client did not return"
        if self.error is not None:
            raise self.error
        assert self.exit_code is not None
        return self.exit_code

    @property
    def running(self) -> bool:
        return self._thread.is_alive()


@contextmanager
def client_on(
    port: str, player: Player, peer: Peer | None = None, **options: object
) -> Iterator[ClientThread]:
    """``player`` on ``port`` until the referee disconnects it (``once``); whatever the test
    does, a client still running is sent ``disconnect`` through ``peer`` and joined."""

    def run() -> int:
        return run_client(port, player, once=True, **options)  # type: ignore[arg-type]

    client = ClientThread(run)
    client.start()
    try:
        yield client
    finally:
        if peer is not None and client.running:
            peer.send_line(format_record(records.disconnect(chess.Board())))
        client.result()


def read_request(peer: Peer) -> EpdRecord:
    """The next record the client sends, which must be a ``refreq``."""
    record = parse_record(peer.read_line(TIMEOUT))
    assert "refreq" in record, record
    return record
