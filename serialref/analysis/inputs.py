"""The lines of an input file as entries, and where an interrupted output file stops.

Every non-blank line becomes an :class:`Entry`: a record with its board, or the line
as it came with the reason it is not a usable record, worded ``FILE:LINE:COLUMN:
reason`` so that editors and CI logs can jump to it. A bad line never stops a run:
it is reported and copied unchanged (or left out with ``--strict``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import chess

from serialref.epd.parser import parse_lenient
from serialref.epd.record import EpdRecord
from serialref.epd.verbs import decode_line, legal_record, numbered_lines
from serialref.errors import ConfigError, RecordError, SerialrefError

__all__ = ["Entry", "read_entries", "resume_point"]


@dataclass(frozen=True, slots=True)
class Entry:
    """One non-blank input line: a legal record and its board, or a ``problem``."""

    number: int
    raw: bytes
    record: EpdRecord | None = None
    board: chess.Board | None = None
    problem: str = ""


def read_entries(source: BinaryIO, name: str) -> list[Entry]:
    """Every non-blank line of ``source``, read leniently, in order."""
    entries = []
    for number, raw in numbered_lines(source):
        if not raw.strip(b" \t\0"):
            continue
        try:
            line = decode_line(raw)
            record = legal_record(parse_lenient(line), line)
            entries.append(Entry(number, raw, record, record.board()))
        except RecordError as exc:
            where = f"{name}:{number}:{exc.column}" if exc.column else f"{name}:{number}"
            entries.append(Entry(number, raw, problem=f"{where}: {exc.reason}"))
    return entries


def resume_point(output: Path, entries: Sequence[Entry], *, strict: bool, name: str) -> int:
    """How many of ``entries`` ``output`` already holds, checked record by record.

    A line cut short by the interruption is removed from ``output``; a line whose
    position is not the matching entry's means ``output`` belongs to another input,
    and resuming into it would mix two runs, so that is refused.
    """
    try:
        data = output.read_bytes()
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise SerialrefError(f"cannot read {str(output)!r}: {exc.strerror}") from exc
    complete = data[: data.rfind(b"\n") + 1]
    if len(complete) != len(data):
        with output.open("r+b") as handle:
            handle.truncate(len(complete))
    lines = complete.splitlines()
    written = [index for index, entry in enumerate(entries) if not (strict and entry.problem)]
    if len(lines) > len(written):
        raise ConfigError(
            "resume", f"{output} has {len(lines)} records, more than {name} gives"
        )
    for count, (line, index) in enumerate(zip(lines, written, strict=False), 1):
        entry = entries[index]
        if not _same_position(line, entry):
            raise ConfigError(
                "resume",
                f"{output} line {count} is not the record of "
                f"{name}:{entry.number}; it holds another file's results",
            )
    return written[len(lines) - 1] + 1 if lines else 0


def _same_position(line: bytes, entry: Entry) -> bool:
    fields = line.split()[:4]
    if fields == entry.raw.split()[:4]:
        return True
    return entry.record is not None and fields == entry.record.position.encode().split()
