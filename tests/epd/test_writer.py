"""Writing records: the normalised line of spec 7.1, and its round trip through the parser."""

from __future__ import annotations

import itertools
import re

from hypothesis import given
from hypothesis import strategies as st

from serialref.epd.opcodes import OPCODE_RE, OPCODES
from serialref.epd.operations import Operand, Operation
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"


def start_record(*operations: Operation) -> EpdRecord:
    return EpdRecord("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR", "w", "KQkq", "-", operations)


def test_format_record_normalises_as_spec_7_1() -> None:
    record = start_record(
        Operation.of("refcom", "respond"),
        Operation.of("hmvc", 0),
        Operation.of("fmvn", 1),
        Operation.of("cc", "000:00:00:00", "000:00:00:00"),
    )
    assert format_record(record) == (
        f"{START} cc 000:00:00:00 000:00:00:00; fmvn 1; hmvc 0; refcom respond;"
    )


def test_format_record_sorts_only_the_operand_sets_of_am_and_bm() -> None:
    record = parse_record(
        f'{START} pv e4 e5 Nf3; bm Nf3 e4 d4; am h4 a4; ptp White "b" Black "a"; X c b a;'
    )
    assert format_record(record) == (
        f'{START} X c b a; am a4 h4; bm Nf3 d4 e4; ptp White "b" Black "a"; pv e4 e5 Nf3;'
    )


def test_format_record_sorts_opcodes_in_ascii_order() -> None:
    record = parse_record(f"{START} bm e4; D2 25; D1 5; acn 3; Zed 1;")
    assert format_record(record) == f"{START} D1 5; D2 25; Zed 1; acn 3; bm e4;"


def test_format_record_quotes_strings_and_ends_operations_without_operands() -> None:
    record = start_record(
        Operation("c0", (Operand("two  blanks; and a semicolon", True),)),
        Operation("draw_offer"),
        Operation("noop", (Operand("", True),)),
    )
    assert format_record(record) == (
        f'{START} c0 "two  blanks; and a semicolon"; draw_offer; noop "";'
    )


PIECES = "PNBRQKpnbrqk"


@st.composite
def placements(draw: st.DrawFn) -> str:
    ranks = []
    for _ in range(8):
        squares = draw(st.lists(st.sampled_from(PIECES + ".."), min_size=8, max_size=8))
        rank = ""
        for empty, run in itertools.groupby(squares, key=lambda square: square == "."):
            run_text = "".join(run)
            rank += str(len(run_text)) if empty else run_text
        ranks.append(rank)
    return "/".join(ranks)


castlings = st.builds(
    lambda flags: "".join(letter for letter, on in zip("KQkq", flags, strict=True) if on) or "-",
    st.lists(st.booleans(), min_size=4, max_size=4),
)
en_passants = st.sampled_from(["-", *(f"{file}{rank}" for file in "abcdefgh" for rank in "36")])
opcodes = st.one_of(st.sampled_from(sorted(OPCODES)), st.from_regex(OPCODE_RE, fullmatch=True))
operands = st.one_of(
    st.builds(Operand, st.from_regex(r"[!#-:<-~]{1,20}", fullmatch=True)),
    st.builds(Operand, st.from_regex(r"[ !#-~]{0,30}", fullmatch=True), st.just(True)),
    st.builds(Operand, st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126,
                                                      blacklist_characters='"'),
                               min_size=250, max_size=255), st.just(True)),
)
records = st.builds(
    lambda placement, active, castling, en_passant, operations: EpdRecord(
        placement,
        active,
        castling,
        en_passant,
        tuple(Operation(opcode, tuple(values)) for opcode, values in operations.items()),
    ),
    placements(),
    st.sampled_from("wb"),
    castlings,
    en_passants,
    st.dictionaries(opcodes, st.lists(operands, max_size=5), max_size=6),
)


def meaning(record: EpdRecord) -> tuple[str, dict[str, tuple[Operand, ...]]]:
    """What a record says, whatever the order: sets (am, bm) compare as sets."""
    return record.position, {
        operation.opcode: tuple(
            sorted(operation.operands, key=lambda operand: operand.external)
            if operation.opcode in ("am", "bm")
            else operation.operands
        )
        for operation in record.operations
    }


@given(records)
def test_format_then_parse_round_trips(record: EpdRecord) -> None:
    line = format_record(record)
    parsed = parse_record(line)
    assert meaning(parsed) == meaning(record)
    assert format_record(parsed) == line
    opcodes_written = [operation.opcode for operation in parsed.operations]
    assert opcodes_written == sorted(opcodes_written)
    outside_strings = re.sub(r'"[^"]*"', '""', line)
    assert "  " not in outside_strings
    assert outside_strings == outside_strings.strip()
