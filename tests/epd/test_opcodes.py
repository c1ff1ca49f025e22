"""The opcode rules: syntax of spec 5.1 and the table of section 6."""

from __future__ import annotations

import pytest

from serialref.epd.opcodes import INT32, OPCODE_RE, OPCODES, Basetype, MoveUse, OpcodeSpec


def test_opcode_table_covers_spec_section_6() -> None:
    named = {
        "acn", "acs", "am", "bm", "cc", "ce", "dm", "draw_accept", "draw_claim", "draw_offer",
        "draw_reject", "eco", "fmvn", "hmvc", "id", "nic", "noop", "pm", "ptp", "pv", "rc",
        "refcom", "refreq", "resign", "sm", "sv", "tcgs", "tcri", "tcsi", "ts",
    }
    families = {f"{letter}{digit}" for letter in "cv" for digit in range(10)}
    assert set(OPCODES) == named | families
    assert {name for name, spec in OPCODES.items() if spec.sorted_set} == {"am", "bm"}
    assert {name for name, spec in OPCODES.items() if spec.moves is MoveUse.SEQUENCE} == {
        "pv", "sv"
    }
    assert OPCODES["ts"].pattern == (Basetype.DATE, Basetype.TIME_OF_DAY)
    assert all(OPCODE_RE.fullmatch(name) for name in OPCODES)


def test_ce_range_is_spec_6_7() -> None:
    # -32768: an illegal position; -32767: the side to move is mated; 32766: mate in one.
    values = OPCODES["ce"].values
    assert (values.start, values[-1]) == (-32768, 32766)
    assert -32767 in values and 32767 not in values and -32769 not in values


def test_counts_and_tallies_have_their_ranges() -> None:
    assert OPCODES["hmvc"].values.start == 0
    assert {OPCODES[name].values.start for name in ("fmvn", "dm", "rc", "tcgs")} == {1}
    assert OPCODES["acn"].values[-1] == 2**63 - 1
    assert OPCODES["id"].values == INT32


@pytest.mark.parametrize(
    ("text", "is_opcode"),
    [("a", True), ("Zz_9", True), ("draw_accept", True), ("a" * 15, True),
     ("a" * 16, False), ("9x", False), ("_a", False), ("a-b", False), ("", False)],
)
def test_opcode_syntax(text: str, is_opcode: bool) -> None:
    assert (OPCODE_RE.fullmatch(text) is not None) is is_opcode


@pytest.mark.parametrize(
    ("spec", "fits", "text"),
    [
        (OPCODES["sm"], {1}, "one operand"),
        (OPCODES["cc"], {2}, "two operands"),
        (OPCODES["resign"], {0}, "no operands"),
        (OPCODES["c0"], {0, 1}, "no operands or one operand"),
        (OPCODES["ptp"], {0, 2, 4}, "an even number of operands"),
        (OpcodeSpec("", (Basetype.MOVE,), 3, None), {3, 4, 5}, "at least 3"),
        (OpcodeSpec("", (Basetype.MOVE,), 3, 3), {3}, "3 operands"),
    ],
)
def test_operand_counts_and_their_words(spec: OpcodeSpec, fits: set[int], text: str) -> None:
    assert {count for count in range(6) if spec.count_fits(count)} == fits
    assert spec.count_text == text


def test_basetypes_repeat_along_the_operands() -> None:
    ptp = OPCODES["ptp"]
    assert [ptp.basetype(index) for index in range(4)] == [
        Basetype.IDENTIFIER, Basetype.STRING, Basetype.IDENTIFIER, Basetype.STRING
    ]
