"""An event's lines: the standings after every game, or every N games, or only at the end."""

from __future__ import annotations

import io

import pytest

from serialref.tournament.progress import TournamentProgress
from serialref.tournament.standings import Standings


@pytest.mark.parametrize(("every", "tables"), [(1, 5), (2, 2), (0, 0)])
def test_the_table_follows_every_nth_game(every: int, tables: int) -> None:
    out = io.StringIO()
    progress = TournamentProgress(out, total_games=5, table=lambda: Standings(()),
                                  table_text=lambda table: "TABLE\n",
                                  table_every=every)  # fmt: skip
    progress.write("Started game 1 of 5 (A vs B)")
    for game in range(1, 6):
        progress.write(f"Finished game {game}", game_ended=True)
    lines = out.getvalue().splitlines()
    assert lines.count("TABLE") == tables
    assert len(lines) == 6 + tables
