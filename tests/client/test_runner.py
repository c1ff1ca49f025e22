"""``run_client`` in this process against a scripted referee on the pty harness.

The end-to-end runs (a client process, engines, reconnects) are in
tests/integration/test_client.py; here the runner is driven in-process, so a test
can send it a stop signal and look at what it leaves behind.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from pathlib import Path

import chess
import pytest
from clientthread import client_on, read_request

from serialref import records
from serialref.client.players import Decision, GreedyPlayer, ThinkRequest
from serialref.client.runner import EXIT_DISCONNECTED, EXIT_STOPPED, run_client
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import EngineError, PortOpenError
from serialref.records import Refreq
from serialref.testing import Peer

TIMEOUT = 5.0


class Player(GreedyPlayer):
    """The greedy player, noting its life cycle and every position it was asked about."""

    def __init__(self) -> None:
        super().__init__(1)
        self.calls: list[str] = []
        self.asked: list[str] = []

    async def start(self) -> None:
        self.calls.append("start")

    async def think(self, request: ThinkRequest) -> Decision:
        self.asked.append(request.board.fen())
        return await super().think(request)

    async def close(self) -> None:
        self.calls.append("close")


def line(record: EpdRecord) -> str:
    return format_record(record)


def request(peer: Peer) -> tuple[Refreq, EpdRecord]:
    record = read_request(peer)
    return records.player_request(record), record


def test_it_signs_on_with_its_name(null_modem: tuple[str, Peer]) -> None:
    path, peer = null_modem
    player = Player()
    with client_on(path, player, peer, name="Tester"):
        kind, sign_on = request(peer)
        assert kind is Refreq.SIGN_ON
        assert sign_on.operand_texts("tcsi") == ("", "Tester")
        assert player.calls == ["start"]


def test_without_a_name_the_player_names_itself(null_modem: tuple[str, Peer]) -> None:
    path, peer = null_modem
    with client_on(path, Player(), peer):
        _, sign_on = request(peer)
        assert records.sign_on_identity(sign_on).name == "serialref greedy"


def test_a_respond_is_answered_from_its_position_and_disconnect_ends_it(
    null_modem: tuple[str, Peer],
) -> None:
    path, peer = null_modem
    player = Player()
    with client_on(path, player, peer, name="Tester") as running:
        request(peer)
        board = chess.Board("4k3/8/8/3q4/8/8/8/3RK3 w - - 0 1")
        peer.send_line(line(records.reset(board)))
        peer.send_line(line(records.inform(board, [("White", "Tester"), ("TimeControl", "-")])))
        peer.send_line(line(records.respond(board, (0, 0), None)))
        kind, reply = request(peer)
        assert kind is Refreq.REPLY
        assert reply.position == EpdRecord.from_board(board).position
        assert reply.operand_texts("sm") == ("Rxd5",)  # greedy: the queen
        board.push_san("Rxd5")

        before = board.copy()
        board.push_san("Kf7")
        peer.send_line(line(records.respond(before, (1_000, 1_000), "Kf7")))
        kind, reply = request(peer)
        assert kind is Refreq.REPLY
        assert reply.position == EpdRecord.from_board(board).position
        assert reply.move("sm", board) in board.legal_moves
        assert player.asked == [
            "4k3/8/8/3q4/8/8/8/3RK3 w - - 0 1",
            board.fen(),
        ]

        peer.send_line(line(records.conclude(board, (2_000, 2_000))))
        peer.send_line(line(records.disconnect(board)))
        assert running.result() == EXIT_DISCONNECTED == 0
    assert player.calls == ["start", "close"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_signs_off_and_exits_0(
    null_modem: tuple[str, Peer], signum: int, caplog: pytest.LogCaptureFixture
) -> None:
    # Signals reach the main thread only: here the client runs there and the referee
    # is scripted on a thread. The signal goes out once the sign-on shows that the
    # client has its handlers in place.
    path, peer = null_modem
    player = Player()
    heard: list[Refreq] = []
    failures: list[BaseException] = []

    def referee() -> None:
        try:
            heard.append(request(peer)[0])
            os.kill(os.getpid(), signum)
            heard.append(request(peer)[0])
        except BaseException as exc:  # the client must end all the same
            failures.append(exc)
            peer.send_line(line(records.disconnect(chess.Board())))

    handling_before = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=referee, name="test-referee")
    thread.start()
    try:
        with caplog.at_level(logging.WARNING, logger="serialref.client.runner"):
            exit_code = run_client(path, player, name="Tester")
    finally:
        thread.join(TIMEOUT)
    assert failures == []
    assert heard == [Refreq.SIGN_ON, Refreq.SIGN_OFF]
    assert exit_code == EXIT_STOPPED == 0
    assert "stopped by a signal: signing off" in caplog.text
    assert player.calls == ["start", "close"]
    # The process's own handling of the signal is back as it was.
    assert signal.getsignal(signal.SIGTERM) == handling_before


def test_a_player_that_cannot_start_fails_before_the_port_is_opened(tmp_path: Path) -> None:
    class Missing(Player):
        async def start(self) -> None:
            raise EngineError("no such engine: 'stockfish-99'")

    player = Missing()
    with pytest.raises(EngineError, match="stockfish-99"):
        run_client(str(tmp_path / "ttyNothing"), player)
    assert player.calls == ["close"]
    with pytest.raises(PortOpenError):
        run_client(str(tmp_path / "ttyNothing"), Player())


def test_the_transcript_goes_to_the_log_file_and_logging_is_left_as_it_was(
    null_modem: tuple[str, Peer], tmp_path: Path
) -> None:
    path, peer = null_modem
    package = logging.getLogger("serialref")
    before = (package.level, package.propagate, list(package.handlers))
    log = tmp_path / "client.log"
    with client_on(path, Player(), peer, name="Tester", log_path=log):
        _, sign_on = request(peer)
        peer.send_line("\x1b[2J noise")
    transcript = log.read_text(encoding="ascii")
    assert f"-> {line(sign_on)}" in transcript
    assert "ignored a malformed line" in transcript
    assert "\x1b" not in transcript
    assert (package.level, package.propagate, list(package.handlers)) == before


class FailsOnce(Player):
    """An engine that dies on its first search; ``restart_fails`` keeps it dead."""

    def __init__(self, *, restart_fails: bool) -> None:
        super().__init__()
        self.restart_fails = restart_fails
        self.failed = False

    async def think(self, request: ThinkRequest) -> Decision:
        if not self.failed:
            self.failed = True
            raise EngineError("engine exited with code -11")
        return await super().think(request)

    async def restart(self) -> None:
        self.calls.append("restart")
        if self.restart_fails:
            raise EngineError("cannot start 'stockfish': no such file")


def ask_first_move(peer: Peer) -> None:
    board = chess.Board()
    peer.send_line(line(records.reset(board)))
    peer.send_line(line(records.respond(board, (0, 0), None)))


def test_an_engine_that_fails_is_restarted_and_the_client_signs_on_again(
    null_modem: tuple[str, Peer],
) -> None:
    # Signing on again makes the referee restore the game (PROTOCOL.md 6).
    path, peer = null_modem
    player = FailsOnce(restart_fails=False)
    with client_on(path, player, peer, name="Tester"):
        request(peer)
        ask_first_move(peer)
        assert request(peer)[0] is Refreq.SIGN_ON
        ask_first_move(peer)
        assert request(peer)[0] is Refreq.REPLY
    assert player.calls == ["start", "restart", "close"]


def test_an_engine_that_cannot_be_restarted_is_reported_as_a_fault(
    null_modem: tuple[str, Peer],
) -> None:
    path, peer = null_modem
    player = FailsOnce(restart_fails=True)
    with client_on(path, player, peer, name="Tester"):
        request(peer)
        ask_first_move(peer)
        kind, fault = request(peer)
        assert kind is Refreq.FAULT
        assert fault.operand_texts("c0") == (
            "engine exited with code -11; restart failed: cannot start 'stockfish': no such file",
        )
