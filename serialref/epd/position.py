"""The four position fields of a record (spec 4): their syntax, and why a position is illegal.

Syntax is ours, so that every refusal names the field and the character at fault;
legality is python-chess's (``Board.status``), put into words a user can act on.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

import chess

from serialref.epd.variantfen import VariantShape, uneven_ranks, variant_shape

__all__ = ["FIELD_NAMES", "position_problems", "syntax_problem"]

FIELD_NAMES = ("piece placement", "active colour", "castling", "en passant")

_PLACEMENT_RE = re.compile(
    r"(?:[1-8]?(?:[PNBRQKpnbrqk][1-8]?)*/){7}[1-8]?(?:[PNBRQKpnbrqk][1-8]?)*"
)
_EXPANDED_PLACEMENT_RE = re.compile(r"(?:[^/]{8}/){7}[^/]{8}")
_EXPAND_DIGITS = str.maketrans({str(n): "1" * n for n in range(1, 9)})
_CASTLING_RE = re.compile(r"-|(?=.)K?Q?k?q?")
_EN_PASSANT_RE = re.compile(r"-|[a-h][36]")


@functools.lru_cache(maxsize=16)
def syntax_problem(fields: tuple[str, str, str, str]) -> tuple[int, int, str] | None:
    """(field index, offset in the field, reason) of the first syntax error, or None.

    Cached: a referee checks each position three times in a row (the reply's
    parse, its record, and the ``respond`` that relays the move in it).
    """
    placement, active, castling, en_passant = fields
    if not (
        _PLACEMENT_RE.fullmatch(placement)
        and _EXPANDED_PLACEMENT_RE.fullmatch(placement.translate(_EXPAND_DIGITS))
    ):
        shape = variant_shape(placement)
        if shape is None:
            uneven = uneven_ranks(placement)
            if uneven is not None:
                return 0, 0, uneven
            offset, reason = next(_placement_problems(placement))
            return 0, offset, reason
        if shape.fairy:
            return _fairy_problem(active, castling, en_passant, shape)
    if active not in ("w", "b"):
        return 1, 0, f"active colour {active!r} must be 'w' or 'b'"
    if not _castling_readable(castling):
        return 2, 0, (
            f"castling field {castling!r} must be '-' or letters from KQkq in that order "
            "(or Shredder-FEN/X-FEN file letters)"
        )
    if not _EN_PASSANT_RE.fullmatch(en_passant) and not en_passant.isdigit():
        # Digits are Makruk's counting limit, whose board may have standard letters only.
        return 3, 0, _en_passant_problem(en_passant)
    return None


def _fairy_problem(
    active: str, castling: str, en_passant: str, shape: VariantShape
) -> tuple[int, int, str] | None:
    """The fields after a fairy placement, in the variant FEN grammar."""
    if active not in ("w", "b"):
        return 1, 0, f"active colour {active!r} must be 'w' or 'b'"
    problem = shape.castling_problem(castling)
    if problem is not None:
        return 2, 0, problem
    problem = shape.en_passant_problem(en_passant)
    return None if problem is None else (3, 0, problem)


def _placement_problems(placement: str) -> Iterator[tuple[int, str]]:
    """(offset, reason) for each thing wrong with a placement field, first one first."""
    bad = re.search(r"[^PNBRQKpnbrqk1-8/]", placement)
    if bad:
        yield bad.start(), (
            f"piece placement: {bad.group()!r} is neither a piece letter (PNBRQK, pnbrqk) "
            "nor a digit 1-8"
        )
    ranks = placement.split("/")
    if len(ranks) != 8:
        yield 0, f"piece placement {placement!r} has {len(ranks)} ranks, needs 8"
    offset = 0
    for index, rank in enumerate(ranks):
        digits = re.search(r"[1-8]{2}", rank)
        if digits:
            yield offset + digits.start(), (
                f"piece placement: rank {8 - index} has two digits in a row ({digits.group()!r})"
            )
        squares = len(rank.translate(_EXPAND_DIGITS))
        if squares != 8:
            yield offset, (
                f"piece placement: rank {8 - index} ({rank!r}) has {squares} squares, needs 8"
            )
        offset += len(rank) + 1


def _castling_readable(castling: str) -> bool:
    """KQkq in order, or Shredder-FEN/X-FEN file letters where python-chess reads them."""
    if _CASTLING_RE.fullmatch(castling):
        return True
    return bool(
        chess.FEN_CASTLING_REGEX.match(castling)
        and re.search(r"[A-Ha-h]", castling)
        and len(set(castling)) == len(castling)
    )


def _en_passant_problem(en_passant: str) -> str:
    if re.fullmatch(r"[a-h][1-8]", en_passant):
        return f"en passant square {en_passant!r} is not on rank 3 or 6"
    hint = " (a missing blank after '-'?)" if en_passant.startswith("-") else ""
    return f"en passant field {en_passant!r} is neither '-' nor a square{hint}"


# python-chess names its Status flags for programmers; these read better in a report.
_STATUS_WORDS = {
    chess.STATUS_OPPOSITE_CHECK: "the side not to move is in check",
    chess.STATUS_EMPTY: "empty board",
    chess.STATUS_BAD_CASTLING_RIGHTS: "castling rights without king and rook at home",
    chess.STATUS_INVALID_EP_SQUARE: "en passant square without a pawn that just moved two",
    chess.STATUS_PAWNS_ON_BACKRANK: "pawns on the first or eighth rank",
}


def position_problems(board: chess.Board) -> list[str]:
    """Why python-chess finds ``board`` illegal, in words; empty for a legal position."""
    status = board.status()
    return [
        _STATUS_WORDS.get(flag) or (flag.name or str(int(flag))).lower().replace("_", " ")
        for flag in chess.Status
        if flag and flag & status
    ]
