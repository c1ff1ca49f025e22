"""No lost games: the referee killed with SIGKILL at many points, restarted on the same journal.

Each run is a real `serialref run` process between two seeded built-in players
(`serialref client` processes, whose moves depend only on seed and position) on
the far ends of virtual null-modem cables. After every kill and restart the match
must end with the same moves as an uninterrupted run, each game exactly once in
the PGN file, and no clock ever set back.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import chess.pgn
import processes
import pytest
from processes import wait_for

from serialref.cli import EXIT_INTERRUPTED
from serialref.wire.nullmodem import NullModemCable, null_modem_cable

GAMES = 2
RUN_TIMEOUT = 60.0


@dataclass
class Match:
    directory: Path
    cables: tuple[NullModemCable, NullModemCable]
    players: list[subprocess.Popen[bytes]]
    once: bool = True  # the players leave at disconnect; otherwise they stay for the next run

    def start_players(self) -> None:
        """Start the players once the referee listens: opening a port discards waiting input."""
        wait_for(started(self, 1), "the referee to open its ports")
        self.start_players_now()

    def start_players_now(self) -> None:
        for cable, kind, seed in zip(self.cables, ("greedy", "random"), ("1", "2"), strict=True):
            self.players.append(processes.start(
                [sys.executable, "-m", "serialref", "client", cable.path_b,
                 "--player", kind, "--seed", seed, "--log", str(self.directory / f"{kind}.log"),
                 *(["--once"] if self.once else [])],
                stdin=subprocess.DEVNULL,
            ))  # fmt: skip

    def referee(self) -> subprocess.Popen[bytes]:
        """A referee process; the players are started with the first one."""
        process = processes.start(
            self.referee_command(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        if not self.players:
            self.start_players()
        return process

    def finish(self, process: subprocess.Popen[bytes]) -> None:
        _, stderr = process.communicate(timeout=RUN_TIMEOUT)
        assert process.returncode == 0, stderr.decode(errors="replace")

    @property
    def journal(self) -> Path:
        return self.directory / "journal.jsonl"

    @property
    def pgn(self) -> Path:
        return self.directory / "games.pgn"

    def referee_command(self) -> list[str]:
        return [
            sys.executable, "-m", "serialref", "run",
            self.cables[0].path_a, self.cables[1].path_a,
            "--games", str(GAMES), "--tc", "900+5",
            "--journal", str(self.journal), "--pgn", str(self.pgn),
            "--reset-delay", "0.3", "--conclude-delay", "0.3",
        ]  # fmt: skip

    def entries(self) -> list[dict[str, object]]:
        """The journal's complete lines so far (the referee may be writing the last one)."""
        if not self.journal.exists():
            return []
        lines = self.journal.read_bytes().split(b"\n")[:-1]
        return [json.loads(line) for line in lines]

    def games(self) -> list[tuple[str, list[str]]]:
        """Result and moves (UCI) of every game in the PGN file."""
        found = []
        with self.pgn.open() as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                assert game.errors == []
                found.append((game.headers["Result"], [m.uci() for m in game.mainline_moves()]))
        return found


@contextmanager
def match_setup(directory: Path, *, once: bool = True) -> Iterator[Match]:
    """Two cables; a seeded built-in player goes on the far end of each."""
    with ExitStack() as stack:
        cables = (stack.enter_context(null_modem_cable()), stack.enter_context(null_modem_cable()))
        match = Match(directory, cables, [], once)
        try:
            yield match
        finally:
            for player in match.players:
                try:
                    player.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    player.kill()
                    player.wait()


def count(match: Match, predicate: Callable[[dict[str, object]], bool]) -> int:
    return sum(1 for entry in match.entries() if predicate(entry))


def moves(n: int) -> Callable[[Match], bool]:
    return lambda match: count(match, lambda e: e["event"] == "MovePlayed") >= n


def sent(refcom: str, n: int = 1) -> Callable[[Match], bool]:
    return lambda match: (
        count(
            match,
            lambda e: e["event"] == "RecordSent" and f"refcom {refcom};" in str(e["text"]),
        )
        >= n
    )


def event(name: str, n: int = 1) -> Callable[[Match], bool]:
    return lambda match: count(match, lambda e: e["event"] == name) >= n


def started(match: Match, runs: int) -> Callable[[], bool]:
    return lambda: count(match, lambda e: e["event"] == "MatchStarted") >= runs


def reply_arrived(n: int) -> Callable[[Match], bool]:
    return lambda match: (
        count(
            match,
            lambda e: e["event"] == "LineReceived" and "refreq reply;" in str(e["text"]),
        )
        >= n
    )


KILL_POINTS: dict[str, Callable[[Match], bool]] = {
    "at start, before sign-on": event("MatchStarted"),
    "after the first sign-on": event("PlayerSignedOn"),
    "during the reset delay": sent("reset", 2),
    "while White thinks about move 1": sent("respond"),
    "while Black thinks about move 1": moves(1),
    "just after a reply arrived": reply_arrived(3),
    "while White thinks, mid-game": moves(8),
    "while Black thinks, mid-game": moves(13),
    "late in game 1": moves(30),
    "between games": event("GameEnded"),
    "during game 2's reset delay": sent("reset", 4),
    "early in game 2": lambda match: (
        count(match, lambda e: e["event"] == "MovePlayed" and e["game"] == 2) >= 4
    ),
}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, list[str]]]:
    """The same match played without interruption."""
    directory = tmp_path_factory.mktemp("reference")
    with match_setup(directory) as match:
        match.finish(match.referee())
    games = match.games()
    assert len(games) == GAMES
    return games


def kill_when(match: Match, reached: Callable[[Match], bool], what: str) -> None:
    """Start a referee and kill it (SIGKILL) once ``reached`` holds, while it still runs."""
    first = match.referee()
    try:
        wait_for(lambda: reached(match) or first.poll() is not None, what, every=0.002)
        assert first.poll() is None, f"the match ended before {what!r}"
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate()


def assert_no_clock_set_back(match: Match) -> None:
    for series in consumed_series(match).values():
        for before, after in itertools.pairwise(series):
            assert after[0] >= before[0] and after[1] >= before[1], "a clock was set back"


def consumed_series(match: Match) -> dict[int, list[tuple[float, float]]]:
    series: dict[int, list[tuple[float, float]]] = {}
    for entry in match.entries():
        if entry["event"] == "MovePlayed":
            white, black = entry["consumed"]  # type: ignore[misc]
            series.setdefault(int(entry["game"]), []).append((white, black))  # type: ignore[call-overload]
    return series


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_killed_referee_resumes_and_the_match_ends_as_if_never_interrupted(
    point: str, reference: list[tuple[str, list[str]]], tmp_path: Path
) -> None:
    with match_setup(tmp_path) as match:
        kill_when(match, KILL_POINTS[point], point)
        match.finish(match.referee())
    assert match.games() == reference
    assert_no_clock_set_back(match)


def test_a_journal_cut_mid_line_is_read_up_to_the_last_complete_entry(
    reference: list[tuple[str, list[str]]], tmp_path: Path
) -> None:
    with match_setup(tmp_path) as match:
        kill_when(match, moves(10), "ten moves")
        with match.journal.open("ab") as journal:
            journal.write(b'{"event": "MovePlayed", "game": 1, "ply"')  # a power cut mid-write
        match.finish(match.referee())
    assert match.games() == reference


def test_a_move_a_power_cut_took_from_the_journal_is_asked_for_again(
    reference: list[tuple[str, list[str]]], tmp_path: Path
) -> None:
    """A power cut after a respond left and before its move was synced: the journal, cut
    where the sync would have ended, lacks the move and the respond that announced it.
    The game goes on from the position before it, with the same moves in the end."""
    with match_setup(tmp_path) as match:
        kill_when(match, moves(10), "ten moves")
        lines = match.journal.read_text(encoding="ascii").splitlines(keepends=True)
        moves_at = [i for i, line in enumerate(lines) if '"event": "MovePlayed"' in line]
        previous, last_move = moves_at[-2:]
        relay = f"sm {json.loads(lines[last_move])['san']};"
        assert not any(
            '"event": "RecordSent"' in line and relay in line
            for line in lines[previous + 1 : last_move]
        ), "the move was relayed before it was journaled"
        match.journal.write_text("".join(lines[:last_move]))
        match.finish(match.referee())
    assert match.games() == reference
    assert_no_clock_set_back(match)


KILLED_AFTER_RELAY = Path(__file__).with_name("killed_after_relay.py")


def test_a_move_relayed_just_before_a_kill_stays_in_the_game(
    reference: list[tuple[str, list[str]]], tmp_path: Path
) -> None:
    """kill -9 the moment the respond relaying move 9 has been written (write-ahead,
    PROTOCOL.md 7): the journal holds that move, and the restart goes on after it."""
    with match_setup(tmp_path) as match:
        run = match.referee_command()[3:]
        first = processes.start(
            [sys.executable, str(KILLED_AFTER_RELAY), "9", *run],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        match.start_players()
        _, stderr = first.communicate(timeout=RUN_TIMEOUT)
        assert first.returncode == -signal.SIGKILL, stderr.decode(errors="replace")
        assert count(match, lambda entry: entry["event"] == "MovePlayed") == 9
        match.finish(match.referee())
    assert match.games() == reference
    assert_no_clock_set_back(match)


def test_a_finished_match_in_the_journal_starts_a_new_match(
    reference: list[tuple[str, list[str]]], tmp_path: Path
) -> None:
    with match_setup(tmp_path) as match:
        match.finish(match.referee())
    with match_setup(tmp_path) as match:
        again = processes.start(
            match.referee_command(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        wait_for(started(match, 2), "the second referee")
        match.start_players_now()
        _, stderr = again.communicate(timeout=RUN_TIMEOUT)
    assert again.returncode == 0
    assert b"starting a new match" in stderr
    assert match.games() == reference + reference
    assert os.path.getsize(match.journal) > 0


def test_ctrl_c_and_the_same_command_again_finish_the_match_with_the_players_started_once(
    reference: list[tuple[str, list[str]]], tmp_path: Path
) -> None:
    """An operator's Ctrl-C (SIGINT): the players are told ``disconnect`` and stay on their
    lines, signing on every 5 s; the same command again takes them back mid-game."""
    with match_setup(tmp_path, once=False) as match:
        first = match.referee()
        try:
            wait_for(lambda: moves(8)(match) or first.poll() is not None, "eight moves")
            first.send_signal(signal.SIGINT)
            assert first.wait(timeout=20) == EXIT_INTERRUPTED
        finally:
            processes.end(first)
        assert [player.poll() for player in match.players] == [None, None]
        again = match.referee()
        try:
            match.finish(again)
        finally:
            processes.end(again)
        assert [player.poll() for player in match.players] == [None, None]
        for player in match.players:
            player.send_signal(signal.SIGTERM)
            assert player.wait(timeout=20) == 0
    assert match.games() == reference
    assert count(match, lambda e: e["event"] == "MatchStarted") == 2
    assert_no_clock_set_back(match)
