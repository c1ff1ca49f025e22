"""The 1996 EPD Kit's client (Crafty's ``EPDComm``) can read every record the referee sends.

Steven Edwards' EPD Kit (``epd.c``, shipped with Crafty) is the oldest client of the
referee protocol. ``EPDComm`` reads a line, decodes it with ``EPDDecode`` and looks for
its ``refcom``; a line it cannot decode, or one without a ``refcom``, ends its session
for good. ``EPDDecode`` takes any operation whose opcode is made of letters, digits and
``_``, with bare operands (up to a blank or ``;``) or quoted strings, each operation
ended by ``;``, and checks no opcode against a table. Crafty's handler then reads only
``sm`` from a ``respond``. So ``ccms`` (wire profile 1.2) costs such a client nothing: it
decodes as one more operation, which nobody asks for.

:func:`kit_reads` follows those rules (described here, the Kit's code is not copied);
compiled from Crafty's sources, ``EPDComm`` itself accepted every record of the annotated
game in docs/protocol.md and of a 68-record match, ``ccms`` included.
"""

from __future__ import annotations

import re
from pathlib import Path

import chess
from hypothesis import given
from hypothesis import strategies as st

from serialref import records
from serialref.epd.writer import format_record

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
_POSITION = re.compile(r"\s*[1-8pnbrqkPNBRQK/]+\s+[wb]\s+(?:-|K?Q?k?q?)\s+(?:-|[a-h][1-8])(\s+|$)")
_OPERATION = re.compile(r'([A-Za-z0-9_]+)\s*((?:(?:"[^"]*"|[^\s;"][^\s;]*)\s*)*);\s*')


def kit_reads(line: str) -> dict[str, list[str]] | None:
    """The operations the EPD Kit decodes from ``line``, or None where its session ends."""
    position = _POSITION.match(line)
    if position is None:
        return None
    operations: dict[str, list[str]] = {}
    at = position.end()
    while at < len(line):
        operation = _OPERATION.match(line, at)
        if operation is None:
            return None
        operands = re.findall(r'"([^"]*)"|([^\s;"][^\s;]*)', operation[2])
        operations[operation[1]] = [quoted or bare for quoted, bare in operands]
        at = operation.end()
    return operations if "refcom" in operations else None


def test_the_rules_refuse_what_ends_the_kits_session() -> None:
    start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
    assert kit_reads(f"{start} refcom respond; sm e4;") == {"refcom": ["respond"], "sm": ["e4"]}
    assert kit_reads("") is None  # an empty line
    assert kit_reads(f"{start} sm e4;") is None  # no refcom
    assert kit_reads(f"{start} refcom respond; sm e4") is None  # no ';'
    assert kit_reads(f"{start} %ccms 1 2; refcom respond;") is None  # not an opcode to it
    assert kit_reads(f"{start} draw_offer; refcom respond;") == {
        "draw_offer": [],
        "refcom": ["respond"],
    }


def test_the_kit_reads_the_annotated_game_to_its_disconnect() -> None:
    sent = [
        line.split(": ", 1)[1]
        for line in DOC.read_text(encoding="utf-8").splitlines()
        if line.startswith("ref -> ")
    ]
    read = [kit_reads(line) for line in sent]
    assert None not in read
    with_ccms = [operations for operations in read if operations and "ccms" in operations]
    assert len(with_ccms) == 6 and all(len(ops["ccms"]) == 2 for ops in with_ccms)
    assert read[-1] == {"fmvn": ["3"], "hmvc": ["1"], "refcom": ["disconnect"]}


@given(
    consumed=st.tuples(st.integers(0, 86_399_999_999), st.integers(0, 86_399_999_999)),
    san=st.sampled_from([None, "e4", "Nf3", "O-O", "exd8=Q+", "Qh4#"]),
    draw_offer=st.booleans(),
)
def test_the_kit_reads_every_respond_and_conclude_and_finds_the_move(
    consumed: tuple[int, int], san: str | None, draw_offer: bool
) -> None:
    board = chess.Board()
    respond = kit_reads(records.respond_line(board.fen(), consumed, san, draw_offer=draw_offer))
    assert respond is not None
    assert respond.get("sm") == (None if san is None else [san])
    assert respond["ccms"] == [str(consumed[0]), str(consumed[1])]
    conclude = kit_reads(format_record(records.conclude(board, consumed)))
    assert conclude is not None and conclude["refcom"] == ["conclude"]
