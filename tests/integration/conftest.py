"""The referee daemon on its own thread over pty pairs, for the integration tests."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import chess
import pytest

from serialref import records
from serialref.epd.writer import format_record
from serialref.events import MatchEvent, MovePlayed
from serialref.recorders.journal import JournalRecorder
from serialref.recorders.pgn import PgnRecorder
from serialref.referee.daemon import PortPlan, RefereeDaemon
from serialref.referee.settings import MatchSettings
from serialref.testing import Peer, null_modem
from serialref.timecontrol import TimeControl


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
            self.recorders,
            [MoveWatcher(self.moves)],
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

    def sign_on_both(self) -> None:
        for peer, name in ((self.a, "Alpha"), (self.b, "Beta")):
            peer.send_line(format_record(records.sign_on(chess.Board(), name)))
            peer.expect("reset")


def play(peer: Peer, board: chess.Board, san: str) -> None:
    """Send a reply with ``san`` from ``board`` and play it there."""
    peer.send_line(format_record(records.reply(board, board.parse_san(san))))
    board.push_san(san)


@pytest.fixture
def start_referee(tmp_path: Path) -> Iterator[Callable[..., RunningReferee]]:
    """Start a referee daemon with the given match settings; stopped at the end of the test."""
    with ExitStack() as stack:

        def start(**settings: object) -> RunningReferee:
            running = RunningReferee(tmp_path, stack, **settings)
            stack.callback(running.stop)
            running.start()
            return running

        yield start


@pytest.fixture
def referee(start_referee: Callable[..., RunningReferee]) -> RunningReferee:
    return start_referee()


@pytest.fixture
def player_move() -> Callable[[Peer, chess.Board, str], None]:
    return play
