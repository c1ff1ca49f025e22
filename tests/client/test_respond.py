"""read_respond: the referee's own respond form read with one pattern, anything else refused."""

from __future__ import annotations

import chess
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import played_boards

from serialref import records
from serialref.client.clocks import ReportedClocks, reported_clocks
from serialref.client.respond import RespondLine, read_respond
from serialref.epd.parser import parse_record
from serialref.epd.writer import format_record

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"


@st.composite
def responds(draw: st.DrawFn) -> tuple[chess.Board, tuple[int, int], str | None, bool]:
    """A position some random moves into a game, the clocks, and maybe a move made there."""
    board = draw(played_boards(40))
    moves = sorted(board.legal_moves, key=chess.Move.uci)
    san = board.san(draw(st.sampled_from(moves))) if moves and draw(st.booleans()) else None
    consumed = (draw(st.integers(0, 10**9)), draw(st.integers(0, 10**9)))
    return board, consumed, san, draw(st.booleans())


@given(responds())
def test_the_referees_respond_reads_as_the_epd_reader_reads_it(
    case: tuple[chess.Board, tuple[int, int], str | None, bool],
) -> None:
    board, consumed, san, offer = case
    text = format_record(records.respond(board, consumed, san, draw_offer=offer))
    record = parse_record(text)
    assert read_respond(text) == RespondLine(
        position=record.position,
        clocks=ReportedClocks(records.consumed_ms(record)),
        fullmove=record.integer("fmvn"),
        halfmove=record.integer("hmvc"),
        san=None if san is None else record.operand_texts("sm")[0],
        draw_offer="draw_offer" in record,
    )


@given(responds())
def test_a_respond_without_ccms_reads_as_the_epd_reader_reads_it(
    case: tuple[chess.Board, tuple[int, int], str | None, bool],
) -> None:
    board, consumed, san, offer = case
    record = records.respond(board, consumed, san, draw_offer=offer).without("ccms")
    respond = read_respond(format_record(record))
    assert respond is not None
    assert respond.clocks == reported_clocks(record) == ReportedClocks.from_cc(
        (consumed[0] // 1000, consumed[1] // 1000)
    )


@pytest.mark.parametrize(
    "text",
    [
        # other records, and a respond written otherwise than the referee writes it
        f"{START} fmvn 1; hmvc 0; refcom conclude;",
        f'{START} cc 000:00:00:00 000:00:00:00; fmvn 1; hmvc 0; refcom respond; sm e4; c0 "x";',
        f"{START} cc 000:00:00:00 000:00:00:00; fmvn 1; hmvc 0;  refcom respond;",
        f"{START} cc 000:00:00:00 000:00:00:00; hmvc 0; fmvn 1; refcom respond;",
        f"{START} fmvn 1; hmvc 0; refcom respond;",
        # a clock the EPD reader refuses: the reader says why
        f"{START} cc 000:00:99:00 000:00:00:00; fmvn 1; hmvc 0; refcom respond;",
        f"{START} cc 000:00:00:00 000:00:00:00; fmvn 0; hmvc 0; refcom respond;",
        # a ccms beyond any clock, or written otherwise
        f"{START} cc 000:00:00:00 000:00:00:00; ccms 0 999999999999; fmvn 1; hmvc 0; "
        "refcom respond;",
        f"{START} cc 000:00:00:00 000:00:00:00; ccms 0 +5; fmvn 1; hmvc 0; refcom respond;",
        f"{START} ccms 0 0; cc 000:00:00:00 000:00:00:00; fmvn 1; hmvc 0; refcom respond;",
    ],
)
def test_anything_but_the_referees_own_form_is_left_to_the_epd_reader(text: str) -> None:
    assert read_respond(text) is None
