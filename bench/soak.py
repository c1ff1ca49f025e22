"""Soak: a match between two real engines survives random faults with every verdict right.

    python bench/soak.py [--cycles 50] [--games 6] [--tc 10+0.1] [--seed 1]
                         [--engine-a "stockfish" --limit-a "--nodes 3000"]
                         [--engine-b "gnuchess --xboard" --limit-b "--depth 2"]

A real ``serialref run`` (journal and PGN) referees two ``serialref client`` bridges
over virtual null-modem cables reached through symlinks, as udev names real ports.
Every second to five seconds one fault strikes at random:

- ``kill -9`` of the referee, which is started again at once (systemd's
  ``Restart=on-failure``);
- SIGTERM, an orderly stop: the players are told ``disconnect`` and stay on their
  lines, signing on every 5 s; the referee is started again and takes them back;
- SIGSTOP of the referee for 1-4 s, then SIGCONT;
- a cable unplugged: both ends hang up, a new cable comes up behind the same links.

Then the match is left to finish. The run passes when every game is in the PGN
exactly once (rounds 1..N), no legal player lost by a rules infraction, the journal
reads back, and the referee exited 0. It prints the faults dealt, the results and
their terminations, time forfeits and engine restarts (from the clients' logs).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import chess.pgn

from serialref.wire.nullmodem import NullModemCable


def find_engine(command: str) -> str:
    """The engine command with its program found on PATH or in /usr/games (Debian)."""
    words = shlex.split(command)
    found = shutil.which(words[0]) or shutil.which(words[0], path="/usr/games")
    if found is None:
        sys.exit(f"soak: {words[0]!r} not found (apt-get install stockfish gnuchess)")
    return shlex.join([found, *words[1:]])


def point(link: Path, target: str) -> None:
    """Re-point a symlink atomically, as udev does when a device comes back."""
    temporary = link.with_suffix(".new")
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(target)
    os.replace(temporary, link)


class Soak:
    def __init__(self, directory: Path, args: argparse.Namespace, stack: ExitStack) -> None:
        self.directory = directory
        self.args = args
        self.stack = stack
        self.journal = directory / "journal.jsonl"
        self.pgn = directory / "games.pgn"
        self.links = {
            side: (directory / f"referee-{side}", directory / f"player-{side}") for side in "ab"
        }
        self.cables: dict[str, NullModemCable] = {}
        for side in "ab":
            self.plug(side)
        self.referee: subprocess.Popen[bytes] | None = None
        self.clients: dict[str, subprocess.Popen[bytes]] = {}
        self.faults: collections.Counter[str] = collections.Counter()

    def plug(self, side: str) -> None:
        cable = NullModemCable()
        self.stack.callback(cable.close)
        referee_link, player_link = self.links[side]
        point(referee_link, cable.path_a)
        point(player_link, cable.path_b)
        self.cables[side] = cable

    def start_referee(self) -> None:
        before = self.journal.stat().st_size if self.journal.exists() else 0
        command = [
            sys.executable, "-m", "serialref", "run",
            str(self.links["a"][0]), str(self.links["b"][0]),
            "--games", str(self.args.games), "--tc", self.args.tc,
            "--journal", str(self.journal), "--pgn", str(self.pgn),
            "--reset-delay", "0.5", "--conclude-delay", "0.5", "--quiet",
        ]  # fmt: skip
        log = (self.directory / "referee.log").open("ab")
        self.referee = subprocess.Popen(command, stdout=log, stderr=log)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.referee.poll() is None:
            if self.journal.exists() and self.journal.stat().st_size > before:
                return  # its ports are open: it has journaled its start
            time.sleep(0.02)

    def start_client(self, side: str) -> None:
        engine = find_engine(getattr(self.args, f"engine_{side}"))
        limit = shlex.split(getattr(self.args, f"limit_{side}"))
        command = [
            sys.executable, "-m", "serialref", "client", str(self.links[side][1]),
            "--engine", engine, *limit, "--log", str(self.directory / f"client-{side}.log"),
        ]  # fmt: skip
        self.clients[side] = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    def keep_clients_up(self) -> None:
        """Restart=always, as the client's systemd unit has it."""
        for side in "ab":
            client = self.clients.get(side)
            if client is None or client.poll() is not None:
                self.start_client(side)

    def strike(self, rng: random.Random) -> None:
        assert self.referee is not None
        fault = rng.choice(["kill", "term", "stop", "unplug"])
        self.faults[fault] += 1
        if fault == "kill":
            self.referee.kill()
            self.referee.wait()
            self.start_referee()
        elif fault == "term":
            self.referee.send_signal(signal.SIGTERM)
            self.referee.wait()
            # Told disconnect or not (a line that was down), a client stays and signs on
            # every 5 s: the restarted referee takes it.
            self.start_referee()
            self.keep_clients_up()
        elif fault == "stop":
            self.referee.send_signal(signal.SIGSTOP)
            time.sleep(rng.uniform(1.0, 4.0))
            self.referee.send_signal(signal.SIGCONT)
        else:
            side = rng.choice("ab")
            old = self.cables[side]
            old.hang_up("a")
            old.hang_up("b")
            time.sleep(rng.uniform(0.2, 2.0))
            self.plug(side)

    def finish(self) -> int:
        assert self.referee is not None
        while True:
            try:
                return self.referee.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                self.keep_clients_up()

    def stop_all(self) -> None:
        for process in [self.referee, *self.clients.values()]:
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()


def check(soak: Soak, code: int, games: int) -> bool:
    entries = [json.loads(line) for line in soak.journal.read_bytes().split(b"\n")[:-1]]
    rounds, terminations = [], collections.Counter()
    with soak.pgn.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            rounds.append(game.headers["Round"])
            terminations[game.headers.get("Termination", "?")] += 1
    ended = [entry for entry in entries if entry["event"] == "GameEnded"]
    restarts = sum(
        (soak.directory / f"client-{side}.log").read_text(errors="replace").count(
            "restarting the engine"
        )
        for side in "ab"
        if (soak.directory / f"client-{side}.log").exists()
    )
    print(f"faults dealt: {dict(soak.faults)}")
    print(f"referee exit code {code}; PGN rounds {rounds}")
    print(f"terminations: {dict(terminations)}; engine restarts: {restarts}")
    print(f"stalls charged to no one: {sum(1 for e in entries if e['event'] == 'RefereeStalled')}")
    infractions = [entry["reason"] for entry in ended if entry["termination"] == "rules infraction"]
    for reason in infractions:
        print(f"INFRACTION: {reason}")
    for entry in ended:
        if entry["termination"] == "emergency":  # a player gave up: its log says why
            print(f"game {entry['game']} unfinished: {entry['reason']}")
    ok = (
        code == 0
        and rounds == [str(number) for number in range(1, games + 1)]
        and not infractions
    )
    print("soak: PASSED" if ok else "soak: FAILED")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--tc", default="10+0.1")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engine-a", default="stockfish")
    parser.add_argument("--limit-a", default="--nodes 3000")
    parser.add_argument("--engine-b", default="gnuchess --xboard")
    parser.add_argument("--limit-b", default="--depth 2")
    parser.add_argument("--keep", type=Path, help="keep the journal, PGN and logs here")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with ExitStack() as stack:
        directory = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        directory.mkdir(parents=True, exist_ok=True)
        soak = Soak(directory, args, stack)
        stack.callback(soak.stop_all)
        soak.start_referee()
        soak.keep_clients_up()
        for cycle in range(args.cycles):
            time.sleep(rng.uniform(1.0, 5.0))
            soak.keep_clients_up()
            if soak.referee is not None and soak.referee.poll() is not None:
                break  # the match is over already
            soak.strike(rng)
            print(f"cycle {cycle + 1}: {sum(soak.faults.values())} faults", flush=True)
        code = soak.finish()
        passed = check(soak, code, args.games)
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
