"""The referee protocol's records byte for byte (PROTOCOL.md 2-4), and what a player's mean."""

from __future__ import annotations

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serialref import records
from serialref.epd.operations import Operation
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import RecordError, UnexpectedRecordError
from serialref.records import Refcom, Refreq

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3"
AFTER_E4_E5 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6"


def board_after(*sans: str) -> chess.Board:
    board = chess.Board()
    for san in sans:
        board.push_san(san)
    return board


def line(record: EpdRecord) -> str:
    return format_record(record)


# --- what the referee sends (PROTOCOL.md 3) --------------------------------------------------


def test_reset_names_the_initial_position_with_its_counters() -> None:
    assert line(records.reset(chess.Board())) == f"{START} fmvn 1; hmvc 0; refcom reset;"


def test_a_fen_and_a_board_give_the_same_record() -> None:
    # python-chess writes '-' where no capture is possible; the wire wants the square.
    board = board_after("e4")
    assert board.fen().split(" ")[3] == "-"
    from_fen = records.reset(board.fen(en_passant="fen"))
    assert line(records.reset(board)) == line(from_fen)
    assert line(from_fen) == f"{AFTER_E4} fmvn 1; hmvc 0; refcom reset;"


def test_counters_come_from_the_position() -> None:
    fen = "4k3/8/8/8/8/8/8/4K2R w K - 17 42"
    assert line(records.disconnect(fen)) == (
        "4k3/8/8/8/8/8/8/4K2R w K - fmvn 42; hmvc 17; refcom disconnect;"
    )


def test_first_respond_has_the_clocks_and_no_move() -> None:
    assert line(records.respond(chess.Board(), (0, 0), None)) == (
        f"{START} cc 000:00:00:00 000:00:00:00; ccms 0 0; fmvn 1; hmvc 0; refcom respond;"
    )


def test_respond_carries_the_position_before_the_move_and_the_move() -> None:
    assert line(records.respond(board_after("e4"), (65_999, 3_725_001), "e5")) == (
        f"{AFTER_E4} cc 000:00:01:05 000:01:02:05; ccms 65999 3725001; fmvn 1; hmvc 0; "
        "refcom respond; sm e5;"
    )


def test_a_draw_offer_travels_with_the_move_only() -> None:
    with_offer = records.respond(chess.Board(), (2_000, 0), "e4", draw_offer=True)
    assert line(with_offer) == (
        f"{START} cc 000:00:00:02 000:00:00:00; ccms 2000 0; draw_offer; fmvn 1; hmvc 0; "
        "refcom respond; sm e4;"
    )
    # No move, no offer to show: a restore's respond never carries one.
    without_move = records.respond(chess.Board(), (2_000, 0), None, draw_offer=True)
    assert "draw_offer" not in without_move


def test_clocks_over_a_day_use_the_day_field() -> None:
    record = records.conclude(chess.Board(), ((86_400 + 3_661) * 1000 + 999, 0))
    assert record.operand_texts("cc") == ("001:01:01:01", "000:00:00:00")
    assert record.operand_texts("ccms") == ("90061999", "0")


def test_execute_replays_one_move_in_san_from_the_position_before_it() -> None:
    before = board_after("e4", "e5")
    assert line(records.execute(before, chess.Move.from_uci("g1f3"))) == (
        f"{AFTER_E4_E5} fmvn 2; hmvc 0; refcom execute; sm Nf3;"
    )
    assert before.move_stack == [chess.Move.from_uci("e2e4"), chess.Move.from_uci("e7e5")]


def test_conclude_has_the_final_position_and_clocks() -> None:
    mated = board_after("f3", "e5", "g4", "Qh4#")
    assert line(records.conclude(mated, (3_250, 2_999))) == (
        "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - "
        "cc 000:00:00:03 000:00:00:02; ccms 3250 2999; fmvn 3; hmvc 1; refcom conclude;"
    )


@pytest.mark.parametrize("milliseconds", [0, 1, 999, 1_000, 59_999, 86_399_999_999])
def test_cc_is_ccms_rounded_down_to_the_second(milliseconds: int) -> None:
    record = parse_record(line(records.conclude(chess.Board(), (milliseconds, 0))))
    assert records.consumed_ms(record) == (milliseconds, 0)
    assert record.clock_pair("cc") == (milliseconds // 1000, 0)


@pytest.mark.parametrize(
    ("ccms", "reason"),
    [
        ("ccms 1;", "ccms: expected two operands, found 1"),
        ("ccms 1 -2;", "ccms: operand '-2' is out of range (0 to 86399999999)"),
        ("ccms 1 x;", "ccms: operand 'x' is not an integer"),
        ('ccms 1 "2";', "ccms: operand '\"2\"' must be a bare integer, not a quoted string"),
    ],
)
def test_a_ccms_that_is_not_two_counts_of_milliseconds_is_refused(ccms: str, reason: str) -> None:
    record = parse_record(f"{START} cc 000:00:00:00 000:00:00:00; {ccms} refcom conclude;")
    with pytest.raises(RecordError) as refused:
        records.consumed_ms(record)
    assert refused.value.reason == reason


def test_fault_gives_its_reason_as_a_string() -> None:
    assert line(records.fault(chess.Board(), "referee storage failure")) == (
        f'{START} c0 "referee storage failure"; fmvn 1; hmvc 0; refcom fault;'
    )


def test_a_hostile_fault_reason_cannot_break_the_record() -> None:
    record = records.fault(chess.Board(), 'say "x"; \x1b[2J\r\nrefcom disconnect;')
    text = line(record)
    assert text.isprintable()
    assert parse_record(text).operand_texts("c0") == ("say 'x'; ?[2J??refcom disconnect;",)
    assert records.referee_command(parse_record(text)) is Refcom.FAULT


def test_disconnect_names_the_current_position() -> None:
    assert line(records.disconnect(board_after("e4"))) == (
        f"{AFTER_E4} fmvn 1; hmvc 0; refcom disconnect;"
    )


def test_inform_carries_the_tags_in_the_order_given() -> None:
    tags = records.game_tags(
        {"Event": "Club", "Site": "Lab", "Date": "2026.11.18", "Round": "1",
         "White": "Alpha", "Black": "Beta", "Result": "*"},
        "40/7200:3600",
    )  # fmt: skip
    assert line(records.inform(chess.Board(), tags)) == (
        f'{START} fmvn 1; hmvc 0; ptp Event "Club" Site "Lab" Date "2026.11.18" Round "1" '
        'White "Alpha" Black "Beta" Result "*" TimeControl "40/7200:3600"; refcom inform;'
    )


def test_inform_makes_every_value_a_safe_string() -> None:
    record = records.inform(chess.Board(), [("White", 'Evil "Bot"\x07'), ("Black", "Ünïcode")])
    assert parse_record(line(record)).tag_pairs() == [
        ("White", "Evil 'Bot'?"),
        ("Black", "Unicode"),
    ]


def test_every_referee_record_reads_back_as_its_command() -> None:
    board = board_after("e4", "e5")
    built = {
        Refcom.RESET: records.reset(board),
        Refcom.INFORM: records.inform(board, [("Result", "*")]),
        Refcom.RESPOND: records.respond(board, (1, 1), None),
        Refcom.EXECUTE: records.execute(board, chess.Move.from_uci("d2d4")),
        Refcom.CONCLUDE: records.conclude(board, (1, 1)),
        Refcom.FAULT: records.fault(board, "why"),
        Refcom.DISCONNECT: records.disconnect(board),
    }
    assert set(built) == set(Refcom)
    for command, record in built.items():
        text = line(record)
        assert format_record(parse_record(text)) == text
        assert records.referee_command(parse_record(text)) is command
        # PROTOCOL.md 2: every record naming a game position carries fmvn and hmvc.
        assert record.operand_texts("fmvn") == ("2",)
        assert record.operand_texts("hmvc") == ("0",)


# --- game_tags -------------------------------------------------------------------------------

ROSTER = {
    "Result": "*", "Black": "Beta", "White": "Alpha", "Round": "3",
    "Date": "2026.11.18", "Site": "Lab", "Event": "Club",
}  # fmt: skip


def test_game_tags_follow_the_roster_order_whatever_the_mapping_order() -> None:
    assert records.game_tags(ROSTER, "300+2") == [
        ("Event", "Club"), ("Site", "Lab"), ("Date", "2026.11.18"), ("Round", "3"),
        ("White", "Alpha"), ("Black", "Beta"), ("Result", "*"), ("TimeControl", "300+2"),
    ]  # fmt: skip


def test_game_tags_at_the_end_carry_the_result_and_termination() -> None:
    tags = records.game_tags(ROSTER, "-", result="1/2-1/2", termination="rules infraction")
    assert tags[-3:] == [
        ("Result", "1/2-1/2"), ("TimeControl", "-"), ("Termination", "rules infraction"),
    ]  # fmt: skip
    assert [name for name, _ in tags] == [*records.ROSTER, "TimeControl", "Termination"]
    assert ROSTER["Result"] == "*"  # the roster given is not changed


def test_game_tags_need_the_whole_roster() -> None:
    partial = {name: value for name, value in ROSTER.items() if name != "Site"}
    with pytest.raises(KeyError, match="Site"):
        records.game_tags(partial, "-")


# --- tag_value -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "safe"),
    [
        ("Stockfish 17", "Stockfish 17"),
        ('say "hi"', "say 'hi'"),
        ("\x1b]0;owned\x07", "?]0;owned?"),
        ("tab\there\r\n", "tab?here??"),
        ("Käse", "Kase"),
        ("Müller", "Muller"),
        ("Øster", "Oster"),
        ("Иванчук", "Ivanchuk"),
        ("„Straße“", "'Strasse'"),
        ("\u0378", ""),  # no letter, no ASCII form
        ("\x7f\x00", "??"),
        ("", ""),
        ("a; b", "a; b"),
    ],
)
def test_tag_value_on_hostile_text(text: str, safe: str) -> None:
    assert records.tag_value(text) == safe


def test_tag_value_keeps_fewer_than_256_bytes() -> None:
    assert records.tag_value("x" * 1000) == "x" * 255
    assert records.tag_value("é" * 300) == "e" * 255
    assert records.tag_value("Æ" * 200) == "Ae" * 127 + "A"


@given(st.text())
def test_any_text_becomes_a_tag_that_survives_the_wire(text: str) -> None:
    safe = records.tag_value(text)
    assert len(safe.encode("ascii")) < 256
    record = parse_record(line(records.inform(chess.Board(), [("White", text)])))
    assert record.tag_pairs() == [("White", safe)]
    assert records.tag_value(safe) == safe  # already safe text is left alone


# --- what players send (PROTOCOL.md 4) -------------------------------------------------------


def test_sign_on_without_a_name_is_bare() -> None:
    assert line(records.sign_on(chess.Board())) == f"{START} refreq sign_on;"


def test_sign_on_with_a_name_gives_tcsi() -> None:
    assert line(records.sign_on(chess.Board(), "Stockfish 17", "10.0.0.2")) == (
        f'{START} refreq sign_on; tcsi "10.0.0.2" "Stockfish 17";'
    )
    assert line(records.sign_on(chess.Board(), 'My "Bot"\n')) == (
        f'{START} refreq sign_on; tcsi "" "My \'Bot\'?";'
    )


def test_sign_off_and_fault() -> None:
    assert line(records.sign_off(board_after("e4"))) == f"{AFTER_E4} refreq sign_off;"
    assert line(records.player_fault(chess.Board(), "engine\x00 crashed")) == (
        f'{START} c0 "engine? crashed"; refreq fault;'
    )


def test_reply_gives_the_move_in_san_from_the_position_to_move_in() -> None:
    board = board_after("e4")
    assert line(records.reply(board, chess.Move.from_uci("g8f6"))) == (
        f"{AFTER_E4} refreq reply; sm Nf6;"
    )
    assert board.move_stack == [chess.Move.from_uci("e2e4")]


def test_reply_carries_extra_operations_and_may_have_no_move() -> None:
    board = chess.Board()
    assert line(records.reply(board, None, Operation("resign"))) == (
        f"{START} refreq reply; resign;"
    )
    analysed = records.reply(
        board, chess.Move.from_uci("e2e4"), Operation.of("ce", 35), Operation("draw_offer")
    )
    assert line(analysed) == f"{START} ce 35; draw_offer; refreq reply; sm e4;"


def test_every_player_record_reads_back_as_its_request() -> None:
    board = chess.Board()
    built = {
        Refreq.SIGN_ON: records.sign_on(board, "x"),
        Refreq.SIGN_OFF: records.sign_off(board),
        Refreq.FAULT: records.player_fault(board, "why"),
        Refreq.REPLY: records.reply(board, chess.Move.from_uci("e2e4")),
    }
    assert set(built) == set(Refreq)
    for request, record in built.items():
        assert records.player_request(parse_record(line(record))) is request


# --- reading commands and requests -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"{START} sm e4;", "record has no refreq operation"),
        (f"{START} refreq;", "refreq takes one operand, got 0"),
        (f"{START} refreq reply sign_on;", "refreq takes one operand, got 2"),
        (
            f"{START} refreq resign;",
            "unknown refreq 'resign' (expected one of fault, reply, sign_off, sign_on)",
        ),
        (f"{START} refcom reset;", "record has no refreq operation"),
    ],
)
def test_a_record_that_is_no_player_request_says_why(text: str, message: str) -> None:
    with pytest.raises(UnexpectedRecordError) as caught:
        records.player_request(parse_record(text))
    assert str(caught.value) == message


def test_a_record_that_is_no_referee_command_says_why() -> None:
    with pytest.raises(UnexpectedRecordError, match="record has no refcom operation"):
        records.referee_command(records.sign_off(chess.Board()))
    with pytest.raises(UnexpectedRecordError) as caught:
        records.referee_command(parse_record(f"{START} refcom draw;"))
    assert str(caught.value) == (
        "unknown refcom 'draw' (expected one of conclude, disconnect, execute, fault, "
        "inform, reset, respond)"
    )


# --- sign_on_identity ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tcsi", "name", "address"),
    [
        ("", None, None),
        (' tcsi "10.0.0.2" "Stockfish";', "Stockfish", "10.0.0.2"),
        (' tcsi "" "Stockfish";', "Stockfish", None),
        (' tcsi "10.0.0.2";', None, "10.0.0.2"),
        (' tcsi "" "";', None, None),
        (" tcsi;", None, None),
    ],
)
def test_sign_on_identity(tcsi: str, name: str | None, address: str | None) -> None:
    identity = records.sign_on_identity(parse_record(f"{START} refreq sign_on;{tcsi}"))
    assert (identity.name, identity.address) == (name, address)


def test_sign_on_identity_round_trips_what_sign_on_wrote() -> None:
    record = parse_record(line(records.sign_on(chess.Board(), "Beta 2.0", "host:7")))
    identity = records.sign_on_identity(record)
    assert (identity.name, identity.address) == ("Beta 2.0", "host:7")


@settings(max_examples=200, deadline=None)
@given(
    choices=st.lists(st.integers(0, 1000), max_size=30),
    consumed=st.tuples(st.integers(0, 10**9), st.integers(0, 10**9)),
    with_move=st.booleans(),
    draw_offer=st.booleans(),
)
def test_the_respond_line_is_the_respond_record_formatted(
    choices: list[int], consumed: tuple[int, int], with_move: bool, draw_offer: bool
) -> None:
    board = chess.Board()
    for choice in choices:
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(moves[choice % len(moves)])
    san = None
    if with_move and board.move_stack:
        last = board.pop()
        san = board.san(last)
    before = board.fen(en_passant="fen")
    expected = format_record(records.respond(before, consumed, san, draw_offer=draw_offer))
    assert records.respond_line(before, consumed, san, draw_offer=draw_offer) == expected


def test_a_check_counting_respond_line_keeps_its_checks() -> None:
    before = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3+3 0 1"
    line = records.respond_line(before, (1, 2), None)
    assert line == format_record(records.respond(before, (1, 2), None))
    assert " 3+3 " in line
