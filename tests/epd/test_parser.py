"""Reading lines: the strict wire parser, its fast path, and the lenient file reader."""

from __future__ import annotations

from collections.abc import Callable

import chess
import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref.epd.opcodes import OPCODE_RE, OPCODES
from serialref.epd.operations import Operand, Operation
from serialref.epd.parser import (
    _plain_operations,
    _tokenized_operations,
    parse_lenient,
    parse_record,
)
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import RecordError

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
BK01 = "1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - -"


def column_of(line: str, fragment: str) -> int:
    return line.index(fragment) + 1


def refused_with_a_column_or_read_back(parse: Callable[[str], EpdRecord], line: str) -> None:
    """Any line is either refused with a column inside it, or read into a record whose
    normalised line reads back the same."""
    try:
        record = parse(line)
    except RecordError as exc:
        assert 1 <= exc.column <= len(line) + 1
        assert exc.reason
    else:
        normalised = format_record(record)
        assert format_record(parse(normalised)) == normalised


# --------------------------------------------------------------------------- strict parser


def test_parse_record_reads_fields_and_operations_in_order() -> None:
    record = parse_record(f"{START} refcom respond; cc 000:00:05:00 000:00:04:59; hmvc 0;")
    assert record.placement == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    assert (record.active, record.castling, record.en_passant) == ("w", "KQkq", "-")
    assert record.position == START
    assert [op.opcode for op in record.operations] == ["refcom", "cc", "hmvc"]
    assert record.operand_texts("cc") == ("000:00:05:00", "000:00:04:59")


def test_parse_record_keeps_strings_apart_from_tokens() -> None:
    record = parse_record(f'{START} c0 "a; b  \\ c"; id BK.01; noop x "" y;')
    assert record.operations == (
        Operation("c0", (Operand("a; b  \\ c", quoted=True),)),
        Operation("id", (Operand("BK.01"),)),
        Operation("noop", (Operand("x"), Operand("", True), Operand("y"))),
    )


def test_parse_record_accepts_runs_of_blanks_and_tabs() -> None:
    record = parse_record(f"  {START.replace(' ', '  ')}\t\tbm  e4  d4;\t id \"x\";  ")
    assert format_record(record) == f'{START} bm d4 e4; id "x";'


def test_parse_record_keeps_unknown_opcodes() -> None:
    record = parse_record(f"{START} D6 8031647685; Zz_9 a b;")
    assert record.operand_texts("D6") == ("8031647685",)
    assert "Zz_9" in record


def test_parse_record_of_four_fields_only() -> None:
    assert parse_record(START) == EpdRecord(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR", "w", "KQkq", "-"
    )


@pytest.mark.parametrize(
    ("line", "fragment", "reason"),
    [
        (f"{START} bm e4", None, "operation 'bm' does not end with ';'"),
        (f"{START} bm e4 ;", " ;", "blank before the ';' that ends 'bm'"),
        (f"{START} bm e4;id x;", "id", "a blank is missing before 'id'"),
        (f"{START} bm e4; bm d4;", "bm d4", "opcode 'bm' appears twice (first at column 54)"),
        (f"{START} ;", ";", "';' without an operation before it"),
        (f'{START} c0 "open;', '"', "no closing quote"),
        (f'{START} "x";', '"', "must start with an opcode, not a string"),
        (f"{START} 9x;", "9x", "'9x' is not an opcode (a letter, then up to 14 letters"),
        (f"{START} {'a' * 16};", "a" * 16, "is not an opcode"),
        (f"{START} 0 1", "0", "FEN move counters? EPD writes them as hmvc and fmvn"),
        (f'{START} c0 "{"x" * 256}";', '"', "string of 256 bytes is too long"),
        (f'{START} c0 x"y";', '"', "a blank is missing before"),
        (f"{START} ab\x01;", "\x01", "character \\x01 is not printable ASCII"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq -", "RNBQKBN ",
         "rank 1 ('RNBQKBN') has 7 squares"),
        ("rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w - -", "44", "two digits in a row"),
        ("8/8/8/8/8/8/8/8 W - -", "W", "active colour 'W' must be 'w' or 'b'"),
        ("8/8/8/8/8/8/8/8 w QK -", "QK", "castling field 'QK'"),
        ("8/8/8/8/8/8/8/8 w - e4", "e4", "en passant square 'e4' is not on rank 3 or 6"),
        ("8/8/8/8/8/8/8/8 w -", None, "only 3 of the four position fields"),
        ("   ", None, "empty record"),
    ],
)
def test_parse_record_errors_name_column_and_reason(
    line: str, fragment: str | None, reason: str
) -> None:
    with pytest.raises(RecordError) as caught:
        parse_record(line)
    assert reason in caught.value.reason
    if fragment is not None:
        assert caught.value.column == column_of(line, fragment)
    else:
        assert caught.value.column >= 1


@given(
    st.one_of(
        st.text(alphabet=' ;"abcKQkqw-/12345678pPnN\t\x00\xe9_', max_size=80),
        st.builds(
            lambda tail: f"{START} {tail}",
            st.text(alphabet=' ;"aeD0123456789_\t+', max_size=60),
        ),
    )
)
def test_parse_record_raises_only_record_errors_with_a_column(line: str) -> None:
    refused_with_a_column_or_read_back(parse_record, line)


# --------------------------------------------------------------------------- fast path

opcodes = st.one_of(st.sampled_from(sorted(OPCODES)), st.from_regex(OPCODE_RE, fullmatch=True))
plain_operations = st.dictionaries(
    opcodes, st.lists(st.from_regex(r"[!#-:<-~]{1,6}", fullmatch=True), max_size=3), max_size=5
)


@given(plain_operations, st.sampled_from([" ", "  "]))
def test_records_without_strings_take_the_plain_reader(
    operations: dict[str, list[str]], blank: str
) -> None:
    line = START + "".join(
        blank.join(["", opcode, *operands]) + ";" for opcode, operands in operations.items()
    )
    plain = _plain_operations(line, len(START))
    assert plain is not None
    assert plain == _tokenized_operations(line, len(START))


@given(st.text(alphabet=' ;"aeD0123456789_+:-', max_size=60))
def test_the_plain_reader_takes_nothing_the_tokenizer_reads_otherwise(tail: str) -> None:
    line = f"{START}{tail}"
    plain = _plain_operations(line, len(START))
    if plain is not None:
        assert plain == _tokenized_operations(line, len(START))


# --------------------------------------------------------------------------- lenient reader


def test_parse_lenient_reads_fen_counters_nul_and_stray_semicolons() -> None:
    record = parse_lenient("k7/6p1/8/8/8/8/7P/K7 b - - 0 1; D1 5; D2 25; D6 8031647685\0")
    assert format_record(record) == (
        "k7/6p1/8/8/8/8/7P/K7 b - - D1 5; D2 25; D6 8031647685; fmvn 1; hmvc 0;"
    )
    assert record.integer("hmvc") == 0
    assert record.board().fullmove_number == 1


@pytest.mark.parametrize(
    "line",
    [
        f"{START} 0 1 ; bm e4",
        f"{START}\t0\t1;bm e4 ;",
        f"{START} ;hmvc 0 ;fmvn 1 ;bm e4;;",
        f"{START} 0 1 hmvc 0; fmvn 1; bm e4;\0",
        f"  {START}   bm   e4   ;  hmvc 0; fmvn +1  ",
        f"{START} bm e4; hmvc 0; fmvn 1;\r\n",
    ],
)
def test_parse_lenient_accepts_harmless_mess(line: str) -> None:
    record = parse_lenient(line)
    assert record.operand_texts("bm") == ("e4",)
    assert record.integer("hmvc") == 0
    assert record.integer("fmvn") == 1


def test_parse_lenient_keeps_a_bare_token_where_a_string_is_due() -> None:
    record = parse_lenient(f"{BK01} ; bm Qd1+; id BK.01\0")
    assert record.operations[1] == Operation.of("id", "BK.01")
    assert format_record(record) == f"{BK01} bm Qd1+; id BK.01;"


@pytest.mark.parametrize(
    ("line", "fragment", "reason"),
    [
        (f"{BK01} ; bm Qd1 + ; id BK.01\0", "+",
         "bm: operand '+' is a check mark separated from its move by a blank"),
        ("r1bqrnk1/pp2bp1p/2p2np1/3p2B1/3P4/2NBPN2/PPQ2PPP/1R3RK1 w - -1 12 ; bm b4\0", "-1",
         "en passant field '-1' is neither '-' nor a square (a missing blank after '-'?)"),
        ("5nk1/Q4bpp/5p2/8/P1n1PN2/q4P2/6PP/1R4K1 w - - ; bm Qd4; id LCTII.POS.09 c0 Boissel"
         " - Del Gobbo, corr. 1994\0", "c0",
         "id takes one operand; a ';' seems to be missing before 'c0'"),
        ("rnbq1rk1/pppp1ppp/4pn2/8/1bPP4/P1N5/1PQ1PPPP/R1B1KBNR b KQ - 1 5 ; bm Bcx3 \0",
         "Bcx3", "bm: 'Bcx3' is not a legal move"),
        (f"{START} bm e5;", "e5", "bm: 'e5' is not a legal move in this position"),
        (f"{START} sm --;", "--", "null move"),
        (f"{START} pv e4 e5 e5;", "e5;", "pv: 'e5' is not a legal move in this position"),
        (f"{START} sv d4 d5 Nc6;", "Nc6", "sv: 'Nc6' is not a legal move in this position"),
        ("4k3/8/8/8/8/8/8/R3K2R w KQ - am Rd2;", "Rd2", "not a legal move"),
        ("4k3/8/8/8/8/8/8/1N2KN2 w - - am Nd2;", "Nd2", "'Nd2' is ambiguous"),
        (f"{START} bm \"e4\";", '"', "bm: operand '\"e4\"' must be a bare move"),
        (f"{START} refcom \"respond\";", '"', "must be a bare identifier"),
        (f"{START} refcom re-spond;", "re-", "refcom: operand 're-spond' is not an identifier"),
        (f"{START} hmvc x;", "x", "hmvc: operand 'x' is not an integer"),
        (f"{START} hmvc -1;", "-1", "hmvc: operand '-1' is out of range (0 to 2147483647)"),
        (f"{START} fmvn 0;", "0", "out of range"),
        (f"{START} ce 32767;", "32767", "out of range (-32768 to 32766)"),
        (f"{START} acn {'9' * 30};", "999", "out of range"),
        (f"{START} cc 000:24:00:00 000:00:00:00;", "000:24", "cc: clock value '000:24:00:00'"),
        (f"{START} cc 000:00:00:00;", "cc", "cc takes two operands, found 1"),
        (f"{START} ts 2024.02.30 12:00:00;", "2024", "is not a date"),
        (f"{START} ts 2024.02.03 24:00:00;", "24:", "is not a time of day"),
        (f"{START} ts 2024.02.03 12:00;", "12:", "is not a time of day HH:MM:SS (not HH:MM:SS)"),
        (f"{START} ptp Event \"x\" Site;", "ptp", "ptp takes an even number of operands"),
        (f"{START} ptp \"Event\" \"x\";", '"Event"', "must be a bare identifier"),
        (f"{START} resign now;", "now", "resign takes no operands, found 1"),
        (f"{START} c0 \"a\" \"b\";", '"b"', "c0 takes no operands or one operand, found 2"),
        (f"{START} pm;", "pm", "pm takes one operand, found 0"),
        (f"{START} 0 1; hmvc 3;", "hmvc", "FEN halfmove clock '0' conflicts with 'hmvc 3'"),
        (f"{START} 0 1 fmvn 2;", "fmvn", "FEN fullmove number '1' conflicts with 'fmvn 2'"),
        (f"{START} hmvc 1; hmvc  1;", "hmvc  1", "appears twice"),
        (f"{START} bm e4;\0 ", "\0", "NUL byte before the end of the line"),
        (f"{START} \"x\"", '"', "must start with an opcode"),
    ],
)
def test_parse_lenient_rejects_what_it_cannot_read_with_certainty(
    line: str, fragment: str, reason: str
) -> None:
    with pytest.raises(RecordError) as caught:
        parse_lenient(line)
    assert reason in caught.value.reason
    assert caught.value.column == column_of(line, fragment)


def test_parse_lenient_equal_fen_counters_and_operations_merge() -> None:
    record = parse_lenient(f"{START} 0 1; hmvc 00; fmvn +1;")
    assert record.operand_texts("hmvc") == ("00",)
    assert record.operand_texts("fmvn") == ("+1",)
    assert [op.opcode for op in record.operations] == ["hmvc", "fmvn"]


def test_parse_lenient_reads_every_basetype() -> None:
    line = (
        f'{START} acn 12345678901; acs 0; am a3; bm e4 d4; c0 "first"; c1; '
        f"cc 000:00:01:00 0001:23:59:59; ce -32768; dm 3; draw_offer; eco \"B20\"; "
        f"id x; nic; noop 1 \"2\"; pm e4; ptp Event \"E\" Round \"1\"; pv e4 e5 Nf3; rc 1; "
        f'refcom respond; sm e4; sv d4 d5; tcgs 1; tcri "a@b" "B"; tcsi "c@d" "D"; '
        f"ts 1995.11.26 23:59:59; v0 \"Sicilian\"; X1 anything;"
    )
    record = parse_lenient(line)
    assert len(record.operations) == 27
    normalised = format_record(record)
    assert format_record(parse_lenient(normalised)) == normalised
    assert parse_record(normalised).operations == parse_lenient(normalised).operations


@given(
    st.builds(
        lambda head, tail: f"{head} {tail}",
        st.sampled_from([START, BK01, "8/8/8/8/8/8/8/8 w - -", "4k3/8/8/8/8/8/8/R3K2R w KQ e6"]),
        st.text(alphabet=' ;"\t\0abemNQKOx0123456789+#-:.', max_size=60),
    )
)
def test_parse_lenient_raises_only_record_errors_with_a_column(line: str) -> None:
    refused_with_a_column_or_read_back(parse_lenient, line)


@pytest.mark.parametrize("parse", [parse_record, parse_lenient])
def test_errors_carry_the_escaped_line(parse: object) -> None:
    line = f"{START} c0 \"\x1b[2J\";"
    with pytest.raises(RecordError) as caught:
        parse(line)  # type: ignore[operator]
    assert caught.value.raw == line.replace("\x1b", "\\x1b")
    assert caught.value.column == column_of(line, "\x1b")


def test_parse_lenient_points_at_the_position_python_chess_refuses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(_board: chess.Board, fen: str) -> None:
        raise ValueError(f"invalid fen: {fen!r}")

    monkeypatch.setattr(chess.Board, "set_fen", refuse)
    assert parse_lenient(f"{START} id x;").operand_texts("id") == ("x",)  # no moves, no board
    with pytest.raises(RecordError) as caught:
        # hmvc 1: python-chess sets up the plain start position without set_fen.
        parse_lenient(f"{START} bm e4; hmvc 1;")
    assert "python-chess rejects the position" in caught.value.reason
    assert caught.value.column == 1


def test_a_record_read_from_a_file_plays_on_a_python_chess_board() -> None:
    record = parse_lenient(f"{BK01} bm Qd1+; id \"BK.01\";")
    board = record.board()
    assert record.move("bm", board) == chess.Move.from_uci("d6d1")
