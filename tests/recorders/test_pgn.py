"""Tests for serialref.recorders.pgn: tags, clocks, hostile text, appending, read-back."""

from __future__ import annotations

import datetime
import errno
import io
import logging
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import chess
import chess.pgn
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serialref.errors import RecorderError
from serialref.happenings import (
    GameEnded,
    GameStarted,
    MatchEvent,
    MatchStarted,
    MovePlayed,
    RecordSent,
)
from serialref.recorders.journal import JournalGame
from serialref.recorders.pgn import PgnRecorder
from serialref.recorders.pgntext import pgn_text

TAGS = {
    "Event": "Serial Cup", "Site": "Lab", "Date": "2024.05.01", "Round": "1",
    "White": "alpha", "Black": "beta", "TimeControl": "300+2",
}
CASTLING_FEN = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"

HOSTILE = [
    '}{ 1-0 [Event "x"]',
    '\\"',
    'trailing backslash \\',
    "line\nbreak\r\n[Result \"0-1\"]\n\n1. e4 *",
    "\x1b[2J\x07\u2028\x00 tab\there",
    "; rest of line { % } ) ( $1 *",
    "Müller ♔",
]

PGN_EXTRACT = shutil.which("pgn-extract") or next(
    (path for path in ("/usr/games/pgn-extract", "/usr/bin/pgn-extract") if Path(path).exists()),
    None,
)


def play(
    ucis: Iterable[str], fen: str = chess.STARTING_FEN, *, game: int = 1, elapsed: float = 7.25,
    clock: float = 300.0, analysis: dict[str, str] | None = None,
) -> list[MovePlayed]:
    """MovePlayed events for ``ucis`` from ``fen``, each taking ``elapsed`` off a clock."""
    board = chess.Board(fen)
    remaining = [clock, clock]
    moves = []
    for ply, uci in enumerate(ucis, start=1):
        move = chess.Move.from_uci(uci)
        san = board.san(move)
        remaining[0 if board.turn == chess.WHITE else 1] -= elapsed
        board.push(move)
        moves.append(MovePlayed(
            game=game, ply=ply, san=san, uci=uci, elapsed=elapsed,
            remaining=(remaining[0], remaining[1]),
            consumed=(clock - remaining[0], clock - remaining[1]), moves_made=(0, 0),
            fen=board.fen(), analysis=analysis or {},
        ))
    return moves


STARTED_AT = datetime.datetime(2024, 5, 1, 14, 0, 0, 250_000, datetime.UTC).timestamp()
"""When the games of these tests begin; each ends an hour, two minutes and 3.9 s later."""


def start(game: int = 1, *, tags: dict[str, str] | None = None, fen: str = chess.STARTING_FEN,
          opening: Sequence[str] = ()) -> GameStarted:
    return GameStarted(game=game, white_port="a", black_port="b", fen=fen,
                       tags=TAGS if tags is None else tags, opening_moves=tuple(opening),
                       wall=STARTED_AT)  # fmt: skip


def end(game: int = 1, result: str = "1-0", termination: str = "normal",
        reason: str = "") -> GameEnded:
    return GameEnded(game=game, result=result, termination=termination, reason=reason,
                     fen="", consumed=(0.0, 0.0), wall=STARTED_AT + 3723.9)


def export(game: chess.pgn.Game) -> str:
    return game.accept(chess.pgn.StringExporter())


def movetext(game: chess.pgn.Game) -> str:
    """The movetext on one line, so expectations do not depend on where lines wrap."""
    return game.accept(chess.pgn.StringExporter(columns=None)).splitlines()[-1]


def feed(recorder: PgnRecorder, *events: MatchEvent) -> None:
    for event in events:
        recorder.handle(event)


def read_all(path: Path) -> list[chess.pgn.Game]:
    games = []
    with path.open(encoding="utf-8") as pgn:
        while (game := chess.pgn.read_game(pgn)) is not None:
            games.append(game)
    return games


def unescape(value: str) -> str:
    """Undo PGN string escapes, which python-chess keeps in what it reads."""
    return re.sub(r"\\(.)", r"\1", value)


def printable(text: str) -> str:
    return "".join(char if char.isprintable() else " " for char in text)


@pytest.fixture
def pgn_extract() -> str:
    if PGN_EXTRACT is None:
        pytest.skip("Debian's pgn-extract is not installed (apt install pgn-extract)")
    return PGN_EXTRACT


def assert_pgn_extract_finds_no_error(pgn_extract: str, path: Path) -> None:
    # -r: report errors without extracting; -s: no per-game chatter. It exits 0 either way.
    report = subprocess.run([pgn_extract, "-r", "-s", str(path)], capture_output=True,
                            text=True, check=False, timeout=30)
    assert (report.returncode, report.stdout + report.stderr) == (0, "")


# --- pgn_text, read back ---------------------------------------------------------------

def game_to_pgn(
    started: GameStarted, moves: list[MovePlayed], ended: GameEnded | None
) -> chess.pgn.Game:
    """The game as the PGN file has it, read back by python-chess."""
    game = chess.pgn.read_game(io.StringIO(pgn_text(started, moves, ended)))
    assert game is not None and game.errors == []
    return game


@pytest.fixture
def in_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The local time is UTC, whatever the machine's zone is."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


TIMES = [("GameDuration", "01:02:03"), ("GameEndTime", "2024-05-01T15:02:04.150 UTC"),
         ("GameStartTime", "2024-05-01T14:00:00.250 UTC")]  # fmt: skip
"""cutechess-cli's tags for a game played from :data:`STARTED_AT` to 1:02:03.9 later."""


def test_tags_are_the_roster_then_time_control_termination_ply_count_and_times(
    in_utc: None,
) -> None:
    game = game_to_pgn(start(), play(["e2e4", "e7e5"]), end(result="1/2-1/2"))
    assert list(game.headers.items()) == [
        ("Event", "Serial Cup"), ("Site", "Lab"), ("Date", "2024.05.01"), ("Round", "1"),
        ("White", "alpha"), ("Black", "beta"), ("Result", "1/2-1/2"),
        ("TimeControl", "300+2"), ("Termination", "normal"), ("PlyCount", "2"), *TIMES,
    ]


def test_the_game_times_are_local_with_the_zone_named_as_cutechess_cli_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        headers = game_to_pgn(start(), [], end()).headers
    finally:
        monkeypatch.undo()
        time.tzset()
    # Qt's "yyyy-MM-ddThh:mm:ss.zzz t", as in a cutechess-cli 1.5.1 -pgnout run under that
    # zone: [GameStartTime "2026-11-27T02:58:24.948 CET"].
    assert headers["GameStartTime"] == "2024-05-01T16:00:00.250 CEST"
    assert headers["GameEndTime"] == "2024-05-01T17:02:04.150 CEST"
    assert headers["GameDuration"] == "01:02:03"


def test_an_unfinished_game_has_its_start_time_only(in_utc: None) -> None:
    headers = game_to_pgn(start(), play(["e2e4"]), None).headers
    assert headers["GameStartTime"] == "2024-05-01T14:00:00.250 UTC"
    assert "GameEndTime" not in headers and "GameDuration" not in headers


def test_missing_roster_tags_get_the_pgn_unknown_values(in_utc: None) -> None:
    game = game_to_pgn(start(tags={"White": "alpha"}), [], end())
    assert dict(game.headers) == {
        "Event": "?", "Site": "?", "Date": "????.??.??", "Round": "?", "White": "alpha",
        "Black": "?", "Result": "1-0", "Termination": "normal", "PlyCount": "0", **dict(TIMES),
    }


def test_other_tags_follow_and_derived_ones_are_not_taken_from_the_start() -> None:
    tags = {**TAGS, "WhiteElo": "2100", "Result": "0-1", "PlyCount": "99", "FEN": "8/8 w"}
    game = game_to_pgn(start(tags=tags), play(["e2e4"]), end())
    assert list(game.headers)[-1] == "WhiteElo"
    assert (game.headers["Result"], game.headers["PlyCount"]) == ("1-0", "1")
    assert "FEN" not in game.headers


def test_an_invalid_tag_name_is_left_out_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        game = game_to_pgn(start(tags={**TAGS, "Bad Name]": "x"}), [], end())
    assert "Bad Name]" not in game.headers
    assert "'Bad Name]' is not a PGN tag name" in caplog.text


def test_each_move_carries_clock_and_elapsed_time_with_tenths_below_ten_seconds() -> None:
    game = game_to_pgn(start(), play(["e2e4", "e7e5", "g1f3"], elapsed=7.75), end())
    assert movetext(game) == (
        "1. e4 { [%clk 0:04:52] [%emt 0:00:07.7] } 1... e5 { [%clk 0:04:52] [%emt 0:00:07.7] } "
        "2. Nf3 { [%clk 0:04:44] [%emt 0:00:07.7] } 1-0"
    )
    node = game.next()
    assert node is not None
    assert (node.clock(), node.emt()) == (292, 7.7)


def test_a_fast_game_keeps_its_tenths() -> None:
    game = game_to_pgn(start(), play(["e2e4", "e7e5"], elapsed=0.13, clock=10.0), end())
    assert movetext(game) == (
        "1. e4 { [%clk 0:00:09.8] [%emt 0:00:00.1] } 1... e5 { [%clk 0:00:09.8] [%emt 0:00:00.1] }"
        " 1-0"
    )
    read = chess.pgn.read_game(io.StringIO(export(game)))
    assert read is not None and read.errors == []
    node = read.next()
    assert node is not None
    assert (node.clock(), node.emt()) == (9.8, 0.1)


def test_an_unlimited_clock_has_no_clk() -> None:
    game = game_to_pgn(start(), play(["e2e4"], clock=float("inf")), None)
    assert "{ [%emt 0:00:07.2] }" in export(game)
    assert "%clk" not in export(game)


def test_an_unfinished_game_has_no_result() -> None:
    game = game_to_pgn(start(), play(["e2e4"]), None)
    assert (game.headers["Result"], game.headers["Termination"]) == ("*", "unterminated")
    assert export(game).endswith(" *")


def test_a_time_forfeit_shows_a_fallen_flag_as_zero() -> None:
    moves = play(["e2e4", "e7e5", "d1h5"], elapsed=100.0)
    moves.append(play(["e2e4", "e7e5", "d1h5", "b8c6"], elapsed=100.0)[-1])
    moves[-1] = replace(moves[-1], elapsed=301.4, remaining=(100.0, -101.4))
    game = game_to_pgn(start(), moves, end(result="0-1", termination="time forfeit",
                                           reason="Black's flag fell"))
    assert game.headers["Termination"] == "time forfeit"
    assert movetext(game).endswith(
        "2... Nc6 { [%clk 0:00:00.0] [%emt 0:05:01] Black's flag fell } 0-1"
    )
    read = chess.pgn.read_game(io.StringIO(export(game)))
    assert read is not None
    assert read.errors == []
    assert read.end().clock() == 0


def test_a_game_from_a_fen_with_opening_moves() -> None:
    opening = ["O-O", "O-O-O"]
    board = chess.Board(CASTLING_FEN)
    for san in opening:
        board.push_san(san)
    moves = play(["d2d4", "d7d5"], board.fen())
    game = game_to_pgn(start(fen=CASTLING_FEN, opening=opening), moves, end(result="*"))
    assert (game.headers["SetUp"], game.headers["FEN"]) == ("1", CASTLING_FEN)
    assert game.headers["PlyCount"] == "4"
    assert list(game.headers)[-2:] == ["SetUp", "FEN"]
    assert movetext(game) == ("1. O-O O-O-O 2. d4 { [%clk 0:04:52] [%emt 0:00:07.2] } 2... d5 "
                         "{ [%clk 0:04:52] [%emt 0:00:07.2] } *")
    read = chess.pgn.read_game(io.StringIO(export(game)))
    assert read is not None
    assert read.errors == []
    assert [node.san() for node in read.mainline()] == ["O-O", "O-O-O", "d4", "d5"]


def test_the_standard_start_has_no_setup_or_fen() -> None:
    game = game_to_pgn(start(fen="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"), [],
                       end())
    assert "SetUp" not in game.headers
    assert "FEN" not in game.headers


def test_analysis_is_a_comment_engine_testers_tools_read() -> None:
    analysis = {"pv": "e5 Nf3 Nc6", "acs": "1", "ce": "35", "acd": "19", "acn": "120000",
                "c0": "hidden"}  # fmt: skip
    game = game_to_pgn(start(), play(["e2e4"], analysis=analysis), end())
    node = game.next()
    assert node is not None
    assert node.comment == (
        '[%clk 0:04:52] [%emt 0:00:07.2] [%eval 0.35,19] n=120000 pv="e5 Nf3 Nc6"'
    )
    assert (node.eval(), node.eval_depth()) == (chess.engine.PovScore(chess.engine.Cp(35),
                                                                      chess.WHITE), 19)


@pytest.mark.parametrize(
    ("ce", "depth", "mover", "written", "white"),
    [
        # ce is the mover's (spec 6.7); [%eval] is White's, in pawns.
        ("29", "", chess.WHITE, "[%eval 0.29]", chess.engine.Cp(29)),
        ("29", "7", chess.BLACK, "[%eval -0.29,7]", chess.engine.Cp(-29)),
        # Mates as the spec encodes them: 32767 - (2N - 1) mates in N, -32767 + 2N is mated.
        ("32762", "12", chess.WHITE, "[%eval #3,12]", chess.engine.Mate(3)),
        ("32762", "", chess.BLACK, "[%eval #-3]", chess.engine.Mate(-3)),
        ("-32761", "", chess.WHITE, "[%eval #-3]", chess.engine.Mate(-3)),
        ("32766", "", chess.BLACK, "[%eval #-1]", chess.engine.Mate(-1)),
    ],
)
def test_scores_are_from_whites_side_with_mates_as_python_chess_writes_them(
    ce: str, depth: str, mover: chess.Color, written: str, white: chess.engine.Score
) -> None:
    moves = play(["e2e4", "e7e5"], analysis={"ce": ce, "acd": depth} if depth else {"ce": ce})
    white_move, black_move = game_to_pgn(start(), moves, end()).mainline()
    node = white_move if mover == chess.WHITE else black_move
    assert written in node.comment
    score = node.eval()
    assert score is not None and score.white() == white
    assert node.eval_depth() == (int(depth) if depth else None)


@pytest.mark.parametrize("ce", ["-32767", "-32768", "lots", ""])
def test_a_ce_that_is_no_score_of_a_move_played_is_left_out(ce: str) -> None:
    node = game_to_pgn(start(), play(["e2e4"], analysis={"ce": ce, "acd": "3"}), end()).next()
    assert node is not None
    assert "%eval" not in node.comment


def test_an_illegal_move_is_a_value_error() -> None:
    moves = [replace(play(["e2e4"])[0], uci="e2e5")]
    with pytest.raises(ValueError, match="e2e5"):
        pgn_text(start(), moves, None)


def test_the_text_is_what_python_chess_writes_for_the_game() -> None:
    """The SAN announced with each move is what python-chess would work out."""
    moves = play(["e2e4", "d7d5", "e4d5", "d8d5", "b1c3", "d5a5", "g1f3", "g8f6", "f1c4", "c8g4",
                  "c4f7", "e8f7"])
    game = game_to_pgn(start(), moves, end(result="1/2-1/2"))
    expected = game.accept(chess.pgn.StringExporter())
    assert pgn_text(start(), moves, end(result="1/2-1/2")) == expected


# --- hostile text ----------------------------------------------------------------------

def hostile_game(text: str) -> tuple[GameStarted, list[MovePlayed], GameEnded]:
    tags = {**TAGS, "White": text, "Black": text, "Event": text, "Annotator": text}
    return (start(tags=tags), play(["e2e4", "e7e5"], analysis={"pv": text, "ce": text}),
            end(result="0-1", termination="rules infraction", reason=text))


def assert_reads_back_as_one_clean_game(path: Path, text: str) -> None:
    games = read_all(path)
    assert len(games) == 1
    game = games[0]
    assert game.errors == []
    assert [node.san() for node in game.mainline()] == ["e4", "e5"]
    assert game.headers["Result"] == "0-1"
    for tag in ("White", "Black", "Event", "Annotator"):
        assert unescape(game.headers[tag]) == printable(text)
    assert game.end().comment.startswith("[%clk 0:04:52] [%emt 0:00:07.2]")


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_cannot_break_the_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "games.pgn"
    recorder = PgnRecorder(path)
    started, moves, ended = hostile_game(text)
    feed(recorder, started, *moves, ended)
    recorder.close()
    assert_reads_back_as_one_clean_game(path, text)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_passes_pgn_extract(tmp_path: Path, pgn_extract: str, text: str) -> None:
    path = tmp_path / "games.pgn"
    started, moves, ended = hostile_game(text)
    path.write_text(export(game_to_pgn(started, moves, ended)) + "\n\n", encoding="utf-8")
    assert_pgn_extract_finds_no_error(pgn_extract, path)


def test_hostile_comment_text_cannot_close_the_comment_or_forge_a_clock() -> None:
    moves = play(["e2e4"], analysis={"pv": "} 1-0 { [%clk 9:59:59]"})
    node = game_to_pgn(start(), moves, None).next()
    assert node is not None
    assert node.comment == '[%clk 0:04:52] [%emt 0:00:07.2] pv=") 1-0 ( (%clk 9:59:59)"'


@settings(max_examples=60, deadline=None)
@given(st.text(), st.text())
def test_any_text_reads_back_as_one_clean_game(
    tmp_path_factory: pytest.TempPathFactory, name: str, note: str
) -> None:
    started = start(tags={**TAGS, "White": name, "Black": note})
    moves = play(["e2e4", "e7e5"], analysis={"pv": note})
    game = game_to_pgn(started, moves, end(result="0-1", reason=note))
    path = tmp_path_factory.mktemp("pgn") / "games.pgn"
    path.write_text(export(game) + "\n\n", encoding="utf-8")
    games = read_all(path)
    assert len(games) == 1
    assert games[0].errors == []
    assert unescape(games[0].headers["White"]) == printable(name)
    assert [node.san() for node in games[0].mainline()] == ["e4", "e5"]


@settings(max_examples=40, deadline=None)
@given(
    choices=st.lists(st.integers(0, 1000), max_size=120),
    opening=st.integers(0, 4),
    reason=st.sampled_from(["", "White resigns", "Black's flag fell"]),
    elapsed=st.sampled_from([0.13, 7.25, 100.0]),
)
def test_pgn_text_is_what_python_chess_writes_for_the_same_game(
    choices: list[int], opening: int, reason: str, elapsed: float
) -> None:
    board = chess.Board()
    ucis = []
    for choice in choices:
        moves = list(board.legal_moves)
        if not moves:
            break
        ucis.append(moves[choice % len(moves)].uci())
        board.push(moves[choice % len(moves)])
    replay = chess.Board()
    sans = [replay.san_and_push(chess.Move.from_uci(uci)) for uci in ucis[:opening]]
    text = pgn_text(
        start(opening=sans),
        play(ucis[opening:], replay.fen(), elapsed=elapsed,
             analysis={"ce": "35", "pv": "Nf3 Nc6"}),
        end(reason=reason),
    )  # fmt: skip
    read = chess.pgn.read_game(io.StringIO(text))
    assert read is not None and read.errors == []
    assert [move.uci() for move in read.mainline_moves()] == ucis
    assert export(read) == text  # python-chess works out every SAN and move number itself


# --- PgnRecorder -----------------------------------------------------------------------

def a_match() -> list[MatchEvent]:
    return [
        MatchStarted(games=3, time_control="300+2", ports=("a", "b")),
        start(1), *play(["e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"]),
        RecordSent(port="a", text="refcom inform;", wall=1.0, left_at=2.0),
        end(1, "1-0", "normal", "checkmate"),
        start(2, tags={**TAGS, "White": "beta", "Black": "alpha", "Round": "2"}),
        *play(["d2d4", "d7d5"], game=2), end(2, "1/2-1/2", "normal", "draw agreed"),
        start(3), *play(["c2c4"], game=3),
    ]


def test_finished_games_are_appended_and_fsynced(
    tmp_path: Path, fsyncs: list[str], pgn_extract: str
) -> None:
    path = tmp_path / "match.pgn"
    recorder = PgnRecorder(path)
    feed(recorder, *a_match())
    recorder.close()
    assert fsyncs == [str(path), str(path)]
    games = read_all(path)
    assert [(g.headers["Round"], g.headers["Result"], g.errors) for g in games] == [
        ("1", "1-0", []), ("2", "1/2-1/2", []),
    ]
    assert [node.san() for node in games[0].mainline()][-1] == "Qxf7#"
    text = path.read_text()
    assert text.endswith("1/2-1/2\n\n")
    assert "1-0\n\n[Event" in text
    assert_pgn_extract_finds_no_error(pgn_extract, path)


def test_the_unfinished_game_is_left_to_the_journal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "match.pgn"
    recorder = PgnRecorder(path)
    feed(recorder, start(3), *play(["c2c4"], game=3))
    with caplog.at_level(logging.INFO):
        recorder.close()
    assert path.read_text() == ""
    assert "game 3 is unfinished" in caplog.text


def test_a_resumed_match_writes_the_unfinished_game_when_it_ends(tmp_path: Path) -> None:
    path = tmp_path / "match.pgn"
    moves = play(["e2e4", "e7e5", "g1f3", "b8c6"])
    recorder = PgnRecorder(path, unfinished=JournalGame(start(1), moves[:2], None))
    feed(recorder, MatchStarted(games=1, time_control="300+2", ports=("a", "b")),
         *moves[2:], end(1, "0-1", "abandoned", "White signed off"))
    recorder.close()
    (game,) = read_all(path)
    assert game.errors == []
    assert [node.san() for node in game.mainline()] == ["e4", "e5", "Nf3", "Nc6"]
    assert (game.headers["Termination"], game.headers["PlyCount"]) == ("abandoned", "4")


def test_a_finished_journal_game_is_not_written_again(tmp_path: Path) -> None:
    path = tmp_path / "match.pgn"
    recorder = PgnRecorder(path, unfinished=JournalGame(start(1), [], end(1)))
    recorder.handle(end(1))
    recorder.close()
    assert path.read_text() == ""


def test_a_game_announced_again_keeps_its_moves(tmp_path: Path) -> None:
    path = tmp_path / "match.pgn"
    moves = play(["e2e4", "e7e5"])
    recorder = PgnRecorder(path)
    feed(recorder, start(1), moves[0], start(1), moves[1], end(1))
    recorder.close()
    (game,) = read_all(path)
    assert [node.san() for node in game.mainline()] == ["e4", "e5"]


def test_events_of_a_game_not_in_progress_are_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "match.pgn"
    recorder = PgnRecorder(path)
    with caplog.at_level(logging.WARNING):
        feed(recorder, *play(["e2e4"], game=4), end(4), start(1), *play(["e2e4"], game=2),
             start(5), end(5))
    recorder.close()
    assert "MovePlayed for game 4, which is not in progress" in caplog.text
    assert "GameEnded for game 4, which is not in progress" in caplog.text
    assert "game 1 was not finished" in caplog.text
    (game,) = read_all(path)
    assert (game.headers["PlyCount"], game.errors) == ("0", [])


def test_a_game_cut_short_by_a_crash_is_cut_away_before_the_next(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "match.pgn"
    whole = '[Event "whole"]\n[White "x"]\n\n1. e4 e5 1-0\n\n'
    cut = '[Event "cut"]\n[White "x"]\n[Result "1-0"]\n\n1. e4 e5 2. Nf'
    path.write_text(whole + cut)
    with caplog.at_level(logging.WARNING):
        recorder = PgnRecorder(path)
    assert f"cut off {len(cut)} bytes of a game left incomplete by a crash" in caplog.text
    assert path.read_text() == whole
    feed(recorder, start(2), *play(["d2d4"], game=2), end(2))
    recorder.close()
    kept, written = read_all(path)
    assert kept.headers["Event"] == "whole"
    assert (written.headers["Event"], written.errors) == ("Serial Cup", [])
    assert [node.san() for node in written.mainline()] == ["d4"]


def test_a_file_cut_inside_its_only_game_is_emptied(tmp_path: Path) -> None:
    path = tmp_path / "match.pgn"
    path.write_text('[Event "cut"]\n[Whi')
    PgnRecorder(path).close()
    assert path.read_text() == ""


def test_a_foreign_file_ending_without_a_blank_line_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "match.pgn"
    foreign = '[Event "theirs"]\n\n1. e4 *\n'
    path.write_text(foreign)
    recorder = PgnRecorder(path)
    feed(recorder, start(1), end(1))
    recorder.close()
    assert path.read_text().startswith(foreign + "\n[Event")
    assert [game.headers["Event"] for game in read_all(path)] == ["theirs", "Serial Cup"]


def test_an_illegal_move_is_a_recorder_error(tmp_path: Path) -> None:
    path = tmp_path / "match.pgn"
    recorder = PgnRecorder(path)
    recorder.handle(GameStarted(game=7, white_port="a", black_port="b",
                                fen=chess.STARTING_FEN, tags={}))
    recorder.handle(replace(play(["e2e4"], game=7)[0], uci="e7e5"))
    with pytest.raises(RecorderError, match=rf"cannot write {path}: game 7: .*e7e5"):
        recorder.handle(end(7))
    recorder.close()


def test_a_missing_directory_is_an_error_at_once(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "match.pgn"
    with pytest.raises(RecorderError, match=r"No such file or directory \(create the directory"):
        PgnRecorder(path)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_a_full_disk_keeps_the_game_waiting_and_the_match_going(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recorder = PgnRecorder(Path("/dev/full"))
    recorder.handle(start(1))
    with caplog.at_level(logging.ERROR):
        recorder.handle(end(1))
        recorder.close()
    assert (
        "cannot write /dev/full: No space left on device; game 1 stays in the journal"
        in caplog.text
    )
    assert "1 finished game(s) could not be written to /dev/full" in caplog.text


def test_a_game_that_could_not_be_written_is_written_with_the_next_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "match.pgn"
    real_write = os.write
    failures = [OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))]

    def full_after_ten_bytes(fd: int, data: bytes) -> int:
        if failures and len(data) > 10:
            real_write(fd, bytes(data[:10]))  # a write that fails half-way
            raise failures.pop()
        return real_write(fd, data)

    appended: list[int] = []
    monkeypatch.setattr(os, "write", full_after_ten_bytes)
    recorder = PgnRecorder(path, on_appended=appended.append)
    recorder.handle(start(1))
    recorder.handle(end(1))
    assert path.read_text() == ""  # the half-written game was cut off again
    assert appended == []
    recorder.handle(start(2, tags={**TAGS, "Round": "2"}))
    recorder.handle(end(2))
    recorder.close()
    assert [game.headers["Round"] for game in read_all(path)] == ["1", "2"]
    assert appended == [1, 2]


def test_a_restart_writes_the_journals_backlog_once(tmp_path: Path) -> None:
    path = tmp_path / "games.pgn"
    first = JournalGame(
        start(1, tags={**TAGS, "Round": "1"}), play(["e2e4", "e7e5"], game=1), end(1, "1/2-1/2")
    )
    second = JournalGame(start(2, tags={**TAGS, "Round": "2"}), play(["d2d4"], game=2), end(2))
    appended: list[int] = []
    recorder = PgnRecorder(path, on_appended=appended.append)
    feed(recorder, first.started, *first.moves, first.ended)  # type: ignore[arg-type]
    recorder.close()
    assert appended == [1]
    # The referee died after journaling game 2's end, before the PGN append.
    PgnRecorder(path, backlog=[second], on_appended=appended.append).close()
    assert [game.headers["Round"] for game in read_all(path)] == ["1", "2"]
    assert appended == [1, 2]
    # It died after the append but before the journal heard of it: found, not written twice.
    PgnRecorder(path, backlog=[second], on_appended=appended.append).close()
    assert [game.headers["Round"] for game in read_all(path)] == ["1", "2"]
    assert appended == [1, 2, 2]
