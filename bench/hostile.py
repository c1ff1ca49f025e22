"""A 4-board event under a hostile network: verdicts, the referee's CPU, disk and log, ctl.

    python bench/hostile.py [--seconds 60] [--quiet 20] [--idle 1000] [--audience 500]
                            [--flood 200] [--rate 1000] [--nofile 1024]

``serialref event`` runs as its own process (with ``--nofile`` descriptors, the usual soft
limit by default) a round robin of eight honest built-in players, four boards at once:
four players on virtual serial cables, four on TCP seats with tokens (all on one
listening address). The players think ``--pace`` ms a move. The event also serves
Style 12, the web board and its control socket.

For ``--quiet`` seconds nothing else happens; then, for ``--seconds``, a hostile process
(on loopback addresses 127.0.0.2 and up, as other machines would be) holds ``--idle``
idle connections to the seats' address, opens ``--flood`` connections a second that
sign on for nobody, report a ``fault`` instead of signing on, or sign on for a real
seat with a wrong token, and keeps ``--audience`` Style 12 and web clients that never
read. Whatever the referee closes it opens again, ``--rate`` new connections a second
at most in all (every connection costs a server something: the figure printed per
connection scales the CPU to other rates). Meanwhile this process asks ``ctl status``
every second. Both phases are measured alike, side by side in one run:

- wrong verdicts: games that ended on time, by abandonment, in an emergency or by a
  rules infraction (honest players at this pace lose none of those): must be 0;
- the referee process's CPU, in % of one core (target under 10 % while players think);
- the growth of the journals and of the event's log, in bytes a second;
- how long ``ctl status`` takes to answer (target under 1 s);
- the machine's load average, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import errno
import multiprocessing
import os
import re
import resource
import select
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

import chess

from serialref import records
from serialref.control.client import send_request
from serialref.control.protocol import Request
from serialref.epd.writer import format_record
from serialref.errors import ControlError

_TICK = os.sysconf("SC_CLK_TCK")
_WRONG = ("time forfeit", "abandoned", "emergency", "rules infraction")
_SEATED = ("Tcp1", "Tcp2", "Tcp3", "Tcp4")
_CABLED = ("Ser1", "Ser2", "Ser3", "Ser4")


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return int(probe.getsockname()[1])


def write_event(directory: Path, ports: dict[str, int], pace: int) -> Path:
    players = ""
    for number, name in enumerate(_SEATED + _CABLED, start=1):
        kind = "greedy" if number % 2 else "random"
        players += f'\n[[players]]\nname = "{name}"\nplayer = "{kind}"\nseed = {number}\n'
        players += f"pace = {pace}\n"
        if name in _SEATED:
            players += f'seat = "listen://127.0.0.1:{ports["seat"]}"\ntoken = "{name}-token"\n'
    config = directory / "event.toml"
    config.write_text(
        'event = "Hostile bench"\nformat = "round-robin"\ngames = 2\nconcurrency = 4\n'
        'tc = "600+1"\nreset_delay = 0.05\nconclude_delay = 0.05\ndirectory = "out"\n'
        f'control_socket = "{directory / "ctl.sock"}"\n'
        f'style12 = "127.0.0.1:{ports["style12"]}"\nweb = "127.0.0.1:{ports["web"]}"\n'
        + players,
        encoding="utf-8",
    )
    return config


# ----------------------------------------------------------------- the hostile process


class Hostile:
    """Idle connections, floods and a silent audience, on one epoll, for ``seconds``."""

    def __init__(self, ports: dict[str, int], args: argparse.Namespace) -> None:
        self.ports = ports
        self.args = args
        self.poll = select.epoll()
        self.kinds: dict[int, tuple[str, socket.socket]] = {}
        self.counts = {"idle": 0, "audience": 0, "flood": 0}
        self.stats = {"connections": 0, "flood lines": 0, "idle closed by the referee": 0,
                      "audience closed by the referee": 0, "flood closed by the referee": 0}
        self.guess = 0

    def open(self, kind: str, host: str, port: int) -> None:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.bind((host, 0))
        sock.setblocking(False)
        if sock.connect_ex(("127.0.0.1", port)) not in (0, errno.EINPROGRESS):
            sock.close()
            return
        events = select.EPOLLRDHUP | (select.EPOLLOUT if kind == "flood" else select.EPOLLIN)
        if kind == "audience":
            events = select.EPOLLRDHUP  # never read: only see it dropped
        self.poll.register(sock.fileno(), events)
        self.kinds[sock.fileno()] = (kind, sock)
        self.counts[kind] += 1
        self.stats["connections"] += 1

    def close(self, fd: int, *, by_referee: bool) -> None:
        kind, sock = self.kinds.pop(fd)
        self.poll.unregister(fd)
        sock.close()
        self.counts[kind] -= 1
        self.stats[f"{kind} closed by the referee"] += by_referee

    def flood_line(self) -> bytes:
        self.guess += 1
        board = chess.Board()
        choice = self.guess % 3
        if choice == 0:
            record = records.sign_on(board, f"Nobody{self.guess}")
        elif choice == 1:
            record = records.sign_on(board, _SEATED[self.guess % 4], token=f"guess{self.guess}")
        else:
            return f"{board.epd()} refreq fault; c0 \"{'x' * 200}\";\r\n".encode()
        return (format_record(record) + "\r\n").encode()

    def run(self) -> dict[str, int]:
        """Top up what the referee closed, within ``--rate`` new connections a second."""
        args = self.args
        start = time.monotonic()
        end = start + args.seconds
        tick = 0
        while (now := time.monotonic()) < end:
            tick += 1
            budget = int((now - start) * args.rate) - self.stats["connections"]
            flood = min(budget, int((now - start) * args.flood) - self.guess - self.counts["flood"])
            for n in range(max(0, min(flood, 200 - self.counts["flood"]))):
                self.open("flood", f"127.0.0.{2 + (tick + n) % 8}", self.ports["seat"])
            budget = int((now - start) * args.rate) - self.stats["connections"]
            for n in range(max(0, min(budget, args.audience - self.counts["audience"]))):
                feed = "style12" if (tick + n) % 2 else "web"
                self.open("audience", f"127.0.0.{110 + (tick + n) % 10}", self.ports[feed])
            budget = int((now - start) * args.rate) - self.stats["connections"]
            for n in range(max(0, min(budget, args.idle - self.counts["idle"]))):
                self.open("idle", f"127.0.0.{10 + (tick + n) % 100}", self.ports["seat"])
            for fd, events in self.poll.poll(0.02):
                kind, sock = self.kinds[fd]
                if events & select.EPOLLOUT and kind == "flood":
                    try:
                        sock.send(self.flood_line())
                        self.stats["flood lines"] += 1
                    except OSError:
                        self.close(fd, by_referee=True)
                        continue
                    self.poll.modify(fd, select.EPOLLIN | select.EPOLLRDHUP)
                elif events & (select.EPOLLIN | select.EPOLLRDHUP | select.EPOLLHUP):
                    try:
                        data = sock.recv(65536) if kind != "audience" else b""
                    except OSError:
                        data = b""
                    if not data:
                        self.close(fd, by_referee=True)
        for fd in list(self.kinds):
            self.close(fd, by_referee=False)
        return {**self.stats, "guesses": self.guess}


def run_hostile(ports: dict[str, int], args: argparse.Namespace, out: Connection) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    out.send(Hostile(ports, args).run())


# ----------------------------------------------------------------- measuring the event


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def disk(directory: Path) -> int:
    """Bytes of the journals (the event's and the pairings') so far."""
    return sum(path.stat().st_size for path in directory.glob("*.jsonl"))


def ask_status(path: Path) -> float | None:
    """Seconds ``ctl status`` took to answer, or None when it did not."""
    start = time.monotonic()
    try:
        reply = send_request(path, Request("status"), timeout=5.0)
    except ControlError:
        return None
    return time.monotonic() - start if reply.ok else None


def phase(event: subprocess.Popen[bytes], root: Path, seconds: float) -> dict[str, float]:
    """CPU, journal and log growth, ctl answers over ``seconds`` (asked once a second)."""
    cpu, journals, log = process_cpu(event.pid), disk(root / "out"), (root / "event.log")
    logged = log.stat().st_size
    answers: list[float] = []
    failures = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        answer = ask_status(root / "ctl.sock")
        if answer is None:
            failures += 1
        else:
            answers.append(answer)
        time.sleep(max(0.0, min(1.0, end - time.monotonic())))
    return {
        "cpu %": 100 * (process_cpu(event.pid) - cpu) / seconds,
        "journal B/s": (disk(root / "out") - journals) / seconds,
        "log B/s": (log.stat().st_size - logged) / seconds,
        "ctl median s": statistics.median(answers) if answers else float("nan"),
        "ctl max s": max(answers) if answers else float("nan"),
        "ctl failed": failures,
        "load": os.getloadavg()[0],
    }


def verdicts(directory: Path) -> tuple[int, list[str]]:
    """Games finished, and those that ended in a way no honest player's game should."""
    finished, wrong = 0, []
    for path in sorted(directory.glob("pairing-*.pgn")):
        text = path.read_text(encoding="utf-8")
        for termination in re.findall(r'\[Termination "([^"]*)"\]', text):
            finished += 1
            if termination in _WRONG:
                wrong.append(f"{path.name}: {termination}")
    return finished, wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the attack")
    parser.add_argument("--quiet", type=float, default=20.0, help="length of the quiet phase")
    parser.add_argument("--idle", type=int, default=1000, help="idle connections held")
    parser.add_argument("--audience", type=int, default=500, help="clients that never read")
    parser.add_argument("--flood", type=int, default=200, help="flood connections a second")
    parser.add_argument("--rate", type=int, default=1000,
                        help="new connections a second at most, of all kinds")  # fmt: skip
    parser.add_argument("--pace", type=int, default=1000, help="players' thinking time, ms")
    parser.add_argument("--nofile", type=int, default=1024, help="the event's RLIMIT_NOFILE")
    args = parser.parse_args()
    ports = {"seat": free_port(), "style12": free_port(), "web": free_port()}
    with tempfile.TemporaryDirectory(prefix="serialref-hostile-") as temporary:
        root = Path(temporary)
        config = write_event(root, ports, args.pace)

        def limited() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (args.nofile, args.nofile))

        with (root / "event.log").open("ab") as log:
            event = subprocess.Popen(
                [sys.executable, "-m", "serialref", "event", "--config", str(config)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                preexec_fn=limited,  # noqa: PLW1509 - only setrlimit, before exec
            )  # fmt: skip
        try:
            while ask_status(root / "ctl.sock") is None:
                time.sleep(0.2)
            print(f"load average at the start: {os.getloadavg()[0]:.2f} "
                  f"({os.cpu_count()} cores); the event's descriptors: {args.nofile}")  # fmt: skip
            quiet = phase(event, root, args.quiet)
            finished_quiet, _ = verdicts(root / "out")
            receiver, sender = multiprocessing.Pipe(duplex=False)
            hostile = multiprocessing.Process(target=run_hostile, args=(ports, args, sender))
            hostile.start()
            attacked = phase(event, root, args.seconds)
            hostile_stats = receiver.recv()
            hostile.join()
        finally:
            event.send_signal(signal.SIGTERM)
            code = event.wait(timeout=60)
        finished, wrong = verdicts(root / "out")
        log_text = (root / "event.log").read_text(encoding="utf-8", errors="replace")
    print(f"event stopped with exit code {code} (4: stopped in order)")
    print(f"hostile: {hostile_stats}")
    print(f"{'':24}{'quiet':>12}{'under attack':>14}")
    for key in quiet:
        print(f"{key:24}{quiet[key]:>12.3f}{attacked[key]:>14.3f}")
    print(f"games finished: {finished} ({finished - finished_quiet} during the attack); "
          f"wrong verdicts: {len(wrong)} {wrong}")  # fmt: skip
    print(f"event log: {len(log_text.splitlines())} lines in all; lines with 'refused': "
          f"{log_text.count('refused')}; tracebacks: {log_text.count('Traceback')}")  # fmt: skip
    if "Traceback" in log_text:
        print(log_text[log_text.index("Traceback") - 300 :][:3000])
    per_connection = (attacked["cpu %"] - quiet["cpu %"]) / 100 * args.seconds
    print(f"CPU per hostile connection: "
          f"{1e6 * per_connection / max(1, hostile_stats['connections']):.0f} us")  # fmt: skip


if __name__ == "__main__":
    main()
