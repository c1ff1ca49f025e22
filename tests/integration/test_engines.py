"""Real engines end to end: Debian's stockfish (UCI) against ``gnuchess --xboard`` (XBoard).

Every program is a separate process, as on the real boxes: two ``serialref client``
processes on the far ends of two null-modem cables (pty pairs joined by a relay), and
``serialref run`` on the near ends. The engines think for a fixed 40 ms per move
(``--movetime``), so a two-game match takes seconds and cannot be lost on time.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TypeVar

import chess
import chess.pgn
import processes
import pytest

from serialref.wire.nullmodem import null_modem_cable

STOCKFISH = shutil.which("stockfish") or shutil.which("/usr/games/stockfish")
GNUCHESS = shutil.which("gnuchess") or shutil.which("/usr/games/gnuchess")
ROOT = Path(__file__).resolve().parents[2]
MATCH_TIMEOUT = 50.0
ENGINE_PID = re.compile(r"engine .* started \(\w+\): pid (\d+)")

T = TypeVar("T")

pytestmark = [
    pytest.mark.engines,
    pytest.mark.skipif(
        STOCKFISH is None or GNUCHESS is None,
        reason="needs real engines: apt-get install stockfish gnuchess",
    ),
]


class Match:
    """``serialref run`` and two ``serialref client`` processes, with their files."""

    def __init__(self, directory: Path, stack: ExitStack, *, games: int) -> None:
        self.directory = directory
        self.pgn = directory / "match.pgn"
        self.journal = directory / "journal.jsonl"
        self.logs = {"stockfish": directory / "stockfish.log", "gnuchess": directory / "gnu.log"}
        cables = [stack.enter_context(null_modem_cable()) for _ in range(2)]
        engines = {
            "stockfish": [f"--engine={STOCKFISH}"],
            "gnuchess": [f"--engine={GNUCHESS} --xboard"],
        }
        self.referee = _spawn(
            [
                *_serialref("run", cables[0].path_a, cables[1].path_a),
                f"--games={games}",
                "--tc=60+1",
                f"--pgn={self.pgn}",
                f"--journal={self.journal}",
                "--reset-delay=0.1",
                "--conclude-delay=0.1",
            ],
            stack,
        )
        # The referee journals MatchStarted once its ports are open. A client started
        # before that would have its first sign_on discarded by pyserial's open() and
        # wait 5 s to sign on again (PROTOCOL.md 4); the client tests cover that retry.
        assert _poll(lambda: self.journal.exists() and self.journal.stat().st_size > 0), (
            "the referee did not start"
        )
        self.clients: dict[str, subprocess.Popen[bytes]] = {}
        for cable, (name, engine) in zip(cables, engines.items(), strict=True):
            command = [
                *_serialref("client", cable.path_b),
                *engine,
                "--once",
                "--movetime",
                "40",
                "--log",
                str(self.logs[name]),
            ]
            self.clients[name] = _spawn(command, stack)

    def finish(self) -> None:
        """Wait for the referee and both clients to end by themselves."""
        try:
            _, stderr = self.referee.communicate(timeout=MATCH_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the match did not end in {MATCH_TIMEOUT:g} s\n{self.last_words()}")
        assert self.referee.returncode == 0, stderr.decode(errors="replace")
        for name, client in self.clients.items():
            _, client_stderr = client.communicate(timeout=10)
            assert client.returncode == 0, (name, client_stderr.decode(errors="replace"))

    def last_words(self, lines: int = 25) -> str:
        """The ends of the journal and of both clients' logs: what a stalled match was doing."""
        files = {"journal": self.journal, **self.logs}
        parts = [
            f"{name} client: exit code {client.poll()}" for name, client in self.clients.items()
        ]
        for name, path in files.items():
            text = path.read_text(errors="replace") if path.exists() else "(no file)\n"
            parts.append(
                f"--- {name}, its last {lines} lines:\n" + "\n".join(text.splitlines()[-lines:])
            )
        return "\n".join(parts)

    def events(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.journal.read_text().splitlines()]

    def engine_pid(self, name: str) -> int:
        """The pid of the engine process the client ``name`` runs (its only child)."""
        children = _poll(lambda: _children_of(self.clients[name].pid))
        assert len(children) == 1, children
        return children[0]

    def moves_played(self) -> int:
        if not self.journal.exists():
            return 0
        lines = self.journal.read_text().splitlines()
        return sum('"MovePlayed"' in line for line in lines)


def _poll(condition: Callable[[], T], timeout: float = 20.0) -> T:
    """Wait for something another process writes to a file; no event crosses the boundary."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not (value := condition()) and time.monotonic() < deadline:
        pause.wait(0.02)
    return value


def _children_of(parent: int) -> list[int]:
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                children.append(int(entry.name))
    return children


def _serialref(*words: str) -> list[str]:
    return [sys.executable, "-m", "serialref", *words]


def _spawn(command: list[str], stack: ExitStack) -> subprocess.Popen[bytes]:
    process = processes.start(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    stack.callback(processes.end, process, grace=10)
    return process


@contextmanager
def match(tmp_path: Path, games: int) -> Iterator[Match]:
    with ExitStack() as stack:
        yield Match(tmp_path, stack, games=games)


def check_games(running: Match, games: int) -> list[chess.pgn.Game]:
    """Every game legal to its end, no infraction, no flag, a PGN python-chess reads cleanly."""
    events = running.events()
    infractions = [event for event in events if event["event"] == "Infraction"]
    assert not [event for event in infractions if "rules infraction" in str(event)], infractions
    ended = [event for event in events if event["event"] == "GameEnded"]
    assert len(ended) == games, ended
    for event in ended:
        assert event["termination"] not in ("rules infraction", "time forfeit", "emergency"), event
    text = running.pgn.read_text()
    parsed = []
    with io.StringIO(text) as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            assert not game.errors, game.errors
            board = game.end().board()
            result = game.headers["Result"]
            assert result in ("1-0", "0-1", "1/2-1/2"), game.headers
            if board.is_checkmate():
                assert result == ("0-1" if board.turn == chess.WHITE else "1-0")
            parsed.append(game)
    assert len(parsed) == games
    names = {game.headers["White"] for game in parsed} | {game.headers["Black"] for game in parsed}
    assert any("Stockfish" in name for name in names), names
    assert "GNU Chess" in names, names
    pgn_extract = shutil.which("pgn-extract") or shutil.which("/usr/games/pgn-extract")
    if pgn_extract is not None:
        checked = subprocess.run(
            [pgn_extract, "-s", "--nomovenumbers", str(running.pgn)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert checked.returncode == 0, checked.stderr
        assert "illegal" not in checked.stderr.lower(), checked.stderr
    return parsed


def test_stockfish_and_gnuchess_play_a_two_game_match(tmp_path: Path) -> None:
    with match(tmp_path, games=2) as running:
        running.finish()
        games = check_games(running, 2)
    assert games[0].headers["White"] == games[1].headers["Black"]  # colours alternate
    transcript = running.logs["gnuchess"].read_text()
    assert "-> " in transcript and "refreq reply" in transcript


def test_a_killed_engine_is_restarted_and_the_game_goes_on(tmp_path: Path) -> None:
    with match(tmp_path, games=1) as running:
        pid = running.engine_pid("stockfish")
        assert _poll(lambda: running.moves_played() >= 6), "the game did not get going"
        os.kill(pid, signal.SIGKILL)
        running.finish()
        check_games(running, 1)
    log = running.logs["stockfish"].read_text()
    started = [int(found) for found in ENGINE_PID.findall(log)]
    assert len(started) == 2 and started[0] == pid != started[1], log
    assert "restarting the engine" in log
    sign_ons = [event for event in running.events() if event["event"] == "PlayerSignedOn"]
    assert len(sign_ons) >= 3, sign_ons  # both players, then stockfish's client again
