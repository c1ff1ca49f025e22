"""An event run as its own process, with few descriptors, under a hostile network.

Each test starts ``serialref event`` with a low ``RLIMIT_NOFILE`` (so that a few hundred
connections are enough to exhaust it) and a umask that lets everyone read, then does what
a stranger, an audience or a guesser on the network can do, while two paced built-in
players play: their game must go on, the supervisor must be answered, the log must stay
short, and no token may reach any file.
"""

from __future__ import annotations

import errno
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TypeVar

import chess
import processes
from processes import wait_for

from serialref import records
from serialref.cli import EXIT_INTERRUPTED, EXIT_OK
from serialref.control.client import send_request
from serialref.control.protocol import Request
from serialref.epd.writer import format_record
from serialref.errors import ControlError

T = TypeVar("T")
TOKEN = "tok-3141592653"


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return int(probe.getsockname()[1])


def write_event(directory: Path, *, good_seat: str = "", feeds: str = "", pace: int = 200) -> Path:
    config = directory / "event.toml"
    config.write_text(
        'event = "Hostile night"\nformat = "match"\ngames = 1\ntc = "120+0"\n'
        'reset_delay = 0.05\nconclude_delay = 0.05\ndirectory = "out"\n'
        f'control_socket = "{directory / "ctl.sock"}"\n{feeds}'
        f'\n[[players]]\nname = "Good"\nplayer = "random"\nseed = 1\npace = {pace}\n{good_seat}'
        f'\n[[players]]\nname = "Other"\nplayer = "random"\nseed = 2\npace = {pace}\n',
        encoding="utf-8",
    )
    return config


@contextmanager
def running_event(config: Path, *, limit: int) -> Iterator[subprocess.Popen[bytes]]:
    """The event in a process of its own with ``limit`` descriptors; killed if still running."""

    def limited() -> None:  # pragma: no cover - runs in the child before exec
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
        os.umask(0o022)

    log = config.parent / "event.log"
    with log.open("ab") as out:
        event = processes.start(
            [sys.executable, "-m", "serialref", "event", "--config", str(config)],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            preexec_fn=limited,  # after the death signal, before exec
        )  # fmt: skip
    try:
        yield event
    except AssertionError as exc:  # what the event said is what tells why
        raise AssertionError(f"{exc}\n{log.read_text(encoding='utf-8')[-3000:]}") from exc
    finally:
        if event.poll() is None:
            event.kill()
        event.wait()


def ply(config: Path) -> int:
    """The ply of the board being played (0 when there is none or no answer)."""
    try:
        reply = send_request(config.parent / "ctl.sock", Request("status"), timeout=5.0)
    except ControlError:
        return 0
    boards = (reply.status or {}).get("boards") or [{}]
    return int((boards[0].get("game") or {}).get("ply", 0))


def idle_connections(stack: ExitStack, port: int, *, hosts: int, each: int,
                     first: int = 2) -> int:  # fmt: skip
    """Connections from ``hosts`` loopback addresses that send nothing, made without waiting."""
    made = 0
    for host in range(first, first + hosts):
        for _ in range(each):
            idle = stack.enter_context(socket.socket())
            idle.bind((f"127.0.0.{host}", 0))
            idle.setblocking(False)
            if idle.connect_ex(("127.0.0.1", port)) in (0, errno.EINPROGRESS):
                made += 1
    return made


def unfinished_lines(stack: ExitStack, port: int, *, hosts: int, each: int) -> int:
    """Connections that send one byte of a line and nothing more (the kernel hands them on)."""
    made = 0
    deadline = time.monotonic() + 10.0
    for host in range(2, 2 + hosts):
        for _ in range(each):
            if time.monotonic() > deadline:  # a referee that stopped accepting: enough tried
                return made
            talker = stack.enter_context(socket.socket())
            talker.bind((f"127.0.0.{host}", 0))
            talker.settimeout(1.0)
            try:
                talker.connect(("127.0.0.1", port))
                talker.send(b"r")
            except OSError:
                continue
            made += 1
    return made


def stop(event: subprocess.Popen[bytes]) -> int:
    event.send_signal(signal.SIGTERM)
    return event.wait(timeout=30)


def process_cpu(pid: int) -> float:
    """Seconds of CPU the process has used (user and system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_hundreds_of_idle_strangers_leave_a_seat_working(tmp_path: Path) -> None:
    """Silent ones, and ones that send a byte and no more: more than the event's descriptors."""
    port = free_port()
    seat = f'seat = "listen://127.0.0.1:{port}"\ntoken = "{TOKEN}"\n'
    config = write_event(tmp_path, good_seat=seat)
    with running_event(config, limit=160) as event, ExitStack() as strangers:
        start = wait_for(lambda: ply(config) >= 2 and ply(config), "the game under way")
        made = idle_connections(strangers, port, hosts=10, each=15, first=100)
        made += unfinished_lines(strangers, port, hosts=20, each=10)
        assert made > 160
        wait_for(lambda: ply(config) >= start + 6, "six more plies, relayed through the seat")
        assert stop(event) == EXIT_INTERRUPTED
    log = (tmp_path / "event.log").read_text(encoding="utf-8")
    assert "refused" in log and log.count("\n") < 60, log


def test_an_audience_that_never_reads_leaves_the_supervisor_and_the_pgn_working(
    tmp_path: Path,
) -> None:
    style12, web = free_port(), free_port()
    feeds = f'style12 = "127.0.0.1:{style12}"\nweb = "127.0.0.1:{web}"\n'
    config = write_event(tmp_path, feeds=feeds, pace=1000)
    with running_event(config, limit=300) as event, ExitStack() as audience:
        wait_for(lambda: ply(config) >= 2, "the game under way")
        for port in (style12, web):
            idle_connections(audience, port, hosts=4, each=50)
        time.sleep(0.5)  # the audience arrives: nothing to await in another process
        before = process_cpu(event.pid)
        time.sleep(2.0)  # the players think a second a move: what the referee spends then
        assert process_cpu(event.pid) - before < 1.0
        reply = send_request(tmp_path / "ctl.sock", Request("adjudicate", ("1-0", "test")))
        assert reply.ok, reply.error
        assert event.wait(timeout=30) == EXIT_OK
    assert '[Result "1-0"]' in (tmp_path / "out" / "event.pgn").read_text(encoding="utf-8")
    log = (tmp_path / "event.log").read_text(encoding="utf-8")
    assert log.count("accept") < 10 and log.count("\n") < 60, log


def sign_on(token: str) -> bytes:
    return (format_record(records.sign_on(chess.Board(), "Good", token=token)) + "\r\n").encode()


def test_wrong_tokens_are_throttled_and_no_token_is_written_anywhere(tmp_path: Path) -> None:
    port = free_port()
    seat = f'seat = "listen://127.0.0.1:{port}"\ntoken = "{TOKEN}"\n'
    config = write_event(tmp_path, good_seat=seat)
    with running_event(config, limit=1024) as event:
        wait_for(lambda: ply(config) >= 2, "the game under way")
        for guess in range(40):
            with socket.socket() as guesser:
                guesser.bind(("127.0.0.2", 0))
                guesser.settimeout(10.0)
                guesser.connect(("127.0.0.1", port))
                guesser.sendall(sign_on(f"guess-{guess}"))
                assert guesser.recv(100) == b""  # refused
        status = send_request(tmp_path / "ctl.sock", Request("status")).status
        start = ply(config)
        wait_for(lambda: ply(config) >= start + 2, "the real player still playing")
        assert stop(event) == EXIT_INTERRUPTED
    assert TOKEN not in str(status)
    log = (tmp_path / "event.log").read_text(encoding="utf-8")
    assert log.count("token mismatch") == 3 and "gave 3 or more wrong tokens" in log, log
    assert "35 more connections refused (35 locked)" in log, log
    assert TOKEN not in log
    journal = (tmp_path / "out" / "event.jsonl").read_text(encoding="utf-8")
    assert journal.count('"refused"') == 5 and '"refused_more": 35' in journal
    files = [path for path in (tmp_path / "out").iterdir() if path.is_file()]
    assert len(files) >= 4  # the event's journal and PGN, the pairing's journal and PGN, logs
    for path in files:
        assert TOKEN.encode() not in path.read_bytes(), path
        assert stat.S_IMODE(path.stat().st_mode) in (0o600, 0o640), path
