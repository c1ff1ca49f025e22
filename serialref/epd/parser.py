"""Text line -> :class:`~serialref.epd.record.EpdRecord`: the strict wire parser and the
lenient reader of other programs' files, on one tokenizer so that they cannot drift apart.

* :func:`parse_record` reads the wire (PROTOCOL.md 2).  It checks syntax only (position
  fields, opcodes, operands, ``;``), because the referee parses every line and meaning
  is checked where it is used, by the record's typed accessors.
* :func:`parse_lenient` reads files written by other programs.  It tolerates the
  harmless mess found in the wild and, as spec 7.1 asks of ``pfdn``, validates every
  known opcode, including the legality of its moves.  What it cannot read with
  certainty it rejects; it never guesses.

Every refusal is a :class:`~serialref.errors.RecordError` naming the 1-based column.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import chess

from serialref.epd.basetypes import INTEGER_RE, check_operand, to_move
from serialref.epd.opcodes import OPCODE_RE, OPCODE_RULE, OPCODES, MoveUse
from serialref.epd.operations import Operand, Operation
from serialref.epd.position import FIELD_NAMES, syntax_problem
from serialref.epd.record import EpdRecord, make_record
from serialref.epd.variantfen import normal_placement
from serialref.errors import RecordError, escape

__all__ = ["parse_lenient", "parse_record"]

_NOT_PRINTABLE_RE = re.compile(r"[^ -~]")

# Position fields (spec 4).  The fourth field stops at ';' so that "- ;bm e4" reads as
# the field '-' followed by a stray separator rather than as an en passant field '-;'.
_FIELDS_RE = re.compile(r" *([^ ]+) +([^ ]+) +([^ ]+) +([^ ;]+)")
# A check counting variant's fifth field (``3+3``) follows en passant.
_CHECKS_FIELD_RE = re.compile(r" +([0-9]+\+[0-9]+)(?=[ ;]|$)")
_FEN_COUNTERS_RE = re.compile(r" +([0-9]+) +([0-9]+)(?=[ ;]|$)")
# lichess writes checks given (not still to give) after the counters: "0 1 +1+0".
_LICHESS_CHECKS_RE = re.compile(r" +\+([0-3])\+([0-3])(?=[ ;]|$)")
_CHECKS_TO_WIN = 3

# The operation part of a strict record holding no quoted string (the common case).
_PLAIN_OPERATIONS_RE = re.compile(rf"(?: +{OPCODE_RE.pattern}(?: +[!#-:<-~]+)*;)* *")

# One token of the operation part; "open" is a quote that is never closed.
_TOKEN_RE = re.compile(
    r'(?P<blank> +)|(?P<semi>;)|(?P<string>"[^"]*")|(?P<open>")|(?P<bare>[^ ";]+)'
)


# --------------------------------------------------------------------- public readers


def parse_record(line: str) -> EpdRecord:
    """Read one wire line strictly (PROTOCOL.md 2); operations keep their order.

    Only syntax is checked; the typed accessors of the record check meaning.
    A TAB reads as a blank.  Raises :class:`RecordError` with the 1-based column.
    """
    try:
        return _parse_strict(line.replace("\t", " "))
    except RecordError as exc:
        exc.raw = escape(line)
        raise


def parse_lenient(line: str, make: Callable[[str], chess.Board] = chess.Board) -> EpdRecord:
    """Read one line of an EPD file written by someone else (spec 7.1 ``pfdn`` input).

    Accepted: runs of blanks and TABs, a line terminator, one trailing NUL (the
    spec's traditional terminator), stray or missing ``;``, and FEN's two move
    counters after the fourth field (they become ``hmvc`` and ``fmvn``), pieces in hand
    as a ninth rank and lichess's checks given (``+1+0`` after the counters).  Every known
    opcode is then checked for operand count and basetype, and its moves for legality
    in the record's position, on the board ``make`` builds (a variant's).  A bare token
    where a string is due is kept as written.
    """
    try:
        return _parse_lenient(line, make)
    except RecordError as exc:
        exc.raw = escape(line)
        raise


# --------------------------------------------------------------------- strict


def _parse_strict(line: str) -> EpdRecord:
    line, match = _position_part(line)
    operations = _plain_operations(line, match.end())
    if operations is None:
        return _variant_or_tokenized(line, match)
    return EpdRecord(match.group(1), match.group(2), match.group(3), match.group(4), operations)


def _variant_or_tokenized(line: str, match: re.Match[str]) -> EpdRecord:
    """A record with a check counting field, or one the plain reading could not split."""
    end, checks = match.end(), ""
    field = _CHECKS_FIELD_RE.match(line, end)
    if field is not None:
        end, checks = field.end(), field.group(1)
    operations = _plain_operations(line, end)
    if operations is None:
        operations = _tokenized_operations(line, end)
    return make_record(_position_fields(match), operations, checks)


def _position_fields(match: re.Match[str]) -> tuple[str, str, str, str]:
    return match.group(1), match.group(2), match.group(3), match.group(4)


def _plain_operations(line: str, start: int) -> tuple[Operation, ...] | None:
    """The operations of a well-formed line without quoted strings, or None for any other.

    Nearly every record on the wire has that shape, and splitting it costs half of
    the tokenizer. Anything else, errors included, is left to
    :func:`_tokenized_operations`, which says where and what is wrong.
    """
    if not _PLAIN_OPERATIONS_RE.fullmatch(line, start):
        return None
    operations = tuple(map(_plain_operation, line[start:].split(";")[:-1]))
    if len({operation.opcode for operation in operations}) != len(operations):
        return None  # a repeated opcode: the tokenizer reports its column
    return operations


_READ_LIMIT = 1024
"""Distinct operations (and operands) kept for reuse, the least recently read dropped."""


@functools.lru_cache(maxsize=_READ_LIMIT)
def _plain_operation(text: str) -> Operation:
    """The operation ``text`` spells (`` sm Nf3``), built once and reused.

    A match repeats the same few operations on every line (``refreq reply``, ``hmvc 0``,
    ``sm Nf3``, the SAN of a variation), and building each one (two frozen objects per
    operand, each checking its text) cost most of a reply's parse. Both are immutable,
    so one object serves every line that spells it.
    """
    opcode, *operands = text.split()
    return Operation(opcode, tuple(map(_plain_operand, operands)))


@functools.lru_cache(maxsize=_READ_LIMIT)
def _plain_operand(text: str) -> Operand:
    return Operand(text)


def _tokenized_operations(line: str, start: int) -> tuple[Operation, ...]:
    drafts = _scan_operations(line, start, lenient=False)
    _check_duplicates(drafts)
    return tuple(draft.operation() for draft in drafts)


# --------------------------------------------------------------------- lenient


def _parse_lenient(line: str, make: Callable[[str], chess.Board]) -> EpdRecord:
    line = line.rstrip("\r\n")
    if line.endswith("\0"):
        line = line[:-1]
    line = line.replace("\t", " ")
    if "\0" in line:
        raise RecordError(
            "NUL byte before the end of the line (a NUL may only terminate a record)",
            column=line.index("\0") + 1,
        )
    line, match = _position_part(line)
    end, checks = match.end(), ""
    field = _CHECKS_FIELD_RE.match(line, end)
    if field is not None:
        end, checks = field.end(), field.group(1)
    counters = _FEN_COUNTERS_RE.match(line, end)
    end = counters.end() if counters else end
    lichess = _LICHESS_CHECKS_RE.match(line, end) if counters and not checks else None
    if lichess is not None:
        end = lichess.end()
        checks = "+".join(str(_CHECKS_TO_WIN - int(given)) for given in lichess.groups())
    drafts = _merge_counters(_fen_counters(counters), _scan_operations(line, end, lenient=True))
    _check_duplicates(drafts)
    for draft in drafts:
        _check_operation(draft)
    operations = tuple(draft.operation() for draft in drafts)
    record = make_record(_position_fields(match), operations, checks)
    _check_moves(record, drafts, make)
    return record


def _fen_counters(counters: re.Match[str] | None) -> list[_Draft]:
    if counters is None:
        return []
    return [
        _Draft(opcode, counters.start(group) + 1, [Operand(counters.group(group))],
               [counters.start(group) + 1])
        for group, opcode in ((1, "hmvc"), (2, "fmvn"))
    ]


def _merge_counters(counters: list[_Draft], drafts: list[_Draft]) -> list[_Draft]:
    """FEN counters become hmvc/fmvn; an operation saying the same is kept, a conflict rejected."""
    merged = []
    for counter in counters:
        existing = next((draft for draft in drafts if draft.opcode == counter.opcode), None)
        if existing is None:
            merged.append(counter)
        elif not _same_integer(existing.operands, counter.operands[0].text):
            written = " ".join([existing.opcode, *(o.external for o in existing.operands)])
            raise RecordError(
                f"FEN {'halfmove clock' if counter.opcode == 'hmvc' else 'fullmove number'} "
                f"{counter.operands[0].text!r} conflicts with {written!r}",
                column=existing.column,
            )
    return merged + drafts


def _same_integer(operands: list[Operand], text: str) -> bool:
    return (
        len(operands) == 1
        and not operands[0].quoted
        and INTEGER_RE.fullmatch(operands[0].text) is not None
        and _canonical_integer(operands[0].text) == _canonical_integer(text)
    )


def _canonical_integer(text: str) -> str:
    """Digits without sign noise or leading zeros: compares integers of any length."""
    digits = text.lstrip("+-").lstrip("0") or "0"
    return f"-{digits}" if text.startswith("-") and digits != "0" else digits


def _check_operation(draft: _Draft) -> None:
    """Operand count and basetypes of a known opcode (moves come later, with a board)."""
    spec = OPCODES.get(draft.opcode)
    if spec is None:
        return
    count = len(draft.operands)
    if not spec.count_fits(count):
        if spec.max_count is not None and count > spec.max_count:
            excess = zip(
                draft.operands[spec.max_count :], draft.columns[spec.max_count :], strict=True
            )
            for operand, column in excess:
                if not operand.quoted and operand.text in OPCODES:
                    raise RecordError(
                        f"{draft.opcode} takes {spec.count_text}; "
                        f"a ';' seems to be missing before {operand.text!r}",
                        column=column,
                    )
            raise RecordError(
                f"{draft.opcode} takes {spec.count_text}, found {count}",
                column=draft.columns[spec.max_count],
            )
        raise RecordError(
            f"{draft.opcode} takes {spec.count_text}, found {count}", column=draft.column
        )
    for index, (operand, column) in enumerate(zip(draft.operands, draft.columns, strict=True)):
        check_operand(spec, index, draft.opcode, operand, column)


def _check_moves(
    record: EpdRecord, drafts: list[_Draft], make: Callable[[str], chess.Board]
) -> None:
    """Spec 7.1: input records are checked for legality, so every move must be playable."""
    with_moves = [
        draft for draft in drafts if draft.operands and _move_use(draft.opcode) is not MoveUse.NONE
    ]
    if not with_moves:
        return
    try:
        board = record.board(make)
    except RecordError as exc:
        raise RecordError(exc.reason, column=1) from exc
    for draft in with_moves:
        line = board.copy(stack=False)
        sequence = _move_use(draft.opcode) is MoveUse.SEQUENCE
        for operand, column in zip(draft.operands, draft.columns, strict=True):
            move = to_move(draft.opcode, operand, line, column)
            if sequence:
                line.push(move)


def _move_use(opcode: str) -> MoveUse:
    spec = OPCODES.get(opcode)
    return MoveUse.NONE if spec is None else spec.moves


# --------------------------------------------------------------------- tokenizer


@dataclass(slots=True)
class _Draft:
    """An operation being read, with the columns of its parts for error messages."""

    opcode: str
    column: int
    operands: list[Operand] = field(default_factory=list)
    columns: list[int] = field(default_factory=list)

    def operation(self) -> Operation:
        return Operation(self.opcode, tuple(self.operands))


def _scan_operations(line: str, start: int, *, lenient: bool) -> list[_Draft]:
    """Split the operation part of ``line`` (from ``start``) into operations.

    Strict mode is PROTOCOL.md 2: a blank before every opcode and operand, ``;`` right
    after the last one.  Lenient mode also takes stray ``;``, blanks before ``;``, no
    blank after ``;`` and a missing final ``;``.  A missing ``;`` between two operations
    cannot be seen here; :func:`_check_operation` finds it through operand counts.
    """
    drafts: list[_Draft] = []
    current: _Draft | None = None
    previous = "blank"
    for match in _TOKEN_RE.finditer(line, start):
        kind = match.lastgroup
        column = match.start() + 1
        if kind == "blank":
            previous = kind
            continue
        if kind == "open":
            raise RecordError("a string starts here but has no closing quote", column=column)
        if kind == "semi":
            if current is not None:
                if previous == "blank" and not lenient:
                    raise RecordError(
                        f"blank before the ';' that ends {current.opcode!r}", column=column - 1
                    )
                drafts.append(current)
                current = None
            elif not lenient:
                raise RecordError("';' without an operation before it", column=column)
            previous = kind
            continue
        token = match.group()
        if previous != "blank" and not (lenient and previous == "semi"):
            raise RecordError(f"a blank is missing before {token!r}", column=column)
        previous = kind or ""
        if current is not None:
            if kind == "string":
                if len(token) > 257:
                    raise RecordError(
                        f"string of {len(token) - 2} bytes is too long (at most 255)",
                        column=column,
                    )
                current.operands.append(Operand(token[1:-1], True))
            else:
                current.operands.append(Operand(token))
            current.columns.append(column)
        elif kind == "string":
            raise RecordError("an operation must start with an opcode, not a string", column=column)
        elif OPCODE_RE.fullmatch(token):
            current = _Draft(token, column)
        else:
            rule = (
                "; FEN move counters? EPD writes them as hmvc and fmvn operations"
                if token.isdigit()
                else f" ({OPCODE_RULE})"
            )
            raise RecordError(f"{token!r} is not an opcode{rule}", column=column)
    if current is not None:
        if not lenient:
            raise RecordError(
                f"operation {current.opcode!r} does not end with ';'", column=len(line) + 1
            )
        drafts.append(current)
    return drafts


def _check_duplicates(drafts: Iterable[_Draft]) -> None:
    first_columns: dict[str, int] = {}
    for draft in drafts:
        if draft.opcode in first_columns:
            raise RecordError(
                f"opcode {draft.opcode!r} appears twice (first at column "
                f"{first_columns[draft.opcode]})",
                column=draft.column,
            )
        first_columns[draft.opcode] = draft.column


def _check_printable(line: str) -> None:
    if not (line.isascii() and line.isprintable()):
        bad = _NOT_PRINTABLE_RE.search(line)
        if bad is not None:
            raise RecordError(
                f"character {escape(bad.group())} is not printable ASCII",
                column=bad.start() + 1,
            )


def _position_part(line: str) -> tuple[str, re.Match[str]]:
    """The four position fields of a printable ``line``, and the line they were read from.

    Both readers start here. A placement that is wrong only in writing pieces in hand as
    a ninth rank is rewritten in brackets, and the rewritten line is read again, once.
    """
    _check_printable(line)
    match = _FIELDS_RE.match(line)
    if match is None:
        found = len(line.split())
        if found == 0:
            raise RecordError("empty record: four position fields are needed", column=1)
        raise RecordError(
            f"only {found} of the four position fields ({', '.join(FIELD_NAMES)})",
            column=len(line) + 1,
        )
    fields = _position_fields(match)
    problem = syntax_problem(fields)
    if problem is None:
        return line, match
    normal = normal_placement(fields[0])
    if normal != fields[0] and syntax_problem((normal, *fields[1:])) is None:
        return _position_part(f"{line[: match.start(1)]}{normal}{line[match.end(1) :]}")
    index, offset, reason = problem
    raise RecordError(reason, column=match.start(index + 1) + offset + 1)
