"""serialref.referee.tablebase: Syzygy tables probed as cutechess-cli probes them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import chess
import pytest

from serialref.errors import ConfigError
from serialref.referee.tablebase import SyzygyTables, table_directories
from serialref.result import Result

TABLES = Path(__file__).resolve().parents[1] / "fixtures" / "syzygy"


@pytest.fixture
def tables() -> Iterator[SyzygyTables]:
    probe = SyzygyTables([TABLES])
    yield probe
    probe.close()


def test_a_win_the_fifty_move_counter_would_not_leave_time_for_is_a_draw(
    tables: SyzygyTables,
) -> None:
    # White mates or zeroes in 29 plies: a win with the counter at 71, a draw at 72.
    won = chess.Board("8/8/8/8/8/8/2k5/KR6 w - - 71 90")
    drawn = chess.Board("8/8/8/8/8/8/2k5/KR6 w - - 72 90")
    assert tables.result(won) is Result.WHITE_WINS
    assert tables.result(drawn) is Result.DRAW


def test_what_the_tables_cannot_say_is_not_adjudicated(tables: SyzygyTables) -> None:
    castling = chess.Board("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    five_men = chess.Board("4k3/8/8/8/8/8/8/RN2K2R w - - 0 1")
    assert tables.result(castling) is None
    assert tables.result(five_men) is None
    three_men = chess.Board("8/8/8/8/8/8/2k5/K6Q w - - 0 1")
    assert tables.result(three_men) is Result.WHITE_WINS
    assert SyzygyTables([TABLES], pieces=2).result(three_men) is None
    assert tables.pieces == 4  # the largest table's: bigger positions are not probed


def test_only_the_wdl_table_is_not_enough_as_in_cutechess(tmp_path: Path) -> None:
    (tmp_path / "KQvK.rtbw").write_bytes((TABLES / "KQvK.rtbw").read_bytes())
    probe = SyzygyTables([tmp_path])
    try:
        assert probe.result(chess.Board("8/8/8/8/8/8/2k5/K6Q w - - 0 1")) is None
    finally:
        probe.close()


def test_the_directories_are_joined_by_colons_or_semicolons(tmp_path: Path) -> None:
    assert table_directories("tb", f"{TABLES}:{TABLES};") == (TABLES, TABLES)
    with pytest.raises(ConfigError, match="expected one or more directories"):
        table_directories("tb", ":")
