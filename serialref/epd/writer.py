"""The one way serialref writes a record: the normalised line of spec 7.1.

Every record serialref sends, and every line the EPD verbs write, goes through
:func:`format_record`, so two records that mean the same are the same bytes.
"""

from __future__ import annotations

import operator

from serialref.epd.opcodes import OPCODES
from serialref.epd.record import EpdRecord

__all__ = ["format_record"]

_OPCODE_OF = operator.attrgetter("opcode")  # in C: every line written sorts by it
_SORTED_SET_OPCODES = frozenset(name for name, spec in OPCODES.items() if spec.sorted_set)


def format_record(record: EpdRecord) -> str:
    """The normalised line of spec 7.1: single blanks, operations in ASCII order of
    opcode, ``am``/``bm`` operands in ASCII order, every operation ended by ``;``."""
    parts = [record.placement, record.active, record.castling, record.en_passant]
    if record.checks:
        parts.append(record.checks)
    for operation in sorted(record.operations, key=_OPCODE_OF):
        externals = [operand.external for operand in operation.operands]
        if operation.opcode in _SORTED_SET_OPCODES:
            externals.sort()
        parts.append(" ".join((operation.opcode, *externals)) + ";")
    return " ".join(parts)
