"""serialref.analysis.inputs: the suite's records with their lines, and where a run resumes."""

from __future__ import annotations

import io
from pathlib import Path

import chess
import pytest

from serialref.analysis.inputs import read_entries, resume_point
from serialref.errors import ConfigError

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"


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
