"""Fairy-Stockfish against Fairy-Stockfish in variants: UCI_Variant is set through python-chess
from the Variant tag the referee sends, and the PGN is read back by python-chess (its
variants) or replayed by pyffish (the fairy variants)."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import chess.pgn
import pyffish
import pytest
from variantmatch import play_match, replay_with_pyffish, settings_for

from serialref.client.engine import EnginePlayer
from serialref.client.options import EngineSettings
from serialref.referee.openings import Opening, chess960_openings
from serialref.rules import find_rules

FAIRY = shutil.which("fairy-stockfish") or shutil.which("/usr/games/fairy-stockfish")

pytestmark = pytest.mark.skipif(
    FAIRY is None, reason="fairy-stockfish is not installed (apt-get install fairy-stockfish)"
)


def _engine() -> EnginePlayer:
    assert FAIRY is not None
    return EnginePlayer(EngineSettings(command=(FAIRY,), nodes=200))


@pytest.mark.parametrize("variant", ["crazyhouse", "chess960"])
def test_fairy_stockfish_plays_a_variant_game_end_to_end(tmp_path: Path, variant: str) -> None:
    extra = {"openings": chess960_openings("100")} if variant == "chess960" else {}
    complete, pgn, journal = play_match(
        tmp_path, settings_for(variant, **extra), players=(_engine(), _engine())
    )
    assert complete
    assert "Infraction" not in journal.read_text()
    game = chess.pgn.read_game(io.StringIO(pgn.read_text()))
    assert game is not None and not game.errors
    assert game.headers["Variant"] == ("Crazyhouse" if variant == "crazyhouse" else "Chess960")
    assert game.headers["Result"] in ("1-0", "0-1", "1/2-1/2")
    assert game.headers["Termination"] in ("normal", "adjudication")
    assert "Fairy-Stockfish" in game.headers["White"]


def test_fairy_stockfish_plays_seirawan_end_to_end(tmp_path: Path) -> None:
    """The engine gets UCI_Variant and Fairy-Stockfish's UCI moves (gating ``e1g1h``).

    Against two rooks the game is short, and both sides still have pieces to gate.
    """
    start = "r3k2r/8/8/8/8/8/PPPPPPPP/RNBQKBNR[EHeh] w KQBCDFGkq - 0 1"
    settings = settings_for("seirawan", openings=(Opening(start, rules=find_rules("seirawan")),))
    complete, pgn, journal = play_match(tmp_path, settings, players=(_engine(), _engine()))
    assert complete
    assert "Infraction" not in journal.read_text()
    tags, fen, moves = replay_with_pyffish("seirawan", pgn.read_text())
    assert (tags["Variant"], tags["SetUp"], tags["FEN"]) == ("seirawan", "1", start)
    assert int(tags["PlyCount"]) == len(moves) > 0
    assert any(len(move) == 5 for move in moves)  # a piece gated in
    assert tags["Result"] in ("1-0", "0-1", "1/2-1/2")
    assert tags["Termination"] in ("normal", "adjudication")
    assert "Fairy-Stockfish" in tags["White"]
    ended = re.findall(r'"fen": "([^"]*)"', journal.read_text())[-1]
    assert pyffish.get_fen("seirawan", fen, moves) == ended
