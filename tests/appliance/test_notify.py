"""serialref.appliance.notify against a fake NOTIFY_SOCKET: a unix datagram socket of ours."""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from serialref.appliance.notify import SystemdNotifier

RECEIVE_TIMEOUT = 5.0


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """A datagram socket standing in for systemd, and its NOTIFY_SOCKET value."""
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(RECEIVE_TIMEOUT)
        yield sock, str(path)


@pytest.fixture
def abstract_listener() -> Iterator[tuple[socket.socket, str]]:
    """The same on an abstract socket, as ``@name``."""
    name = f"serialref-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(RECEIVE_TIMEOUT)
        yield sock, "@" + name


@pytest.fixture
def notifier_for(listener: tuple[socket.socket, str]) -> Iterator[SystemdNotifier]:
    notifier = SystemdNotifier({"NOTIFY_SOCKET": listener[1]})
    yield notifier
    notifier.close()


def receive(sock: socket.socket) -> str:
    return sock.recv(4096).decode("utf-8")


def test_messages_arrive_as_sd_notify_assignments(
    listener: tuple[socket.socket, str], notifier_for: SystemdNotifier
) -> None:
    sock, _ = listener
    assert notifier_for.enabled
    notifier_for.ready()
    assert receive(sock) == "READY=1"
    notifier_for.status("game 2, move 31: Stockfish to move")
    assert receive(sock) == "STATUS=game 2, move 31: Stockfish to move"
    notifier_for.watchdog()
    assert receive(sock) == "WATCHDOG=1"
    notifier_for.stopping()
    assert receive(sock) == "STOPPING=1"


def test_abstract_socket_name(abstract_listener: tuple[socket.socket, str]) -> None:
    sock, address = abstract_listener
    notifier = SystemdNotifier({"NOTIFY_SOCKET": address})
    try:
        notifier.ready()
        assert receive(sock) == "READY=1"
    finally:
        notifier.close()


def test_status_cannot_inject_assignments(
    listener: tuple[socket.socket, str], notifier_for: SystemdNotifier
) -> None:
    notifier_for.status("Evil\nREADY=1\x1b[2J")
    assert receive(listener[0]) == "STATUS=Evil\\nREADY=1\\x1b[2J"


def test_without_notify_socket_everything_is_a_no_op() -> None:
    notifier = SystemdNotifier({})
    assert not notifier.enabled
    notifier.ready()
    notifier.status("x")
    notifier.watchdog()
    notifier.stopping()
    assert notifier.watchdog_interval() is None
    notifier.close()


def test_reads_the_process_environment_by_default(
    listener: tuple[socket.socket, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", listener[1])
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    notifier = SystemdNotifier()
    try:
        notifier.watchdog()
        assert receive(listener[0]) == "WATCHDOG=1"
        assert notifier.watchdog_interval() == 15.0
    finally:
        notifier.close()


def test_relative_notify_socket_is_ignored_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="serialref.appliance.notify"):
        notifier = SystemdNotifier({"NOTIFY_SOCKET": "run/notify"})
    assert not notifier.enabled
    assert "neither a path nor an abstract @name" in caplog.text


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"WATCHDOG_USEC": "30000000"}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid() + 1)}, None),
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "soon"}, None),
        ({}, None),
    ],
)
def test_watchdog_interval_is_half_the_timeout_for_this_process(
    environ: dict[str, str], expected: float | None
) -> None:
    assert SystemdNotifier(environ).watchdog_interval() == expected


def test_failure_is_logged_once_and_never_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    notifier = SystemdNotifier({"NOTIFY_SOCKET": str(tmp_path / "nobody-listens")})
    try:
        with caplog.at_level(logging.DEBUG, logger="serialref.appliance.notify"):
            notifier.ready()
            notifier.watchdog()
            notifier.watchdog()
    finally:
        notifier.close()
    levels = [record.levelno for record in caplog.records]
    assert levels == [logging.WARNING, logging.DEBUG, logging.DEBUG]
    assert "cannot notify systemd" in caplog.records[0].getMessage()


def test_a_listener_that_comes_back_is_reached_again(tmp_path: Path) -> None:
    path = tmp_path / "notify"
    notifier = SystemdNotifier({"NOTIFY_SOCKET": str(path)})
    try:
        notifier.watchdog()  # nobody listening yet: logged, not raised
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.bind(str(path))
            sock.settimeout(RECEIVE_TIMEOUT)
            notifier.watchdog()
            assert receive(sock) == "WATCHDOG=1"
    finally:
        notifier.close()
