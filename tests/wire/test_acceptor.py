"""serialref.wire.acceptor: out of descriptors it pauses and says so once; peers keep off the
referee's reserve."""

from __future__ import annotations

import errno
import logging
import socket
from collections.abc import Iterator

import pytest
from doubles import SteppedClock

from serialref.wire import acceptor as acceptor_module
from serialref.wire.acceptor import Acceptor, descriptor_ceiling


class FullTable:
    """A listener whose every accept() finds the descriptor table full."""

    def __init__(self) -> None:
        self.calls = 0

    def setblocking(self, flag: bool) -> None:
        pass

    def accept(self) -> tuple[socket.socket, object]:
        self.calls += 1
        raise OSError(errno.EMFILE, "Too many open files")


def test_a_full_descriptor_table_pauses_the_listener_and_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = SteppedClock(100.0)
    listener = FullTable()
    acceptor = Acceptor(listener, "seats", reserve=8, clock=clock)  # type: ignore[arg-type]
    caplog.set_level(logging.WARNING)
    assert acceptor.accept() is None
    assert acceptor.paused and acceptor.due() == 101.0
    for _ in range(100):  # a server that tries anyway, as a spinning loop would
        acceptor.accept()
    clock.now = 101.0
    assert not acceptor.paused
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings[0] == "seats: cannot accept connections: Too many open files; waiting 1 s"
    assert len(warnings) <= 5


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server


def test_a_peer_never_gets_a_descriptor_of_the_reserve(
    listener: socket.socket, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    acceptor = Acceptor(listener, "web", reserve=4)
    with socket.create_connection(listener.getsockname()) as first:
        accepted = _accepted(acceptor)
        assert accepted is not None
        connection, peer = accepted
        assert peer.startswith("127.0.0.1:") and not connection.getblocking()
        # The soft limit drops to just above that descriptor: the next is in the reserve.
        soft = connection.fileno() + 5
        monkeypatch.setattr(acceptor_module.resource, "getrlimit", lambda _: (soft, soft))
        assert descriptor_ceiling(4) == connection.fileno() + 1
        with socket.create_connection(listener.getsockname()) as second:
            assert _accepted(acceptor) is None
            second.settimeout(5.0)
            assert second.recv(1) == b""  # closed at once
        connection.close()
        first.close()
    assert "the descriptors left are for others" in caplog.text


def _accepted(acceptor: Acceptor) -> tuple[socket.socket, str] | None:
    """Wait for the connection to reach the backlog, then accept it."""
    import select

    select.select([acceptor._listener], [], [], 5.0)
    return acceptor.accept()
