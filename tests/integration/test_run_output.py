"""What a user sees on stdout: `serialref run` and `serialref demo`, as real processes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import chess
import processes
import pytest

from serialref import records
from serialref.appliance.assembly import match_settings
from serialref.appliance.config import load_config
from serialref.epd.writer import format_record
from serialref.referee.resume import find_unfinished_match
from serialref.testing import Peer
from serialref.wire.nullmodem import null_modem_cable

SERIALREF = [sys.executable, "-m", "serialref"]
PLAYERS = (("greedy", "1"), ("random", "2"))


def play_match(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """Two games between seeded built-in players, `serialref run`'s output captured."""
    with null_modem_cable() as cable_a, null_modem_cable() as cable_b:
        referee = processes.start(
            [*SERIALREF, "run", cable_a.path_a, cable_b.path_a, "--games", "2", "--tc", "60+1",
             "--reset-delay", "0.1", "--conclude-delay", "0.1", "--log-level", "info",
             "--name-a", "Alpha", "--name-b", "Beta", *options],
            cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        # Players start once both ports are open (logged): a sign-on sent earlier is lost.
        assert referee.stderr is not None
        early = [referee.stderr.readline() for _ in range(2)]
        assert all(" opened " in line for line in early), early
        players = [
            processes.start([*SERIALREF, "client", path, "--player", kind, "--seed", seed,
                             "--once"], stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for path, (kind, seed) in zip((cable_a.path_b, cable_b.path_b), PLAYERS, strict=True)
        ]  # fmt: skip
        out, err = referee.communicate(timeout=60)
        for player in players:
            assert player.wait(timeout=10) == 0
    return subprocess.CompletedProcess(referee.args, referee.returncode, out, err)


RESULT = r"(1-0|0-1|1/2-1/2) \{[^}]+\}"


def test_run_tells_the_match_on_stdout_as_engine_testers_know_it(tmp_path: Path) -> None:
    result = play_match(tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 10, result.stdout
    assert lines[0] == "Started game 1 of 2 (Alpha vs Beta)"
    assert re.fullmatch(rf"Finished game 1 \(Alpha vs Beta\): {RESULT}", lines[1])
    assert re.fullmatch(r"Score of Alpha vs Beta: \d - \d - \d  \[\d\.\d{3}\] 1", lines[2])
    assert lines[3] == "Started game 2 of 2 (Beta vs Alpha)"
    assert re.fullmatch(rf"Finished game 2 \(Beta vs Alpha\): {RESULT}", lines[4])
    assert re.fullmatch(r"Score of Alpha vs Beta: \d - \d - \d  \[\d\.\d{3}\] 2", lines[5])
    assert lines[6].startswith("Elo difference: ") and ", LOS: " in lines[6]
    # The two games are a pair (colours swapped): fastchess's lines on it.
    assert re.fullmatch(r"Elo: \S+ \+/- \S+, nElo: \S+ \+/- \S+", lines[7])
    assert re.fullmatch(r"Ptnml\(0-2\): \[\d, \d, \d, \d, \d\], WL/DD Ratio: \S+", lines[8])
    assert lines[9] == "Finished match"


def test_run_stops_once_its_sprt_decides_and_the_match_is_over(tmp_path: Path) -> None:
    # Hypotheses a handful of games tells apart (-300 or -100 Elo for player A).
    result = play_match(tmp_path, "--games", "12", "--sprt", "elo0=-300", "elo1=-100",
                        "--rating-interval", "2", "--journal", "match.jsonl")  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    played = sum(line.startswith("Finished game") for line in lines)
    assert 2 <= played < 12, result.stdout
    assert lines[-1] == "Finished match"
    assert re.fullmatch(r"SPRT: llr \S+ \(\S+%\), lbound -2\.94, ubound 2\.94 - H[01] was accepted",
                        lines[-2]), result.stdout  # fmt: skip
    # The Elo lines after every second game, the last game's block being the end's.
    assert sum(line.startswith("Elo difference") for line in lines) == (played + 1) // 2
    assert sum(line.startswith("Ptnml(0-2): ") for line in lines) == (played + 1) // 2
    config = load_config(None, {"games": 12})
    settings = match_settings(config)
    assert find_unfinished_match(tmp_path / "match.jsonl", settings) is None


def test_quiet_leaves_stdout_empty(tmp_path: Path) -> None:
    result = play_match(tmp_path, "--quiet")
    assert (result.returncode, result.stdout) == (0, ""), result.stderr


@pytest.mark.parametrize("games", [1])
def test_the_demo_says_what_it_does_before_the_players_sign_on(
    tmp_path: Path, games: int
) -> None:
    result = processes.run(
        [*SERIALREF, "demo", "--dir", str(tmp_path / "demo"), "--games", str(games)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert (result.returncode, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        "opening two virtual null-modem cables ...",
        "starting the players, greedy (port a) and random (port b), as serialref client "
        "processes ...",
        "waiting for both players to sign on ...",
    ]
    assert sorted(lines[3:5]) == [
        "port a: serialref greedy signed on",
        "port b: serialref random signed on",
    ]
    assert lines[5] == "Started game 1 of 1 (serialref greedy vs serialref random)"
    assert lines[6:15][-1] == "  a b c d e f g h"  # the final position, with coordinates
    assert "Finished match" in lines
    assert lines[-3].startswith("PGN:")


@pytest.mark.parametrize(("level", "transcript"), [("info", False), ("debug", True)])
def test_the_client_logs_what_its_log_level_asks_for(
    null_modem: tuple[str, Peer], level: str, transcript: bool
) -> None:
    path, peer = null_modem
    client = processes.start(
        [*SERIALREF, "client", path, "--player", "random", "--once", "--log-level", level],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert "refreq sign_on" in peer.read_line(timeout=20)
        peer.send_line(format_record(records.disconnect(chess.Board())))
        _, err = client.communicate(timeout=20)
    finally:
        if client.poll() is None:
            client.kill()
            client.communicate()
    assert client.returncode == 0, err
    assert (" DEBUG " in err) is transcript, err
