"""The analysis verbs end to end with Debian's Stockfish, on the published suites.

Node limits keep the searches short and the results the same from run to run.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import chess
import processes
import pytest

from serialref.epd.parser import parse_lenient

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "epd"
STOCKFISH = shutil.which("stockfish") or shutil.which("/usr/games/stockfish")

pytestmark = [
    pytest.mark.engines,
    pytest.mark.skipif(STOCKFISH is None, reason="needs Stockfish: apt-get install stockfish"),
]

MATES = {
    "fool.m1": 1, "scholar.m1": 1, "legall.m1": 1, "opera.m1": 1,
    "legall.m2": 2, "opera.m2": 2, "reti.m2": 2, "immortal.m2": 2, "evergreen.m2": 2,
    "reti.m3": 3, "immortal.m3": 3, "evergreen.m3": 3,
}
"""The fixture's mates, each length checked by exhaustive search when the file was made."""


def serialref(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = processes.run(
        [sys.executable, "-m", "serialref", "epd", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


def source_lines(name: str) -> list[str]:
    lines = (FIXTURES / name).read_bytes().decode("latin-1").splitlines()
    return [line for line in lines if line.strip(" \t\0")]


@pytest.mark.parametrize(("suite", "jobs"), [("bratko-kopec.epd", "1"), ("lct2.epd", "2")])
def test_analyse_gives_every_record_its_analysis_in_order(
    tmp_path: Path, suite: str, jobs: str
) -> None:
    output = tmp_path / "out.epd"
    result = serialref(
        "analyse", str(FIXTURES / suite), "--engine", "stockfish", "--nodes", "3000",
        "--jobs", jobs, "-o", str(output),
    )
    given = source_lines(suite)
    written = output.read_bytes().decode("latin-1").splitlines()
    assert len(written) == len(given)
    reported = {
        int(line.split(":")[1])
        for line in result.stderr.splitlines()
        if line.startswith(str(FIXTURES))
    }
    assert reported  # every suite here has known faults
    analysed = 0
    for line, source in zip(written, given, strict=True):
        if line == source:  # a bad record, copied as it came
            continue
        analysed += 1
        record = parse_lenient(line)
        assert record.position.split() == source.split()[:4]
        for opcode in ("pv", "ce", "pm", "sm", "acn", "acs"):
            assert opcode in record, (opcode, line)
        pv = record.operand_texts("pv")
        assert record.operand_texts("pm") == record.operand_texts("sm") == pv[:1]
        assert -32767 <= record.integer("ce") <= 32766
        assert record.integer("acn") > 0
        board = record.board()
        for san in pv:
            board.push_san(san)  # the whole variation is legal
    assert analysed == len(given) - len(reported)
    assert f"{len(given)} of {len(given)} records written" in result.stderr


def test_a_record_is_analysed_the_same_alone_and_after_others(tmp_path: Path) -> None:
    """BK.03 with a fresh engine and after BK.01 and BK.02: the same search, node for node."""
    first_three = source_lines("bratko-kopec.epd")[:3]
    written = []
    for lines in (first_three[2:], first_three):
        suite, output = tmp_path / "suite.epd", tmp_path / "out.epd"
        suite.write_text("\n".join(lines) + "\n", encoding="latin-1")
        serialref(
            "analyse", str(suite), "--engine", "stockfish", "--nodes", "20000",
            "--option", "Threads=1", "-o", str(output),
        )  # fmt: skip
        written.append(output.read_text(encoding="latin-1").splitlines()[-1])
    alone, after_others = written
    assert "id BK.03" in alone and " acn " in alone
    assert after_others == alone


def test_mate_finds_the_known_mates_pass_by_pass(tmp_path: Path) -> None:
    output = tmp_path / "mates.epd"
    serialref(
        "mate", str(FIXTURES / "mates.epd"), "--engine", "stockfish", "--moves", "1..3",
        "--nodes", "60000", "-o", str(output),
    )
    found = {}
    for line in output.read_text().splitlines():
        record = parse_lenient(line)
        name = record.operand_texts("id")[0]
        if name in MATES:
            found[name] = record.integer("dm")
            board = record.board()
            move = record.move("pm", board)
            assert record.operand_texts("pv")[0] == record.operand_texts("pm")[0]
            board.push(move)
            if MATES[name] == 1:
                assert board.is_checkmate()
        elif name == "lasker.m1":  # its dm was given: never searched
            assert "pm" not in record and record.integer("dm") == 1
        else:
            assert "dm" not in record and "pm" not in record
    assert found == MATES


def test_targets_and_the_report_agree_with_the_run(tmp_path: Path) -> None:
    output = tmp_path / "bk.epd"
    run = serialref(
        "targets", str(FIXTURES / "bratko-kopec.epd"), "--engine", "stockfish",
        "--nodes", "3000", "-o", str(output),
    )
    solved = run.stderr.split("solved ")[1].split(",")[0]  # "N of M"
    report = serialref("report", str(output)).stdout
    number, _, judged = solved.partition(" of ")
    assert f"with bm or am      {judged}\n" in report
    assert f"solved             {number} (" in report


def test_ctrl_c_keeps_what_is_done_and_resume_finishes_it(tmp_path: Path) -> None:
    output = tmp_path / "out.epd"
    command = [
        sys.executable, "-m", "serialref", "epd", "analyse", str(FIXTURES / "bratko-kopec.epd"),
        "--engine", "stockfish", "--nodes", "30000", "-o", str(output),
    ]
    process = processes.start(command, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while output.exists() is False or output.read_bytes().count(b"\n") < 3:
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 4, err
    assert "interrupted:" in err and "--resume" in err
    done = output.read_bytes()
    assert 3 <= done.count(b"\n") < len(source_lines("bratko-kopec.epd"))
    hint = err.split("carry on with: ")[1].strip()
    assert hint.endswith("--resume")
    serialref(*command[4:], "--resume", "--jobs", "2")
    final = output.read_bytes()
    assert final.startswith(done)
    assert final.count(b"\n") == len(source_lines("bratko-kopec.epd"))
    assert [line.split()[:4] for line in final.splitlines()] == [
        line.encode("latin-1").split()[:4] for line in source_lines("bratko-kopec.epd")
    ]


def test_resume_refuses_another_file_s_results(tmp_path: Path) -> None:
    output = tmp_path / "out.epd"
    output.write_text(chess.Board().epd() + " pv e4;\n")
    result = serialref(
        "analyse", str(FIXTURES / "lct2.epd"), "--engine", "stockfish", "--nodes", "10",
        "-o", str(output), "--resume", check=False,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("serialref: error: resume: ") and "lct2.epd:1" in result.stderr
