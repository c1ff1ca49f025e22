"""RefereeDaemon's loop over pty pairs: polled ports, the wake-up pipe, signals, lost lines."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import chess
import pytest
from doubles import EventQueue

from serialref import records
from serialref.epd.writer import format_record
from serialref.happenings import PlayerSignedOff
from serialref.referee.daemon import PortPlan, RefereeDaemon
from serialref.referee.loop import LoopBoard
from serialref.referee.settings import MatchSettings
from serialref.testing import Peer, null_modem
from serialref.timecontrol import TimeControl
from serialref.wire.link import MalformedLineRead

RUN_TIMEOUT = 5.0
IDLE_SECONDS = 0.5
IDLE_CPU_BOUND = 0.05


@pytest.fixture
def two_ports() -> Iterator[tuple[list[PortPlan], list[Peer]]]:
    with ExitStack() as stack:
        (path_a, peer_a), (path_b, peer_b) = (stack.enter_context(null_modem()) for _ in "ab")
        yield [PortPlan("a", path_a), PortPlan("b", path_b)], [peer_a, peer_b]


def make_daemon(
    plans: list[PortPlan], on_ready: Callable[[], None], watcher: EventQueue | None = None
) -> RefereeDaemon:
    settings = MatchSettings(
        time_control=TimeControl.parse("60+1"), reset_delay=0.05, conclude_delay=0.05
    )
    return RefereeDaemon(settings, plans, observers=[watcher] if watcher else [], on_ready=on_ready)


class BackgroundRun:
    """``daemon.run()`` on its own thread; :meth:`join` fails the test after 5 s."""

    def __init__(self, daemon: RefereeDaemon) -> None:
        self._daemon = daemon
        self._result: list[bool] = []
        self.thread = threading.Thread(target=self._run, name="test-referee")
        self.thread.start()

    def _run(self) -> None:
        self._result.append(self._daemon.run())

    def join(self) -> bool | None:
        self.thread.join(RUN_TIMEOUT)
        if self.thread.is_alive():
            self._daemon.request_stop("the test gave up")
            self.thread.join()
            pytest.fail(f"the referee was still running after {RUN_TIMEOUT} s")
        return self._result[0] if self._result else None


def reader_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("serialref-reader-")]


def thread_cpu_seconds(thread: threading.Thread) -> float:
    """User + system CPU time of one thread, from /proc (clock ticks)."""
    fields = Path(f"/proc/self/task/{thread.native_id}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_pty_ports_are_read_on_the_referee_thread(
    two_ports: tuple[list[PortPlan], list[Peer]],
) -> None:
    plans, _ = two_ports
    seen: list[list[str]] = []

    def on_ready() -> None:
        seen.append(reader_threads())
        daemon.request_stop("test over")

    daemon = make_daemon(plans, on_ready)
    assert BackgroundRun(daemon).join() is False
    assert seen == [[]]


def test_ports_without_a_descriptor_get_a_reader_thread() -> None:
    seen: list[list[str]] = []

    def on_ready() -> None:
        seen.append(sorted(reader_threads()))
        daemon.request_stop("test over")

    daemon = make_daemon([PortPlan("a", "loop://"), PortPlan("b", "loop://")], on_ready)
    assert BackgroundRun(daemon).join() is False
    assert seen == [["serialref-reader-a", "serialref-reader-b"]]
    assert reader_threads() == []


def test_a_stop_requested_before_run_ends_the_match_at_once(
    two_ports: tuple[list[PortPlan], list[Peer]], caplog: pytest.LogCaptureFixture
) -> None:
    plans, _ = two_ports
    daemon = make_daemon(plans, lambda: None)
    daemon.request_stop("stopped early")
    assert BackgroundRun(daemon).join() is False
    assert "stopping: stopped early" in caplog.text


def test_a_flood_of_stop_requests_never_blocks(
    two_ports: tuple[list[PortPlan], list[Peer]],
) -> None:
    """More requests than the wake-up pipe holds: a full pipe is skipped, not waited on."""
    plans, _ = two_ports

    def on_ready() -> None:
        for _ in range(100_000):  # a pipe holds 64 KiB
            daemon.request_stop("flood")

    daemon = make_daemon(plans, on_ready)
    assert BackgroundRun(daemon).join() is False


def test_a_stop_from_another_thread_wakes_the_waiting_referee(
    two_ports: tuple[list[PortPlan], list[Peer]], caplog: pytest.LogCaptureFixture
) -> None:
    plans, _ = two_ports
    ready = threading.Event()
    daemon = make_daemon(plans, ready.set)
    running = BackgroundRun(daemon)
    assert ready.wait(RUN_TIMEOUT)
    daemon.request_stop("from a supervisor")
    assert running.join() is False
    assert "stopping: from a supervisor" in caplog.text


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="signal handlers are installed on the main thread only",
)
def test_sigterm_wakes_the_referee_and_stops_the_match(
    two_ports: tuple[list[PortPlan], list[Peer]], caplog: pytest.LogCaptureFixture
) -> None:
    plans, _ = two_ports
    ready = threading.Event()
    previous = signal.getsignal(signal.SIGTERM)

    def send_sigterm() -> None:
        if ready.wait(RUN_TIMEOUT):  # the referee is in its loop, its handler installed
            os.kill(os.getpid(), signal.SIGTERM)

    killer = threading.Thread(target=send_sigterm, name="test-killer")
    killer.start()
    try:
        assert make_daemon(plans, ready.set).run() is False
    finally:
        ready.set()
        killer.join()
    assert "stopping: received SIGTERM" in caplog.text
    assert signal.getsignal(signal.SIGTERM) is previous


def test_a_hung_up_port_is_no_longer_waited_on(
    two_ports: tuple[list[PortPlan], list[Peer]],
) -> None:
    """After the hang-up the port's descriptor must leave the select, or the loop would spin."""
    plans, (peer_a, peer_b) = two_ports
    watcher = EventQueue()
    ready = threading.Event()
    daemon = make_daemon(plans, ready.set, watcher)
    running = BackgroundRun(daemon)
    assert ready.wait(RUN_TIMEOUT)
    for peer, name in ((peer_a, "Alpha"), (peer_b, "Beta")):
        peer.send_line(format_record(records.sign_on(chess.Board(), name)))
        peer.expect("reset")
    peer_b.hang_up()
    signed_off = watcher.wait_for(PlayerSignedOff)
    assert isinstance(signed_off, PlayerSignedOff)
    assert (signed_off.port, "line lost" in signed_off.reason) == ("b", True)
    before = thread_cpu_seconds(running.thread)
    threading.Event().wait(IDLE_SECONDS)  # measuring idleness: there is no event to await
    assert thread_cpu_seconds(running.thread) - before <= IDLE_CPU_BOUND
    daemon.request_stop("test over")
    assert running.join() is False


def test_deadlines_are_kept_while_lines_keep_coming(
    two_ports: tuple[list[PortPlan], list[Peer]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Line noise before every deadline must not hold off a reset delay (or a flag)."""
    plans, (peer_a, peer_b) = two_ports
    ready = threading.Event()
    daemon = make_daemon(plans, ready.set)
    wait = daemon._loop.wait
    board = daemon.board

    def never_quiet(timeout: float | None) -> list[tuple[LoopBoard | None, object]]:
        noise = MalformedLineRead("b", "line noise", "~", time.monotonic())
        return [*wait(min(timeout or 0.001, 0.001)), (board, noise)]

    monkeypatch.setattr(daemon._loop, "wait", never_quiet)
    running = BackgroundRun(daemon)
    assert ready.wait(RUN_TIMEOUT)
    for peer, name in ((peer_a, "Alpha"), (peer_b, "Beta")):
        peer.send_line(format_record(records.sign_on(chess.Board(), name)))
        peer.expect("reset")
    peer_a.expect("inform")  # sent when the reset delay has passed
    daemon.request_stop("test over")
    assert running.join() is False
