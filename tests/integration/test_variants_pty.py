"""Every supported variant end to end: the referee and two built-in players over pty cables.

Each game is played to its end by the variant's rules; the PGN the referee writes is read
back by python-chess, which must find the same variant, the same moves and the result.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import chess
import chess.pgn
import pytest

from serialref.client.players import GreedyPlayer, Player, RandomPlayer
from serialref.client.runner import run_client
from serialref.recorders.journal import JournalRecorder
from serialref.recorders.pgn import PgnRecorder
from serialref.referee.daemon import PortPlan, RefereeDaemon
from serialref.referee.openings import Opening, chess960_openings
from serialref.referee.settings import MatchSettings
from serialref.rules import find_rules, variant_names
from serialref.testing import null_modem_cable
from serialref.timecontrol import TimeControl

TIMEOUT = 60.0


def _in_thread(target: Callable[[], object], name: str) -> threading.Thread:
    thread = threading.Thread(target=target, name=name)
    thread.start()
    return thread


def _client(path: str, player: Player) -> threading.Thread:
    return _in_thread(lambda: run_client(path, player), f"test-client-{path}")


def play_match(tmp_path: Path, settings: MatchSettings) -> tuple[bool, Path, Path]:
    """A whole match between a greedy and a random player; (complete, PGN, journal)."""
    pgn, journal = tmp_path / "match.pgn", tmp_path / "journal.jsonl"
    with ExitStack() as stack:
        cables = [stack.enter_context(null_modem_cable()) for _ in "ab"]
        recorders: list[JournalRecorder | PgnRecorder] = [
            JournalRecorder(journal),
            PgnRecorder(pgn),
        ]
        ready = threading.Event()
        daemon = RefereeDaemon(
            settings,
            [PortPlan("a", cables[0].path_a), PortPlan("b", cables[1].path_a)],
            recorders,
            [],
            on_ready=ready.set,
        )
        result: list[bool] = []
        referee = _in_thread(lambda: result.append(daemon.run()), "test-referee")
        try:
            assert ready.wait(5.0), "the referee did not open its ports"
            players = [
                _client(cables[0].path_b, GreedyPlayer(1)),
                _client(cables[1].path_b, RandomPlayer(2)),
            ]
            referee.join(TIMEOUT)
            for player in players:
                player.join(TIMEOUT)
        finally:
            if referee.is_alive():
                daemon.request_stop("test over")
                referee.join(TIMEOUT)
            for recorder in recorders:
                recorder.close()
    assert not referee.is_alive()
    return bool(result and result[0]), pgn, journal


def _settings(variant: str, **values: object) -> MatchSettings:
    rules = find_rules(variant)
    values.setdefault("openings", (Opening(rules.starting_fen, rules=rules),))
    return MatchSettings(
        rules=rules,
        time_control=TimeControl.parse("-"),
        reset_delay=0.02,
        conclude_delay=0.02,
        **values,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("variant", [name for name in variant_names() if name != "standard"])
def test_a_whole_game_of_each_variant_is_played_and_read_back(
    tmp_path: Path, variant: str
) -> None:
    rules = find_rules(variant)
    complete, pgn, journal = play_match(tmp_path, _settings(variant))
    assert complete
    game = chess.pgn.read_game(io.StringIO(pgn.read_text()))
    assert game is not None
    assert not game.errors
    assert game.headers["Variant"] == rules.pgn_name
    board = game.end().board()
    assert type(board) is rules.board_type
    assert game.headers["Result"] in ("1-0", "0-1", "1/2-1/2")
    assert game.headers["Termination"] == "normal"  # no infraction, no flag: the rules ended it
    assert int(game.headers["PlyCount"]) == len(list(game.mainline_moves())) > 0
    assert any(kind in journal.read_text() for kind in ("GameEnded", "game_ended"))
    outcome = board.outcome(claim_draw=True)
    if game.headers["Termination"] == "normal" and outcome is not None:
        assert outcome.result() == game.headers["Result"]


def test_chess960_start_positions_by_number_are_played_with_both_colours(tmp_path: Path) -> None:
    settings = _settings("chess960", openings=chess960_openings("0"), games=2)
    complete, pgn, _ = play_match(tmp_path, settings)
    assert complete
    text = io.StringIO(pgn.read_text())
    games = [chess.pgn.read_game(text), chess.pgn.read_game(text)]
    start = chess.Board.from_chess960_pos(0)
    for game in games:
        assert game is not None
        assert game.headers["Variant"] == "Chess960"
        assert game.headers["FEN"] == start.fen()
        assert game.board().chess960
    assert games[0].headers["White"] == games[1].headers["Black"]  # type: ignore[union-attr]
