"""The referee protocol's records and what they mean (EPD spec section 8, PROTOCOL.md 3-4).

Builders for every ``refcom`` record the referee sends, exactly as PROTOCOL.md
section 3 lays them out, and a reader that turns a player's ``refreq`` record
into a request. Both sides of the wire (the referee and ``serialref client``)
use this module, so they cannot disagree about the format.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import chess

from serialref.epd.clockvalue import MAX_CLOCK_SECONDS, clock_text
from serialref.epd.operations import Operand, Operation
from serialref.epd.record import CheckCountingRecord, EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import UnexpectedRecordError

__all__ = [
    "CONSUMED_MS",
    "ENGINE_RESTARTS",
    "ROSTER",
    "Refcom",
    "Refreq",
    "conclude",
    "consumed_ms",
    "disconnect",
    "engine_restarts",
    "execute",
    "fault",
    "game_tags",
    "inform",
    "player_fault",
    "player_request",
    "referee_command",
    "reply",
    "reset",
    "respond",
    "respond_line",
    "sign_off",
    "sign_on",
    "sign_on_identity",
    "tag_value",
]

ROSTER = ("Event", "Site", "Date", "Round", "White", "Black", "Result")
"""The PGN Seven Tag Roster, in roster order (spec 8.1.5)."""


class Refcom(enum.StrEnum):
    """Referee commands (spec 8.1)."""

    CONCLUDE = "conclude"
    DISCONNECT = "disconnect"
    EXECUTE = "execute"
    FAULT = "fault"
    INFORM = "inform"
    RESET = "reset"
    RESPOND = "respond"


class Refreq(enum.StrEnum):
    """Player requests (spec 8.2)."""

    FAULT = "fault"
    REPLY = "reply"
    SIGN_OFF = "sign_off"
    SIGN_ON = "sign_on"


_UNQUOTABLE = re.compile(r"[^\x20-\x21\x23-\x7e]")


def tag_value(text: str) -> str:
    """Make any text safe as an EPD string operand: the form it takes on the line.

    Names and reasons come from the command line, configuration files and players; an
    EPD string holds fewer than 256 bytes of printable ASCII and no quote. Letters of
    other alphabets are transliterated rather than lost (``Müller`` -> ``Muller``,
    ``Øster`` -> ``Oster``, ``Иванчук`` -> ``Ivanchuk``), and both ends of the line
    compute the same form: it is how a TCP seat recognises the name a client signs on
    with. The transliteration tables are imported only for such text (about 15 ms
    and 0.8 MB), so that an ASCII-only referee or client does not carry them.
    """
    if not text.isascii():
        from anyascii import anyascii

        text = anyascii(text)
    cleaned = _UNQUOTABLE.sub("?", text.replace('"', "'"))
    return cleaned[:255]


Position = chess.Board | str
"""A board, or the FEN of one (the referee keeps each ply's FEN so it is computed once)."""


def fen_of(position: Position) -> str:
    """The FEN with the en passant square after every double push (PROTOCOL.md 2)."""
    return position if isinstance(position, str) else position.fen(en_passant="fen")


_COMMAND_OPERATIONS = {
    command: Operation("refcom", (Operand(command.value),)) for command in Refcom
}


def _record(command: Refcom, position: Position, *operations: Operation) -> EpdRecord:
    # PROTOCOL.md 2: every record naming a game position carries fmvn and hmvc.
    fields = fen_of(position).split(" ")
    if len(fields) != 6:  # a check counting variant's: checks still to give after en passant
        return _check_counting_record(command, fields, operations)
    placement, active, castling, en_passant, halfmove, fullmove = fields
    return EpdRecord(
        placement,
        active,
        castling,
        en_passant,
        (
            _COMMAND_OPERATIONS[command],
            Operation("fmvn", (Operand(fullmove),)),
            Operation("hmvc", (Operand(halfmove),)),
            *operations,
        ),
    )


def _check_counting_record(
    command: Refcom, fields: list[str], operations: tuple[Operation, ...]
) -> EpdRecord:
    placement, active, castling, en_passant, checks, halfmove, fullmove = fields
    plain = _record(command, f"{placement} {active} {castling} {en_passant} {halfmove} {fullmove}",
                    *operations)  # fmt: skip
    return CheckCountingRecord(placement, active, castling, en_passant, plain.operations, checks)


def _clock_operations(consumed_ms: tuple[int, int]) -> tuple[Operation, Operation]:
    """``cc`` in whole seconds (spec 6.6) and ``ccms`` in milliseconds (PROTOCOL.md 2).

    Both come from the one pair of milliseconds, so ``cc`` is always ``ccms`` rounded
    down to the second.
    """
    white, black = consumed_ms
    return (
        Operation("cc", (Operand(clock_text(white // 1000)), Operand(clock_text(black // 1000)))),
        Operation("ccms", (Operand(str(white)), Operand(str(black)))),
    )


CONSUMED_MS = range(0, (MAX_CLOCK_SECONDS + 1) * 1000)
"""What ``ccms`` can say: no more than the largest clock value of ``cc``."""


def consumed_ms(record: EpdRecord) -> tuple[int, int]:
    """A referee record's ``ccms``: (White, Black) milliseconds consumed (PROTOCOL.md 2).

    Raises :class:`~serialref.errors.RecordError` when the record has none, or when it
    is not two whole numbers of milliseconds.
    """
    return record.integer_pair("ccms", CONSUMED_MS)


def reset(position: Position) -> EpdRecord:
    """``refcom reset`` with the next game's initial position."""
    return _record(Refcom.RESET, position)


def game_tags(
    roster: Mapping[str, str],
    time_control: str,
    *,
    result: str | None = None,
    termination: str | None = None,
    variant: str = "",
) -> list[tuple[str, str]]:
    """The ``ptp`` of a game's ``inform`` (PROTOCOL.md 3): the Seven Tag Roster in roster
    order, then ``TimeControl``, then ``Variant`` (PGN's name) in a variant game; at the
    game's end the ``result`` and ``Termination``."""
    tags = [(name, roster[name]) for name in ROSTER]
    if result is not None:
        tags[-1] = ("Result", result)
    tags.append(("TimeControl", time_control))
    if variant:
        tags.append(("Variant", variant))
    if termination is not None:
        tags.append(("Termination", termination))
    return tags


def inform(position: Position, tags: Iterable[tuple[str, str]]) -> EpdRecord:
    """``refcom inform`` carrying ``ptp`` tag pairs in the order given."""
    operands: list[Operand] = []
    for name, value in tags:
        operands.append(Operand(name))
        operands.append(Operand(tag_value(value), quoted=True))
    return _record(Refcom.INFORM, position, Operation("ptp", tuple(operands)))


def respond(
    before: Position,
    consumed_ms: tuple[int, int],
    san: str | None,
    *,
    draw_offer: bool = False,
) -> EpdRecord:
    """``refcom respond``: the position before the opponent's move, that move and the clocks.

    ``consumed_ms`` is the time each side has consumed, in whole milliseconds (``cc``
    and ``ccms``). For the first move of a game (or after a restore) there is no
    ``sm``: the position is the current one.
    """
    operations = list(_clock_operations(consumed_ms))
    if san is not None:
        operations.append(Operation("sm", (Operand(san),)))
        if draw_offer:
            operations.append(Operation("draw_offer"))
    return _record(Refcom.RESPOND, before, *operations)


def respond_line(
    before: str,
    consumed_ms: tuple[int, int],
    san: str | None,
    *,
    draw_offer: bool = False,
) -> str:
    """:func:`respond`'s normalised line (spec 7.1), for a FEN ``before`` of our own board.

    A ``respond`` goes out on every move, so its line is written directly: its
    operations are a known few (``cc``, ``ccms``, ``draw_offer``, ``fmvn``, ``hmvc``,
    ``refcom``, ``sm``, in that ASCII order) whose operands are clock values, numbers
    and a SAN, which need no quoting. A check counting variant's position takes the
    record's way.
    """
    fields = before.split(" ")
    if len(fields) != 6:
        return format_record(respond(before, consumed_ms, san, draw_offer=draw_offer))
    placement, active, castling, en_passant, halfmove, fullmove = fields
    white, black = consumed_ms
    offer = " draw_offer;" if draw_offer and san is not None else ""
    move = "" if san is None else f" sm {san};"
    return (
        f"{placement} {active} {castling} {en_passant}"
        f" cc {clock_text(white // 1000)} {clock_text(black // 1000)}; ccms {white} {black};"
        f"{offer} fmvn {fullmove}; hmvc {halfmove}; refcom respond;{move}"
    )


def execute(board_before: chess.Board, move: chess.Move) -> EpdRecord:
    """``refcom execute``: replay one move of the game (restore, PROTOCOL.md 6)."""
    return _record(
        Refcom.EXECUTE, board_before, Operation("sm", (Operand(board_before.san(move)),))
    )


def conclude(position: Position, consumed_ms: tuple[int, int]) -> EpdRecord:
    """``refcom conclude`` with the final position and the final clocks (``cc``, ``ccms``)."""
    return _record(Refcom.CONCLUDE, position, *_clock_operations(consumed_ms))


def fault(position: Position, reason: str) -> EpdRecord:
    """``refcom fault`` with a short reason in ``c0``."""
    return _record(
        Refcom.FAULT, position, Operation("c0", (Operand(tag_value(reason), quoted=True),))
    )


def disconnect(position: Position) -> EpdRecord:
    """``refcom disconnect``: the referee stops talking to this player."""
    return _record(Refcom.DISCONNECT, position)


def referee_command(record: EpdRecord) -> Refcom:
    """The command of a record from the referee; raises UnexpectedRecordError otherwise."""
    return _command(record, "refcom", Refcom)


def player_request(record: EpdRecord) -> Refreq:
    """The request of a record from a player; raises UnexpectedRecordError otherwise."""
    return _command(record, "refreq", Refreq)


_Command = TypeVar("_Command", Refcom, Refreq)


def _command(record: EpdRecord, opcode: str, kind: type[_Command]) -> _Command:
    if opcode not in record:
        raise UnexpectedRecordError(f"record has no {opcode} operation")
    operands = record.operand_texts(opcode)
    if len(operands) != 1:
        raise UnexpectedRecordError(f"{opcode} takes one operand, got {len(operands)}")
    try:
        return kind(operands[0])
    except ValueError:
        allowed = ", ".join(sorted(member.value for member in kind))
        raise UnexpectedRecordError(
            f"unknown {opcode} {operands[0]!r} (expected one of {allowed})"
        ) from None


@dataclass(frozen=True, slots=True)
class SignOn:
    """A ``sign_on`` request; ``name`` is the program name from ``tcsi`` if given."""

    name: str | None
    address: str | None


ENGINE_RESTARTS = "engine_restarts"
"""The ``reply`` operation in which ``serialref client`` tells the referee how often it has
started its engine again since it began (the wire profile's; a referee that does not know
it ignores it, spec 5.3)."""


def engine_restarts(record: EpdRecord) -> int | None:
    """A reply's ``engine_restarts`` count; None when it has none, or none that is a count."""
    operands = record.operand_texts(ENGINE_RESTARTS)
    return int(operands[0]) if len(operands) == 1 and operands[0].isdigit() else None


def sign_on_identity(record: EpdRecord) -> SignOn:
    """Read the optional ``tcsi "<address>" "<program name>"`` of a sign-on."""
    operands: Sequence[str] = record.operand_texts("tcsi")
    address = operands[0] if len(operands) >= 1 and operands[0] else None
    name = operands[1] if len(operands) >= 2 and operands[1] else None
    return SignOn(name=name, address=address)


def _request(request: Refreq, board: chess.Board, *operations: Operation) -> EpdRecord:
    return EpdRecord.from_board(board, Operation("refreq", (Operand(request.value),)), *operations)


def sign_on(
    board: chess.Board, name: str | None = None, address: str = "", token: str | None = None
) -> EpdRecord:
    """``refreq sign_on``, with ``tcsi`` when the player has a name to give.

    ``token`` is a TCP seat's token, in an operation of its own that a referee without
    TCP seats ignores (spec 5.3: unknown opcodes are ignored).
    """
    operations = []
    if name is not None:
        identity = (Operand(tag_value(address), quoted=True), Operand(tag_value(name), quoted=True))
        operations.append(Operation("tcsi", identity))
    if token is not None:
        operations.append(Operation("token", (Operand(tag_value(token), quoted=True),)))
    return _request(Refreq.SIGN_ON, board, *operations)


def sign_off(board: chess.Board) -> EpdRecord:
    """``refreq sign_off``: the player leaves."""
    return _request(Refreq.SIGN_OFF, board)


def player_fault(board: chess.Board, reason: str) -> EpdRecord:
    """``refreq fault`` with the reason in ``c0``."""
    return _request(
        Refreq.FAULT, board, Operation("c0", (Operand(tag_value(reason), quoted=True),))
    )


def reply(board: chess.Board, move: chess.Move | None, *extra: Operation) -> EpdRecord:
    """``refreq reply`` from ``board`` (the position to move in) with ``sm`` in SAN.

    ``extra`` carries the optional operations: ``draw_offer``, ``draw_claim``,
    ``resign``, ``ce``, ``pv`` and so on.
    """
    operations = list(extra)
    if move is not None:
        operations.append(Operation("sm", (Operand(board.san(move)),)))
    return _request(Refreq.REPLY, board, *operations)
