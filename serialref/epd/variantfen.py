"""The variant FEN forms of the position fields: pieces in hand, promoted pieces, other boards.

The de facto variant FEN (as Fairy-Stockfish, lichess and cutechess write it) extends
each field: the placement may end in the pieces in hand (``[Np]``; ``/Np`` as input),
mark promoted pieces with ``~`` (``Q~``: it goes back to the hand as a pawn), be wider
or taller than 8 (``10`` empty files), hold walls ``*`` and holes ``_`` and shogi's
promoted ``+P``; castling may name gating files (``KQBCDFGkqbcdfg``); en passant may
be any crossed square, or a counting limit in ply (Makruk). Check-counting variants
add a field of checks still to give (``3+3``) after en passant.

A board of 8x8 with the standard letters keeps the standard grammar (and its precise
errors); the wider grammar applies where the placement itself is a variant's.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["CHECKS_RE", "VariantShape", "normal_placement", "uneven_ranks", "variant_shape"]

_HOLDINGS_RE = re.compile(r"\[([A-Za-z]*|-)\]$")
_RANK_TOKEN_RE = re.compile(r"[1-9][0-9]?|\+?[A-Za-z]~?|[*_]")
_STANDARD_LETTERS = frozenset("PNBRQKpnbrqk")
CHECKS_RE = re.compile(r"[0-9]+\+[0-9]+")
"""The check counting field: checks White and Black must still give (``3+3``)."""

_FAIRY_CASTLING_RE = re.compile(r"-|K?Q?[A-L]*k?q?[a-l]*")
_FAIRY_EN_PASSANT_RE = re.compile(r"-|(?:[a-l](?:[1-9]|1[0-9]|20)){1,2}|[0-9]+")


@dataclass(frozen=True, slots=True)
class VariantShape:
    """What a variant placement holds: its board size and whether it needs fairy rules."""

    files: int
    ranks: int
    fairy: bool

    def castling_problem(self, castling: str) -> str | None:
        """Why a fairy board's castling (or gating) field cannot be read, or None."""
        if _FAIRY_CASTLING_RE.fullmatch(castling) and len(set(castling)) == len(castling):
            return None
        return (
            f"castling field {castling!r} must be '-' or K, Q and file letters for White, "
            "then k, q and file letters for Black, none twice"
        )

    def en_passant_problem(self, en_passant: str) -> str | None:
        """Why a fairy board's en passant (or counting) field cannot be read, or None."""
        if _FAIRY_EN_PASSANT_RE.fullmatch(en_passant):
            return None
        return (
            f"en passant field {en_passant!r} must be '-', one or two squares, or a "
            "counting limit in ply"
        )


def normal_placement(placement: str) -> str:
    """The placement with pieces in hand written ``[...]``, as output always writes them.

    ``rnbqkb1r/.../RNBQKBNR/Np`` (the pieces in hand as a ninth rank of letters only,
    which lichess and older programs write) becomes ``rnbqkb1r/.../RNBQKBNR[Np]``.
    """
    board_part, _, last = placement.rpartition("/")
    if placement.count("/") == 8 and (not last or last.isalpha()):
        return f"{board_part}[{last}]"
    return placement


@functools.lru_cache(maxsize=64)
def variant_shape(placement: str) -> VariantShape | None:
    """The shape of a variant placement, or None when it is not one.

    A placement is a variant's when it has pieces in hand or promoted pieces (any
    size), or when it is no 8x8 board of the standard
    letters: another size, walls, holes, other piece letters. Every rank must be as
    wide as the others.
    """
    holdings = _HOLDINGS_RE.search(placement)
    board_part = placement[: holdings.start()] if holdings else placement
    widths = []
    letters: set[str] = set()
    for rank in board_part.split("/"):
        tokens = _RANK_TOKEN_RE.findall(rank)
        if "".join(tokens) != rank or not tokens:
            return None
        widths.append(sum(int(token) if token.isdigit() else 1 for token in tokens))
        letters.update(char for token in tokens for char in token if char.isalpha())
    if len(set(widths)) != 1 or not 4 <= len(widths) <= 20 or not 3 <= widths[0] <= 12:
        return None
    if holdings:
        letters.update(holdings.group(1).replace("-", ""))
    odd = not letters <= _STANDARD_LETTERS or re.search(r"[*_+]", board_part) is not None
    fairy = odd or (widths[0], len(widths)) != (8, 8)
    if not fairy and not holdings and "~" not in board_part:
        return None  # an 8x8 standard board: the standard grammar says what is wrong
    return VariantShape(widths[0], len(widths), fairy)


def uneven_ranks(placement: str) -> str | None:
    """Why a placement in the variant grammar (not the standard one) is no board, or None.

    Only placements the standard grammar cannot read at all get this explanation; the
    others keep the standard one, which says more about an 8x8 board.
    """
    placement = normal_placement(placement)
    holdings = _HOLDINGS_RE.search(placement)
    board_part = placement[: holdings.start()] if holdings else placement
    if not re.search(r"[^PNBRQKpnbrqk0-9/]", board_part):
        return None
    ranks = board_part.split("/")
    widths = []
    for rank in ranks:
        tokens = _RANK_TOKEN_RE.findall(rank)
        if "".join(tokens) != rank:
            return None
        widths.append(sum(int(token) if token.isdigit() else 1 for token in tokens))
    for index, width in enumerate(widths):
        if width != widths[0]:
            return (
                f"piece placement: rank {len(ranks) - index} ({ranks[index]!r}) has {width} "
                f"squares, the first rank {widths[0]}"
            )
    return None
