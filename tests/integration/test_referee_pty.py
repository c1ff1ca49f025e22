"""The referee daemon over pseudo-terminal pairs: real ports, real reader threads, real files."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import chess
import chess.pgn

from serialref.happenings import GameEnded, MovePlayed
from serialref.recorders.journal import read_journal
from serialref.testing import Peer

if TYPE_CHECKING:
    from doubles import RunningReferee

Move = Callable[[Peer, chess.Board, str], None]


def test_a_game_over_ptys_from_sign_on_to_disconnect(
    referee: RunningReferee, player_move: Move
) -> None:
    referee.sign_on_both()
    inform = referee.a.expect("inform")
    assert inform.tag_pairs()[4:6] == [("White", "Alpha"), ("Black", "Beta")]
    referee.b.expect("inform")
    referee.a.expect("respond")
    board = chess.Board()
    for peer, other, san in [
        (referee.a, referee.b, "f3"),
        (referee.b, referee.a, "e5"),
        (referee.a, referee.b, "g4"),
    ]:
        player_move(peer, board, san)
        respond = other.expect("respond")
        assert respond.operand_texts("sm") == (san,)
    player_move(referee.b, board, "Qh4#")
    for peer in (referee.a, referee.b):
        final = peer.expect("inform")
        assert ("Result", "0-1") in final.tag_pairs()
        assert ("Termination", "normal") in final.tag_pairs()
        peer.expect("conclude")
        peer.expect("disconnect")
    referee.join()
    assert referee.result is True

    with referee.pgn.open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None and game.errors == []
    assert game.headers["Result"] == "0-1"
    assert [move.uci() for move in game.mainline_moves()] == ["f2f3", "e7e5", "g2g4", "d8h4"]

    journal = read_journal(referee.journal)
    assert [event.san for event in journal if isinstance(event, MovePlayed)] == [
        "f3",
        "e5",
        "g4",
        "Qh4#",
    ]
    assert [event.result for event in journal if isinstance(event, GameEnded)] == ["0-1"]


def test_line_noise_never_ends_a_game(referee: RunningReferee, player_move: Move) -> None:
    referee.sign_on_both()
    referee.a.expect("inform")
    referee.b.expect("inform")
    referee.a.expect("respond")
    referee.a.send_bytes(b"\x1b[2J\x00garbage\r\n")
    referee.a.send_line("x" * 5000)
    referee.a.send_line("not an EPD record at all")
    board = chess.Board()
    player_move(referee.a, board, "e4")
    assert referee.b.expect("respond").operand_texts("sm") == ("e4",)


def test_stopping_the_referee_disconnects_both_players(referee: RunningReferee) -> None:
    referee.sign_on_both()
    referee.a.expect("inform")
    referee.a.expect("respond")
    referee.daemon.request_stop("received SIGTERM")
    referee.a.expect("disconnect")
    referee.b.expect("inform")
    referee.b.expect("disconnect")
    referee.join()
    assert referee.result is False
    assert not referee.pgn.exists() or referee.pgn.read_text() == ""


def test_a_hung_up_player_leaves_the_game_running(
    referee: RunningReferee, player_move: Move
) -> None:
    referee.sign_on_both()
    referee.a.expect("inform")
    referee.b.expect("inform")
    referee.a.expect("respond")
    referee.b.hang_up()
    board = chess.Board()
    player_move(referee.a, board, "e4")  # accepted although Black's line is down
    assert referee.events.wait_for(MovePlayed).san == "e4"
    referee.daemon.request_stop("test over")
    referee.a.expect("disconnect")
    referee.join()
    moves = [event.san for event in read_journal(referee.journal) if isinstance(event, MovePlayed)]
    assert moves == ["e4"]
