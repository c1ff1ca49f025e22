"""The shipped example configuration drives a real match, as a new user would run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import chess.pgn
import processes

from serialref.wire.nullmodem import null_modem_cable

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "match.toml"


def test_the_example_configuration_checks_out() -> None:
    result = processes.run(
        [sys.executable, "-m", "serialref", "config", "check", str(EXAMPLE)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (result.returncode, result.stdout.strip()) == (0, f"{EXAMPLE}: ok"), result.stderr


def test_a_match_from_the_example_configuration_with_the_ports_overridden(tmp_path: Path) -> None:
    with null_modem_cable() as cable_a, null_modem_cable() as cable_b:
        referee = processes.start(
            [sys.executable, "-m", "serialref", "run", cable_a.path_a, cable_b.path_a,
             "--config", str(EXAMPLE), "--reset-delay", "0.2", "--conclude-delay", "0.2"],
            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        journal = tmp_path / "match.jsonl"  # relative in the example: the working directory
        processes.wait_for_match_start(referee, journal)
        players = [
            processes.start([sys.executable, "-m", "serialref", "client", path,
                             "--player", kind, "--seed", "3", "--once"], stdin=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
            for path, kind in [(cable_a.path_b, "greedy"), (cable_b.path_b, "random")]
        ]  # fmt: skip
        _, stderr = referee.communicate(timeout=60)
        for player in players:
            assert player.wait(timeout=10) == 0
    assert referee.returncode == 0, stderr.decode(errors="replace")
    with (tmp_path / "match.pgn").open() as handle:
        games = [chess.pgn.read_game(handle), chess.pgn.read_game(handle)]
    assert all(game is not None and game.errors == [] for game in games)
    assert [game.headers["Event"] for game in games if game] == ["Club championship"] * 2
    assert [game.headers["TimeControl"] for game in games if game] == ["300+3"] * 2
    events = [json.loads(line)["event"] for line in journal.read_text().splitlines()]
    assert events.count("GameEnded") == 2 and events[-1] == "MatchEnded"
