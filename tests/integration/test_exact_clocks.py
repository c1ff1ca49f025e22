"""An engine that trusts its clock completely loses no game on time (PROTOCOL.md 2, ``ccms``).

The fake UCI engine's ``trust-clock`` behaviour (tests/engines/fake_uci.py) spends all the
time its client tells it but 30 ms from its fourth move on (in a moves-to-go control, that
divided by the moves to go), so whatever the client tells it beyond the referee's own
clock, less the client's safety margin, loses the game on time. It plays two games at
``10+0.1`` and two at ``40/8:4+0.2`` (the bonus comes after move 40, and the client's
``movestogo`` must say so) through a ``serialref client`` process, against a second client
whose fake engine answers at once, under a real ``serialref run``, over null-modem cables.
The two matches run side by side: the trusting engine sleeps through
its time, so they hardly share the processors.

Once with the matches left alone, once with an orderly stop (SIGINT) in the middle of a
game and the same command again: the clients stay on their lines, started once, and the
restore's ``respond`` gives them the clocks to the millisecond.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import processes
import pytest
from enginetools import fake_uci
from processes import wait_for

from serialref.cli import EXIT_INTERRUPTED
from serialref.wire.nullmodem import null_modem_cable

ROOT = Path(__file__).resolve().parents[2]
GAMES = 2
RESIGN_AT = {"10+0.1": 16, "40/8:4+0.2": 43}
"""The trusting engine resigns at this move, well after it has used its time up."""
EDGE = 0.5
"""Seconds the trusting side must be down to in each game: the test played at the flag."""
MATCH_TIMEOUT = 180.0


class TrustMatch:
    """``serialref run`` and two ``serialref client`` processes: the trusting engine on A."""

    def __init__(self, directory: Path, control: str, stack: ExitStack) -> None:
        self.directory = directory
        self.control = control
        self.journal = directory / "journal.jsonl"
        self.stack = stack
        cables = [stack.enter_context(null_modem_cable()) for _ in "ab"]
        self.referee_command = [
            sys.executable, "-m", "serialref", "run", cables[0].path_a, cables[1].path_a,
            f"--games={GAMES}", f"--tc={control}", f"--journal={self.journal}",
            f"--pgn={directory / 'match.pgn'}", "--reset-delay=0.1", "--conclude-delay=0.1",
            "--quiet", "--log-level=warning",
        ]  # fmt: skip
        self.referee = self.start_referee()
        engines = {
            "trusting": f"trust-clock:{RESIGN_AT[control]}",
            "instant": "fresh",
        }
        self.clients: list[subprocess.Popen[bytes]] = []
        for cable, (name, behaviour) in zip(cables, engines.items(), strict=True):
            engine = shlex.join(fake_uci(directory / f"{name}.uci", behaviour, "cp 0"))
            self.clients.append(self._spawn([
                sys.executable, "-m", "serialref", "client", cable.path_b, "--engine", engine,
                "--resign-below", "900", "--resign-moves", "1",
                "--log", str(directory / f"{name}.log"),
            ]))  # fmt: skip

    def start_referee(self) -> subprocess.Popen[bytes]:
        """A referee on the journal; returns once its ports are open (it journals its start)."""
        runs = self.count("MatchStarted")
        process = self._spawn(self.referee_command)
        wait_for(lambda: self.count("MatchStarted") > runs, "the referee to open its ports")
        return process

    def _spawn(self, command: list[str]) -> subprocess.Popen[bytes]:
        process = processes.start(
            command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        self.stack.callback(processes.end, process)
        return process

    def entries(self) -> list[dict[str, object]]:
        """The journal's complete lines so far (the referee may be writing the last one)."""
        if not self.journal.exists():
            return []
        return [json.loads(line) for line in self.journal.read_bytes().split(b"\n")[:-1]]

    def count(self, event: str) -> int:
        """Entries of ``event`` so far, counted without reading the entries."""
        if not self.journal.exists():
            return 0
        return self.journal.read_bytes().count(f'"event": "{event}"'.encode())

    def finish(self) -> None:
        """The referee ends the match by itself (checked); the clients, still there, sign off."""
        try:
            _, stderr = self.referee.communicate(timeout=MATCH_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the {self.control} match did not end\n{self.last_words()}")
        assert self.referee.returncode == 0, stderr.decode(errors="replace")
        self.check()
        assert [client.poll() for client in self.clients] == [None, None], self.last_words()
        for client in self.clients:
            client.send_signal(signal.SIGTERM)
            _, stderr = client.communicate(timeout=20)
            assert client.returncode == 0, stderr.decode(errors="replace")

    def last_words(self, lines: int = 30) -> str:
        parts = []
        for name in ("journal.jsonl", "trusting.log", "instant.log"):
            path = self.directory / name
            text = path.read_text(errors="replace") if path.exists() else "(no file)"
            parts.append(f"--- {name}:\n" + "\n".join(text.splitlines()[-lines:]))
        return "\n".join(parts)

    def check(self) -> None:
        """Every game ended over the board, and the trusting side played at its flag."""
        entries = self.entries()
        ended = [entry for entry in entries if entry["event"] == "GameEnded"]
        assert [entry["termination"] for entry in ended] == ["normal"] * GAMES, ended
        for game in range(1, GAMES + 1):
            # Port A (the trusting engine) has White in game 1 and Black in game 2.
            side = (game - 1) % 2
            left = [
                entry["remaining"][side]  # type: ignore[index]
                for entry in entries
                if entry["event"] == "MovePlayed"
                and entry["game"] == game
                and (int(entry["ply"]) - 1) % 2 == side  # type: ignore[call-overload]
            ]
            assert left and min(left) < EDGE, (self.control, game, left)


@contextmanager
def trust_matches(directory: Path) -> Iterator[list[TrustMatch]]:
    with ExitStack() as stack:
        matches = []
        for control in RESIGN_AT:
            folder = directory / control.replace("/", "-")
            folder.mkdir()
            matches.append(TrustMatch(folder, control, stack))
        yield matches


def test_an_engine_that_trusts_its_clock_loses_no_game_on_time(tmp_path: Path) -> None:
    with trust_matches(tmp_path) as matches:
        for match in matches:
            match.finish()


def test_nor_after_an_orderly_stop_and_the_same_command_again(tmp_path: Path) -> None:
    with trust_matches(tmp_path) as matches:
        # In the middle of game 1, with the trusting engine at its flag: 10+0.1 on its
        # increment, 40/8:4+0.2 a move before the period's bonus.
        waiting = {match.control: match for match in matches}
        deadline = time.monotonic() + MATCH_TIMEOUT
        while waiting:
            assert time.monotonic() < deadline, f"no stop point reached in {sorted(waiting)}"
            for control, match in list(waiting.items()):
                if match.count("MovePlayed") >= 2 * (RESIGN_AT[control] - 4):
                    match.referee.send_signal(signal.SIGINT)
                    assert match.referee.wait(timeout=20) == EXIT_INTERRUPTED
                    match.referee.communicate()
                    match.referee = match.start_referee()
                    del waiting[control]
            threading.Event().wait(0.01)  # another process's journal: nothing to wait on
        for match in matches:
            match.finish()
            assert match.count("MatchStarted") == 2
