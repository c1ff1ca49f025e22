"""The referee daemon on its own thread over pty pairs (doubles.RunningReferee), as fixtures."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import chess
import pytest
from doubles import RunningReferee

from serialref import records
from serialref.epd.writer import format_record
from serialref.testing import Peer


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
