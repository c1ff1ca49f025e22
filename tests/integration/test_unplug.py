"""A cable pulled mid-game: the referee keeps the game, reopens the same path, and finishes it.

The ports are reached through symlinks, as udev's `/dev/serialref/b` is: when the
adapter comes back, the link points at a new device. Here a new null-modem cable
comes up behind the same links; the player reconnects and signs on again, the
referee restores it (PROTOCOL.md 6) and the game goes on to its end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import chess.pgn
import processes
from processes import wait_for

from serialref.wire.nullmodem import null_modem_cable


def point(link: Path, target: str) -> None:
    """Re-point a symlink atomically, as udev does when a device reappears."""
    temporary = link.with_suffix(".new")
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(target)
    os.replace(temporary, link)


def journal_entries(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_bytes().split(b"\n")[:-1]]


def test_a_player_whose_cable_is_replaced_mid_game_is_restored(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    pgn = tmp_path / "games.pgn"
    referee_link = tmp_path / "referee-b"
    player_link = tmp_path / "player-b"

    def entries(name: str) -> list[dict[str, object]]:
        return [entry for entry in journal_entries(journal) if entry["event"] == name]

    with ExitStack() as stack:
        cable_a = stack.enter_context(null_modem_cable())
        first_b = stack.enter_context(null_modem_cable())
        point(referee_link, first_b.path_a)
        point(player_link, first_b.path_b)
        referee = processes.start(
            [sys.executable, "-m", "serialref", "run", cable_a.path_a, str(referee_link),
             "--tc", "900+5", "--journal", str(journal), "--pgn", str(pgn),
             "--reset-delay", "0.2", "--conclude-delay", "0.2"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        wait_for(lambda: bool(entries("MatchStarted")), "the referee to open its ports")
        players = [
            processes.start(
                [sys.executable, "-m", "serialref", "client", path, "--player", kind,
                 "--seed", seed, "--once", "--log", str(tmp_path / f"{kind}.log")],
                stdin=subprocess.DEVNULL,
            )
            for path, kind, seed in [(cable_a.path_b, "greedy", "1"),
                                     (str(player_link), "random", "2")]
        ]  # fmt: skip
        try:
            wait_for(lambda: len(entries("MovePlayed")) >= 6, "six moves")
            first_b.hang_up("a")
            first_b.hang_up("b")
            wait_for(
                lambda: any("line lost" in str(e["reason"]) for e in entries("PlayerSignedOff")),
                "the referee to notice the lost line",
            )
            moves_while_away = len(entries("MovePlayed"))
            second_b = stack.enter_context(null_modem_cable())
            point(referee_link, second_b.path_a)
            point(player_link, second_b.path_b)
            _, stderr = referee.communicate(timeout=60)
            assert referee.returncode == 0, stderr.decode(errors="replace")
        finally:
            if referee.poll() is None:
                referee.kill()
                referee.communicate()
            for player in players:
                try:
                    player.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    player.kill()
                    player.wait()

    sign_ons = [entry["port"] for entry in entries("PlayerSignedOn")]
    assert sign_ons.count("b") >= 2, "player B did not sign on again"
    assert len(entries("MovePlayed")) > moves_while_away, "the game did not go on"
    (ended,) = entries("GameEnded")
    assert ended["termination"] in ("normal", "adjudication")
    with pgn.open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None and game.errors == []
    assert len(list(game.mainline_moves())) == len(entries("MovePlayed"))
