"""A match as engine testers run it, end to end: a book dealt out as fastchess deals it,
the engines' scores and depths in the PGN, and the end's summary of what went wrong.

``serialref run`` referees two ``serialref client`` processes over null-modem cables,
each bridging the scripted UCI engine of tests/engines/fake_uci.py: Alpha's reports
``score cp 29`` at depth 3 and crashes at its first search (the client starts it again
and says so in its replies), Beta's reports a mate in 3. The book is the one fastchess
played in tests/fixtures/fastchess/openings/, dealt out with the same order, start,
plies and seed.
"""

from __future__ import annotations

import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import processes

from serialref.wire.nullmodem import null_modem_cable

ROOT = Path(__file__).resolve().parents[2]
FAKE_UCI = ROOT / "tests" / "engines" / "fake_uci.py"
OPENINGS = ROOT / "tests" / "fixtures" / "fastchess" / "openings"
GAMES = 4
SCORES = {"Alpha": ("crash-once", "cp 29"), "Beta": ("normal", "mate 3")}
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3} \S+")


def book_moves(pgn: Path, plies: int) -> list[list[str]]:
    """The first ``plies`` moves of each game in ``pgn``, in SAN."""
    games = []
    with pgn.open(encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append([node.san() for node in game.mainline()][:plies])
    return games


def play(directory: Path) -> tuple[subprocess.CompletedProcess[str], list[chess.pgn.Game]]:
    """The match; what ``serialref run`` printed, and the games of its PGN file."""
    pgn, journal = directory / "match.pgn", directory / "match.jsonl"
    with null_modem_cable() as cable_a, null_modem_cable() as cable_b:
        referee = processes.start(
            [sys.executable, "-m", "serialref", "run", cable_a.path_a, cable_b.path_a,
             "--games", str(GAMES), "--tc", "60+0.5", "--pgn", str(pgn),
             "--journal", str(journal), "--reset-delay", "0.1", "--conclude-delay", "0.1",
             "--name-a", "Alpha", "--name-b", "Beta", "--openings", str(OPENINGS / "book.pgn"),
             "--openings-order", "random", "--openings-seed", "42", "--openings-start", "2",
             "--openings-plies", "2"],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        processes.wait_for_match_start(referee, journal)
        clients = []
        for cable, (name, (behaviour, score)) in zip((cable_a, cable_b), SCORES.items(),
                                                     strict=True):  # fmt: skip
            engine = shlex.join([sys.executable, str(FAKE_UCI), behaviour, score,
                                 str(directory / f"{name}.uci")])  # fmt: skip
            clients.append(processes.start(
                [sys.executable, "-m", "serialref", "client", cable.path_b, "--engine", engine,
                 "--once", "--log", str(directory / f"{name}.log")],
                cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True,
            ))  # fmt: skip
        out, err = referee.communicate(timeout=120)
        for client in clients:
            _, said = client.communicate(timeout=20)
            assert client.returncode == 0, said
    assert referee.returncode == 0, err
    text = pgn.read_text(encoding="utf-8")
    games = []
    stream = io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    return subprocess.CompletedProcess(referee.args, 0, out, err), games


def test_a_testers_match_end_to_end(tmp_path: Path) -> None:
    run, games = play(tmp_path)
    lines = run.stdout.splitlines()
    # Only Alpha had something go wrong: its engine was started again once.
    assert lines[-7:] == [
        "Player: Alpha",
        "  Timeouts: 0",
        "  Rules infractions: 0",
        "  Disconnections: 0",
        "  Faults: 0",
        "  Engine restarts: 1",
        "Finished match",
    ], run.stdout
    assert len(games) == GAMES and all(game.errors == [] for game in games)

    # The openings fastchess played with the same book, order, start, plies and seed.
    fastchess = book_moves(OPENINGS / "random-srand42-start2-plies2.pgn", 2)
    assert [[node.san() for node in game.mainline()][:2] for game in games] == fastchess[:GAMES]
    assert [game.headers["White"] for game in games] == ["Alpha", "Beta"] * (GAMES // 2)

    for game in games:
        assert TIMESTAMP.fullmatch(game.headers["GameStartTime"])
        assert TIMESTAMP.fullmatch(game.headers["GameEndTime"])
        assert re.fullmatch(r"\d\d:\d\d:\d\d", game.headers["GameDuration"])
        for node in list(game.mainline())[2:]:  # the moves played after the book's
            mover = not node.turn()
            name = game.headers["White" if mover == chess.WHITE else "Black"]
            score = node.eval()
            assert score is not None, node.comment
            expected = chess.engine.Cp(29) if name == "Alpha" else chess.engine.Mate(3)
            assert score.pov(mover) == expected, node.comment
            assert node.eval_depth() == 3, node.comment
            assert 'pv="' in node.comment and "n=1234" in node.comment, node.comment
