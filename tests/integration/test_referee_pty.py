"""The referee daemon over pseudo-terminal pairs: real ports, real reader threads, real files."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import chess
import chess.pgn
import pytest

from serialref import records
from serialref.clock import TimeControl
from serialref.daemon import PortPlan, RefereeDaemon
from serialref.epd import format_record
from serialref.events import GameEnded, MatchEvent, MovePlayed
from serialref.match import MatchSettings
from serialref.recorders.journal import JournalRecorder, read_journal
from serialref.recorders.pgn import PgnRecorder
from serialref.testing import Peer, null_modem


class MoveWatcher:
    """Lets a test await the referee's acceptance of a move."""

    def __init__(self, moves: queue.SimpleQueue[MovePlayed]) -> None:
        self._moves = moves

    def handle(self, event: MatchEvent) -> None:
        if isinstance(event, MovePlayed):
            self._moves.put(event)

    def close(self) -> None:
        pass


class RunningReferee:
    """A daemon on its own thread, with the players' ends of both cables."""

    def __init__(self, tmp_path: Path, stack: ExitStack, **settings: object) -> None:
        path_a, self.a = stack.enter_context(null_modem())
        path_b, self.b = stack.enter_context(null_modem())
        self.pgn = tmp_path / "match.pgn"
        self.journal = tmp_path / "journal.jsonl"
        values: dict[str, object] = {
            "reset_delay": 0.05,
            "conclude_delay": 0.05,
            "time_control": TimeControl.parse("60+1"),
        }
        values.update(settings)
        self._ready = threading.Event()
        self.recorders = [JournalRecorder(self.journal), PgnRecorder(self.pgn)]
        self.moves: queue.SimpleQueue[MovePlayed] = queue.SimpleQueue()
        self.daemon = RefereeDaemon(
            MatchSettings(**values),  # type: ignore[arg-type]
            [PortPlan("a", path_a), PortPlan("b", path_b)],
            [*self.recorders, MoveWatcher(self.moves)],
            on_ready=self._ready.set,
        )
        self.result: bool | None = None
        self._thread = threading.Thread(target=self._run, name="test-referee")

    def _run(self) -> None:
        self.result = self.daemon.run()

    def start(self) -> None:
        """Start, and return once the ports are open (opening discards waiting input)."""
        self._thread.start()
        assert self._ready.wait(5.0), "the referee did not open its ports"

    def join(self, timeout: float = 10.0) -> None:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the referee did not finish"
        for recorder in self.recorders:
            recorder.close()

    def stop(self) -> None:
        if self._thread.is_alive():
            self.daemon.request_stop("test over")
            self.join()


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[RunningReferee]:
    with ExitStack() as stack:
        running = RunningReferee(tmp_path, stack)
        running.start()
        try:
            yield running
        finally:
            running.stop()


def sign_on_both(referee: RunningReferee) -> None:
    for peer, name in ((referee.a, "Alpha"), (referee.b, "Beta")):
        peer.send_line(format_record(records.sign_on(chess.Board(), name)))
        peer.expect("reset")


def play(peer: Peer, board: chess.Board, san: str) -> None:
    peer.send_line(format_record(records.reply(board, board.parse_san(san))))
    board.push_san(san)


def test_a_game_over_ptys_from_sign_on_to_disconnect(referee: RunningReferee) -> None:
    sign_on_both(referee)
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
        play(peer, board, san)
        respond = other.expect("respond")
        assert respond.operand_texts("sm") == (san,)
    play(referee.b, board, "Qh4#")
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
        "f3", "e5", "g4", "Qh4#",
    ]
    assert [event.result for event in journal if isinstance(event, GameEnded)] == ["0-1"]


def test_line_noise_never_ends_a_game(referee: RunningReferee) -> None:
    sign_on_both(referee)
    referee.a.expect("inform")
    referee.b.expect("inform")
    referee.a.expect("respond")
    referee.a.send_bytes(b"\x1b[2J\x00garbage\r\n")
    referee.a.send_line("x" * 5000)
    referee.a.send_line("not an EPD record at all")
    board = chess.Board()
    play(referee.a, board, "e4")
    assert referee.b.expect("respond").operand_texts("sm") == ("e4",)


def test_stopping_the_referee_disconnects_both_players(referee: RunningReferee) -> None:
    sign_on_both(referee)
    referee.a.expect("inform")
    referee.a.expect("respond")
    referee.daemon.request_stop("received SIGTERM")
    referee.a.expect("disconnect")
    referee.b.expect("inform")
    referee.b.expect("disconnect")
    referee.join()
    assert referee.result is False
    assert not referee.pgn.exists() or referee.pgn.read_text() == ""


def test_a_hung_up_player_leaves_the_game_running(referee: RunningReferee) -> None:
    sign_on_both(referee)
    referee.a.expect("inform")
    referee.b.expect("inform")
    referee.a.expect("respond")
    referee.b.hang_up()
    board = chess.Board()
    play(referee.a, board, "e4")  # accepted although Black's line is down
    assert referee.moves.get(timeout=5).san == "e4"
    referee.daemon.request_stop("test over")
    referee.a.expect("disconnect")
    referee.join()
    moves = [event.san for event in read_journal(referee.journal) if isinstance(event, MovePlayed)]
    assert moves == ["e4"]
