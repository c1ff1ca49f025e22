"""The supervisor steers a real referee process through its control socket, end to end.

`serialref run` referees two paced built-in players (`serialref client`) on virtual
null-modem cables; the test gives every command over the socket, kills the referee
(SIGKILL) while the match is paused, stops it in order after an adjudication, and checks
that each restart finds the match as the supervisor left it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess.pgn
import processes

from serialref.control.client import send_request
from serialref.control.protocol import Reply, Request
from serialref.errors import ControlError
from serialref.wire.nullmodem import NullModemCable, null_modem_cable

TIMEOUT = 30.0


@dataclass
class Referee:
    directory: Path
    cables: tuple[NullModemCable, NullModemCable]
    players: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def socket(self) -> Path:
        return self.directory / "control.sock"

    @property
    def journal(self) -> Path:
        return self.directory / "journal.jsonl"

    @property
    def pgn(self) -> Path:
        return self.directory / "games.pgn"

    def start(self) -> subprocess.Popen[bytes]:
        """A referee process; the players join once the first one listens."""
        process = processes.start(
            [sys.executable, "-m", "serialref", "run",
             self.cables[0].path_a, self.cables[1].path_a, "--games", "2", "--tc", "900+5",
             "--journal", str(self.journal), "--pgn", str(self.pgn),
             "--reset-delay", "0.2", "--conclude-delay", "0.2",
             "--control-socket", str(self.socket)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.status_when(lambda status: True, "the control socket", process)
        if not self.players:
            for cable, seed in zip(self.cables, ("1", "2"), strict=True):
                self.players.append(processes.start(
                    [sys.executable, "-m", "serialref", "client", cable.path_b,
                     "--player", "random", "--seed", seed, "--pace", "60", "--once"],
                    stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                ))  # fmt: skip
        return process

    def ask(self, command: str, *args: str) -> Reply:
        return send_request(self.socket, Request(command, args))

    def command(self, command: str, *args: str) -> Mapping[str, Any]:
        reply = self.ask(command, *args)
        assert reply.ok, reply.error
        assert reply.status is not None
        return reply.status

    def status_when(
        self,
        condition: Callable[[Mapping[str, Any]], bool],
        what: str,
        process: subprocess.Popen[bytes] | None = None,
    ) -> Mapping[str, Any]:
        """Ask for the status until ``condition`` holds: another process has no event to await."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            assert process is None or process.poll() is None, "the referee exited"
            try:
                reply = self.ask("status")
            except ControlError:
                reply = None
            if reply is not None and reply.ok and reply.status and condition(reply.status):
                return reply.status
            time.sleep(0.01)
        raise AssertionError(f"timed out waiting for {what}")

    def entries(self) -> list[dict[str, Any]]:
        lines = self.journal.read_bytes().split(b"\n")[:-1]
        return [json.loads(line) for line in lines]

    def entries_after(self, command: str) -> list[dict[str, Any]]:
        entries = self.entries()
        last = max(i for i, e in enumerate(entries)
                   if e["event"] == "SupervisorCommand" and e["command"] == command)  # fmt: skip
        return entries[last + 1 :]


@contextmanager
def referee_setup(directory: Path) -> Iterator[Referee]:
    with ExitStack() as stack:
        cables = (stack.enter_context(null_modem_cable()), stack.enter_context(null_modem_cable()))
        referee = Referee(directory, cables)
        try:
            yield referee
        finally:
            for player in referee.players:
                try:
                    player.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    player.kill()
                    player.wait()


def ply(status: Mapping[str, Any]) -> int:
    game = status["game"]
    return -1 if game is None else int(game["ply"])


def test_every_command_end_to_end_with_restarts_in_between(tmp_path: Path) -> None:
    with referee_setup(tmp_path) as referee:
        first = referee.start()
        try:
            referee.status_when(lambda s: ply(s) >= 2, "two moves", first)
            paused = referee.command("pause")
            assert paused["match"]["paused"] is True
            assert paused["game"]["running"] is None
            time.sleep(0.5)  # a paused match does nothing: only time can show it
            after_pause = referee.entries_after("pause")
            asked = [e for e in after_pause if e["event"] == "RecordSent"
                     and "refcom respond" in e["text"]]  # fmt: skip
            assert not asked
            assert len([e for e in after_pause if e["event"] == "MovePlayed"]) <= 1
            assert referee.ask("pause").error == "the match is paused already"
        finally:
            first.send_signal(signal.SIGKILL)
            first.communicate()

        second = referee.start()
        try:
            status = referee.command("status")
            assert status["match"]["paused"] is True  # the pause survived the crash
            white_before = status["game"]["clocks"][0]
            added = referee.command("add-time", "white", "30")
            assert added["game"]["clocks"][0] == white_before + 30
            resumed = referee.command("resume")
            assert resumed["match"]["paused"] is False
            moving = referee.status_when(lambda s: ply(s) >= ply(resumed) + 2, "moves", second)
            assert moving["game"]["clocks"][0] > 800  # the 30 s stayed on White's clock

            referee.command("restore", "a")
            assert any(e["event"] == "RecordSent" and e["port"] == "a"
                       and "refcom reset;" in e["text"]
                       for e in referee.entries_after("restore"))  # fmt: skip

            restarted = referee.command("restart-game")
            assert restarted["game"]["state"] == "resetting"
            assert restarted["game"]["ply"] == 0
            referee.status_when(lambda s: ply(s) >= 3, "moves of the game played again", second)

            refused = referee.ask("adjudicate", "2-0")
            assert not refused.ok and "'2-0' is not a result" in refused.error
            adjudicated = referee.command("adjudicate", "1-0", "White", "is", "winning")
            assert adjudicated["match"]["games_done"] == 1
            assert adjudicated["match"]["score"] == [1.0, 0.0]
        finally:
            second.send_signal(signal.SIGTERM)
            second.communicate(timeout=TIMEOUT)
        for player in referee.players:  # told disconnect, they left: new ones come
            assert player.wait(timeout=TIMEOUT) == 0
        referee.players.clear()

        third = referee.start()
        try:
            status = referee.status_when(lambda s: s["game"] is not None, "game 2", third)
            assert status["match"]["games_done"] == 1  # the adjudication survived the restart
            assert status["game"]["number"] == 2
            ctl = processes.run(
                [sys.executable, "-m", "serialref", "ctl", "--socket", str(referee.socket),
                 "abort", "end", "of", "test"],
                capture_output=True, text=True, timeout=TIMEOUT, check=False,
            )  # fmt: skip
            assert ctl.returncode == 0, ctl.stderr
            assert ctl.stdout.startswith("match: done, 1 of 2 games played, score A 1 - B 0")
            assert third.wait(timeout=TIMEOUT) == 4
        finally:
            if third.poll() is None:
                third.kill()
            third.communicate()

    commands = [e for e in referee.entries() if e["event"] == "SupervisorCommand"]
    assert [e["command"] for e in commands] == [
        "pause", "add-time", "resume", "restore", "restart-game", "adjudicate", "abort"
    ]
    assert {e["uid"] for e in commands} == {os.getuid()}
    with referee.pgn.open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None
    assert game.headers["Termination"] == "adjudication"
    assert game.headers["Result"] == "1-0"
    played_again = [e["uci"] for e in referee.entries_after("restart-game")
                    if e["event"] == "MovePlayed" and e["game"] == 1]  # fmt: skip
    assert [move.uci() for move in game.mainline_moves()] == played_again
