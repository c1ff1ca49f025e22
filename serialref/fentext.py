"""A board's FEN, kept up to date move by move instead of written from scratch.

python-chess's ``board_fen`` visits all 64 squares (about 36 microseconds), and both
the referee and the client need the position after every move, several times: it was
the largest single cost of relaying a move. A move changes at most four squares, so
:class:`FenText` keeps the placement's letters and reads only those squares again.
Every other field comes from the board itself. A variant board (pieces in hand,
checks to give) writes its own FEN through python-chess.
"""

from __future__ import annotations

import chess

__all__ = ["FenText"]

# Where each square's letter sits in a FEN placement written with one "1" per empty square.
_PLACEMENT_INDEX = [(7 - chess.square_rank(sq)) * 9 + chess.square_file(sq) for sq in chess.SQUARES]
_EMPTY_RUNS = tuple(("1" * length, str(length)) for length in range(8, 1, -1))


class FenText:
    """The FEN of ``board``, which must be changed only through :meth:`push` and
    :meth:`san_and_push` (a move pushed and popped again elsewhere leaves it right)."""

    def __init__(self, board: chess.Board) -> None:
        self.board = board
        self._letters = list("/".join(["1" * 8] * 8))
        self._read(chess.BB_ALL)
        self._castling_rights = board.castling_rights
        self._castling = board.castling_xfen()
        self._variant = type(board) is not chess.Board

    def push(self, move: chess.Move) -> None:
        """Play ``move`` (legal) on the board."""
        board = self.board
        white, black = board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK]
        board.push(move)
        self._moved(move, white, black)

    def san_and_push(self, move: chess.Move) -> str:
        """Play ``move`` (legal); returns it in SAN (python-chess computes both in one push)."""
        board = self.board
        white, black = board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK]
        san = board.san_and_push(move)
        self._moved(move, white, black)
        return san

    def fields(self) -> str:
        """The four position fields, en passant written after every double push
        (``board.epd(en_passant="fen")``, PROTOCOL.md 2)."""
        board = self.board
        if self._variant:
            return board.epd(en_passant="fen")
        if board.castling_rights != self._castling_rights:
            self._castling_rights = board.castling_rights
            self._castling = board.castling_xfen()
        placement = "".join(self._letters)
        for run, count in _EMPTY_RUNS:
            placement = placement.replace(run, count)
        en_passant = "-" if board.ep_square is None else chess.SQUARE_NAMES[board.ep_square]
        return f"{placement} {'w' if board.turn else 'b'} {self._castling} {en_passant}"

    def fen(self) -> str:
        """The whole FEN (``board.fen(en_passant="fen")``)."""
        board = self.board
        if self._variant:
            return board.fen(en_passant="fen")
        return f"{self.fields()} {board.halfmove_clock} {board.fullmove_number}"

    def _moved(self, move: chess.Move, white: chess.Bitboard, black: chess.Bitboard) -> None:
        # A square whose piece changes changes hands too, except the king's and the
        # rook's squares of a Chess960 castling, which are the move's own squares.
        board = self.board
        self._read(
            (white ^ board.occupied_co[chess.WHITE])
            | (black ^ board.occupied_co[chess.BLACK])
            | chess.BB_SQUARES[move.from_square]
            | chess.BB_SQUARES[move.to_square]
        )

    def _read(self, squares: chess.Bitboard) -> None:
        board = self.board
        letters = self._letters
        for square in chess.scan_forward(squares):
            piece = board.piece_at(square)
            letters[_PLACEMENT_INDEX[square]] = piece.symbol() if piece else "1"
