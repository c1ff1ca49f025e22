"""Every fairy variant (Fairy-Stockfish's rules through pyffish) end to end over pty cables.

A greedy and a random built-in player play a whole game from a position with few pieces
(a game from the usual start takes a minute at pyffish's pace); the PGN the referee writes
is read back by pyffish itself, SAN by SAN, which must reach the referee's last position.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import chess
import pyffish
import pytest
from variantmatch import play_match, replay_with_pyffish, settings_for

from serialref.observers.console import board_with_coordinates
from serialref.observers.style12 import Style12Feed
from serialref.observers.web import WebFeed
from serialref.recorders.journal import decode_entry
from serialref.referee.openings import Opening
from serialref.rules import find_rules
from serialref.rules.squares import squares_of

# Short games that still cross each variant's own ground: 10x8 pieces, gating, drops,
# cannons and palaces; Makruk's game is drawn by its counting rule (seeds are fixed).
STARTS = {
    "capablanca": "rnabqkbcnr/10/10/10/10/10/10/RNABQKBCNR w KQkq - 0 1",
    "seirawan": "rnbqkbnr/8/8/8/8/8/8/RNBQKBNR[EHeh] w KQBCDFGkqbcdfg - 0 1",
    "makruk": "rnsmksnr/8/8/8/8/8/8/RNSKMSNR w - - 0 1",
    "shogi": "4k4/9/9/9/9/9/9/9/LNSGKGSNL[Gg] w - - 0 1",
    "xiangqi": "rnbakabnr/9/1c5c1/9/9/9/9/1C5C1/9/RNBAKABNR w - - 0 1",
}


@pytest.mark.parametrize("variant", sorted(STARTS))
def test_a_whole_fairy_game_is_played_and_read_back_by_pyffish(
    tmp_path: Path, variant: str
) -> None:
    rules = find_rules(variant)
    start = STARTS[variant]
    settings = settings_for(variant, openings=(Opening(start, rules=rules),))
    complete, pgn, journal = play_match(tmp_path, settings)
    assert complete
    assert "Infraction" not in journal.read_text()
    tags, fen, moves = replay_with_pyffish(variant, pgn.read_text())
    assert tags["Variant"] == variant
    assert tags["SetUp"] == "1"
    assert fen.split(" ")[:4] == start.split(" ")[:4]
    assert int(tags["PlyCount"]) == len(moves) > 0
    assert tags["Termination"] == "normal"
    last = pyffish.get_fen(variant, fen, moves)
    ended = re.findall(r'"fen": "([^"]*)"', journal.read_text())[-1]
    assert last == ended
    if not pyffish.legal_moves(variant, fen, moves):  # mate or stalemate: pyffish's verdict
        result = pyffish.game_result(variant, fen, moves)
        white_to_move = last.split(" ")[1] == "w"
        expected = "1/2-1/2" if result == 0 else "1-0" if (result > 0) == white_to_move else "0-1"
        assert tags["Result"] == expected
    else:
        assert tags["Result"] in ("1-0", "0-1", "1/2-1/2")
    if variant == "shogi":  # the golds in hand were dropped
        assert sum("@" in move for move in moves) >= 2
    if variant == "makruk":  # two rooks against a bare king: the count runs out first
        assert last.split(" ")[3] == "16" and int(last.split(" ")[4]) > 16
        assert tags["Result"] == "1/2-1/2"
    _the_standby_and_the_feeds_follow(journal.read_bytes(), rules.board(last))


def _the_standby_and_the_feeds_follow(journal: bytes, last: chess.Board) -> None:
    """The standby checks the journal by the same rules; the feeds and the console draw it."""
    from serialref.standby.validation import JournalValidator

    validator = JournalValidator()
    web, style12 = WebFeed(), Style12Feed()
    for raw in journal.splitlines():
        validator.check(raw)
        event = decode_entry(raw)
        web.update(event)
        style12.update(event)
    state = json.loads(web.greeting().removeprefix(b"data: "))
    assert state["fen"] == last.fen()
    assert state["html"].count('<g class="piece"') == len(squares_of(last).pieces)  # drawn
    assert style12.greeting().startswith(b"\n\r<12> ")
    drawn = board_with_coordinates(last)
    assert len(drawn) == len(last.fen().split("/")) + 1
