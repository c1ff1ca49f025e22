"""Records per second: serialref's strict EPD codec against python-chess, on the same lines.

Run as ``python bench/epd_codec.py``.  The positions are the fixture suites in
tests/fixtures/epd, read with the lenient reader and written normalised, which is the
form that arrives on the wire.  Each side is fed what it can read: python-chess takes
every bare word for a move, so its copy of each line has string operands quoted
(``id "BK.01"`` for ``id BK.01``); records it still refuses are left out for both.

serialref: ``format_record(parse_record(line))``.
python-chess: ``board.set_epd(line)`` then ``board.epd(**operations)``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess

from serialref.epd.opcodes import OPCODES, Basetype
from serialref.epd.operations import Operand, Operation
from serialref.epd.parser import parse_lenient, parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import RecordError

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "epd"
ROUNDS = 5
REPEAT = 10


def fixture_records(directory: Path) -> list[EpdRecord]:
    """Every fixture record the lenient reader accepts."""
    records = []
    for path in sorted(directory.glob("*.epd")):
        for raw in path.read_bytes().splitlines():
            if not raw.strip(b" \t\0"):
                continue
            try:
                records.append(parse_lenient(raw.decode("ascii")))
            except (RecordError, UnicodeDecodeError):
                continue
    return records


def python_chess_line(record: EpdRecord) -> str | None:
    """The record as python-chess can read it (strings quoted), or None if it cannot."""
    quoted = [
        Operation(op.opcode, tuple(Operand(operand.text, True) for operand in op.operands))
        for op in record.operations
        if op.opcode in OPCODES and OPCODES[op.opcode].pattern == (Basetype.STRING,)
    ]
    line = format_record(record.with_operations(*quoted))
    try:
        chess.Board().set_epd(line)
    except ValueError:
        return None
    return line


def ours(lines: list[str]) -> None:
    for line in lines:
        format_record(parse_record(line))


def theirs(lines: list[str]) -> None:
    board = chess.Board()
    for line in lines:
        operations: dict[str, Any] = board.set_epd(line)
        board.epd(**operations)


def records_per_second(codec: Callable[[list[str]], None], lines: list[str]) -> float:
    """Best of several rounds, so a busy moment on the machine does not decide."""
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(REPEAT):
            codec(lines)
        best = min(best, time.perf_counter() - start)
    return len(lines) * REPEAT / best


def main() -> int:
    directory = Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURES
    pairs = [
        (format_record(record), theirs_line)
        for record in fixture_records(directory)
        if (theirs_line := python_chess_line(record)) is not None
    ]
    if not pairs:
        print(f"no usable EPD records in {directory}", file=sys.stderr)
        return 1
    our_lines = [ours_line for ours_line, _ in pairs]
    their_lines = [theirs_line for _, theirs_line in pairs]
    print(f"{len(pairs)} records from {directory}")
    ours_rate = records_per_second(ours, our_lines)
    theirs_rate = records_per_second(theirs, their_lines)
    print(f"serialref parse_record+format_record: {ours_rate:10.0f} records/s")
    print(f"python-chess set_epd+epd:             {theirs_rate:10.0f} records/s")
    print(f"ratio (serialref / python-chess):     {ours_rate / theirs_rate:10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
