"""What resuming a match costs.

    python bench/restore.py

1. Restart to restored respond: a journal holds a game at ply 200 (written by
   the real recorder from a real game); a fresh `serialref run` process (Python
   start-up and imports included) reads it, opens the ports, and replays the
   game to both players (reset, inform, 200 x execute). Measured from process
   start to the side to move receiving its `respond`, median of several runs.
2. The journal's write cost per move: the three entries of a ply (the reply
   received, the move, the respond sent) with the fsync, on this machine's disk.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import chess
from games import long_game

from serialref import records
from serialref.epd.writer import format_record
from serialref.happenings import (
    GameStarted,
    LineReceived,
    MatchStarted,
    MovePlayed,
    PlayerSignedOn,
    RecordSent,
)
from serialref.recorders.journal import JournalRecorder
from serialref.wire.nullmodem import null_modem_cable

PLIES = 200
RUNS = 5
WRITES = 500


def write_journal(path: Path, moves: list[chess.Move]) -> None:
    recorder = JournalRecorder(path)
    recorder.handle(MatchStarted(games=1, time_control="3600", ports=("a", "b")))
    recorder.handle(PlayerSignedOn("a", "White"))
    recorder.handle(PlayerSignedOn("b", "Black"))
    tags = {
        "Event": "bench",
        "Site": "?",
        "Date": "2026.11.22",
        "Round": "1",
        "White": "White",
        "Black": "Black",
        "Result": "*",
        "TimeControl": "3600",
    }
    recorder.handle(GameStarted(1, "a", "b", chess.STARTING_FEN, tags))
    board = chess.Board()
    for ply, move in enumerate(moves, start=1):
        san = board.san(move)
        board.push(move)
        recorder.handle(MovePlayed(
            game=1, ply=ply, san=san, uci=move.uci(), elapsed=0.5,
            remaining=(3600 - 0.5 * ((ply + 1) // 2), 3600 - 0.5 * (ply // 2)),
            consumed=(0.5 * ((ply + 1) // 2), 0.5 * (ply // 2)),
            moves_made=((ply + 1) // 2, ply // 2), fen=board.fen(),
        ))  # fmt: skip
    recorder.close()


def restore_time(directory: Path, moves: list[chess.Move]) -> float:
    journal = directory / "journal.jsonl"
    write_journal(journal, moves)
    with null_modem_cable() as cable_a, null_modem_cable() as cable_b:
        start = time.perf_counter()
        referee = subprocess.Popen(
            [sys.executable, "-m", "serialref", "run", cable_a.path_a, cable_b.path_a,
             "--tc", "3600", "--journal", str(journal), "--reset-delay", "0.1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        to_move = cable_a if len(moves) % 2 == 0 else cable_b
        with open(to_move.path_b, "rb", buffering=0) as player:
            received = b""
            while b"refcom respond;" not in received:
                received += player.read(65536)
        elapsed = time.perf_counter() - start
        referee.terminate()
        referee.wait()
    return elapsed


def journal_cost(directory: Path, moves: list[chess.Move]) -> float:
    recorder = JournalRecorder(directory / "cost.jsonl")
    board = chess.Board()
    line = format_record(records.reply(board, moves[0]))
    start = time.perf_counter()
    for ply in range(WRITES):
        recorder.handle(LineReceived("a", line, time.time(), time.monotonic()))
        recorder.handle(MovePlayed(
            game=1, ply=ply, san="e4", uci="e2e4", elapsed=0.5, remaining=(10.0, 10.0),
            consumed=(1.0, 1.0), moves_made=(1, 1), fen=chess.STARTING_FEN,
        ))  # fmt: skip
        recorder.handle(RecordSent("b", line, time.time(), time.monotonic()))
    cost = (time.perf_counter() - start) / WRITES
    recorder.close()
    return cost


def main() -> None:
    moves = [chess.Move.from_uci(uci) for uci in long_game(PLIES)]
    timings = []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as directory:
            timings.append(restore_time(Path(directory), moves))
    with tempfile.TemporaryDirectory(dir=".") as directory:
        cost = journal_cost(Path(directory), moves)
    print(
        f"restart to restored respond, {PLIES}-ply game: median "
        f"{statistics.median(timings) * 1000:.0f} ms (min {min(timings) * 1000:.0f}, "
        f"max {max(timings) * 1000:.0f}) over {RUNS} runs, Python start-up included"
    )
    print(f"journal write cost per move (3 entries + fsync): {cost * 1000:.3f} ms")


if __name__ == "__main__":
    main()
