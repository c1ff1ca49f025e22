"""A board of any variant read square by square, and a move as the squares it touches.

A picture of a position (the web board) needs what python-chess's square numbers cannot
give beyond 8x8: the board's size, the piece on every square, the pieces in hand and
the checks still to give. Every board, python-chess's and the fairy boards alike,
writes all of it in its FEN (pieces in hand as ``[Nn]``, shogi's promoted pieces as
``+P``, three-check's checks as ``3+3``), so it is read from there, the same way for
every variant, with no call to Fairy-Stockfish.

Squares are ``(file, rank)`` from 0: ``(0, 0)`` is a1, ``(8, 9)`` is xiangqi's i10.
Pieces are their FEN letters: upper case for the side that moves first (White, red in
xiangqi, sente in shogi), with shogi's ``+`` for a promoted piece.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import chess

__all__ = [
    "MoveSquares",
    "Square",
    "Squares",
    "move_squares",
    "placement_pieces",
    "square_name",
    "squares_of",
]

Square = tuple[int, int]
"""``(file, rank)``, both from 0."""

_RANK_TOKEN = re.compile(r"\d+|\+?[A-Za-z]~?|[*_]")
_HOLDINGS = re.compile(r"\[([A-Za-z]*)\]$")
_CHECKS = re.compile(r"(\d+)\+(\d+)")
_SQUARE = r"([a-l])(1[0-9]|20|[1-9])"
_MOVE = re.compile(rf"(?:(?P<drop>\+?[A-Za-z])@|{_SQUARE})(?P<to>{_SQUARE})")


@dataclass(frozen=True, slots=True)
class Squares:
    """What a board holds: its size, the piece on each square, the hands, the checks to give.

    ``hands`` is ``None`` for a variant without pieces in hand, else the letters each
    side holds (White's upper case, Black's lower case); ``checks`` is ``None`` unless
    the variant counts checks, else the checks White and Black must still give.
    """

    files: int
    ranks: int
    pieces: Mapping[Square, str]
    hands: tuple[str, str] | None
    checks: tuple[int, int] | None
    turn: chess.Color


@dataclass(frozen=True, slots=True)
class MoveSquares:
    """The squares a move touches: ``start`` is ``None`` for a drop, whose piece is ``dropped``."""

    start: Square | None
    target: Square
    dropped: str | None


def squares_of(board: chess.Board) -> Squares:
    """What ``board`` holds, read from its FEN (see the module docstring)."""
    placement, turn, *rest = board.fen().split(" ")
    holdings = _HOLDINGS.search(placement)
    files, ranks, pieces = placement_pieces(placement)
    hands = None
    if holdings:
        held = holdings.group(1)
        hands = ("".join(c for c in held if c.isupper()), "".join(c for c in held if c.islower()))
    counted = next((found for field in rest if (found := _CHECKS.fullmatch(field))), None)
    checks = None if counted is None else (int(counted.group(1)), int(counted.group(2)))
    return Squares(files, ranks, pieces, hands, checks, turn == "w")


def placement_pieces(placement: str) -> tuple[int, int, dict[Square, str]]:
    """The files and ranks of a FEN placement, and its pieces by square.

    Pieces in hand (``[...]``), promotion marks (``Q~``), walls and holes are left out.
    """
    rows = placement.split("[", 1)[0].split("/")
    pieces: dict[Square, str] = {}
    files = 0
    for row, text in enumerate(rows):
        rank, file = len(rows) - 1 - row, 0
        for token in _RANK_TOKEN.findall(text):
            if token.isdigit():
                file += int(token)
                continue
            if token not in "*_":
                pieces[file, rank] = token.rstrip("~")
            file += 1
        files = max(files, file)
    return files, len(rows), pieces


def move_squares(uci: str) -> MoveSquares | None:
    """The squares of a move in UCI form, any variant's (``e2e4``, ``j2j4``, ``N@f3``,
    shogi's ``e2e3+``, gating's ``e1g1h``); ``None`` for a text that names no squares."""
    found = _MOVE.match(uci)
    if found is None:
        return None
    groups = found.groups()
    start = None if found["drop"] else _square(groups[1], groups[2])
    return MoveSquares(start, _square(groups[4], groups[5]), found["drop"])


def square_name(square: Square) -> str:
    """``e4``, ``i10``: a square as moves and FENs name it."""
    file, rank = square
    return f"{chr(ord('a') + file)}{rank + 1}"


def _square(file: str, rank: str) -> Square:
    return ord(file) - ord("a"), int(rank) - 1
