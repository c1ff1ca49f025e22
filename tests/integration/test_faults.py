"""Every verdict right under faults (PROTOCOL.md 7), tried as a hostile player, a careless
operator and a flaky machine would: a real ``serialref run`` process, scripted players on
the far ends of pty cables, signals, full disks, floods and stale replies.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn
import processes
import pytest
from processes import wait_for

from serialref import records
from serialref.control.client import send_request
from serialref.control.protocol import Request
from serialref.epd.operations import Operation
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.testing import Peer, null_modem, quiet_game

RUN_TIMEOUT = 30.0


@dataclass
class Referee:
    """``serialref run`` on two pty ports, with the players' ends for the test."""

    directory: Path
    ports: tuple[str, str]
    a: Peer
    b: Peer
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: dict[int, Path] = field(default_factory=dict)

    @property
    def journal(self) -> Path:
        return self.directory / "journal.jsonl"

    @property
    def pgn(self) -> Path:
        return self.directory / "games.pgn"

    def start(
        self, *options: str, fsize: int | None = None, stdout: int | None = None
    ) -> subprocess.Popen[bytes]:
        """Start a referee and return once it has opened its ports (it then journals)."""
        before = len(self.entries("MatchStarted"))
        inode = self.journal.stat().st_ino if self.journal.exists() else None
        command = [
            sys.executable, "-m", "serialref", "run", *self.ports,
            "--journal", str(self.journal), "--pgn", str(self.pgn),
            "--reset-delay", "0.2", "--conclude-delay", "0.2", *options,
        ]  # fmt: skip

        # The log goes to a file: a pipe nobody reads would stop the referee when full.
        log = self.directory / f"referee-{len(self.processes)}.log"
        with log.open("wb") as stderr:
            process = processes.start(
                command,
                stdout=subprocess.DEVNULL if stdout is None else stdout,
                stderr=stderr,
            )
        if fsize is not None:  # long before the interpreter has started up and written
            resource.prlimit(process.pid, resource.RLIMIT_FSIZE, (fsize, fsize))
        self.logs[process.pid] = log
        self.processes.append(process)

        def started() -> bool:
            if not self.journal.exists():
                return False
            fresh = self.journal.stat().st_ino != inode  # --new-match set the old one aside
            return len(self.entries("MatchStarted")) > (0 if fresh else before)

        wait_for(lambda: started() or process.poll() is not None, "the referee to open its ports")
        return process

    def finish(self, process: subprocess.Popen[bytes], code: int = 0) -> str:
        """Wait for the referee to end with ``code``; its warnings and errors."""
        process.wait(timeout=RUN_TIMEOUT)
        text = self.logs[process.pid].read_text(errors="replace")
        assert process.returncode == code, text
        return "".join(line for line in text.splitlines(keepends=True) if " INFO " not in line)

    def entries(self, name: str | None = None) -> list[dict[str, object]]:
        try:
            lines = self.journal.read_bytes().split(b"\n")[:-1]
        except FileNotFoundError:
            return []  # none yet, or --new-match has just set the last one aside
        found = [json.loads(line) for line in lines]
        return [entry for entry in found if name is None or entry["event"] == name]

    def games(self) -> list[chess.pgn.Game]:
        found = []
        with self.pgn.open() as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                assert game.errors == []
                found.append(game)
        return found


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[Referee]:
    with ExitStack() as stack:
        (path_a, a), (path_b, b) = (stack.enter_context(null_modem()) for _ in "ab")
        match = Referee(tmp_path, (path_a, path_b), a, b)
        yield match
        for process in match.processes:
            if process.poll() is None:
                process.kill()
            process.wait()


def sign_on(peer: Peer, name: str) -> EpdRecord:
    peer.send_line(format_record(records.sign_on(chess.Board(), name)))
    return peer.expect("reset")


def start_game(match: Referee) -> None:
    """Both sign on; both are informed; White (port a in game 1) is asked to move."""
    sign_on(match.a, "Alpha")
    sign_on(match.b, "Beta")
    match.a.expect("inform")
    match.b.expect("inform")
    match.a.expect("respond")


def move(peer: Peer, board: chess.Board, san: str, *extra: Operation) -> str:
    """Send the reply; returns its text (to send it again later)."""
    text = format_record(records.reply(board, board.parse_san(san), *extra))
    peer.send_line(text)
    board.push_san(san)
    return text


def resign(peer: Peer, board: chess.Board) -> None:
    peer.send_line(format_record(records.reply(board, None, Operation("resign"))))


def notes(match: Referee) -> list[str]:
    return [str(entry["note"]) for entry in match.entries("LineReceived") if entry.get("note")]


def ended(match: Referee) -> list[dict[str, object]]:
    return match.entries("GameEnded")


# --- 1. replies that cross a game boundary or a restore ---------------------------------


def test_a_late_reply_from_the_last_game_is_stale_not_an_infraction(referee: Referee) -> None:
    process = referee.start("--games", "2", "--tc", "2")
    start_game(referee)
    board = chess.Board()
    move(referee.a, board, "e4")
    referee.b.expect("respond")  # Black thinks too long: its flag falls
    for peer in (referee.a, referee.b):
        peer.expect("inform")
        peer.expect("conclude")
    late_reply = format_record(records.reply(board, board.parse_san("e5")))
    for peer in (referee.a, referee.b):
        peer.expect("reset")
        peer.expect("inform")
    referee.b.expect("respond")  # game 2: Beta has White
    referee.b.send_line(late_reply)  # game 1's answer, crossing game 2's respond
    game2 = chess.Board()
    move(referee.b, game2, "d4")
    referee.a.expect("respond")
    resign(referee.a, game2)
    referee.finish(process)
    first, second = referee.games()
    assert (first.headers["Result"], first.headers["Termination"]) == ("1-0", "time forfeit")
    assert (second.headers["Result"], second.headers["Termination"]) == ("1-0", "normal")
    assert [move.uci() for move in second.mainline_moves()] == ["d2d4"]
    assert "ignored: stale reply: it answers an earlier respond" in notes(referee)


def test_a_player_that_answers_a_restore_and_the_respond_before_it_loses_nothing(
    referee: Referee,
) -> None:
    process = referee.start("--tc", "60+1")
    start_game(referee)
    board = chess.Board()
    move(referee.a, board, "e4")
    referee.b.expect("respond")
    # Beta restarts while thinking: the restore asks it again for the same move.
    sign_on(referee.b, "Beta")
    for refcom in ("inform", "execute", "respond"):
        referee.b.expect(refcom)
    answer = move(referee.b, board, "e5")
    referee.b.send_line(answer)  # the same answer, for the respond before the restore
    referee.a.expect("respond")
    move(referee.a, board, "Nf3")
    referee.b.expect("respond")
    referee.b.send_line(answer)  # and once more, while it is to move again
    move(referee.b, board, "Nc6")
    referee.a.expect("respond")
    resign(referee.a, board)
    referee.finish(process)
    (game,) = referee.games()
    assert (game.headers["Result"], game.headers["Termination"]) == ("0-1", "normal")
    assert [m.uci() for m in game.mainline_moves()] == ["e2e4", "e7e5", "g1f3", "b8c6"]
    assert notes(referee).count("ignored: stale reply: it answers an earlier respond") == 2


# --- 2. a game is played or it is not ----------------------------------------------------


def test_a_player_leaving_during_the_reset_delay_does_not_skip_the_game(
    referee: Referee,
) -> None:
    process = referee.start("--games", "2", "--reset-delay", "1.5")
    sign_on(referee.a, "Alpha")
    sign_on(referee.b, "Beta")
    referee.b.send_line(format_record(records.sign_off(chess.Board())))
    sign_on(referee.b, "Beta")
    for game, white, black in ((1, referee.a, referee.b), (2, referee.b, referee.a)):
        white.expect("inform")
        black.expect("inform")
        white.expect("respond")
        resign(white, chess.Board())
        for peer in (white, black):
            peer.expect("inform")
            peer.expect("conclude")
        if game == 1:
            for peer in (referee.a, referee.b):
                peer.expect("reset")
    referee.finish(process)
    assert [game.headers["Round"] for game in referee.games()] == ["1", "2"]
    assert [entry["game"] for entry in referee.entries("GameStarted")] == [1, 2]


# --- 3. a player that does not read -------------------------------------------------------


def test_a_player_that_floods_and_never_reads_stalls_neither_the_referee_nor_the_flag(
    referee: Referee,
) -> None:
    config = referee.directory / "match.toml"
    config.write_text("[ports.b]\nwrite_timeout = 1.0\n")
    process = referee.start("--tc", "4", "--config", str(config))
    start_game(referee)
    board = chess.Board()
    for ply, uci in enumerate(quiet_game(300)):  # a restore is more than a pty holds
        mover, waiting = (referee.a, referee.b) if ply % 2 == 0 else (referee.b, referee.a)
        move(mover, board, board.san(chess.Move.from_uci(uci)))
        waiting.expect("respond")
    flood = (format_record(records.sign_on(board, "Beta")) + "\r\n").encode("ascii")

    def send_flood() -> None:
        # Once the referee gives up on the line this write blocks, until the cable is closed.
        with suppress(OSError):
            referee.b.send_bytes(flood * 3000)  # and Beta never reads again

    flooder = threading.Thread(target=send_flood, name="test-flooder", daemon=True)
    flooder.start()
    referee.a.expect("inform", timeout=10.0)  # Alpha's flag falls on time all the same
    referee.a.expect("conclude")
    referee.finish(process)
    referee.b.close()
    flooder.join(5.0)
    (result,) = ended(referee)
    last = referee.entries("MovePlayed")[-1]
    assert (result["result"], result["termination"]) == ("0-1", "time forfeit")
    alpha_left = float(str(last["remaining"][0]))  # type: ignore[index]
    assert alpha_left <= float(result["wall"]) - float(last["wall"]) < alpha_left + 1.0
    assert any("line lost" in str(entry["reason"]) for entry in referee.entries("PlayerSignedOff"))


# --- 4. an orderly stop, and the restart after it -----------------------------------------


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=str)
def test_a_restart_after_an_orderly_stop_waits_for_both_players(
    referee: Referee, stop: signal.Signals
) -> None:
    process = referee.start("--tc", "2")
    start_game(referee)
    board = chess.Board()
    move(referee.a, board, "e4")
    referee.b.expect("respond")
    time.sleep(0.5)  # Beta has thought half a second when the referee is stopped
    process.send_signal(stop)
    for peer in (referee.a, referee.b):
        peer.expect("disconnect")
    referee.finish(process, code=4)
    restarted = referee.start("--tc", "2")
    # The players left when told disconnect: nothing is sent, no clock runs.
    with pytest.raises(TimeoutError):
        referee.b.read_line(timeout=3.0)
    assert ended(referee) == []
    sign_on(referee.b, "Beta")
    for refcom in ("inform", "execute"):
        referee.b.expect(refcom)
    with pytest.raises(TimeoutError):
        referee.b.read_line(timeout=0.5)  # no respond until Alpha is back too
    sign_on(referee.a, "Alpha")
    for refcom in ("inform", "execute"):
        referee.a.expect(refcom)
    respond = referee.b.expect("respond")
    assert respond.clock_pair("cc") == (0, 0)
    move(referee.b, board, "e5")
    referee.a.expect("respond")
    resign(referee.a, board)
    referee.finish(restarted)
    (game,) = referee.games()
    assert game.headers["Termination"] == "normal"
    assert [m.uci() for m in game.mainline_moves()] == ["e2e4", "e7e5"]
    black_clock = list(game.mainline())[1].clock()  # 2 s less what Beta used, before and after
    assert black_clock is not None and 1.0 <= black_clock <= 1.5 + 1e-9


def test_a_game_started_again_and_cut_short_by_a_crash_starts_on_full_clocks(
    referee: Referee,
) -> None:
    """An orderly stop keeps the clocks of the game in progress; a supervisor's
    restart-game leaves them behind, even when a crash in the reset delay follows."""
    control = ("--control-socket", str(referee.directory / "control.sock"))
    process = referee.start("--tc", "300+1", *control)
    start_game(referee)
    board = chess.Board()
    for peer, san in zip((referee.a, referee.b) * 2, ("e4", "e5", "Nf3", "Nc6"), strict=True):
        if san in ("e4", "e5"):
            time.sleep(1.1)  # the player thinks: a clock of a second and more to leave behind
        move(peer, board, san)
        (referee.b if peer is referee.a else referee.a).expect("respond")
    process.send_signal(signal.SIGTERM)
    for peer in (referee.a, referee.b):
        peer.expect("disconnect")
    referee.finish(process, code=4)

    stopped_again = referee.start("--tc", "300+1", "--reset-delay", "60", *control)
    for peer, name in ((referee.a, "Alpha"), (referee.b, "Beta")):
        sign_on(peer, name)
        peer.expect("inform")
        for _ in board.move_stack:
            peer.expect("execute")
    assert referee.a.expect("respond").clock_pair("cc") == (1, 1)
    reply = send_request(referee.directory / "control.sock", Request("restart-game", ()))
    assert reply.ok, reply.error
    for peer in (referee.a, referee.b):
        peer.expect("reset")  # the reset delay of 60 s runs: the referee dies in it
    stopped_again.kill()
    stopped_again.wait()

    restarted = referee.start("--tc", "300+1", *control)
    for peer in (referee.a, referee.b):
        peer.expect("reset")
        peer.expect("inform")
    assert referee.a.expect("respond").clock_pair("cc") == (0, 0)
    fresh = chess.Board()
    move(referee.a, fresh, "d4")
    referee.b.expect("respond")
    resign(referee.b, fresh)
    referee.finish(restarted)
    (game,) = referee.games()
    first = next(iter(game.mainline()))
    assert (first.move.uci(), first.clock()) == ("d2d4", 300.0)  # 300 s + 1 s, less a sliver


# --- 5. the referee that did not run ------------------------------------------------------


def test_time_the_referee_was_stopped_is_charged_to_no_one(referee: Referee) -> None:
    process = referee.start("--tc", "3")
    start_game(referee)
    board = chess.Board()
    move(referee.a, board, "e4")
    referee.b.expect("respond")
    time.sleep(0.5)
    process.send_signal(signal.SIGSTOP)
    try:
        move(referee.b, board, "e5")  # arrives while the referee is stopped
        time.sleep(4.0)  # longer than Beta's whole clock
    finally:
        process.send_signal(signal.SIGCONT)
    referee.a.expect("respond")
    resign(referee.a, board)
    referee.finish(process)
    (game,) = referee.games()
    assert (game.headers["Result"], game.headers["Termination"]) == ("0-1", "normal")
    assert [m.uci() for m in game.mainline_moves()] == ["e2e4", "e7e5"]
    (stall,) = referee.entries("RefereeStalled")
    assert float(str(stall["seconds"])) >= 3.5


# --- 6. storage faults ---------------------------------------------------------------------


def test_a_journal_that_cannot_be_written_stops_the_match_and_tells_the_players(
    referee: Referee,
) -> None:
    process = referee.start("--tc", "60+1", fsize=12_000)
    start_game(referee)
    board = chess.Board()
    moves = iter(["Nf3", "Nf6", "Ng1", "Ng8"] * 20)
    peers = (referee.a, referee.b)
    turn = 0
    while True:
        move(peers[turn], board, next(moves))
        line = peers[1 - turn].read_line()
        if "refcom fault" in line:
            break
        turn = 1 - turn
    assert 'c0 "referee storage failure"' in line
    peers[1 - turn].expect("disconnect")
    stopped = peers[turn].read_line()
    assert "refcom fault" in stopped
    peers[turn].expect("disconnect")
    stderr = referee.finish(process, code=5)
    assert "File too large" in stderr
    assert referee.entries()[-1]["event"] != "MatchEnded"  # nothing after the failure


def test_after_a_full_disk_the_restart_resumes_at_the_last_relayed_move(
    referee: Referee,
) -> None:
    """Whichever entry the full disk refuses, no player has heard of a move the journal
    lacks (write-ahead, PROTOCOL.md 7): the fault names the position after the last
    move relayed, and the restart replays exactly the moves relayed."""
    process = referee.start("--tc", "60+1", fsize=12_000)
    start_game(referee)
    board = chess.Board()
    peers = (referee.a, referee.b)
    game = iter(quiet_game(80))
    turn = 0
    while True:
        played = chess.Move.from_uci(next(game))
        peers[turn].send_line(format_record(records.reply(board, played)))
        line = peers[1 - turn].read_line()
        if "refcom fault" in line:
            break
        assert f"refcom respond; sm {board.san(played)};" in line
        board.push(played)
        turn = 1 - turn
    position = " ".join(board.fen(en_passant="fen").split()[:4])
    assert parse_record(line).position == position
    peers[1 - turn].expect("disconnect")
    assert parse_record(peers[turn].read_line()).position == position  # its fault
    peers[turn].expect("disconnect")
    referee.finish(process, code=5)
    assert len(board.move_stack) > 4, "the disk filled up before the game got going"

    restarted = referee.start("--tc", "60+1")
    replay = chess.Board()
    for peer in peers:
        peer.expect("reset")
        peer.expect("inform")
        replay = chess.Board()
        for played in board.move_stack:
            execute = peer.expect("execute")
            assert execute.move("sm", replay) == played
            replay.push(played)
    to_move = peers[turn]
    assert "sm" not in to_move.expect("respond")
    resign(to_move, replay)
    referee.finish(restarted)
    (finished,) = referee.games()
    assert list(finished.mainline_moves()) == board.move_stack


def test_a_pgn_that_cannot_be_written_is_completed_from_the_journal_once(
    referee: Referee,
) -> None:
    # A PGN file that already holds a long game leaves no room for this match's game.
    room = 30_000
    earlier = chess.pgn.Game()
    earlier.headers["Event"] = "earlier"
    earlier.add_variation(chess.Move.from_uci("e2e4")).comment = "x" * (room - 300)
    referee.pgn.write_text(str(earlier) + "\n\n")
    process = referee.start("--tc", "60+1", "--games", "2", fsize=room)
    start_game(referee)
    resign(referee.a, chess.Board())
    for peer in (referee.a, referee.b):
        peer.expect("inform")
        peer.expect("conclude")
        peer.expect("reset")
    process.send_signal(signal.SIGTERM)  # the match goes on despite the PGN; stop it here
    for peer in (referee.a, referee.b):
        peer.expect("disconnect")
    referee.finish(process, code=4)
    assert [game.headers["Event"] for game in referee.games()] == ["earlier"]
    restarted = referee.start("--tc", "60+1", "--games", "2")  # no limit now
    assert [game.headers["Round"] for game in referee.games()[1:]] == ["1"]
    sign_on(referee.a, "Alpha")
    sign_on(referee.b, "Beta")
    for peer in (referee.a, referee.b):
        peer.expect("inform")
    referee.b.expect("respond")
    resign(referee.b, chess.Board())
    referee.finish(restarted)
    assert [game.headers["Round"] for game in referee.games()[1:]] == ["1", "2"]


# --- 7. a game cannot start from a finished position --------------------------------------


@pytest.mark.parametrize(
    ("fen", "reason"),
    [
        ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "stalemate"),
        ("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", "White mates"),
        ("7k/8/6K1/8/8/8/8/8 w - - 0 1", "dead position"),
    ],
)
def test_a_finished_start_position_is_refused(referee: Referee, fen: str, reason: str) -> None:
    process = referee.start("--fen", fen)
    stderr = referee.finish(process, code=2)
    assert f"the game is already over there ({reason}" in stderr
    assert len(stderr.strip().splitlines()) == 1


def test_an_opening_book_naming_a_finished_position_is_refused_with_its_line(
    referee: Referee,
) -> None:
    book = referee.directory / "book.epd"
    book.write_text(f"{chess.STARTING_FEN.rsplit(' ', 2)[0]}\n7k/5Q2/6K1/8/8/8/8/8 b - -\n")
    process = referee.start("--openings", str(book))
    stderr = referee.finish(process, code=2)
    assert f"{book}:2: the game is already over there (stalemate)" in stderr


# --- 8. noise costs bounded space ---------------------------------------------------------


def test_line_noise_is_recorded_a_few_times_a_second_then_counted(referee: Referee) -> None:
    process = referee.start("--tc", "60+1")
    start_game(referee)
    began = time.monotonic()
    for _ in range(20):
        referee.b.send_bytes(b"xyz\r\n" * 500)
    referee.b.send_line(format_record(records.sign_off(chess.Board())))  # a line to wait for
    referee.a.expect("inform")
    elapsed = time.monotonic() - began
    referee.finish(process)
    recorded = [note for note in notes(referee) if "not a player request" in note]
    counted = sum(int(str(entry["count"])) for entry in referee.entries("LinesIgnored"))
    assert len(recorded) + counted == 10_000
    assert len(recorded) <= 5 * (elapsed + 1)
    assert referee.journal.stat().st_size < 50_000


def test_faults_a_player_repeats_outside_a_game_are_recorded_a_few_a_second(
    referee: Referee,
) -> None:
    process = referee.start("--tc", "60+1")
    sign_on(referee.a, "Alpha")  # Beta stays away: no game runs
    fault = format_record(records.player_fault(chess.Board(), "x" * 200)) + "\r\n"
    log = referee.logs[process.pid]
    log_before = log.stat().st_size
    began = time.monotonic()
    for _ in range(20):
        referee.a.send_bytes(fault.encode("ascii") * 250)
    sign_on(referee.a, "Alpha")  # a line to wait for: every fault before it has been read
    elapsed = time.monotonic() - began
    process.send_signal(signal.SIGTERM)
    referee.a.expect("disconnect")
    referee.finish(process, code=4)
    recorded = len(referee.entries("Infraction"))
    counted = sum(int(str(entry["count"])) for entry in referee.entries("LinesIgnored"))
    assert 5000 <= recorded + counted <= 5001  # the sign_on waited for may be counted too
    assert 1 <= recorded <= 5 * (elapsed + 1)
    assert referee.journal.stat().st_size < 50_000
    assert log.stat().st_size - log_before < 20_000


def test_a_player_that_repeats_sign_on_is_not_restored_each_time(referee: Referee) -> None:
    process = referee.start("--tc", "600+1")
    start_game(referee)
    board = chess.Board()
    for ply, uci in enumerate(quiet_game(40)):
        mover, waiting = (referee.a, referee.b) if ply % 2 == 0 else (referee.b, referee.a)
        move(mover, board, board.san(chess.Move.from_uci(uci)))
        waiting.expect("respond")
    before = referee.journal.stat().st_size
    log = referee.logs[process.pid]
    log_before = log.stat().st_size
    stop_reading = threading.Event()

    def read_everything() -> None:  # Beta reads all it is sent: nothing waits on its line
        while not stop_reading.is_set():
            with suppress(TimeoutError):
                referee.b.read_line(timeout=0.1)

    reader = threading.Thread(target=read_everything, name="test-reader", daemon=True)
    reader.start()
    try:
        sign_on_line = format_record(records.sign_on(board, "Beta")) + "\r\n"
        began = time.monotonic()
        while time.monotonic() - began < 1.5:
            referee.b.send_bytes(sign_on_line.encode("ascii") * 20)
        elapsed = time.monotonic() - began
        resign(referee.a, board)
        referee.finish(process)
    finally:
        stop_reading.set()
        reader.join(5.0)
    restores = [entry for entry in referee.entries("RecordSent")
                if entry["port"] == "b" and "refcom reset" in str(entry["text"])]  # fmt: skip
    assert 2 <= len(restores) <= 1 + 3  # the first game's reset, then at 0, 1 and 3 s
    assert referee.journal.stat().st_size - before < 40_000 * elapsed
    assert log.stat().st_size - log_before < 10_000
    (game,) = referee.games()
    assert (game.headers["Result"], game.headers["Termination"]) == ("0-1", "normal")
    assert len(list(game.mainline_moves())) == 40


# --- 9. a journal is continued only as the match it holds --------------------------------


def test_a_journal_of_another_match_is_refused_and_new_match_sets_it_aside(
    referee: Referee,
) -> None:
    process = referee.start("--games", "12", "--tc", "60+1")
    start_game(referee)
    process.send_signal(signal.SIGTERM)
    referee.finish(process, code=4)
    for other, key in (
        (["--games", "2"], "games"),
        (["--games", "12", "--event", "Other"], "event"),
        (["--games", "12", "--fen", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"], "openings"),
        (["--games", "12", "--tc", "300"], "tc"),
    ):
        refused = referee.start("--tc", "60+1", *other)
        stderr = referee.finish(refused, code=2)
        assert stderr.startswith(f"serialref: error: {key}: {referee.journal} holds an unfinished")
        assert "--new-match" in stderr and len(stderr.strip().splitlines()) == 1
    fresh = referee.start("--games", "2", "--tc", "60+1", "--new-match")
    aside = referee.journal.with_name("journal.jsonl.1")
    assert aside.exists()
    started = referee.entries("MatchStarted")
    assert len(started) == 1 and started[0]["resumed"] is False
    fresh.send_signal(signal.SIGTERM)
    referee.finish(fresh, code=4)


# --- 10. operator text is safe on a terminal ----------------------------------------------


def test_an_operators_name_cannot_drive_the_terminal(referee: Referee) -> None:
    master, slave = os.openpty()
    try:
        process = referee.start("--tc", "60+1", "--name-a", "Evil\x1b[2J", stdout=slave)
        start_game(referee)
        resign(referee.a, chess.Board())
        referee.finish(process)
        os.close(slave)
        slave = -1
        shown = b""
        while chunk := _read_available(master):
            shown += chunk
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    assert b"Evil?[2J" in shown
    assert b"\x1b[2J" not in shown
    (game,) = referee.games()
    assert game.headers["White"] == "Evil?[2J"


def _read_available(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: the terminal's other end is closed and everything was read
        return b""
