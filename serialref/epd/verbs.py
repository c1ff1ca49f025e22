"""The EPD file verbs of spec section 7 behind ``serialref epd``: normalise, purge, check.

Each verb streams its input line by line, writes every good record in normalised form
and reports every bad line as ``NAME:LINE:COLUMN: reason`` so that editors and CI logs
can jump to it.  Input comes from files written by other programs, so it is read with
:func:`~serialref.epd.parser.parse_lenient` and no input, however broken, ends in a traceback.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from typing import BinaryIO, TextIO

import chess

from serialref.epd.opcodes import OPCODE_RE, OPCODE_RULE
from serialref.epd.parser import parse_lenient
from serialref.epd.position import position_problems
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import ConfigError, RecordError, escape

__all__ = [
    "check_stream",
    "decode_line",
    "legal_record",
    "normalize_stream",
    "numbered_lines",
    "purge_stream",
]

LOGGER = logging.getLogger(__name__)

_NON_ASCII_RE = re.compile(rb"[\x80-\xff]")

_FIELD_RE = re.compile(r"[^ \t]+")
# The position field a python-chess status flag points at (1 placement, 2 side to move,
# 3 castling, 4 en passant); every other flag is about the placement.
_STATUS_FIELD = {
    chess.STATUS_OPPOSITE_CHECK: 2,
    chess.STATUS_BAD_CASTLING_RIGHTS: 3,
    chess.STATUS_INVALID_EP_SQUARE: 4,
}

Transform = Callable[[EpdRecord, str], EpdRecord]


def normalize_stream(*, source: BinaryIO, name: str, out: TextIO, err: TextIO) -> int:
    """Spec 7.1 ``pfdn``: write each record normalised; returns the number rejected."""
    return _run(source, name, out, err, _unchanged)


def purge_stream(opcode: str, *, source: BinaryIO, name: str, out: TextIO, err: TextIO) -> int:
    """Spec 7.4 ``pfop``: write each record without ``opcode``; returns the number rejected.

    A malformed opcode is the user's mistake, not the file's: it raises ConfigError
    before any input is read.
    """
    if not OPCODE_RE.fullmatch(opcode):
        raise ConfigError("opcode", f"{escape(opcode)!r} is not an opcode ({OPCODE_RULE})")

    def purge(record: EpdRecord, line: str) -> EpdRecord:
        return record.without(opcode)

    return _run(source, name, out, err, purge)


def check_stream(
    make: Callable[[str], chess.Board] = chess.Board,
    *,
    source: BinaryIO,
    name: str,
    out: TextIO,
    err: TextIO,
) -> int:
    """Report each record whose position python-chess finds illegal; write the others.

    ``make`` builds a board from a FEN: a variant's board type checks by its rules.
    """

    def legal(record: EpdRecord, line: str) -> EpdRecord:
        return legal_record(record, line, make)

    return _run(source, name, out, err, legal, make=make)


def _unchanged(record: EpdRecord, line: str) -> EpdRecord:
    return record


def legal_record(
    record: EpdRecord, line: str, make: Callable[[str], chess.Board] = chess.Board
) -> EpdRecord:
    """The record, if its position is legal; else the problems, at the field to look at."""
    board = record.board(make)
    problems = position_problems(board)
    if problems:
        status = board.status()
        field = min(
            (_STATUS_FIELD.get(flag, 1) for flag in chess.Status if flag and flag & status),
            default=1,
        )
        starts = [found.start() + 1 for found in _FIELD_RE.finditer(line)]
        raise RecordError(
            f"illegal position: {', '.join(problems)}", column=starts[field - 1], raw=line
        )
    return record


def _run(
    source: BinaryIO,
    name: str,
    out: TextIO,
    err: TextIO,
    transform: Transform,
    *,
    make: Callable[[str], chess.Board] = chess.Board,
) -> int:
    written = rejected = 0
    for number, raw in numbered_lines(source):
        if not raw.strip(b" \t\0"):
            continue
        try:
            line = decode_line(raw)
            record = transform(parse_lenient(line, make), line)
        except RecordError as exc:
            rejected += 1
            where = f"{name}:{number}:{exc.column}" if exc.column else f"{name}:{number}"
            err.write(f"{where}: {exc.reason}\n")
            continue
        out.write(format_record(record) + "\n")
        written += 1
    LOGGER.info("%s: %d records written, %d lines rejected", name, written, rejected)
    return rejected


def numbered_lines(source: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """Numbered lines without terminators; LF, CR LF and a lone CR all end a line."""
    number = 0
    for chunk in source:
        body = chunk[:-1] if chunk.endswith(b"\n") else chunk
        if body.endswith(b"\r"):
            body = body[:-1]
        for line in body.split(b"\r"):
            number += 1
            yield number, line


def decode_line(raw: bytes) -> str:
    """An ASCII line; any other byte is a :class:`RecordError` at its column."""
    bad = _NON_ASCII_RE.search(raw)
    if bad is not None:
        raise RecordError(
            f"byte {escape(bad.group())} is not ASCII in '{escape(raw)}'",
            column=bad.start() + 1,
            raw=raw,
        )
    return raw.decode("ascii")
