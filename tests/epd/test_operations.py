"""The parts of a record: operands and operations check their own syntax when made."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from serialref.epd.operations import Operand, Operation
from serialref.errors import RecordError


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (lambda: Operand(""), "cannot be a bare token"),
        (lambda: Operand("a b"), "cannot be a bare token"),
        (lambda: Operand('a"'), "cannot be a bare token"),
        (lambda: Operand("a;"), "cannot be a bare token"),
        (lambda: Operand("caf\xe9"), r"'caf\\\\xc3\\\\xa9' cannot be a bare token"),
        (lambda: Operand('say "hi"', True), "must be printable ASCII without"),
        (lambda: Operand("x" * 256, True), "shorter than 256 bytes"),
        (lambda: Operand("tab\there", True), r"'tab\\\\there'"),
        (lambda: Operation("1x"), r"'1x' is not an opcode \(a letter, then up to 14 letters"),
        (lambda: Operation("a" * 16), "is not an opcode"),
        (lambda: Operation("\x1b[2J"), r"'\\\\x1b\[2J' is not an opcode"),
    ],
)
def test_parts_that_could_not_be_written_are_refused(
    build: Callable[[], object], reason: str
) -> None:
    with pytest.raises(RecordError, match=reason):
        build()


def test_the_longest_opcode_and_string_are_accepted() -> None:
    assert Operation("a" * 15).opcode == "a" * 15
    assert Operand("x" * 255, True).text == "x" * 255
    assert Operand("", True).external == '""'


def test_operation_of_makes_bare_tokens() -> None:
    assert Operation.of("fmvn", 12) == Operation("fmvn", (Operand("12"),))
    assert Operation.of("pv", "e4", "e5").operands == (Operand("e4"), Operand("e5"))
    assert Operand("x y", True).external == '"x y"'
    assert Operand("e4").external == "e4"


def test_operands_given_as_a_list_are_kept_as_a_tuple() -> None:
    assert Operation("x", [Operand("1")]).operands == (Operand("1"),)  # type: ignore[arg-type]
