"""The Style 12 feed: read back by mekk.fics's own protocol and by xboard, and its TCP clients."""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import chess
import chess.pgn
import processes
import pytest
from matchevents import CRAZYHOUSE_MATE, FOOLS_MATE, played_match
from processes import wait_for

from serialref.happenings import GameEnded, GameStarted, MatchStarted, MovePlayed
from serialref.observers.feed import MAX_BUFFERED
from serialref.observers.style12 import (
    PROMPT,
    Style12Feed,
    Style12Observer,
    fics_message,
    style12_line,
)
from serialref.rules import find_rules
from serialref.wire.address import Address

style12 = pytest.importorskip("mekk.fics.datatypes.style12", reason="pip install mekk.fics")
fics_client = pytest.importorskip("mekk.fics.fics_client", reason="pip install mekk.fics")
fics_connector = pytest.importorskip("mekk.fics.fics_connector", reason="pip install mekk.fics")
defer = pytest.importorskip("twisted.internet.defer", reason="pip install mekk.fics")
twisted_testing = pytest.importorskip("twisted.internet.testing", reason="pip install mekk.fics")

XBOARD = shutil.which("xboard") or "/usr/games/xboard"

# Castling both ways, en passant, a promotion with capture, and a double push at once.
SPECIAL = [
    "e4", "d5", "exd5", "c5", "dxc6", "Nf6", "cxb7", "e6", "bxa8=Q", "Bc5", "Nf3", "O-O",
    "Qxa7", "Qxd2+", "Nbxd2", "Bb4", "Qe2", "Nc6", "b3", "Nd4", "Bb2", "Nb5", "O-O-O",
]  # fmt: skip


class MekkReader:
    """Reads a feed's bytes as mekk.fics's ``FicsProtocol`` reads a FICS server once logged in.

    With the protocol's defaults: lines split at its delimiter, its prompt stripped, each
    line given to its parser; what the parser recognised is kept in ``seen``, what it did
    not in ``unknown``.
    """

    def __init__(self) -> None:
        self.seen: list[tuple[str, object]] = []
        self.unknown: list[str] = []
        reader = self

        class Client(fics_client.FicsClient):  # type: ignore[misc]
            min_interval_between_commands = 0.0
            disable_nagle = True

            def on_fics_information(self, what: str, args: object) -> object:
                reader.seen.append((what, args))
                return defer.succeed(None)

            def on_fics_unknown(self, what: str) -> object:
                reader.unknown.append(what)
                return defer.succeed(None)

        class Transport(twisted_testing.StringTransport):  # type: ignore[misc]
            def setTcpNoDelay(self, enabled: bool) -> None:  # noqa: N802 (Twisted's name)
                """A TCP transport's; nothing to set in memory."""

        self._protocol = fics_connector.FicsProtocol()
        self._protocol.client = Client("test")
        self._protocol.makeConnection(Transport())
        self._protocol.setLineMode()  # what it does once the login is over

    def read(self, data: bytes) -> list[tuple[str, object]]:
        """What mekk.fics made of ``data`` (and of what was left over before it)."""
        before = len(self.seen)
        self._protocol.dataReceived(data)
        return self.seen[before:]

    def boards(self, data: bytes) -> list[object]:
        """The Style 12 lines mekk.fics read in ``data``, parsed."""
        return [args.style12 for what, args in self.read(data) if what == "game_move"]  # type: ignore[attr-defined]


def started(game: int = 1) -> GameStarted:
    tags = {"White": "Deep Thought", "Black": "Hi-Tech 2", "TimeControl": "900+5"}
    return GameStarted(game=game, white_port="a", black_port="b", fen=chess.STARTING_FEN, tags=tags)


def played(sans: list[str], game: int = 1) -> Iterator[tuple[MovePlayed, chess.Board]]:
    board = chess.Board()
    remaining = [900.0, 900.0]
    for ply, san in enumerate(sans, start=1):
        move = board.parse_san(san)
        side = 0 if board.turn == chess.WHITE else 1
        remaining[side] += 5 - (ply % 7 + 0.37)
        board.push(move)
        yield MovePlayed(
            game=game, ply=ply, san=san, uci=move.uci(), elapsed=ply % 7 + 0.37,
            remaining=(remaining[0], remaining[1]), consumed=(0.0, 0.0),
            moves_made=(ply // 2, (ply - 1) // 2), fen=board.fen(),
        ), board.copy()  # fmt: skip


def random_game(seed: int) -> list[str]:
    board, choices, sans = chess.Board(), random.Random(seed), []
    while not board.is_game_over() and len(sans) < 300:
        move = choices.choice(sorted(board.legal_moves, key=chess.Move.uci))
        sans.append(board.san(move))
        board.push(move)
    return sans


def check_line(data: bytes, board: chess.Board, move: MovePlayed, reader: MekkReader) -> None:
    """mekk.fics reads back the board, side to move, castling, en passant file, clocks, move."""
    (parsed,) = reader.boards(data)
    placement, turn, castling, _, halfmoves, fullmove = parsed.fen.split()
    assert placement == board.board_fen()
    assert turn == ("w" if board.turn == chess.WHITE else "b")
    assert castling == (board.castling_xfen() or "-")
    assert halfmoves == str(board.halfmove_clock) and fullmove == str(board.fullmove_number)
    last = chess.Move.from_uci(move.uci)
    double_push = board.piece_type_at(last.to_square) == chess.PAWN and abs(
        chess.square_rank(last.to_square) - chess.square_rank(last.from_square)) == 2  # fmt: skip
    pushed_file = chess.square_name(last.to_square)[0] if double_push else None
    assert parsed.after_double_push == pushed_file
    assert (parsed.white_remaining_time, parsed.black_remaining_time) == (
        int(move.remaining[0]), int(move.remaining[1]))  # fmt: skip
    assert parsed.last_move_text == move.san
    assert parsed.last_move_time_spent == int(move.elapsed)
    assert (parsed.clock.base_min, parsed.clock.inc_sec) == (15, 5)
    assert str(parsed.white) == "Deep_Thought" and str(parsed.black) == "Hi_Tech_2"
    assert parsed.observer_role == style12.OBSERVER_WATCHING_GAME
    assert parsed.is_clock_ticking and not parsed.board_flipped
    assert data == fics_message(str(parsed))  # one message: every field, in order, nothing else


@pytest.mark.parametrize(
    "sans",
    [SPECIAL, random_game(3), random_game(11)],
    ids=["castling, en passant, promotion", "random 3", "random 11"],
)
def test_mekk_fics_reads_every_line_of_a_whole_game(sans: list[str]) -> None:
    feed, reader = Style12Feed(), MekkReader()
    feed.update(MatchStarted(games=1, time_control="900+5", ports=("a", "b")))
    (first,) = reader.boards(feed.update(started()))
    assert first.fen.split()[0] == chess.Board().board_fen()
    for move, board in played(sans):
        check_line(feed.update(move), board, move, reader)
    assert reader.unknown == []


def test_each_message_is_framed_as_fics_frames_it() -> None:
    """FICS's line end before and after, then its prompt: what xboard reads at once."""
    feed = Style12Feed()
    data = feed.update(started())
    assert data.startswith(b"\n\r<12> ") and data.endswith(b" 0 1 0\n\r" + PROMPT.encode())
    assert data.count(b"\n") == 2 and data.count(b"\r") == 2


@pytest.mark.parametrize(
    ("time_control", "fields"),
    [("900+5", (15, 5)), ("10+0.1", (1, 0)), ("90+30", (2, 30)), ("29", (1, 0)),
     ("45+0.5", (1, 1)), ("40/5400+30:1800+30", (90, 30)), ("-", (0, 0))],
)  # fmt: skip
def test_the_initial_time_and_increment_are_whole_minutes_and_seconds(
    time_control: str, fields: tuple[int, int]
) -> None:
    """Rounded to the nearest, halves up; a timed game never reads ``0 0`` (untimed)."""
    tags = {"White": "a", "Black": "b", "TimeControl": time_control}
    event = GameStarted(game=1, white_port="a", black_port="b", fen=chess.STARTING_FEN, tags=tags)
    (parsed,) = MekkReader().boards(Style12Feed().update(event))
    assert (parsed.clock.base_min, parsed.clock.inc_sec) == fields


def test_the_verbose_moves_are_those_fics_writes() -> None:
    verbose = [style12.Style12(style12_line(board, game=1, names=("a", "b"), control=(0, 0),
                                            clocks=(0, 0), move=move, ticking=True))
               .last_move_coord_text for move, board in played(SPECIAL)]  # fmt: skip
    by_san = dict(zip(SPECIAL, verbose, strict=True))
    assert by_san["e4"] == "P/e2-e4"
    assert by_san["dxc6"] == "P/d5-c6"  # en passant
    assert by_san["bxa8=Q"] == "P/b7-a8=Q"
    assert by_san["O-O"] == "o-o"
    assert by_san["O-O-O"] == "o-o-o"
    assert by_san["Nbxd2"] == "N/b1-d2"


def test_the_end_of_a_game_stops_the_clock_and_says_why() -> None:
    feed, reader = Style12Feed(), MekkReader()
    reader.read(feed.update(started()))
    data = feed.update(GameEnded(game=1, result="1-0", termination="adjudication",
                                 reason="adjudicated\x1b[2J", fen=chess.STARTING_FEN,
                                 consumed=(0, 0)))  # fmt: skip
    (_, last), (what, end) = reader.read(data)
    assert not last.style12.is_clock_ticking  # type: ignore[attr-defined]
    assert what == "game_finished" and end.result == "1-0"  # type: ignore[attr-defined]
    assert data.endswith(b"{Game 1 (Deep_Thought vs. Hi_Tech_2) adjudicated?[2J} 1-0\n\rfics% ")


def read_message(client: socket.socket) -> bytes:
    """The bytes up to the next prompt, which ends every message."""
    data = b""
    while not data.endswith(PROMPT.encode()):
        chunk = client.recv(1)
        assert chunk, "the feed closed the connection"
        data += chunk
    return data


def test_a_client_gets_the_position_at_once_then_a_line_per_move() -> None:
    with Style12Observer(Address("127.0.0.1", 0)) as feed:
        moves = list(played(["e4", "e5"]))
        feed.handle(started())
        feed.handle(moves[0][0])
        with socket.create_connection(feed.address, timeout=5) as client:
            reader = MekkReader()
            (now,) = reader.boards(read_message(client))
            assert now.last_move_text == "e4"
            feed.handle(moves[1][0])
            (after,) = reader.boards(read_message(client))
            assert after.last_move_text == "e5"


def test_a_client_that_never_reads_is_dropped_and_the_others_go_on() -> None:
    with Style12Observer(Address("127.0.0.1", 0)) as feed:
        feed.handle(started())
        with socket.socket() as stuck:
            stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            stuck.connect(feed.address)
            wait_for(lambda: feed.clients == 1, "the client")
            moves = [move for move, _ in played(random_game(5))]
            for sent in range(8 * MAX_BUFFERED // 150):  # each line is over 150 bytes
                feed.handle(moves[sent % len(moves)])
            wait_for(lambda: feed.clients == 0, "the stuck client to be dropped")
        with socket.create_connection(feed.address, timeout=5) as client:
            (now,) = MekkReader().boards(read_message(client))
            assert now.game_no == 1


@pytest.mark.parametrize("time_control", ["-", "300+3"])
def test_a_match_as_the_referee_publishes_it(time_control: str) -> None:
    feed = Style12Feed()
    seen = MekkReader().read(b"".join(feed.update(event) for event in played_match(time_control)))
    twelves = [args.style12 for what, args in seen if what == "game_move"]  # type: ignore[attr-defined]
    assert [line.last_move_text for line in twelves] == [None, *FOOLS_MATE, "Qh4#"]
    assert twelves[-1].fen.split()[0] == "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR"
    assert not twelves[-1].is_clock_ticking and twelves[-2].is_clock_ticking
    expected = 0 if time_control == "-" else 300 - 2 * 1.5 + 2 * 3  # two moves, two increments
    assert twelves[-1].white_remaining_time == expected
    what, end = seen[-1]
    assert what == "game_finished" and (end.game_no, end.result_desc) == (1, "Black mates")  # type: ignore[attr-defined]


def test_a_variant_game_is_followed_on_its_own_board() -> None:
    feed = Style12Feed()
    events = played_match("60+1", games=[CRAZYHOUSE_MATE], rules=find_rules("crazyhouse"))
    seen = MekkReader().read(b"".join(feed.update(event) for event in events))
    twelves = [args.style12 for what, args in seen if what == "game_move"]  # type: ignore[attr-defined]
    assert twelves[-1].fen.split()[0] == "rnbqkb1r/pp1ppppp/8/2p1N3/5Pn1/8/PPPPPp1P/RNBQKB1R"
    assert seen[-1][0] == "game_finished" and seen[-1][1].result == "0-1"  # type: ignore[attr-defined]


@pytest.fixture
def x_display(tmp_path: Path) -> Iterator[str]:
    """A virtual X display (Xvfb) for xboard; its name, once the server is ready."""
    if not (os.path.exists(XBOARD) and shutil.which("Xvfb")):
        pytest.skip("Debian's xboard and xvfb are not installed (apt-get install xboard xvfb)")
    ready_read, ready_write = os.pipe()
    server = processes.start(
        ["Xvfb", "-displayfd", str(ready_write), "-screen", "0", "800x600x24", "-nolisten", "tcp"],
        pass_fds=(ready_write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(ready_write)
    try:
        with os.fdopen(ready_read) as ready:
            number = ready.readline().strip()  # written once the server accepts clients
        assert number, "Xvfb did not start"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait()


def test_xboard_with_its_defaults_follows_the_game(x_display: str, tmp_path: Path) -> None:
    """xboard in ICS mode, started with no option of its Style 12 parsing, observes a game.

    The check is xboard's own: at the end of the game it saves the game (PGN) and the
    final position (FEN) it built from the lines it read.
    """
    game, position = tmp_path / "xboard.pgn", tmp_path / "xboard.fen"
    moves = list(played(SPECIAL[:12]))
    board = moves[-1][1]
    with Style12Observer(Address("127.0.0.1", 0)) as feed:
        feed.handle(MatchStarted(games=1, time_control="900+5", ports=("a", "b")))
        feed.handle(started())
        xboard = processes.start(
            [XBOARD, "-ics", "-icshost", "127.0.0.1", "-icsport", str(feed.address.port),
             "-saveGameFile", str(game), "-savePositionFile", str(position),
             "-saveSettingsOnExit", "false", "-popupExitMessage", "false",
             "-soundProgram", "true", "-debug", "-debugfile", str(tmp_path / "xboard.debug")],
            # xboard reads its ICS console from stdin: a pipe kept open, not end of file.
            env={**os.environ, "DISPLAY": x_display, "HOME": str(tmp_path), "NO_AT_BRIDGE": "1"},
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            connected = lambda: feed.clients == 1 or xboard.poll() is not None  # noqa: E731
            wait_for(connected, "xboard to connect", timeout=60)
            for move, _ in moves:
                feed.handle(move)
            feed.handle(GameEnded(game=1, result="1/2-1/2", termination="adjudication",
                                  reason="drawn by the arbiter", fen=board.fen(),
                                  consumed=(0, 0)))  # fmt: skip
            saved = lambda: xboard.poll() is not None or (  # noqa: E731
                position.exists() and position.read_text().endswith("\n"))  # fmt: skip
            wait_for(saved, "xboard to save the game", timeout=30)
        finally:
            xboard.send_signal(signal.SIGTERM)
            assert xboard.stdin is not None
            xboard.stdin.close()
            xboard.wait()
    assert position.read_text().split()[0] == board.board_fen()
    with game.open() as pgn:
        kept = chess.pgn.read_game(pgn)
    assert kept is not None
    assert [move.uci() for move in kept.mainline_moves()] == [move.uci for move, _ in moves]
    assert kept.headers["Result"] == "1/2-1/2"
    assert kept.headers["White"] == "Deep_Thought" and kept.headers["TimeControl"] == "900+5"
