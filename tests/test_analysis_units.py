"""The analysis verbs' parts that need no engine: ce encodings, limits, input, progress."""

from __future__ import annotations

import io
from pathlib import Path

import chess
import chess.engine
import pytest

from serialref.analysis.inputs import read_entries, resume_point
from serialref.analysis.progress import Progress, Tally
from serialref.analysis.scores import centipawns, mate_in
from serialref.analysis.targets import is_solved
from serialref.analysis.tasks import SOFT_MOVES, Effort, Mate
from serialref.cli import main
from serialref.epd.parser import parse_lenient
from serialref.errors import ConfigError

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"


@pytest.mark.parametrize(
    ("score", "ce"),
    [
        (chess.engine.Cp(35), 35),
        (chess.engine.Cp(-120), -120),
        (chess.engine.Cp(99999), 32000),
        (chess.engine.Cp(-99999), -32000),
        (chess.engine.Mate(1), 32766),  # spec 6.7's own examples
        (chess.engine.Mate(5), 32758),
        (chess.engine.Mate(-1), -32765),
        (chess.engine.Mate(-5), -32757),
        (chess.engine.Mate(0), -32767),
    ],
)
def test_scores_become_the_ce_of_spec_6_7(score: chess.engine.Score, ce: int) -> None:
    assert centipawns(score) == ce


@pytest.mark.parametrize("moves", [1, 2, 5, 40, 0, -1, -5, -40])
def test_a_mate_s_ce_reads_back_as_its_moves(moves: int) -> None:
    assert mate_in(centipawns(chess.engine.Mate(moves))) == moves


@pytest.mark.parametrize("ce", [0, 35, -120, 32000, -32000])
def test_an_evaluation_is_no_mate(ce: int) -> None:
    assert mate_in(ce) is None


def test_effort_takes_exactly_one_positive_limit() -> None:
    with pytest.raises(ConfigError, match="exactly one"):
        Effort()
    with pytest.raises(ConfigError, match="exactly one"):
        Effort(depth=3, nodes=10)
    with pytest.raises(ConfigError, match="nodes: must be positive"):
        Effort(nodes=-5)
    with pytest.raises(ConfigError, match="--soft needs --movetime"):
        Effort(nodes=5, soft=True)


def test_hard_limits_are_the_engine_s_own_and_soft_ones_a_clock() -> None:
    assert Effort(nodes=500).limit() == chess.engine.Limit(nodes=500)
    assert Effort(depth=7).limit(mate=2) == chess.engine.Limit(depth=7, mate=2)
    assert Effort(movetime=0.5).limit() == chess.engine.Limit(time=0.5)
    soft = Effort(movetime=0.5, soft=True).limit()
    assert soft.time is None
    assert soft.white_clock == soft.black_clock == 0.5 * SOFT_MOVES
    assert soft.remaining_moves == SOFT_MOVES
    assert Effort(nodes=500).patience is None
    assert Effort(movetime=0.5).patience == pytest.approx(10.5)


def test_mate_lengths_and_which_records_it_searches() -> None:
    with pytest.raises(ConfigError, match="moves"):
        Mate(Effort(nodes=1), 3, 2)
    mate = Mate(Effort(nodes=1), 2, 4)
    board = chess.Board()
    assert mate.wants(parse_lenient(START), board)
    assert mate.wants(parse_lenient(START + " dm 3;"), board)
    assert not mate.wants(parse_lenient(START + " dm 2;"), board)
    mated = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
    assert not mate.wants(parse_lenient(mated.epd()), mated)


def test_solved_means_a_best_move_and_no_avoided_one() -> None:
    board = chess.Board()
    e4, d4, nf3 = (board.parse_san(san) for san in ("e4", "d4", "Nf3"))
    both = parse_lenient(START + " am d4; bm e4 Nf3;")
    assert [is_solved(both, board, move) for move in (e4, d4, nf3, None)] == [
        True, False, True, False
    ]
    avoid_only = parse_lenient(START + " am d4;")
    assert [is_solved(avoid_only, board, move) for move in (e4, d4)] == [True, False]
    assert is_solved(parse_lenient(START + ' id "x";'), board, e4) is None


def test_input_entries_keep_lines_and_say_where_a_bad_one_is_wrong() -> None:
    text = (
        f"{START} bm e4;\n\n"
        f"{START} bm e5;\n"
        "not an epd line\n"
        "8/8/8/8/8/8/8/8 w - -\n"
        f"{START} bm e4 +;\x00\n"
    )
    entries = read_entries(io.BytesIO(text.encode()), "suite.epd")
    assert [entry.number for entry in entries] == [1, 3, 4, 5, 6]
    assert entries[0].record is not None and entries[0].board == chess.Board()
    problems = [entry.problem for entry in entries[1:]]
    assert problems[0].startswith("suite.epd:3:") and "e5" in problems[0]
    assert problems[1].startswith("suite.epd:4")
    assert problems[2].startswith("suite.epd:5:1: illegal position")
    assert problems[3].startswith("suite.epd:6:") and "check mark" in problems[3]
    assert entries[4].raw == f"{START} bm e4 +;\x00".encode()


def test_resume_checks_the_output_record_by_record_and_cuts_a_torn_line(tmp_path: Path) -> None:
    lines = [f"{START} id \"{n}\";" for n in range(3)] + ["bad line"]
    entries = read_entries(io.BytesIO("\n".join(lines).encode()), "in.epd")
    out = tmp_path / "out.epd"
    assert resume_point(out, entries, strict=False, name="in.epd") == 0  # no file yet
    out.write_bytes(f"{START} id \"0\"; pv e4;\n{START} id \"1\"; pv".encode())
    assert resume_point(out, entries, strict=False, name="in.epd") == 1
    assert out.read_bytes().endswith(b"pv e4;\n")  # the torn line is gone
    out.write_bytes(b"8/8/8/8/8/8/8/8 w - - pv e4;\n")
    with pytest.raises(ConfigError, match=r"line 1 is not the record of in\.epd:1"):
        resume_point(out, entries, strict=False, name="in.epd")
    out.write_bytes((f"{START} pv e4;\n" * 5).encode())
    with pytest.raises(ConfigError, match=r"5 records, more than in\.epd gives"):
        resume_point(out, entries, strict=False, name="in.epd")


def test_progress_shows_a_live_line_on_a_terminal_only() -> None:
    now = [0.0]
    stream = io.StringIO()
    tally = Tally(total=10)
    progress = Progress(tally, stream, live=True, clock=lambda: now[0])
    for solved in (True, False, True, None):
        now[0] += 0.5
        tally.add(searched=True, solved=solved)
        progress.update()
    assert progress.status() == "4/10 records  solved 2/3  2.0 positions/s, 0:03 left"
    assert "\r4/10 records" in stream.getvalue()
    progress.note("in.epd:3:1: bad")  # on a line of its own, the status line cleared first
    width = len(progress.status())
    assert stream.getvalue().endswith("\r" + " " * width + "\r" + "in.epd:3:1: bad\n")
    progress.update()  # drawn again at once
    assert stream.getvalue().endswith(progress.status())
    progress.finish()
    assert stream.getvalue().endswith("\r")
    assert tally.summary() == (
        "4 of 10 records written, 4 searched, solved 2 of 3, 2.0 s, 2.00 positions/s"
    )
    quiet = io.StringIO()
    Progress(Tally(total=1), quiet, live=False).update()
    assert quiet.getvalue() == ""


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["mate", "--moves", "two"], "moves: expected N or FIRST..LAST, not 'two'"),
        (["mate", "--moves", "3..1"], "moves: expected N or FIRST..LAST with 1 <= FIRST <= LAST"),
        (
            ["analyse", "--nodes", "5", "--soft"],
            "soft: --soft needs --movetime: engines keep node and depth counts exactly",
        ),
        (["analyse", "--jobs", "0"], "jobs: must be at least 1, not 0"),
        (["targets", "--resume"], "resume: needs an output file (-o OUT)"),
        (["analyse", "--depth", "0"], "depth: must be positive, not 0"),
    ],
)
def test_command_line_mistakes_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    suite = tmp_path / "in.epd"
    suite.write_text(START + "\n")
    code = main(["epd", *arguments, str(suite), "--engine", str(tmp_path / "nothing")])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"serialref: error: {message}\n"


def test_an_engine_that_is_not_there_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "in.epd"
    suite.write_text(START + "\n")
    code = main(["epd", "analyse", str(suite), "--engine", "no-such-engine-here"])
    assert code == 5
    assert capsys.readouterr().err == (
        "serialref: error: engine program 'no-such-engine-here' not found on PATH or in "
        "/usr/games or /usr/local/games\n"
    )
