"""``run_client`` end to end: a built-in player on a port, a scripted referee on the far end."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import chess
import chess.pgn
import processes
import pytest
from clientthread import ClientThread, client_on, read_request
from enginetools import fake_uci

from serialref import records
from serialref.client import make_builtin_player
from serialref.client.players import Decision, RandomPlayer, ThinkRequest
from serialref.client.runner import run_client
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import PortOpenError, RecorderError
from serialref.testing import Peer
from serialref.wire.nullmodem import null_modem_cable

TIMEOUT = 5.0


def line(record: EpdRecord) -> str:
    return format_record(record)


def test_client_signs_on_plays_and_leaves_on_disconnect(
    null_modem: tuple[str, Peer], tmp_path: Path
) -> None:
    path, peer = null_modem
    log = tmp_path / "client.log"
    with client_on(path, RandomPlayer(1), peer, name="Tester", log_path=log) as client:
        sign_on = read_request(peer)
        assert sign_on.operand_texts("refreq") == ("sign_on",)
        assert sign_on.operand_texts("tcsi") == ("", "Tester")

        board = chess.Board()
        peer.send_line(line(records.reset(board)))
        peer.send_line(line(records.inform(board, [("White", "Tester"), ("TimeControl", "60+1")])))
        peer.send_line(line(records.respond(board, (0, 0), None)))
        first = read_request(peer)
        assert first.operand_texts("refreq") == ("reply",)
        assert first.position == EpdRecord.from_board(board).position
        board.push(first.move("sm", board))

        answer = next(iter(board.legal_moves))
        peer.send_line(line(records.respond(board, (1_000, 2_000), board.san(answer))))
        board.push(answer)
        second = read_request(peer)
        assert second.position == EpdRecord.from_board(board).position
        assert second.move("sm", board) in board.legal_moves

        peer.send_line(line(records.conclude(board, (2_000, 2_000))))
        peer.send_line(line(records.disconnect(board)))
        assert client.result() == 0

    transcript = log.read_text(encoding="ascii")
    assert "-> " + format_record(sign_on) in transcript
    assert "<- " + line(records.disconnect(board)) in transcript
    assert transcript.splitlines()[0][:4].isdigit()  # every entry starts with its timestamp


def test_noise_on_the_line_does_not_stop_the_client(null_modem: tuple[str, Peer]) -> None:
    path, peer = null_modem
    with client_on(path, RandomPlayer(1), peer, name="Tester") as client:
        read_request(peer)
        peer.send_bytes(b"\x1b[2J\x00garbage\r\n")
        peer.send_line("not a record at all")
        peer.send_line(line(records.reset(chess.Board())))
        peer.send_line(line(records.respond(chess.Board(), (0, 0), None)))
        assert read_request(peer).operand_texts("refreq") == ("reply",)
        peer.send_line(line(records.disconnect(chess.Board())))
        assert client.result() == 0


def test_sign_on_is_repeated_when_no_reset_comes(null_modem: tuple[str, Peer]) -> None:
    path, peer = null_modem
    skew = [0.0]

    def clock() -> float:
        return time.monotonic() + skew[0]

    with client_on(path, RandomPlayer(1), peer, name="Tester", clock=clock):
        assert read_request(peer).operand_texts("refreq") == ("sign_on",)
        skew[0] = 5.0
        peer.send_line("wake up")  # the client re-checks its deadline after any event
        assert read_request(peer).operand_texts("refreq") == ("sign_on",)


def test_an_unopenable_port_raises_and_closes_the_player(tmp_path: Path) -> None:
    closed: list[bool] = []

    class Player(RandomPlayer):
        async def close(self) -> None:
            closed.append(True)

    with pytest.raises(PortOpenError, match="no such device"):
        run_client(str(tmp_path / "ttyNothing"), Player(1))
    assert closed == [True]
    with pytest.raises(RecorderError, match="client log"):
        run_client(str(tmp_path / "ttyNothing"), Player(1), log_path=tmp_path / "no" / "log")
    assert closed == [True, True]


def test_a_lost_line_is_reopened_and_the_client_signs_on_again() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(TIMEOUT)
        url = f"socket://127.0.0.1:{server.getsockname()[1]}"
        client = ClientThread(lambda: run_client(url, RandomPlayer(1), name="Tester", once=True))
        client.start()
        try:
            connection, _ = server.accept()
            with connection:
                assert b"refreq sign_on" in _receive_line(connection)
            # The far end hung up: the client must come back by itself.
            connection, _ = server.accept()
            with connection:
                assert b"refreq sign_on" in _receive_line(connection)
                connection.sendall(line(records.disconnect(chess.Board())).encode() + b"\r\n")
                assert client.result() == 0
        finally:
            client.result()


def _receive_line(connection: socket.socket) -> bytes:
    connection.settimeout(TIMEOUT)
    data = b""
    while not data.endswith(b"\r\n"):
        chunk = connection.recv(4096)
        assert chunk, f"connection closed after {data!r}"
        data += chunk
    return data


_SUBPROCESS_CLIENT = textwrap.dedent(
    """
    import sys
    from serialref.client import make_builtin_player
    from serialref.client.runner import run_client

    sys.exit(run_client(sys.argv[1], make_builtin_player("greedy", 1)))
    """
)


def test_sigterm_makes_the_client_sign_off(null_modem: tuple[str, Peer]) -> None:
    path, peer = null_modem
    process = processes.start(
        [sys.executable, "-c", _SUBPROCESS_CLIENT, path],
        stderr=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    try:
        assert read_request(peer).operand_texts("tcsi") == ("", "serialref greedy")
        process.send_signal(signal.SIGTERM)
        assert read_request(peer).operand_texts("refreq") == ("sign_off",)
        _, stderr = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
    assert process.returncode == 0, stderr.decode(errors="replace")
    assert b"signing off" in stderr


def test_factory_players_run_a_whole_exchange(null_modem: tuple[str, Peer]) -> None:
    path, peer = null_modem
    player = make_builtin_player("greedy", 3)
    client = ClientThread(lambda: run_client(path, player, once=True))
    client.start()
    try:
        assert read_request(peer).operand_texts("tcsi") == ("", "serialref greedy")
        board = chess.Board("4k3/8/8/3q4/8/8/8/3RK3 w - - 0 1")
        peer.send_line(line(records.reset(board)))
        peer.send_line(line(records.respond(board, (0, 0), None)))
        assert read_request(peer).operand_texts("sm") == ("Rxd5",)
    finally:
        peer.send_line(line(records.disconnect(chess.Board())))
        assert client.result() == 0


# -- a real client process with an engine that thinks until it is stopped ------------------

ROOT = Path(__file__).resolve().parents[2]


class EngineClient:
    """``serialref client`` in its own process, bridging the scripted UCI engine."""

    def __init__(self, port: str, directory: Path, behaviour: str = "obey-stop") -> None:
        self.engine_log = directory / "engine.log"
        self.client_log = directory / "client.log"
        engine = shlex.join(fake_uci(self.engine_log, behaviour, "cp 0"))
        command = ["client", port, "--engine", engine, "--once", "--log", str(self.client_log)]
        self.process = processes.start(
            [sys.executable, "-m", "serialref", *command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )

    def engine_commands(self) -> list[str]:
        return self.engine_log.read_text().splitlines() if self.engine_log.exists() else []

    def searches(self) -> int:
        return sum(line.startswith("go") for line in self.engine_commands())

    def await_engine(self, condition: Callable[[list[str]], bool]) -> list[str]:
        """Wait for what the engine process (another process) writes to its log."""
        deadline = time.monotonic() + TIMEOUT
        pause = threading.Event()
        while not condition(commands := self.engine_commands()):
            assert time.monotonic() < deadline, commands
            pause.wait(0.01)
        return commands

    def finish(self) -> str:
        _, stderr = self.process.communicate(timeout=TIMEOUT)
        assert self.process.returncode == 0, stderr.decode(errors="replace")
        return stderr.decode(errors="replace")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate()


@contextmanager
def engine_client(
    port: str, directory: Path, behaviour: str = "obey-stop"
) -> Iterator[EngineClient]:
    client = EngineClient(port, directory, behaviour)
    try:
        yield client
    finally:
        client.close()


def start_game(peer: Peer, board: chess.Board, consumed: tuple[int, int] = (0, 0)) -> None:
    peer.send_line(line(records.reset(board)))
    peer.send_line(line(records.inform(board, [("Round", "1"), ("TimeControl", "60+1")])))
    peer.send_line(line(records.respond(board, consumed, None)))


def searching(commands: list[str], count: int) -> bool:
    return sum(command.startswith("go") for command in commands) >= count


def stopped(commands: list[str], count: int) -> bool:
    return commands.count("stop") >= count


@pytest.mark.parametrize("crossing", ["conclude", "reset"])
def test_a_search_the_referee_moved_on_from_is_stopped_and_never_answered(
    null_modem: tuple[str, Peer], tmp_path: Path, crossing: str
) -> None:
    path, peer = null_modem
    with engine_client(path, tmp_path) as client:
        assert read_request(peer).operand_texts("refreq") == ("sign_on",)
        start_game(peer, chess.Board())
        client.await_engine(lambda commands: searching(commands, 1))
        if crossing == "conclude":
            peer.send_line(line(records.conclude(chess.Board(), (3_000, 0))))
        else:
            peer.send_line(line(records.reset(chess.Board())))
        client.await_engine(lambda commands: stopped(commands, 1))
        # The stopped search answered; its move must not reach the referee. The next
        # game asks from another position, with 59 of 60 s used: the engine searches
        # until the client stops it before the flag, and that reply is the first line.
        after_e4 = chess.Board()
        after_e4.push_san("e4")
        start_game(peer, after_e4, consumed=(0, 59_000))
        first = read_request(peer)
        assert first.operand_texts("refreq") == ("reply",)
        assert first.position == EpdRecord.from_board(after_e4).position
        assert first.move("sm", after_e4) in after_e4.legal_moves
        assert searching(client.engine_commands(), 2) and stopped(client.engine_commands(), 2)
        peer.send_line(line(records.disconnect(after_e4)))
        stderr = client.finish()
    assert "refreq reply" not in stderr  # the transcript stays in the log file
    transcript = client.client_log.read_text()
    assert transcript.count("-> ") == 2 and transcript.count("refreq reply") == 1, transcript


def test_only_the_newest_respond_is_answered_by_a_client_process(
    null_modem: tuple[str, Peer], tmp_path: Path
) -> None:
    path, peer = null_modem
    with engine_client(path, tmp_path) as client:
        read_request(peer)
        start_game(peer, chess.Board())
        client.await_engine(lambda commands: searching(commands, 1))
        # A newer respond crosses the search: another position, little time left.
        after_d4 = chess.Board()
        after_d4.push_san("d4")
        peer.send_line(line(records.respond(after_d4, (0, 59_000), None)))
        reply = read_request(peer)
        assert reply.position == EpdRecord.from_board(after_d4).position
        with pytest.raises(TimeoutError):
            peer.read_line(timeout=0.5)  # and nothing for the first respond, ever
        peer.send_line(line(records.disconnect(after_d4)))
        client.finish()
    commands = client.engine_commands()
    assert commands.count("stop") == 2
    d4 = "position fen rnbqkbnr/pppppppp/8/8/3P4/"
    assert any(command.startswith(d4) for command in commands)


def test_an_engine_that_never_answers_still_moves_before_the_flag(
    null_modem: tuple[str, Peer], tmp_path: Path
) -> None:
    path, peer = null_modem
    board = chess.Board("4k3/8/8/3q4/8/8/8/3RK3 w - - 0 1")
    with engine_client(path, tmp_path, "silent") as client:
        read_request(peer)
        peer.send_line(line(records.reset(board)))
        peer.send_line(line(records.inform(board, [("TimeControl", "60+1")])))
        asked = time.monotonic()
        peer.send_line(line(records.respond(board, (58_000, 0), None)))  # 2 s left
        reply = read_request(peer)
        answered = time.monotonic()
        assert answered - asked < 2.0  # the flag
        assert reply.operand_texts("sm") == ("Rxd5",)  # the one-ply choice
        peer.send_line(line(records.disconnect(board)))
        client.finish()
    log = client.client_log.read_text()
    assert "clock is nearly out" in log and "did not answer 'stop'" in log
    assert "stop" in client.engine_commands()


def test_a_disconnect_while_the_engine_thinks_ends_the_client_at_once(
    null_modem: tuple[str, Peer], tmp_path: Path
) -> None:
    path, peer = null_modem
    with engine_client(path, tmp_path) as client:
        read_request(peer)
        start_game(peer, chess.Board())
        client.await_engine(lambda commands: searching(commands, 1))
        peer.send_line(line(records.disconnect(chess.Board())))
        client.finish()
        with pytest.raises(TimeoutError):
            peer.read_line(timeout=0.2)
    assert "stop" in client.engine_commands()


def test_a_fractional_time_control_end_to_end(tmp_path: Path) -> None:
    """``serialref run --tc 10+0.10`` with two client processes: tag, clocks, increments."""
    pgn, journal = tmp_path / "match.pgn", tmp_path / "match.jsonl"
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    with null_modem_cable() as cable_a, null_modem_cable() as cable_b:
        referee = processes.start(
            [sys.executable, "-m", "serialref", "run", cable_a.path_a, cable_b.path_a,
             "--tc", "10+0.10", "--pgn", str(pgn), "--journal", str(journal),
             "--reset-delay", "0.1", "--conclude-delay", "0.1"],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        processes.wait_for_match_start(referee, journal)
        players = [
            processes.start(
                [sys.executable, "-m", "serialref", "client", path, "--player", kind,
                 "--seed", "5", "--once", "--log-level", "info", "--log", str(log)],
                cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for path, kind, log in [
                (cable_a.path_b, "greedy", logs[0]),
                (cable_b.path_b, "random", logs[1]),
            ]
        ]
        _, stderr = referee.communicate(timeout=60)
        outputs = [player.communicate(timeout=10)[1].decode() for player in players]
    assert referee.returncode == 0, stderr.decode(errors="replace")
    assert [player.returncode for player in players] == [0, 0], outputs
    with pgn.open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None and game.errors == []
    assert game.headers["TimeControl"] == "10+0.10"  # as configured
    assert game.headers["Termination"] != "time forfeit"
    clocks = [node.clock() for node in game.mainline()]
    assert all(clock is not None and clock > 9 for clock in clocks)  # + 0.1 s a move
    assert "[%emt 0:00:00." in pgn.read_text()  # move times in tenths
    moves = [json.loads(entry) for entry in journal.read_text().splitlines()]
    moves = [entry for entry in moves if entry["event"] == "MovePlayed"]
    last = moves[-1]
    for side in (0, 1):
        granted = 10 + 0.1 * last["moves_made"][side]
        assert last["remaining"][side] + last["consumed"][side] == pytest.approx(granted)
    # At the default level a client prints what a person wants, not the transcript.
    for output in outputs:
        assert "game started: round 1" in output and "time control 10+0.10" in output
        assert "game over:" in output
        assert "refreq" not in output and "refcom" not in output
    assert "refcom respond" in logs[0].read_text()


def test_a_player_that_breaks_is_reported_as_a_fault(
    null_modem: tuple[str, Peer], caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(RandomPlayer):
        async def think(self, request: ThinkRequest) -> Decision:
            raise RuntimeError("a bug")

    path, peer = null_modem
    client = ClientThread(lambda: run_client(path, Broken(1), name="Tester", once=True))
    client.start()
    try:
        read_request(peer)
        peer.send_line(line(records.reset(chess.Board())))
        peer.send_line(line(records.respond(chess.Board(), (0, 0), None)))
        fault = read_request(peer)
        assert fault.operand_texts("refreq") == ("fault",)
        assert "internal error: RuntimeError('a bug')" in fault.operand_texts("c0")[0]
    finally:
        peer.send_line(line(records.disconnect(chess.Board())))
        assert client.result() == 0
    assert "the player failed unexpectedly" in caplog.text
