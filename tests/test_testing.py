"""The null-modem harness (serialref.testing) and the leak guard in conftest.py."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
import unittest
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import chess
import pytest
import serial

from serialref.errors import ConfigError, LineLostError, ProgrammingError
from serialref.testing import NullModemCable, Peer, null_modem, null_modem_cable, quiet_game
from serialref.wire.transport import SerialTransport

if TYPE_CHECKING:
    from conftest import ReadExactly

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cable_ends(
    null_modem_cable: NullModemCable,
) -> Iterator[tuple[NullModemCable, SerialTransport, SerialTransport]]:
    with (
        SerialTransport.open(null_modem_cable.path_a) as side_a,
        SerialTransport.open(null_modem_cable.path_b) as side_b,
    ):
        yield null_modem_cable, side_a, side_b


# --- null_modem and Peer -----------------------------------------------------------------


def test_null_modem_gives_a_tty_path_that_disappears_afterwards() -> None:
    with null_modem() as (path, peer):
        assert isinstance(peer, Peer)
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        try:
            assert os.isatty(fd)
        finally:
            os.close(fd)
    assert not os.path.exists(path)


def test_both_directions_are_raw(null_modem: tuple[str, Peer]) -> None:
    """No echo, no CR/LF translation: the bytes that go in are the bytes that come out."""
    path, peer = null_modem
    with serial.serial_for_url(path, timeout=5) as port:
        peer.send_bytes(b"a\rb\nc\r\n\x03\x1a")
        assert port.read(9) == b"a\rb\nc\r\n\x03\x1a"
        port.write(b"x\ry\r\n")
        port.flush()
        assert peer.read_line() == "x"
        assert peer.read_line() == "y"
        port.timeout = 0.2
        assert port.read(1) == b""  # nothing the peer sent was echoed back


def test_read_line_accepts_every_line_end_and_skips_empty_lines(
    null_modem: tuple[str, Peer],
) -> None:
    path, peer = null_modem
    with SerialTransport.open(path) as transport:
        transport.write(b"\r\none\rtwo\nthree\r\n\r\n\nfour\r")
        assert [peer.read_line() for _ in range(4)] == ["one", "two", "three", "four"]


def test_send_line_uses_the_given_newline(
    null_modem: tuple[str, Peer], read_exactly: ReadExactly
) -> None:
    path, peer = null_modem
    with SerialTransport.open(path) as transport:
        peer.send_line("refreq sign_on")
        peer.send_line("refreq sign_off", newline=b"\n")
        assert read_exactly(transport, 32) == b"refreq sign_on\r\nrefreq sign_off\n"


def test_read_line_timeout_names_what_arrived(null_modem: tuple[str, Peer]) -> None:
    path, peer = null_modem
    with SerialTransport.open(path) as transport:
        transport.write(b"done\r\nrefcom res")
        assert peer.read_line() == "done"
        with pytest.raises(TimeoutError, match="refcom res"):
            peer.read_line(timeout=0.2)


def test_read_line_timeout_when_nothing_arrived(null_modem: tuple[str, Peer]) -> None:
    _, peer = null_modem
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="nothing"):
        peer.read_line(timeout=0.1)
    assert time.monotonic() - started >= 0.1


def test_read_line_fails_on_a_malformed_line(null_modem: tuple[str, Peer]) -> None:
    path, peer = null_modem
    with SerialTransport.open(path) as transport:
        transport.write(b"\x1b[2J\r\n")
        with pytest.raises(AssertionError, match=r"not printable.*\\x1b\[2J"):
            peer.read_line()


def test_peer_hang_up_is_seen_by_the_port_user(
    null_modem: tuple[str, Peer], read_exactly: ReadExactly
) -> None:
    path, peer = null_modem
    with SerialTransport.open(path) as transport:
        peer.hang_up()
        with pytest.raises(LineLostError):
            read_exactly(transport, 1)
    with pytest.raises(LineLostError, match="hung up"):
        peer.send_line("too late")


def test_peer_over_a_pyserial_port(null_modem: tuple[str, Peer]) -> None:
    """The real-cable mode of conftest: a Peer driving a pyserial port instead of a pty master."""
    path, far_end = null_modem
    peer = Peer.from_serial_port(serial.serial_for_url(path, exclusive=True))
    try:
        far_end.send_line("refcom reset")
        assert peer.read_line() == "refcom reset"
        peer.send_line("refreq sign_on")
        assert far_end.read_line() == "refreq sign_on"
        with pytest.raises(TimeoutError):
            peer.read_line(timeout=0.1)
        with pytest.raises(unittest.SkipTest):
            peer.hang_up()
    finally:
        peer.close()
        peer.close()


def test_expect_checks_the_refcom_kind(null_modem: tuple[str, Peer]) -> None:
    path, peer = null_modem
    start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
    with SerialTransport.open(path) as transport:
        transport.write(f"{start} refcom reset;\r\n{start} refcom inform;\r\n".encode())
        record = peer.expect("reset")
        assert record.identifier("refcom") == "reset"
        with pytest.raises(AssertionError, match=r"expected refcom respond.*refcom inform"):
            peer.expect("respond")
        transport.write(b"not epd at all\r\n")
        with pytest.raises(AssertionError, match="not epd at all"):
            peer.expect("reset")


# --- null_modem_cable ----------------------------------------------------------------------


def test_cable_relays_both_ways(
    cable_ends: tuple[NullModemCable, SerialTransport, SerialTransport],
    read_exactly: ReadExactly,
) -> None:
    _, side_a, side_b = cable_ends
    side_a.write(b"refcom reset\r\n")
    assert read_exactly(side_b, 14) == b"refcom reset\r\n"
    side_b.write(b"refreq sign_on\r\n")
    assert read_exactly(side_a, 16) == b"refreq sign_on\r\n"
    payload = bytes(range(256)) * 64  # more than the relay buffers at once, every byte value
    side_a.write(payload)
    assert read_exactly(side_b, len(payload)) == payload


def test_cable_injects_noise_toward_one_side(
    cable_ends: tuple[NullModemCable, SerialTransport, SerialTransport],
    read_exactly: ReadExactly,
) -> None:
    cable, side_a, side_b = cable_ends
    cable.inject_noise("a", b"\x00\xff\x1b")
    assert read_exactly(side_a, 3) == b"\x00\xff\x1b"
    side_a.write(b"ok\n")  # the other direction carried none of it
    assert read_exactly(side_b, 3) == b"ok\n"


def test_cable_hang_up_reaches_one_side_only(
    cable_ends: tuple[NullModemCable, SerialTransport, SerialTransport],
    read_exactly: ReadExactly,
) -> None:
    cable, side_a, side_b = cable_ends
    cable.hang_up("a")
    with pytest.raises(LineLostError):
        read_exactly(side_a, 1)
    side_b.write(b"into the void\r\n")  # B's line is still up; its bytes go nowhere
    cable.inject_noise("a", b"\x00" * 10_000)  # noise toward a dead side is dropped
    cable.inject_noise("b", b"alive")
    assert read_exactly(side_b, 5) == b"alive"


def test_cable_keeps_the_line_while_a_program_reopens_its_port(
    null_modem_cable: NullModemCable,
    read_exactly: ReadExactly,
) -> None:
    with SerialTransport.open(null_modem_cable.path_b) as side_b:
        for attempt in range(2):
            with SerialTransport.open(null_modem_cable.path_a) as side_a:
                side_b.write(f"hello {attempt}\n".encode())
                assert read_exactly(side_a, 8) == f"hello {attempt}\n".encode()


def test_cable_joins_two_separate_programs(
    null_modem_cable: NullModemCable, read_exactly: ReadExactly
) -> None:
    program = textwrap.dedent(
        """
        import sys, serial
        with serial.serial_for_url(sys.argv[1], exclusive=True, timeout=10) as port:
            port.write(b"refreq sign_on\\r\\n")
            port.flush()
            sys.stdout.write(port.readline().decode("ascii"))
        """
    )
    with SerialTransport.open(null_modem_cable.path_a) as referee:
        player = subprocess.Popen(
            [sys.executable, "-c", program, null_modem_cable.path_b],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert read_exactly(referee, 16) == b"refreq sign_on\r\n"
            referee.write(b"refcom reset\n")
            output, _ = player.communicate(timeout=10)
        finally:
            if player.poll() is None:
                player.kill()
                player.communicate()
    assert output == "refcom reset\n"
    assert player.returncode == 0


def test_cable_throttles_to_its_baud_rate(read_exactly: ReadExactly) -> None:
    with (
        null_modem_cable(baudrate=1200) as cable,
        SerialTransport.open(cable.path_a) as side_a,
        SerialTransport.open(cable.path_b) as side_b,
    ):
        started = time.monotonic()
        side_a.write(b"x" * 100)
        assert read_exactly(side_b, 100) == b"x" * 100
        elapsed = time.monotonic() - started
    assert elapsed >= 0.8  # 100 characters of 10 bits at 1200 baud: 0.833 s


def test_cable_refuses_a_side_it_does_not_have(null_modem_cable: NullModemCable) -> None:
    with pytest.raises(ConfigError, match="'c'"):
        null_modem_cable.hang_up("c")
    with pytest.raises(ConfigError, match="'B'"):
        null_modem_cable.inject_noise("B", b"x")


def test_closed_cable_refuses_requests() -> None:
    with null_modem_cable() as cable:
        made = os.stat(cable.path_a).st_ctime_ns
    cable.close()
    # The pty is gone; another program on the machine may have been given its number since.
    assert not os.path.exists(cable.path_a) or os.stat(cable.path_a).st_ctime_ns != made
    with pytest.raises(ProgrammingError, match="closed"):
        cable.inject_noise("a", b"x")


def test_cable_refuses_a_bad_baud_rate() -> None:
    with pytest.raises(ConfigError, match="baudrate"), null_modem_cable(baudrate=0):
        pass


def test_idle_relay_uses_no_cpu(null_modem_cable: NullModemCable) -> None:
    relay = next(t for t in threading.enumerate() if t.name == "serialref-null-modem")
    stat = Path(f"/proc/self/task/{relay.native_id}/stat")

    def cpu_ticks() -> int:
        fields = stat.read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    before = cpu_ticks()
    threading.Event().wait(0.5)  # measuring idleness: there is no event to await
    assert (cpu_ticks() - before) / os.sysconf("SC_CLK_TCK") <= 0.05


# --- the leak guard in conftest.py ---------------------------------------------------------


def test_leak_guard_fails_tests_that_leak(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text())
    pytester.makepyfile(
        test_leaky="""
        import os, subprocess, sys, threading

        STOP = threading.Event()

        def test_clean():
            done = threading.Thread(target=STOP.wait, args=(0.1,))
            done.start()  # still running at the end, but ending within the grace period

        def test_thread():
            threading.Thread(target=STOP.wait, name="leaked-thread", daemon=True).start()

        def test_fd():
            os.open(os.devnull, os.O_RDONLY)

        def test_child():
            subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, errors=3)
    output = result.stdout.str()
    assert "test_thread - Failed: test leaked threads ['leaked-thread']" in output
    assert "test_fd - Failed: test leaked file descriptors {" in output
    assert "'/dev/null'}" in output
    assert "test_child - Failed: test leaked file descriptors" in output  # the stdin pipe
    assert "child processes [" in output


def test_a_quiet_game_is_legal_and_never_ends_early() -> None:
    line = quiet_game(60, seed=3)
    board = chess.Board()
    for uci in line:
        assert not board.is_game_over(claim_draw=True)
        board.push_uci(uci)
    assert len(line) == 60 and quiet_game(60, seed=3) == line
