"""The referee's adjudication end to end, as cutechess-cli's ``-resign`` and ``-tb`` adjudicate.

``serialref run`` referees two ``serialref client`` processes over null-modem cables, each
bridging the scripted engine of tests/engines/scored_uci.py: Alpha scores its moves 0
until the game's eleventh ply, then -600; Beta scores every move 0. Two openings, each
played with both colours: the standard start, where Alpha loses by ``--resign
movecount=3 score=500`` at its third move scored -600, and a KQ v K ending, which the
Syzygy tables of tests/fixtures/syzygy adjudicate after White's first move.
"""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys
from pathlib import Path

import chess
import chess.pgn
import processes

from serialref.testing import null_modem_cable

ROOT = Path(__file__).resolve().parents[2]
SCORED_UCI = ROOT / "tests" / "engines" / "scored_uci.py"
TABLES = ROOT / "tests" / "fixtures" / "syzygy"
SCRIPTS = {"Alpha": ",".join(["0"] * 10 + ["-600"]), "Beta": "0"}
OPENINGS = ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -", "8/8/8/8/8/2k5/8/K6Q w - -"]


def play(directory: Path) -> tuple[str, list[chess.pgn.Game], list[dict[str, object]]]:
    """The match: what ``serialref run`` printed, the PGN's games and the journal's entries."""
    pgn, journal, book = directory / "match.pgn", directory / "match.jsonl", directory / "book.epd"
    book.write_text("".join(f"{fen}\n" for fen in OPENINGS), encoding="utf-8")
    with null_modem_cable() as cable_a, null_modem_cable() as cable_b:
        referee = processes.start(
            [sys.executable, "-m", "serialref", "run", cable_a.path_a, cable_b.path_a,
             "--games", "4", "--tc", "10+0.1", "--pgn", str(pgn), "--journal", str(journal),
             "--reset-delay", "0.1", "--conclude-delay", "0.1", "--openings", str(book),
             "--name-a", "Alpha", "--name-b", "Beta",
             "--resign", "movecount=3", "score=500", "--tb", str(TABLES)],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        processes.wait_for_match_start(referee, journal)
        clients = []
        for cable, script in zip((cable_a, cable_b), SCRIPTS.values(), strict=True):
            clients.append(processes.start(
                [sys.executable, "-m", "serialref", "client", cable.path_b, "--engine",
                 shlex.join([sys.executable, str(SCORED_UCI), script]), "--once"],
                cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True,
            ))  # fmt: skip
        out, err = referee.communicate(timeout=120)
        for client in clients:
            _, said = client.communicate(timeout=20)
            assert client.returncode == 0, said
    assert referee.returncode == 0, err
    games = []
    stream = io.StringIO(pgn.read_text(encoding="utf-8"))
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    entries = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    return out, games, entries


def test_games_end_by_adjudication_as_cutechess_ends_them(tmp_path: Path) -> None:
    out, games, entries = play(tmp_path)
    reasons = ("Black wins by adjudication", "White wins by adjudication",
               "White wins by adjudication: SyzygyTB")  # fmt: skip
    ended = [
        (game.headers["White"], game.headers["Result"], game.headers["Termination"],
         game.headers["PlyCount"],
         # The last move's comment: its clock, its score, then the reason, as cutechess-cli's.
         next(reason for reason in reasons if game.end().comment.endswith(" " + reason)))
        for game in games
    ]  # fmt: skip
    assert ended == [
        # Alpha's moves at plies 11, 13, 15 (White) or 12, 14, 16 (Black) scored -600.
        ("Alpha", "0-1", "adjudication", "15", "Black wins by adjudication"),
        ("Beta", "1-0", "adjudication", "16", "White wins by adjudication"),
        ("Alpha", "1-0", "adjudication", "1", "White wins by adjudication: SyzygyTB"),
        ("Beta", "1-0", "adjudication", "1", "White wins by adjudication: SyzygyTB"),
    ]
    # The game's end is journalled like any other, after the move that brought it.
    last_two = [entry for entry in entries if entry.get("event") in ("MovePlayed", "GameEnded")]
    assert [entry["event"] for entry in last_two[-2:]] == ["MovePlayed", "GameEnded"]
    assert last_two[-1]["termination"] == "adjudication"
    assert "Finished game 1 (Alpha vs Beta): 0-1 {Black wins by adjudication}" in out
