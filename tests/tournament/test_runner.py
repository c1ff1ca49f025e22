"""The event runner's own decisions, without playing: its journal and its refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from serialref.errors import ConfigError
from serialref.tournament.config import PlayerConfig, TournamentConfig
from serialref.tournament.pairings import TournamentFormat
from serialref.tournament.runner import TournamentRunner


def config(directory: Path, *names: str) -> TournamentConfig:
    players = tuple(PlayerConfig(name, player="random") for name in names)
    return TournamentConfig("Test", TournamentFormat.ROUND_ROBIN, players, directory, games=2)


def test_a_directory_holding_another_event_is_refused(tmp_path: Path) -> None:
    (tmp_path / "event.jsonl").write_text(
        json.dumps({"identity": {"event": "Other", "games": 2, "pairings": []}}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="holds another event"):
        TournamentRunner(config(tmp_path, "A", "B")).run()


@pytest.mark.parametrize(
    "torn",
    [b'{"complete": 2, "fi', '{"complete": 2, "first": "Ø'.encode()[:-1]],
    ids=["in an entry", "inside a character"],
)
def test_a_complete_event_is_not_played_again(tmp_path: Path, torn: bytes) -> None:
    runner = TournamentRunner(config(tmp_path, "A", "B"))
    identity = {"event": "Test", "games": 2, "pairings": [[1, "A", "B"]]}
    (tmp_path / "event.jsonl").write_bytes(
        (json.dumps({"identity": identity}) + "\n" + json.dumps({"complete": 1}) + "\n").encode()
        + torn  # cut by a crash: ignored
    )
    (tmp_path / "pairing-001.pgn").write_text(
        '[White "A"]\n[Black "B"]\n[Result "1-0"]\n\n1-0\n\n'
        '[White "B"]\n[Black "A"]\n[Result "1-0"]\n\n1-0\n',
        encoding="utf-8",
    )
    assert runner.run() is True
    assert (tmp_path / "event.jsonl").read_text(encoding="utf-8").endswith("\n")
    assert (tmp_path / "event.pgn").read_text(encoding="utf-8").count("[Result ") == 2
    assert {p.name: p.points for p in runner.standings().players} == {"A": 1.0, "B": 1.0}
