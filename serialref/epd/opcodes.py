"""Opcodes: their syntax (spec 5.1) and what section 6 says about each one's operands.

Every rule about opcodes is written here once: the tokenizer, the record's building
blocks, the ``purge`` verb and the player's ``ce`` all ask this module.  The table
drives the lenient reader's checks, the typed accessors' counts and ranges, and the
writer's operand sets; an opcode it does not know is kept unchecked (spec 5.3).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["INT32", "OPCODES", "OPCODE_RE", "OPCODE_RULE", "Basetype", "MoveUse", "OpcodeSpec"]

OPCODE_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,14}")
"""Spec 5.1: a letter, then up to fourteen letters, digits or underscores."""

OPCODE_RULE = "a letter, then up to 14 letters, digits or '_'"
""":data:`OPCODE_RE` in words, for error messages."""

INT32 = range(-(2**31), 2**31)
"""Spec 5.2.3: the integers every reader must support; the range of unknown opcodes."""

# acn/acs: spec 6.1 only asks for "a long (four byte)" value, but searches of today pass
# 2**31 nodes within minutes, so the counts accept the signed 64-bit range.
_COUNT = range(0, 2**63)


class Basetype(enum.Enum):
    """The operand basetypes of spec 5.2 that section 6 uses (plus ANY for ``noop``).

    Floating (5.2.4) is left out: the spec says it is not in use, and no opcode has it.
    """

    IDENTIFIER = "identifier"
    MOVE = "move"
    INTEGER = "integer"
    STRING = "string"
    DATE = "date"
    TIME_OF_DAY = "time of day"
    CLOCK = "clock"
    ANY = "any"


class MoveUse(enum.Enum):
    """How an opcode's moves relate to the record's position."""

    NONE = "none"  # no moves
    EACH = "each"  # every move is playable in the position itself (am, bm, pm, sm)
    SEQUENCE = "sequence"  # the moves are played one after another (pv, sv)


@dataclass(frozen=True, slots=True)
class OpcodeSpec:
    """What spec section 6 says about one opcode's operands."""

    section: str
    pattern: tuple[Basetype, ...]  # operand i has basetype pattern[i % len(pattern)]
    min_count: int = 1
    max_count: int | None = 1  # None: no upper limit
    multiple_of: int = 1  # ptp: pairs
    values: range = INT32  # what an integer operand may hold
    sorted_set: bool = False  # operands are a set, written in ASCII order (am, bm)
    moves: MoveUse = MoveUse.NONE

    def basetype(self, index: int) -> Basetype:
        """The basetype of the operand at ``index``."""
        return self.pattern[index % len(self.pattern)]

    def count_fits(self, count: int) -> bool:
        """Whether an operation may carry ``count`` operands."""
        return (
            self.min_count <= count
            and (self.max_count is None or count <= self.max_count)
            and count % self.multiple_of == 0
        )

    @property
    def count_text(self) -> str:
        """The operand count in words, for error messages."""
        words = {0: "no operands", 1: "one operand", 2: "two operands"}
        if self.max_count is None:
            if self.multiple_of == 2:
                return "an even number of operands"
            return f"at least {words.get(self.min_count, str(self.min_count))}"
        if self.min_count == self.max_count:
            return words.get(self.min_count, f"{self.min_count} operands")
        return f"{words.get(self.min_count)} or {words.get(self.max_count)}"


def _opcode_table() -> dict[str, OpcodeSpec]:
    integer = (Basetype.INTEGER,)
    string = (Basetype.STRING,)
    move = (Basetype.MOVE,)
    anything = (Basetype.ANY,)
    positive = range(1, INT32.stop)
    table = {
        "acn": OpcodeSpec("6.1", integer, values=_COUNT),
        "acs": OpcodeSpec("6.2", integer, values=_COUNT),
        "am": OpcodeSpec("6.3", move, 0, None, sorted_set=True, moves=MoveUse.EACH),
        "bm": OpcodeSpec("6.4", move, 0, None, sorted_set=True, moves=MoveUse.EACH),
        "cc": OpcodeSpec("6.6", (Basetype.CLOCK,), 2, 2),
        # -32768 marks an illegal position, 32766 a mate in one (32767 is never written).
        "ce": OpcodeSpec("6.7", integer, values=range(-32768, 32767)),
        "dm": OpcodeSpec("6.8", integer, values=positive),
        "draw_accept": OpcodeSpec("6.9", anything, 0, 0),
        "draw_claim": OpcodeSpec("6.10", anything, 0, 0),
        "draw_offer": OpcodeSpec("6.11", anything, 0, 0),
        "draw_reject": OpcodeSpec("6.12", anything, 0, 0),
        "eco": OpcodeSpec("6.13", string, 0, 1),
        "fmvn": OpcodeSpec("6.14", integer, values=positive),
        "hmvc": OpcodeSpec("6.15", integer, values=range(0, INT32.stop)),
        "id": OpcodeSpec("6.16", string),
        "nic": OpcodeSpec("6.17", string, 0, 1),
        "noop": OpcodeSpec("6.18", anything, 0, None),
        "pm": OpcodeSpec("6.19", move, moves=MoveUse.EACH),
        "ptp": OpcodeSpec("6.20", (Basetype.IDENTIFIER, Basetype.STRING), 0, None, 2),
        "pv": OpcodeSpec("6.21", move, 0, None, moves=MoveUse.SEQUENCE),
        "rc": OpcodeSpec("6.22", integer, values=positive),
        "refcom": OpcodeSpec("6.23", (Basetype.IDENTIFIER,)),
        "refreq": OpcodeSpec("6.24", (Basetype.IDENTIFIER,)),
        "resign": OpcodeSpec("6.25", anything, 0, 0),
        "sm": OpcodeSpec("6.26", move, moves=MoveUse.EACH),
        "sv": OpcodeSpec("6.27", move, 0, None, moves=MoveUse.SEQUENCE),
        "tcgs": OpcodeSpec("6.28", integer, values=positive),
        "tcri": OpcodeSpec("6.29", string, 2, 2),
        "tcsi": OpcodeSpec("6.30", string, 2, 2),
        "ts": OpcodeSpec("6.31", (Basetype.DATE, Basetype.TIME_OF_DAY), 2, 2),
    }
    for digit in range(10):
        table[f"c{digit}"] = OpcodeSpec("6.5", string, 0, 1)
        table[f"v{digit}"] = OpcodeSpec("6.32", string, 0, 1)
    return table


OPCODES: Mapping[str, OpcodeSpec] = MappingProxyType(_opcode_table())
"""The opcodes of spec section 6; anything else is kept unchecked (spec 5.3)."""
