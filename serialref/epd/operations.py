"""The building blocks of a record's operation part: :class:`Operand` and :class:`Operation`.

Each checks its own syntax (spec 5.1) when it is made, so anything built from them,
by a reader or by hand, can be written back as a valid line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from serialref.epd.opcodes import OPCODE_RE, OPCODE_RULE
from serialref.errors import RecordError, escape

__all__ = ["Operand", "Operation"]

_TOKEN_TEXT_RE = re.compile(r"[!#-:<-~]+")  # printable, no blank, quote or semicolon
_STRING_TEXT_RE = re.compile(r'[ !#-~]{0,255}')  # printable, no quote, < 256 bytes


@dataclass(frozen=True, slots=True)
class Operand:
    """One operand; ``quoted`` keeps its basetype: a bare token or a ``"string"``."""

    text: str
    quoted: bool = False

    def __post_init__(self) -> None:
        if self.quoted:
            if not _STRING_TEXT_RE.fullmatch(self.text):
                raise RecordError(
                    f"string {escape(self.text)!r} must be printable ASCII without '\"' "
                    "and shorter than 256 bytes"
                )
        elif not _TOKEN_TEXT_RE.fullmatch(self.text):
            raise RecordError(
                f"operand {escape(self.text)!r} cannot be a bare token "
                "(empty, or holds a blank, '\"', ';' or a non-printable character)"
            )

    @property
    def external(self) -> str:
        """The operand as written in a record (spec 7.1 sorts sets by this)."""
        return f'"{self.text}"' if self.quoted else self.text


@dataclass(frozen=True, slots=True)
class Operation:
    """An opcode and its operands, in the order given."""

    opcode: str
    operands: tuple[Operand, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.opcode, str) or not OPCODE_RE.fullmatch(self.opcode):
            raise RecordError(
                f"{escape(str(self.opcode))!r} is not an opcode ({OPCODE_RULE})"
            )
        if not isinstance(self.operands, tuple):
            object.__setattr__(self, "operands", tuple(self.operands))

    @classmethod
    def of(cls, opcode: str, *texts: str | int) -> Operation:
        """An operation with bare-token operands: ``Operation.of("fmvn", 12)``."""
        return cls(opcode, tuple(Operand(str(text)) for text in texts))
