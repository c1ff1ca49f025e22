"""The EPD codec: strict wire parser, lenient file reader, normalised writer, accessors."""

from __future__ import annotations

import datetime
import itertools
import re

import chess
import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref import epd
from serialref.epd import (
    OPCODES,
    Basetype,
    CommentRegisters,
    EpdRecord,
    MoveUse,
    Operand,
    Operation,
    clock_text,
    format_record,
    parse_clock,
    parse_lenient,
    parse_record,
)
from serialref.errors import RecordError

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
RESPOND = (
    f"{START} cc 000:00:00:00 000:00:00:00; fmvn 1; hmvc 0; refcom respond;"
)
BK01 = "1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - -"


def start_record(*operations: Operation) -> EpdRecord:
    return EpdRecord("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR", "w", "KQkq", "-", operations)


def column_of(line: str, fragment: str) -> int:
    return line.index(fragment) + 1


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
    assert record.operation("c0") == Operation("c0", (Operand("a; b  \\ c", quoted=True),))
    assert record.operation("id") == Operation("id", (Operand("BK.01"),))
    assert record.operation("noop") == Operation(
        "noop", (Operand("x"), Operand("", True), Operand("y"))
    )


def test_parse_record_accepts_runs_of_blanks_and_tabs() -> None:
    record = parse_record(f"  {START.replace(' ', '  ')}\t\tbm  e4  d4;\t id \"x\";  ")
    assert format_record(record) == f'{START} bm d4 e4; id "x";'


def test_parse_record_keeps_unknown_opcodes() -> None:
    record = parse_record(f"{START} D6 8031647685; Zz_9 a b;")
    assert record.operand_texts("D6") == ("8031647685",)
    assert "Zz_9" in record


def test_parse_record_of_four_fields_only() -> None:
    assert parse_record(START) == start_record()


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
        (f"{START} 9x;", "9x", "'9x' is not an opcode"),
        (f"{START} 0 1", "0", "FEN move counters? EPD writes them as hmvc and fmvn"),
        (f'{START} c0 "{"x" * 256}";', '"', "string of 256 bytes is too long"),
        (f'{START} c0 x"y";', '"', "a blank is missing before"),
        (f"{START} ab\x01;", "\x01", "character \\x01 is not printable ASCII"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq -", "RNBQKBN ",
         "rank 1 ('RNBQKBN') has 7 squares"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/8 w - -", "rnbq", "has 9 ranks"),
        ("rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w - -", "44", "two digits in a row"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w - -", "X", "'X' is neither a piece"),
        ("8/8/8/8/8/8/8/8 W - -", "W", "active colour 'W' must be 'w' or 'b'"),
        ("8/8/8/8/8/8/8/8 w QK -", "QK", "castling field 'QK'"),
        ("8/8/8/8/8/8/8/8 w - e4", "e4", "en passant square 'e4' is not on rank 3 or 6"),
        ("8/8/8/8/8/8/8/8 w - -1", "-1", "(a missing blank after '-'?)"),
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


def test_parse_record_accepts_shredder_castling_that_python_chess_reads() -> None:
    record = parse_record("4k2r/8/8/8/8/8/8/R3K3 w Ah -")
    assert record.castling == "Ah"
    assert record.board().castling_rights == chess.BB_A1 | chess.BB_H8


# --------------------------------------------------------------------------- writer


def test_format_record_normalises_as_spec_7_1() -> None:
    record = start_record(
        Operation.of("refcom", "respond"),
        Operation.of("hmvc", 0),
        Operation.of("fmvn", 1),
        Operation.of("cc", "000:00:00:00", "000:00:00:00"),
    )
    assert format_record(record) == RESPOND


def test_format_record_sorts_only_the_operand_sets_of_am_and_bm() -> None:
    record = parse_record(
        f'{START} pv e4 e5 Nf3; bm Nf3 e4 d4; am h4 a4; ptp White "b" Black "a"; X c b a;'
    )
    assert format_record(record) == (
        f'{START} X c b a; am a4 h4; bm Nf3 d4 e4; ptp White "b" Black "a"; pv e4 e5 Nf3;'
    )


def test_format_record_sorts_opcodes_in_ascii_order() -> None:
    record = parse_record(f"{START} bm e4; D2 25; D1 5; acn 3; Zed 1;")
    assert [op.split()[0] for op in format_record(record).split("; ")[0:1]] == [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    ]
    assert format_record(record).endswith("- D1 5; D2 25; Zed 1; acn 3; bm e4;")


def test_normalized_is_what_parse_record_returns_from_the_formatted_line() -> None:
    record = start_record(Operation.of("bm", "e4", "d4"), Operation.of("am", "a3"))
    assert parse_record(format_record(record)) == record.normalized()
    assert record.normalized().operations == (
        Operation.of("am", "a3"),
        Operation.of("bm", "d4", "e4"),
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
opcodes = st.one_of(
    st.sampled_from(sorted(OPCODES)), st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,14}", fullmatch=True)
)
operands = st.one_of(
    st.builds(Operand.token, st.from_regex(r"[!#-:<-~]{1,20}", fullmatch=True)),
    st.builds(Operand.string, st.from_regex(r"[ !#-~]{0,30}", fullmatch=True)),
    st.builds(Operand.string, st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126,
                                                             blacklist_characters='"'),
                                       min_size=250, max_size=255)),
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


@given(records)
def test_format_then_parse_round_trips(record: EpdRecord) -> None:
    line = format_record(record)
    parsed = parse_record(line)
    assert parsed == record.normalized()
    assert format_record(parsed) == line
    outside_strings = re.sub(r'"[^"]*"', '""', line)
    assert "  " not in outside_strings
    assert outside_strings == outside_strings.strip()


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
    try:
        record = parse_record(line)
    except RecordError as exc:
        assert 1 <= exc.column <= len(line) + 1
        assert exc.reason
    else:
        assert parse_record(format_record(record)) == record.normalized()


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
    plain = epd._plain_operations(line, len(START))
    assert plain is not None
    assert plain == epd._tokenized_operations(line, len(START))


@given(st.text(alphabet=' ;"aeD0123456789_+:-', max_size=60))
def test_the_plain_reader_takes_nothing_the_tokenizer_reads_otherwise(tail: str) -> None:
    line = f"{START}{tail}"
    plain = epd._plain_operations(line, len(START))
    if plain is not None:
        assert plain == epd._tokenized_operations(line, len(START))


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
    ],
)
def test_parse_lenient_accepts_harmless_mess(line: str) -> None:
    record = parse_lenient(line)
    assert record.operand_texts("bm") == ("e4",)
    assert record.integer("hmvc") == 0
    assert record.integer("fmvn") == 1


def test_parse_lenient_keeps_a_bare_token_where_a_string_is_due() -> None:
    record = parse_lenient(f"{BK01} ; bm Qd1+; id BK.01\0")
    assert record.operation("id") == Operation.of("id", "BK.01")
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
        ("4k3/8/8/8/8/8/8/R3K2R w KQ - am Rd2;", "Rd2", "not a legal move"),
        ("4k3/8/8/8/8/8/8/1N2KN2 w - - am Nd2;", "Nd2", "'Nd2' is ambiguous"),
        (f"{START} bm \"e4\";", '"', "bm: operand '\"e4\"' must be a bare move"),
        (f"{START} refcom \"respond\";", '"', "must be a bare identifier"),
        (f"{START} hmvc x;", "x", "hmvc: operand 'x' is not an integer"),
        (f"{START} hmvc -1;", "-1", "hmvc: operand '-1' is out of range (0 to 2147483647)"),
        (f"{START} fmvn 0;", "0", "out of range"),
        (f"{START} ce 32767;", "32767", "out of range (-32768 to 32766)"),
        (f"{START} acn {'9' * 30};", "999", "out of range"),
        (f"{START} cc 000:24:00:00 000:00:00:00;", "000:24", "cc: clock value '000:24:00:00'"),
        (f"{START} cc 000:00:00:00;", "cc", "cc takes two operands, found 1"),
        (f"{START} ts 2024.02.30 12:00:00;", "2024", "is not a date"),
        (f"{START} ts 2024.02.03 24:00:00;", "24:", "is not a time of day"),
        (f"{START} ptp Event \"x\" Site;", "ptp", "ptp takes an even number of operands"),
        (f"{START} ptp \"Event\" \"x\";", '"Event"', "must be a bare identifier"),
        (f"{START} resign now;", "now", "resign takes no operands, found 1"),
        (f"{START} c0 \"a\" \"b\";", '"b"', "c0 takes no operands or one operand, found 2"),
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
    assert parse_lenient(format_record(record)) == record.normalized()


# --------------------------------------------------------------------------- accessors


def test_typed_accessors() -> None:
    record = parse_record(
        f'{START} refcom respond; hmvc +5; fmvn 3; ce -20; X 1.50; c0 "hello"; '
        f"cc 000:00:05:00 001:00:00:01; ts 2024.02.29 13:14:15; "
        f'ptp Event "Test" Result "*"; sm e4; bm e4 d4; pv e4 e5 Nf3;'
    )
    board = chess.Board()
    assert record.identifier("refcom") == "respond"
    assert record.integer("hmvc") == 5
    assert record.integer("ce") == -20
    assert record.floating("X") == 1.5
    assert record.string("c0") == "hello"
    assert record.clock_pair() == (300, 86401)
    assert record.date("ts") == datetime.date(2024, 2, 29)
    assert record.time_of_day("ts") == datetime.time(13, 14, 15)
    assert record.timestamp() == datetime.datetime(2024, 2, 29, 13, 14, 15, tzinfo=datetime.UTC)
    assert record.tag_pairs() == [("Event", "Test"), ("Result", "*")]
    assert record.move("sm", board) == chess.Move.from_uci("e2e4")
    assert [m.uci() for m in record.move_set("bm", board)] == ["e2e4", "d2d4"]
    assert [m.uci() for m in record.variation("pv", board)] == ["e2e4", "e7e5", "g1f3"]
    assert board == chess.Board()  # the variation was played on a copy


@pytest.mark.parametrize(
    ("tail", "call", "reason"),
    [
        ("", lambda r: r.integer("hmvc"), "the record has no 'hmvc' operation"),
        ("hmvc 1 2;", lambda r: r.integer("hmvc"), "hmvc takes one operand, found 2"),
        ("hmvc -1;", lambda r: r.integer("hmvc"), "out of range"),
        ("D1 2147483648;", lambda r: r.integer("D1"), "D1: operand '2147483648' is out of range"),
        ("D1 1 2;", lambda r: r.integer("D1"), "D1: expected one operand, found 2"),
        ("X 1e5;", lambda r: r.floating("X"), "not a floating point number"),
        ("X .5;", lambda r: r.floating("X"), "not a floating point number"),
        ("refcom re-spond;", lambda r: r.identifier("refcom"), "not an identifier"),
        ("c0;", lambda r: r.string("c0"), "c0: the operation has no operand"),
        ("sm e5;", lambda r: r.move("sm", chess.Board()), "not a legal move"),
        ("sm e4 e5;", lambda r: r.move("sm", chess.Board()), "sm takes one operand, found 2"),
        ("bm e4 Ke2;", lambda r: r.move_set("bm", chess.Board()), "'Ke2' is not a legal move"),
        ("pv e4 e4;", lambda r: r.variation("pv", chess.Board()), "'e4' is not a legal move"),
        ("cc 000:00:00:00;", lambda r: r.clock_pair(), "cc takes two operands, found 1"),
        ("cc 00:00:00:00 000:00:00:00;", lambda r: r.clock_pair(), "is not DDD:HH:MM:SS"),
        ('cc "000:00:00:00" 000:00:00:00;', lambda r: r.clock_pair(), "must be a bare clock"),
        ("ts 2024.13.01 00:00:00;", lambda r: r.timestamp(), "is not a date"),
        ("ptp Event;", lambda r: r.tag_pairs(), "ptp takes an even number of operands"),
        ("hmvc x;", lambda r: r.board(), "hmvc: operand 'x' is not an integer"),
    ],
)
def test_typed_accessors_raise_record_errors(tail: str, call: object, reason: str) -> None:
    record = parse_record(f"{START} {tail}")
    with pytest.raises(RecordError) as caught:
        call(record)  # type: ignore[operator]
    assert reason in caught.value.reason


def test_board_uses_hmvc_and_fmvn() -> None:
    board = parse_record(f"{START} hmvc 7; fmvn 12;").board()
    assert (board.halfmove_clock, board.fullmove_number) == (7, 12)
    assert parse_record(START).board() == chess.Board()


def test_board_turns_a_python_chess_refusal_into_a_record_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every position that passes the syntax check is one python-chess reads today; the
    # conversion guards the boundary against a stricter python-chess.
    def refuse(_board: chess.Board, fen: str) -> None:
        raise ValueError(f"invalid fen: {fen!r}")

    monkeypatch.setattr(chess.Board, "set_fen", refuse)
    with pytest.raises(RecordError, match="python-chess rejects the position"):
        parse_record(f"{START} hmvc 1;").board()


def test_from_board_writes_en_passant_after_every_double_push() -> None:
    board = chess.Board()
    board.push_san("e4")
    record = EpdRecord.from_board(board, Operation.of("refcom", "respond"))
    assert record.position == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3"
    assert board.fen().split()[3] == "-"  # python-chess's default would drop it
    assert record.board().fen() == board.fen()
    assert format_record(record) == f"{record.position} refcom respond;"


def test_with_operations_replaces_in_place_and_without_removes() -> None:
    record = parse_record(f"{START} a 1; b 2; c 3;")
    changed = record.with_operations(Operation.of("b", "9"), Operation.of("d", "4"))
    assert [op.texts for op in changed.operations] == [("1",), ("9",), ("3",), ("4",)]
    assert "b" in changed and "b" not in changed.without("b", "zz")
    assert changed.without("b").operation("b") is None
    assert changed.operand_texts("zz") == ()
    assert record.with_operations(Operation.of("e", 1), Operation.of("e", 2)).operand_texts(
        "e"
    ) == ("2",)


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "000:00:00:00"), (59, "000:00:00:59"), (3661, "000:01:01:01"),
     (86400 * 999 + 86399, "999:23:59:59")],
)
def test_clock_text_and_parse_clock_agree(seconds: int, text: str) -> None:
    assert clock_text(seconds) == text
    assert parse_clock(text) == seconds


def test_parse_clock_accepts_four_day_digits() -> None:
    assert parse_clock("1000:00:00:01") == 1000 * 86400 + 1


@pytest.mark.parametrize("seconds", [-1, 1000 * 86400])
def test_clock_text_refuses_what_spec_5_2_7_cannot_write(seconds: int) -> None:
    with pytest.raises(RecordError, match="cannot be written as a clock value"):
        clock_text(seconds)


@pytest.mark.parametrize("text", ["00:00:00:00", "000:00:60:00", "000:24:00:00", "000:00:00", "x"])
def test_parse_clock_rejects_other_forms(text: str) -> None:
    with pytest.raises(RecordError, match="clock value"):
        parse_clock(text)


@given(st.integers(min_value=0, max_value=1000 * 86400 - 1))
def test_clock_round_trip(seconds: int) -> None:
    assert parse_clock(clock_text(seconds)) == seconds


# --------------------------------------------------------------------------- building blocks


@pytest.mark.parametrize(
    "build",
    [
        lambda: Operand.token(""),
        lambda: Operand.token("a b"),
        lambda: Operand.token('a"'),
        lambda: Operand.token("a;"),
        lambda: Operand.token("caf\xe9"),
        lambda: Operand.string('say "hi"'),
        lambda: Operand.string("x" * 256),
        lambda: Operand.string("tab\there"),
        lambda: Operation("1x"),
        lambda: Operation("a" * 16),
        lambda: EpdRecord("8/8/8/8/8/8/8/9", "w", "-", "-"),
        lambda: EpdRecord("8/8/8/8/8/8/8/8", "w", "-", "-", (Operation("a"), Operation("a"))),
    ],
)
def test_invalid_building_blocks_are_refused(build: object) -> None:
    with pytest.raises(RecordError):
        build()  # type: ignore[operator]


def test_convenience_constructors() -> None:
    assert Operation.of("fmvn", 12) == Operation("fmvn", (Operand("12"),))
    assert Operation.strings("tcsi", "a@b", "Me") == Operation(
        "tcsi", (Operand("a@b", True), Operand("Me", True))
    )
    assert Operand.string("x y").external == '"x y"'
    assert Operation("x", [Operand("1")]).operands == (Operand("1"),)  # type: ignore[arg-type]


def test_opcode_table_covers_spec_section_6() -> None:
    named = {
        "acn", "acs", "am", "bm", "cc", "ce", "dm", "draw_accept", "draw_claim", "draw_offer",
        "draw_reject", "eco", "fmvn", "hmvc", "id", "nic", "noop", "pm", "ptp", "pv", "rc",
        "refcom", "refreq", "resign", "sm", "sv", "tcgs", "tcri", "tcsi", "ts",
    }
    families = {f"{letter}{digit}" for letter in "cv" for digit in range(10)}
    assert set(OPCODES) == named | families
    assert {name for name, spec in OPCODES.items() if spec.sorted_set} == {"am", "bm"}
    assert OPCODES["pv"].moves is MoveUse.SEQUENCE
    assert OPCODES["ts"].pattern == (Basetype.DATE, Basetype.TIME_OF_DAY)


# --------------------------------------------------------------------------- registers


def test_comment_registers_follow_spec_6_5() -> None:
    registers = CommentRegisters()
    registers.apply(parse_record(f'{START} c0 "game"; c2 "two"; v1 "Najdorf";'))
    assert registers.comments[:3] == ("game", None, "two")
    assert registers.variations[:2] == (None, "Najdorf")
    registers.apply(parse_record(f'{START} c1 "one";'))
    assert registers.comments[:3] == ("game", "one", None)
    registers.apply(parse_record(f"{START} c0;"))
    assert registers.comments == (None,) * 10
    assert registers.variations[1] == "Najdorf"
    registers.reset()
    assert registers.variations == (None,) * 10


@given(
    st.builds(
        lambda head, tail: f"{head} {tail}",
        st.sampled_from([START, BK01, "8/8/8/8/8/8/8/8 w - -", "4k3/8/8/8/8/8/8/R3K2R w KQ e6"]),
        st.text(alphabet=' ;"\t\0abemNQKOx0123456789+#-:.', max_size=60),
    )
)
def test_parse_lenient_raises_only_record_errors_with_a_column(line: str) -> None:
    try:
        record = parse_lenient(line)
    except RecordError as exc:
        assert 1 <= exc.column <= len(line) + 1
        assert exc.reason
    else:
        assert parse_lenient(format_record(record)) == record.normalized()


@pytest.mark.parametrize("parse", [parse_record, parse_lenient])
def test_errors_carry_the_escaped_line(parse: object) -> None:
    line = f"{START} c0 \"\x1b[2J\";"
    with pytest.raises(RecordError) as caught:
        parse(line)  # type: ignore[operator]
    assert caught.value.raw == line.replace("\x1b", "\\x1b")
    assert caught.value.column == column_of(line, "\x1b")


@given(st.text(alphabet="/0123456789pPkKx", min_size=1, max_size=40))
def test_placement_check_explains_every_refusal(placement: str) -> None:
    try:
        record = EpdRecord(placement, "w", "-", "-")
    except RecordError as exc:
        assert exc.reason.startswith("piece placement")
    else:
        assert chess.Board(f"{record.position} 0 1").board_fen() == placement
