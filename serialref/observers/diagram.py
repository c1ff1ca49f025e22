"""A position drawn as SVG for the web board: any board size, the pieces in hand, the last move.

The board is drawn as its variant is usually drawn (``Rules.drawing``): chess's
squares and pieces (python-chess's own piece pictures, from ``chess.svg``), xiangqi's
lines with its river and palaces and the pieces on the points, shogi's plain squares
with five-sided pieces that face the opponent. Xiangqi's and shogi's pieces carry their
usual character and, small, the letter their moves are written with (xiangqi's horse
``H`` and elephant ``E`` are ``n`` and ``b`` in its FEN). A chess piece without a
picture of its own is drawn from the pictures of the pieces whose moves it joins
(capablanca's archbishop and chancellor, S-chess's hawk and elephant) or, for makruk's,
as its letter in a disc.

The pieces in hand stand in a row above the board (Black's) and below it (White's),
each kind once with its count. The last move's squares are tinted; a drop tints its
square in another colour (there is no square it came from), and a king in check stands
on red.

The chess pictures are defined once per page (:data:`PIECE_DEFINITIONS`) and each board
refers to them, so a board, sent again at every move, stays a few kilobytes. Every
piece and every kind in hand is a ``<g>`` that names its square or side and its letter
(``data-square``, ``data-piece``, ``data-count``), for scripts and tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from html import escape

import chess
import chess.svg

from serialref.rules import Drawing
from serialref.rules.squares import MoveSquares, Square, Squares, square_name

__all__ = ["PIECE_DEFINITIONS", "board_svg", "check_square"]

_SIZE = 50  # a square's side, in the picture's units
_MARGIN = 18  # room for the coordinates
_HAND = 44  # the height of a row of pieces in hand
_GLYPH = 45  # the side of python-chess's piece pictures

PIECE_DEFINITIONS = (
    '<svg class="piece-definitions" width="0" height="0" style="position:absolute">'
    f"<defs>{''.join(chess.svg.PIECES.values())}</defs></svg>"
)
"""python-chess's chess piece pictures, once per page: every board's pieces refer to them."""

_NAMES = {"p": "pawn", "n": "knight", "b": "bishop", "r": "rook", "q": "queen", "k": "king"}
_JOINED = {"a": "bn", "h": "bn", "c": "rn", "e": "rn"}  # archbishop, hawk; chancellor, elephant

_XIANGQI = {
    "K": "帥", "A": "仕", "B": "相", "N": "傌", "R": "俥", "C": "炮", "P": "兵",
    "k": "將", "a": "士", "b": "象", "n": "馬", "r": "車", "c": "砲", "p": "卒",
}  # fmt: skip
_XIANGQI_SAN = {"N": "H", "B": "E"}  # where the SAN letter is not the FEN's
_SHOGI = {
    "K": "玉", "R": "飛", "B": "角", "G": "金", "S": "銀", "N": "桂", "L": "香", "P": "歩",
    "+R": "龍", "+B": "馬", "+S": "全", "+N": "圭", "+L": "杏", "+P": "と",
}  # fmt: skip
_HAND_ORDER = "QRBGSNLPAHECM"

_Cell = tuple[float, float, float]
"""Where a piece is drawn: the left and top of its cell and the cell's side."""

_COLOURS = {
    "chess": ("#f0d9b5", "#b58863"),
    "xiangqi": ("#eccb8e", "#eccb8e"),
    "shogi": ("#e3b96b", "#e3b96b"),
}
_LAST_MOVE = "#cdd16a"
_DROP = "#8fbce6"
_CHECK = "#e2574c"
_LINE = "#4a3520"


def board_svg(
    squares: Squares, drawing: Drawing, last: MoveSquares | None, check: Square | None
) -> str:
    """The board of ``squares`` as an SVG element, White (the first player) at the bottom."""
    hand = _HAND if squares.hands is not None else 0
    width = _MARGIN + squares.files * _SIZE + 4
    height = hand + squares.ranks * _SIZE + _MARGIN + hand
    parts = [
        f'<svg class="board" data-drawing="{drawing}" data-files="{squares.files}" '
        f'data-ranks="{squares.ranks}" viewBox="0 0 {width} {height}" '
        f'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
    ]
    origin = (_MARGIN, hand)
    parts.extend(_squares(squares, drawing, origin))
    parts.extend(_marks(squares, origin, last, check))
    parts.extend(_coordinates(squares, origin))
    for square, piece in sorted(squares.pieces.items()):
        x, y = _corner(squares, origin, square)
        parts.append(
            f'<g class="piece" data-square="{square_name(square)}" data-piece="{escape(piece)}">'
            f"{_piece(piece, drawing, (x, y, _SIZE))}</g>"
        )
    if squares.hands is not None:
        parts.append(_hand(squares.hands[1], "black", drawing, 0, width))
        parts.append(_hand(squares.hands[0], "white", drawing, height - _HAND, width))
    parts.append("</svg>")
    return "".join(parts)


def _corner(squares: Squares, origin: tuple[int, int], square: Square) -> tuple[int, int]:
    """The top left corner of ``square``'s cell in the picture."""
    file, rank = square
    return origin[0] + file * _SIZE, origin[1] + (squares.ranks - 1 - rank) * _SIZE


def _squares(squares: Squares, drawing: Drawing, origin: tuple[int, int]) -> Iterator[str]:
    """The board itself: coloured squares, or the lines of xiangqi and shogi."""
    light, dark = _COLOURS[drawing]
    x0, y0 = origin
    width, height = squares.files * _SIZE, squares.ranks * _SIZE
    yield (
        f'<rect class="surface" x="{x0}" y="{y0}" width="{width}" height="{height}" '
        f'fill="{light}"/>'
    )
    if drawing == "chess":
        for file in range(squares.files):
            for rank in range(squares.ranks):
                if (file + rank) % 2 == 0:
                    x, y = _corner(squares, origin, (file, rank))
                    yield f'<rect x="{x}" y="{y}" width="{_SIZE}" height="{_SIZE}" fill="{dark}"/>'
        return
    if drawing == "shogi":
        lines = [(x, y0, x, y0 + height) for x in range(x0, x0 + width + 1, _SIZE)]
        lines += [(x0, y, x0 + width, y) for y in range(y0, y0 + height + 1, _SIZE)]
    else:
        lines = list(_xiangqi_lines(squares, origin))
    yield f'<g stroke="{_LINE}" stroke-width="1.2">'
    yield from (f'<line x1="{a}" y1="{b}" x2="{c}" y2="{d}"/>' for a, b, c, d in lines)
    yield "</g>"


def _xiangqi_lines(
    squares: Squares, origin: tuple[int, int]
) -> Iterator[tuple[int, int, int, int]]:
    """The lines between the points: the ranks, the files broken by the river, the palaces."""
    half = _SIZE // 2

    def point(file: int, rank: int) -> tuple[int, int]:
        x, y = _corner(squares, origin, (file, rank))
        return x + half, y + half

    last_file, last_rank = squares.files - 1, squares.ranks - 1
    river = squares.ranks // 2  # the first rank beyond it
    for rank in range(squares.ranks):
        yield (*point(0, rank), *point(last_file, rank))
    for file in range(squares.files):
        if file in (0, last_file):
            yield (*point(file, 0), *point(file, last_rank))
        else:
            yield (*point(file, 0), *point(file, river - 1))
            yield (*point(file, river), *point(file, last_rank))
    middle = squares.files // 2
    for low, high in ((0, 2), (last_rank - 2, last_rank)):
        yield (*point(middle - 1, low), *point(middle + 1, high))
        yield (*point(middle + 1, low), *point(middle - 1, high))


def _marks(
    squares: Squares, origin: tuple[int, int], last: MoveSquares | None, check: Square | None
) -> Iterator[str]:
    """The last move's squares (a drop in its own colour) and a king in check."""
    marks: list[tuple[str, Square, str]] = []
    if last is not None and last.start is None:
        marks.append(("last-drop", last.target, _DROP))
    elif last is not None and last.start is not None:
        marks += [("last-move", last.start, _LAST_MOVE), ("last-move", last.target, _LAST_MOVE)]
    if check is not None:
        marks.append(("check", check, _CHECK))
    for kind, square, colour in marks:
        x, y = _corner(squares, origin, square)
        yield (
            f'<rect class="{kind}" data-square="{square_name(square)}" x="{x}" y="{y}" '
            f'width="{_SIZE}" height="{_SIZE}" fill="{colour}"/>'
        )


def _coordinates(squares: Squares, origin: tuple[int, int]) -> Iterator[str]:
    """The files' letters below the board, the ranks' numbers to its left."""
    x0, y0 = origin
    below = y0 + squares.ranks * _SIZE + 13
    yield '<g class="coordinates" font-family="sans-serif" font-size="12" fill="#555">'
    for file in range(squares.files):
        x = x0 + file * _SIZE + _SIZE // 2
        yield f'<text x="{x}" y="{below}" text-anchor="middle">{chr(ord("a") + file)}</text>'
    for rank in range(squares.ranks):
        _, y = _corner(squares, origin, (0, rank))
        yield f'<text x="{x0 - 4}" y="{y + _SIZE // 2 + 4}" text-anchor="end">{rank + 1}</text>'
    yield "</g>"


def _hand(held: str, side: str, drawing: Drawing, top: int, width: int) -> str:
    """One side's pieces in hand: each kind once, with how many there are."""
    counts: dict[str, int] = {}
    for letter in held:
        counts[letter] = counts.get(letter, 0) + 1
    size = _HAND - 6
    parts = [
        f'<g class="hand" data-side="{side}"><rect x="0" y="{top}" width="{width}" '
        f'height="{_HAND}" fill="#e4ddd0"/>'
    ]
    order = sorted(counts, key=lambda p: (_HAND_ORDER.find(p.upper()) % 99, p))
    for slot, letter in enumerate(order):
        x, y = _MARGIN + slot * (size + 22), top + 3
        count = counts[letter]
        parts.append(
            f'<g class="held" data-piece="{escape(letter)}" data-count="{count}">'
            f"{_piece(letter, drawing, (x, y, size))}"
            f'<text x="{x + size + 2}" y="{y + size - 4}" font-family="sans-serif" '
            f'font-size="14" font-weight="bold" fill="#333">{count}</text></g>'
        )
    parts.append("</g>")
    return "".join(parts)


def _piece(piece: str, drawing: Drawing, cell: _Cell) -> str:
    """``piece`` (a FEN letter, shogi's with ``+``) drawn in ``cell``."""
    white = piece.lstrip("+")[:1].isupper()
    if drawing == "xiangqi":
        return _disc(piece, _XIANGQI.get(piece, piece.upper()), white, cell)
    if drawing == "shogi":
        return _shogi(piece, white, cell)
    letter = piece.lower()
    colour = "white" if white else "black"
    x, y, size = cell
    if letter in _NAMES:
        return _glyph(f"{colour}-{_NAMES[letter]}", cell)
    if letter in _JOINED:
        first, second = (f"{colour}-{_NAMES[part]}" for part in _JOINED[letter])
        small = size * 0.62
        return _glyph(first, (x - size * 0.06, y + size * 0.04, small)) + _glyph(
            second, (x + size * 0.42, y + size * 0.34, small)
        )
    return _disc(piece, piece.upper(), white, cell)


def _glyph(name: str, cell: _Cell) -> str:
    """python-chess's picture ``name`` (``white-knight``) scaled into ``cell``."""
    x, y, size = cell
    place = f"translate({x:g},{y:g}) scale({size / _GLYPH:g})"
    return f'<use href="#{name}" xlink:href="#{name}" transform="{place}"/>'


def _disc(piece: str, character: str, white: bool, cell: _Cell) -> str:
    """A round piece with its character: xiangqi's, red or black with the letter small in its
    corner; or a chess piece without a picture (makruk's), white or black with its letter."""
    x, y, size = cell
    centre_x, centre_y = x + size / 2, y + size / 2
    letter = ""
    if character == piece.upper():
        fill, ink = ("#fafafa", "#1d1d1d") if white else ("#1d1d1d", "#fafafa")
        ring = "#1d1d1d"
    else:
        ink = "#b3261e" if white else "#1d1d1d"
        fill, ring = "#f8ecd0", ink
        san = _XIANGQI_SAN.get(piece.upper(), piece.upper())
        letter = _small_letter(san, x + size * 0.8, y + size * 0.95, size, ink)
    return (
        f'<circle cx="{centre_x:g}" cy="{centre_y:g}" r="{size * 0.43:g}" fill="{fill}" '
        f'stroke="{ring}" stroke-width="{size * 0.05:g}"/>'
        f'<text x="{centre_x:g}" y="{centre_y + size * 0.17:g}" text-anchor="middle" '
        f'font-size="{size * 0.46:g}" fill="{ink}" font-weight="bold">{escape(character)}</text>'
        f"{letter}"
    )


def _shogi(piece: str, white: bool, cell: _Cell) -> str:
    """A five-sided shogi piece pointing at the opponent; a promoted one's character red."""
    x, y, s = cell
    up = piece.upper()
    character = _SHOGI.get(up, up)
    ink = "#b3261e" if piece.startswith("+") else "#1d1d1d"
    outline = (
        f"{s * 0.5:g},{s * 0.06:g} {s * 0.8:g},{s * 0.2:g} {s * 0.88:g},{s * 0.94:g} "
        f"{s * 0.12:g},{s * 0.94:g} {s * 0.2:g},{s * 0.2:g}"
    )
    turned = "" if white else f" rotate(180 {s / 2:g} {s / 2:g})"
    letter = _small_letter(up, s * 0.84, s * 0.92, s, "#555")
    return (
        f'<g transform="translate({x:g},{y:g}){turned}">'
        f'<polygon points="{outline}" fill="#f7dfa5" stroke="#5b4425" stroke-width="{s * 0.03:g}"/>'
        f'<text x="{s / 2:g}" y="{s * 0.72:g}" text-anchor="middle" font-size="{s * 0.44:g}" '
        f'fill="{ink}">{escape(character)}</text>{letter}</g>'
    )


def _small_letter(letter: str, x: float, y: float, size: float, ink: str) -> str:
    """The piece's letter in the moves, small in its corner."""
    return (
        f'<text class="letter" x="{x:g}" y="{y:g}" text-anchor="middle" font-family="sans-serif" '
        f'font-size="{size * 0.2:g}" fill="{ink}">{escape(letter)}</text>'
    )


def check_square(board: chess.Board, squares: Squares) -> Square | None:
    """Where the side to move's king stands when it is in check, else None."""
    if not board.is_check():
        return None
    king = "K" if squares.turn == chess.WHITE else "k"
    return next((square for square, piece in squares.pieces.items() if piece == king), None)
