"""Null-modem cables in software (serialref.wire.nullmodem): relayed, paced, hung up, closed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import processes
import pytest

from serialref.errors import ConfigError, LineLostError, ProgrammingError
from serialref.wire.nullmodem import NullModemCable, null_modem_cable
from serialref.wire.transport import SerialTransport

if TYPE_CHECKING:
    from doubles import ReadExactly


@pytest.fixture
def cable_ends(
    null_modem_cable: NullModemCable,
) -> Iterator[tuple[NullModemCable, SerialTransport, SerialTransport]]:
    with (
        SerialTransport.open(null_modem_cable.path_a) as side_a,
        SerialTransport.open(null_modem_cable.path_b) as side_b,
    ):
        yield null_modem_cable, side_a, side_b


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
        player = processes.start(
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
