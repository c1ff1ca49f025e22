"""``serialref event`` in process: every board of the event is refereed on one thread."""

from __future__ import annotations

import gc
import re
import threading
from collections import Counter
from pathlib import Path

import pytest

from serialref.referee.lines import LineRouter
from serialref.tournament.config import PlayerConfig, TournamentConfig
from serialref.tournament.pairings import TournamentFormat
from serialref.tournament.runner import TournamentRunner

SETTINGS = {"tc": "30+0.3", "reset_delay": 0.05, "conclude_delay": 0.05}
SHORT = "4k3/8/8/8/8/8/8/R3K3 w - - 149 100"
"""Any move White makes is the 150th without a capture or pawn move: drawn at once (75 moves)."""


def event_config(directory: Path, players: int = 4, games: int = 1) -> TournamentConfig:
    roster = tuple(PlayerConfig(f"P{index}", player="greedy", client_options=("--seed", str(index)))
                   for index in range(1, players + 1))  # fmt: skip
    return TournamentConfig("One loop", TournamentFormat.ROUND_ROBIN, roster, directory,
                            games=games, concurrency=2,
                            match_settings={**SETTINGS, "fen": SHORT})  # fmt: skip


def test_every_board_is_refereed_on_one_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: set[int] = set()
    boards_at_once: set[int] = set()
    referees: set[int] = set()
    on_line = LineRouter.on_line

    def watched(lines: LineRouter, port: str, text: str, at: float) -> None:
        threads.add(threading.get_ident())
        referees.add(id(lines))  # each match has its line router
        boards_at_once.add(len(runner._loop.boards))
        on_line(lines, port, text, at)

    monkeypatch.setattr(LineRouter, "on_line", watched)
    runner = TournamentRunner(event_config(tmp_path))
    assert runner.run() is True
    assert len(threads) == 1 and threading.get_ident() not in threads
    assert len(referees) == 6
    assert 2 in boards_at_once
    pgn = (tmp_path / "event.pgn").read_text(encoding="utf-8")
    assert pgn.count("[Result ") == 6
    # Four players meet in three rounds of two pairings: each game is a sub-round.
    rounds = Counter(re.findall(r'\[Round "([^"]+)"\]', pgn))
    assert rounds == {"1.1": 2, "2.1": 2, "3.1": 2}


def test_each_games_garbage_is_collected_when_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A game's objects form cycles: without a collection at each game's end an event's
    # memory grows game by game, as a match's would (GarbageAfterGames).
    collections: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda *_: collections.append(1) or 0)
    runner = TournamentRunner(event_config(tmp_path, players=2, games=3))
    assert runner.run() is True
    assert len(collections) == 3


def test_a_player_that_cannot_start_stops_the_event_instead_of_hanging_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    players = (PlayerConfig("Random", player="random"),
               PlayerConfig("Broken", engine=str(tmp_path / "no-such-engine")))  # fmt: skip
    config = TournamentConfig("Broken", TournamentFormat.MATCH, players, tmp_path / "event",
                              games=2, match_settings=SETTINGS)  # fmt: skip
    assert TournamentRunner(config).run() is False
    assert "player 'Broken' of pairing 1 exited (code" in caplog.text
    assert "pairing-001-b.log" in caplog.text
