"""bench/race.py measures what it prints: CPU from /proc, peers by path, else "not measured"."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import processes
import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "race.py"


@pytest.fixture(scope="module")
def race() -> ModuleType:
    spec = importlib.util.spec_from_file_location("race", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["race"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_process_cpu_is_its_own_read_before_it_is_reaped(race: ModuleType) -> None:
    watcher = race.Watcher()
    try:
        busy = processes.start(
            [sys.executable, "-c", "import time\nend = time.process_time() + 0.3\n"
             "while time.process_time() < end: pass\nbytearray(30_000_000)"],
        )  # fmt: skip
        watcher.watch(busy.pid)
        cost = race.finish(busy, watcher, timeout=30.0)
    finally:
        watcher.stop()
    assert cost.returncode == 0
    assert 0.3 <= cost.cpu < 2.0
    assert cost.peak_rss_kb > 0
    assert busy.returncode == 0  # reaped: no zombie left behind


def test_peers_get_the_same_match(race: ModuleType, tmp_path: Path) -> None:
    engine = ["/opt/replay", "games.txt"]
    pgn = tmp_path / "out.pgn"
    fastchess = race.peer_command("fastchess", Path("/bin/fc"), engine, 20, "60+1", pgn)
    cutechess = race.peer_command("cutechess-cli", Path("/bin/cc"), engine, 20, "60+1", pgn)
    assert fastchess[:4] == ["/bin/fc", "-engine", "cmd=/opt/replay", "args=games.txt"]
    assert cutechess[:4] == ["/bin/cc", "-engine", "cmd=/opt/replay", "arg=games.txt"]
    for command in (fastchess, cutechess):
        joined = " ".join(command)
        assert "-rounds 10 -games 2 -concurrency 1" in joined
        assert "tc=60+1" in joined and str(pgn) in joined


def test_the_report_says_not_measured_and_computes_the_ratios(
    race: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    ours = race.Run("serialref", games=2, plies=1000, referee_cost=race.Cost(0.5, 30_720, 0),
                    clients=[race.Cost(1.0, 20_480, 0), race.Cost(1.5, 25_600, 0)],
                    match_wall=2.0)  # fmt: skip
    theirs = race.Run("cutechess-cli", games=2, plies=1000,
                      referee_cost=race.Cost(0.25, 10_240, 0), match_wall=0.5)  # fmt: skip
    broken = race.Run("fastchess", referee_cost=race.Cost(0.0, 0, -4),
                      problem=race.describe_exit(-4))  # fmt: skip
    given = {"serialref": True, "fastchess": False, "cutechess-cli": True}
    by_ply = {20: 20_480, 400: 21_504}
    race.report({"serialref": [ours], "cutechess-cli": [theirs]}, given, "header", 0.1, by_ply,
                0.45)  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "header"
    assert lines[3].split() == ["serialref", "2", "1000", "0.500", "2.000", "2.500", "30.0", "25.0"]
    assert lines[4].startswith("fastchess      not measured (no --fastchess PATH given)")
    assert lines[5].split() == ["cutechess-cli", "2", "1000", "0.250", "0.500", "-", "10.0", "-"]
    assert "serialref / fastchess: not measured" in lines
    assert "serialref / cutechess-cli: referee CPU 2.00x, match wall 4.00x" in lines
    assert "serialref / that work: referee CPU 5.00x" in lines
    assert "cutechess-cli / that work: referee CPU 2.50x" in lines
    assert ("serialref referee RSS in one long game: 20.0 MB at ply 20, 21.0 MB at ply 400:"
            " ratio 1.050") in lines  # fmt: skip
    assert "  referee CPU per ply / fastchess's: not measured" in lines
    assert "  referee peak RSS: 30.0 MB (target <= 25 MB): not met" in lines
    assert "  referee RSS at ply 400 / ply 20: 1.050 (target <= 1.1): met" in lines
    assert ("  turnaround at 115200 baud, journal written ahead (median): 0.450 ms"
            " (target <= 0.5 ms): met") in lines  # fmt: skip
    given["fastchess"] = True
    race.report({"serialref": [ours], "fastchess": [broken]}, given, "header", None, {20: 1})
    out = capsys.readouterr().out
    assert "RSS in one long game: not measured" in out
    assert "turnaround at 115200 baud, journal written ahead (median): not measured" in out
    assert "that work" not in out
    assert "fastchess      not measured: killed by SIGILL (an instruction this CPU lacks" in out


def test_the_python_chess_floor_replays_the_games_of_the_pgn(
    race: ModuleType, tmp_path: Path
) -> None:
    pgn = tmp_path / "games.pgn"
    assert race.python_chess_floor(pgn) is None
    pgn.write_text('[Result "1-0"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n')
    floor = race.python_chess_floor(pgn, rounds=1)
    assert floor is not None and floor > 0
    pgn.write_text('[Result "*"]\n\n*\n\n')
    assert race.python_chess_floor(pgn) is None


def test_the_long_game_reads_the_referees_memory_at_its_plies(
    race: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(race, "RSS_PLIES", (2, 7))
    found = race.rss_by_ply(tmp_path)
    assert sorted(found) == [2, 7]
    assert all(10_000 < kb < 200_000 for kb in found.values())
    assert "Black resigns } 1-0" in (tmp_path / "rss.pgn").read_text()  # after 9 plies


def test_the_turnaround_is_one_line_time_game_at_115200_baud(
    race: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(BENCH.parent))
    monkeypatch.setattr(race, "TURNAROUND_PLIES", 10)
    found = race.turnaround(tmp_path)
    assert found is not None and 0.0 < found < 1000.0
    assert (tmp_path / "journal-115200.jsonl").exists()
