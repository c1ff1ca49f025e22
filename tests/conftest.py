"""Shared fixtures: null-modem ports, real-cable mode, and a guard against leaked resources.

Run the serial tests over a real null-modem cable with::

    pytest --port-a /dev/ttyUSB0 --port-b /dev/ttyUSB1

The code under test then gets port A and the test's :class:`Peer` drives port B; tests
that need to hang the line up are skipped, since software cannot unplug a cable.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import serial
from doubles import ReadExactly

from serialref import testing
from serialref.wire import nullmodem
from serialref.wire.transport import SerialTransport

pytest_plugins = ["pytester", "standby_peers"]  # the standby's ``log``

THREAD_END_GRACE = 2.0
"""Seconds a thread that is already ending may take before it counts as leaked."""

READ_TIMEOUT = 5.0
"""How long ``read_exactly`` waits for the bytes a test expects before it fails."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("serialref", "serial ports")
    group.addoption("--port-a", metavar="PATH", help="real port for the code under test")
    group.addoption("--port-b", metavar="PATH", help="real port for the peer (cabled to A)")


def pytest_configure(config: pytest.Config) -> None:
    if bool(config.getoption("--port-a")) != bool(config.getoption("--port-b")):
        raise pytest.UsageError("--port-a and --port-b go together: one cable, two ends")


@pytest.fixture
def null_modem(request: pytest.FixtureRequest) -> Iterator[tuple[str, testing.Peer]]:
    """(port path for the code under test, Peer on the other end): a pty pair or a real cable."""
    port_a: str | None = request.config.getoption("--port-a")
    port_b: str | None = request.config.getoption("--port-b")
    if port_a and port_b:
        peer = testing.Peer.from_serial_port(serial.serial_for_url(port_b, exclusive=True))
        try:
            yield port_a, peer
        finally:
            peer.close()
    else:
        with testing.null_modem() as pair:
            yield pair


@pytest.fixture
def null_modem_cable() -> Iterator[nullmodem.NullModemCable]:
    """Two pty paths joined like a crossed cable, for two programs (referee and client)."""
    with nullmodem.null_modem_cable() as cable:
        yield cable


@pytest.fixture
def read_exactly() -> ReadExactly:
    """``read_exactly(transport, size)``: read until ``size`` bytes came, failing after 5 s.

    ``SerialTransport.read`` blocks for good by design; a watchdog cancels it so that a
    test expecting more bytes than arrive fails instead of hanging the suite.
    """

    def read(transport: SerialTransport, size: int) -> bytes:
        received = b""
        watchdog = threading.Timer(READ_TIMEOUT, transport.cancel_read)
        watchdog.start()
        try:
            while len(received) < size:
                chunk = transport.read()
                if not chunk:
                    pytest.fail(f"expected {size} bytes within {READ_TIMEOUT} s, got {received!r}")
                received += chunk
        finally:
            watchdog.cancel()
            watchdog.join()
        return received

    return read


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files ``os.fsync`` or ``os.fdatasync`` is called on from now on, in order
    (each sync is still done).

    Durability is a promise about *when* a recorder syncs, which no file's content
    shows: the journal and the PGN tests count the calls instead.
    """
    synced: list[str] = []
    for name in ("fsync", "fdatasync"):
        real = getattr(os, name)

        def counting(fd: int, real: Callable[[int], None] = real) -> None:
            synced.append(os.readlink(f"/proc/self/fd/{fd}"))
            real(fd)

        monkeypatch.setattr(os, name, counting)
    return synced


@pytest.fixture(autouse=True)
def _no_leaks() -> Iterator[None]:
    """Fail a test that leaves a thread, a file descriptor or a child process behind."""
    threads_before = set(threading.enumerate())
    fds_before = _open_fds()
    children_before = _children()
    yield
    leaked_threads = _threads_still_running(threads_before)
    leaked_fds = {fd: target for fd, target in _open_fds().items() if fds_before.get(fd) != target}
    leaked_children = _children() - children_before
    problems = []
    if leaked_threads:
        problems.append(f"threads {sorted(thread.name for thread in leaked_threads)}")
    if leaked_fds:
        problems.append(f"file descriptors {leaked_fds}")
    if leaked_children:
        problems.append(f"child processes {sorted(leaked_children)}")
    if problems:
        pytest.fail("test leaked " + "; ".join(problems), pytrace=False)


def _threads_still_running(before: set[threading.Thread]) -> list[threading.Thread]:
    """New threads that do not end within the grace period (joined, not slept on)."""
    deadline = time.monotonic() + THREAD_END_GRACE
    new_threads = [thread for thread in threading.enumerate() if thread not in before]
    for thread in new_threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [thread for thread in new_threads if thread.is_alive()]


def _open_fds() -> dict[int, str]:
    """Open descriptors and what they point to; the one used to list them is gone by then."""
    fds = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            fds[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except FileNotFoundError:
            continue
    return fds


def _children() -> set[int]:
    """Pids whose parent is this process, zombies included (they are leaks too).

    ``/proc/<pid>/task/*/children`` needs a kernel option that is not always on,
    so the parent pid is read from every ``/proc/<pid>/stat`` instead.
    """
    me = os.getpid()
    children = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # the process ended while we looked
            continue
        # The command name (field 2) may hold blanks and parentheses: split after it.
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == me:
            children.add(int(entry.name))
    return children
