"""Fairy-Stockfish against Fairy-Stockfish in variants: UCI_Variant is set through python-chess
from the Variant tag the referee sends, and the PGN is read back by python-chess."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import chess.pgn
import pytest
from variantmatch import play_match, settings_for

from serialref.client.engine import EnginePlayer
from serialref.client.options import EngineSettings
from serialref.referee.openings import chess960_openings

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
