"""Hot standby end to end: the primary is killed mid-game and the standby finishes the match.

Both referees are the command line itself, in separate processes (the primary must die
by SIGKILL, and a standby that fails must be killable): ``serialref run --replicate
... --replicate-key`` and ``serialref standby ... --key``, sharing one key made by
``serialref keygen``. The standby listens on a free port, which it names in its log.
The players are seeded built-in ``serialref client`` processes on the far ends of
virtual null-modem cables, and both referees share one PGN file, as they would on one
machine.
"""

from __future__ import annotations

import itertools
import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO

import chess.pgn
import processes
import pytest
from processes import wait_for

from serialref.happenings import MatchStarted, MovePlayed
from serialref.recorders.journal import read_journal
from serialref.wire.nullmodem import null_modem_cable

GAMES = 2
RUN_TIMEOUT = 25.0
SERIALREF = [sys.executable, "-m", "serialref"]


@contextmanager
def process(
    command: list[str], *, stdout: int | None = None, stderr: int | IO[str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """A child process that is reaped (killed if need be) when the block ends."""
    child = processes.start(
        command, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, text=True
    )
    try:
        yield child
    finally:
        try:
            child.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()


def moves_in(journal: Path, game: int) -> int:
    """MovePlayed entries of ``game`` among the journal's complete lines so far."""
    if not journal.exists():
        return 0
    lines = journal.read_bytes().split(b"\n")[:-1]
    return sum(
        1 for line in lines
        if (entry := json.loads(line))["event"] == "MovePlayed" and entry["game"] == game
    )  # fmt: skip


@pytest.mark.parametrize("hung_first", [False, True], ids=["killed", "hung-then-killed"])
def test_the_standby_finishes_the_match_of_a_primary_killed_mid_game(
    hung_first: bool, tmp_path: Path
) -> None:
    """Killed: the ports are free at once. Hung first (SIGSTOP): the silent primary still
    holds its ports, so the standby's takeover finds them busy and keeps trying until the
    primary is killed."""
    primary_journal = tmp_path / "primary.jsonl"
    mirror = tmp_path / "mirror.jsonl"
    pgn = tmp_path / "games.pgn"
    standby_log = tmp_path / "standby.log"
    with ExitStack() as stack:
        cables = [stack.enter_context(null_modem_cable()) for _ in range(2)]
        for cable, kind, seed in zip(cables, ("greedy", "random"), ("1", "2"), strict=True):
            stack.enter_context(process(
                [sys.executable, "-m", "serialref", "client", cable.path_b,
                 "--player", kind, "--seed", seed, "--once",
                 "--log", str(tmp_path / f"{kind}.log")],
            ))  # fmt: skip
        key = tmp_path / "replication.key"
        processes.run([*SERIALREF, "keygen", str(key)], check=True, capture_output=True)
        options = [
            cables[0].path_a, cables[1].path_a, "--games", str(GAMES), "--tc", "900+5",
            "--pgn", str(pgn), "--reset-delay", "0.2", "--conclude-delay", "0.2",
            "--log-level", "info",
        ]  # fmt: skip
        standby = stack.enter_context(process(
            [*SERIALREF, "standby", "127.0.0.1:0", *options, "--journal", str(mirror),
             "--key", str(key), "--takeover-after", "1.5"],
            stderr=stack.enter_context(standby_log.open("w")),
        ))  # fmt: skip
        wait_for(lambda: "standby listening on" in standby_log.read_text(), "the standby")
        found = re.search(r"standby listening on (127\.0\.0\.1:\d+)", standby_log.read_text())
        assert found, standby_log.read_text()
        with process(
            [*SERIALREF, "run", *options, "--journal", str(primary_journal),
             "--replicate", found.group(1), "--replicate-key", str(key)],
            stderr=subprocess.DEVNULL,
        ) as primary:  # fmt: skip
            try:
                wait_for(lambda: moves_in(mirror, 2) >= 6, "six moves of game 2 in the mirror")
                if hung_first:
                    primary.send_signal(signal.SIGSTOP)
                    wait_for(lambda: "the port is busy" in standby_log.read_text(),
                             "the standby to find the ports busy")  # fmt: skip
            finally:
                primary.send_signal(signal.SIGKILL)
        assert standby.wait(timeout=RUN_TIMEOUT) == 0, standby_log.read_text()

    log = standby_log.read_text()
    assert "taking over the match" in log
    assert "refused" not in log and "Traceback" not in log, log
    journal = read_journal(mirror)
    takeover = next(
        index for index, event in enumerate(journal)
        if isinstance(event, MatchStarted) and event.resumed
    )  # fmt: skip
    # What the standby mirrored is exactly what the primary's journal holds (or a prefix).
    mirrored = b"".join(mirror.read_bytes().splitlines(keepends=True)[:takeover])
    assert primary_journal.read_bytes().startswith(mirrored)

    with pgn.open() as handle:
        games = []
        while (game := chess.pgn.read_game(handle)) is not None:
            assert game.errors == []
            games.append(game)
    assert [game.headers["Round"] for game in games] == ["1", "2"]
    assert all(game.headers["Result"] in ("1-0", "0-1", "1/2-1/2") for game in games)
    played = {
        game_number: [move.uci() for move in game.mainline_moves()]
        for game_number, game in enumerate(games, start=1)
    }
    for game_number in (1, 2):
        before_kill = [
            event.uci for event in journal[:takeover]
            if isinstance(event, MovePlayed) and event.game == game_number
        ]  # fmt: skip
        assert played[game_number][: len(before_kill)] == before_kill
        if game_number == 2:
            assert len(before_kill) >= 6
    game_two = [
        event.consumed for event in journal if isinstance(event, MovePlayed) and event.game == 2
    ]
    for before, after in itertools.pairwise(game_two):
        assert after[0] >= before[0] and after[1] >= before[1], "a clock was set back"
