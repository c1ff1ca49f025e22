"""A board on Fairy-Stockfish's rules, for the variants python-chess does not play.

python-chess has no board wider than 8 files, no gating and no counting rule, so these
variants ask ``pyffish`` (Fairy-Stockfish's own move generator) for everything: legal
moves, SAN, FEN, the variant's ends. :class:`FairyBoard` answers the part of
python-chess's ``Board`` the referee, the recorders, the observers and the client use,
so that nothing above the rules needs to know which library plays the game; what it
does not answer (squares as numbers, bitboards) stays python-chess's empty board.

A position is its root FEN and the moves played since, as UCI strings in
Fairy-Stockfish's form (``j2j4``, ``P@e5``, gating ``e1g1h``); Fairy-Stockfish replays
them for repetitions and counting.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from types import ModuleType
from typing import ClassVar

import chess

from serialref.rules.squares import move_squares, placement_pieces, square_name

__all__ = [
    "FairyBoard",
    "FairyMove",
    "fen_problem",
    "load_pyffish",
]


@functools.cache
def load_pyffish() -> ModuleType:
    """pyffish, loaded at its first use: importing it builds Fairy-Stockfish's tables
    (0.3 s of CPU and 100 MB of memory), which no game of standard chess needs.

    It is an extra (``serialref[fairy]``), so the import may fail: :func:`find_rules
    <serialref.rules.base.find_rules>` loads it as a fairy variant is chosen and words
    that failure for the user.
    """
    import pyffish

    return pyffish


@dataclasses.dataclass(unsafe_hash=True)
class FairyMove(chess.Move):
    """A move of a fairy variant, known by its UCI text (squares beyond h8 have no number)."""

    text: str = ""

    @classmethod
    def of(cls, text: str) -> FairyMove:
        return cls(0, 0, text=text)

    def uci(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return True


def fen_problem(variant: str, fen: str) -> str | None:
    """Why Fairy-Stockfish cannot set up ``fen`` in ``variant``, or None when it can."""
    code = load_pyffish().validate_fen(_castling_to_check(variant, fen), variant)
    if code == load_pyffish().FEN_OK:
        return None
    return _FEN_ERRORS.get(code, f"not a valid {variant} position (Fairy-Stockfish error {code})")


def _castling_to_check(variant: str, fen: str) -> str:
    """``fen`` without the castling field letters of a side whose king has left home.

    Fairy-Stockfish writes the S-chess gating rights of the pieces still on their
    squares after the king has moved (``Kabcfgh``), which its own FEN check refuses,
    saying so on stderr; its set-up reads them.
    """
    fields = fen.split(" ")
    if len(fields) < 3 or fields[2] in ("-", "KQkq", "KQ", "kq"):
        return fen
    pieces = _pieces(fields[0])
    white, black = _homes(variant)
    castling = fields[2]
    if pieces.get(white) != "K":
        castling = "".join(letter for letter in castling if letter.islower())
    if pieces.get(black) != "k":
        castling = "".join(letter for letter in castling if letter.isupper())
    fields[2] = castling or "-"
    return " ".join(fields)


@functools.lru_cache(maxsize=16)
def _homes(variant: str) -> tuple[str, str]:
    """The squares the kings start on."""
    pieces = _pieces(load_pyffish().start_fen(variant).split(" ", 1)[0])
    return next(sq for sq, p in pieces.items() if p == "K"), next(
        sq for sq, p in pieces.items() if p == "k"
    )


# pyffish.validate_fen's codes (Fairy-Stockfish's apiutil.h FenValidation).
_FEN_ERRORS = {
    -14: "the counting field is invalid",
    -13: "the check counting field is invalid",
    -12: "a piece marked promoted cannot be",
    -11: "wrong number of fields",
    -10: "a character that is no piece of this variant",
    -9: "the kings stand next to each other",
    -8: "a rank is not as wide as the board",
    -7: "the pieces in hand are invalid",
    -6: "the side to move must be w or b",
    -5: "the castling or gating rights do not fit the position",
    -4: "the en passant square is invalid",
    -3: "the number of kings is wrong",
    -2: "the half-move clock is invalid",
    -1: "the move number is invalid",
    0: "empty FEN",
}


# Every pyffish call sets its variant up again (about 2 ms), whatever it asks: the
# referee, its recorders and both players ask about the same few positions in turn.
@functools.lru_cache(maxsize=1024)
def _legal(variant: str, fen: str, last: str) -> tuple[str, ...]:
    """The legal moves at ``fen``, or after its move ``last`` when one is given."""
    return tuple(load_pyffish().legal_moves(variant, fen, [last] if last else []))


@functools.lru_cache(maxsize=1024)
def _in_check(variant: str, fen: str, last: str) -> bool:
    return bool(load_pyffish().gives_check(variant, fen, [last] if last else []))


@functools.lru_cache(maxsize=1024)
def _san(variant: str, fen: str, move: str) -> str:
    return str(load_pyffish().get_san(variant, fen, move, False, load_pyffish().NOTATION_SAN))


@functools.lru_cache(maxsize=256)
def _insufficient(variant: str, fen: str) -> tuple[bool, bool]:
    """Whether White, and Black, cannot win by any sequence of legal moves."""
    white, black = load_pyffish().has_insufficient_material(variant, fen, [])
    return bool(white), bool(black)


_SQUARE_RE = re.compile(r"[a-l](?:1[0-9]|20|[1-9])")


def _target(uci: str) -> str:
    """The square a move in Fairy-Stockfish's UCI form goes to (a drop's square)."""
    squares = move_squares(uci)
    return "" if squares is None else square_name(squares.target)


@functools.lru_cache(maxsize=256)
def _pieces(placement: str) -> dict[str, str]:
    """The pieces of a FEN placement by square name (pieces in hand and ``~`` marks left out)."""
    _, _, pieces = placement_pieces(placement)
    return {square_name(square): piece for square, piece in pieces.items()}


class FairyBoard(chess.Board):
    """A board of one Fairy-Stockfish variant, with python-chess's interface where it is used.

    Subclasses name the variant (``uci_variant``, Fairy-Stockfish's and the engines'
    name); the inherited python-chess board stays empty and is never played on.
    """

    uci_variant: ClassVar[str] = ""
    xboard_variant: ClassVar[str] = ""
    starting_fen: ClassVar[str] = ""
    aliases: ClassVar[list[str]] = []

    def __init__(self, fen: str | None = None, *, chess960: bool = False) -> None:
        super().__init__(None, chess960=False)
        start = type(self).starting_fen if fen is None else fen
        problem = fen_problem(self.uci_variant, start)
        if problem is not None:
            raise ValueError(f"{self.uci_variant}: {problem}: {start!r}")
        self._root_fen: str = load_pyffish().get_fen(self.uci_variant, start, [])
        self._moves: list[str] = []
        self._before: list[str] = []  # the FEN before each move, for pop
        self._known: str | None = self._root_fen  # None: not asked for since the last push
        self._ended: tuple[tuple[int, str], int | None] = ((-1, ""), None)
        self.move_stack = []
        self.turn = self._root_fen.split(" ")[1] == "w"

    @property
    def _fen(self) -> str:
        """The FEN, worked out only when asked for: a player tries many moves it takes back."""
        if self._known is None:
            self._known = load_pyffish().get_fen(
                self.uci_variant, self._before[-1], self._moves[-1:]
            )
        return self._known

    def _base(self) -> tuple[str, str]:
        """A FEN and the move after it (or ``""``) that make the position, at no cost."""
        if self._known is None:
            return self._before[-1], self._moves[-1]
        return self._known, ""

    @property
    def halfmove_clock(self) -> int:  # (makruk's counting ply while it counts)
        return int(self._fen.split(" ")[-2])

    @halfmove_clock.setter
    def halfmove_clock(self, _value: int) -> None:
        """python-chess's empty board sets its counters: the FEN holds the real ones."""

    @property
    def fullmove_number(self) -> int:
        return int(self._fen.split(" ")[-1])

    @fullmove_number.setter
    def fullmove_number(self, _value: int) -> None:
        """As the half-move clock's."""

    # The position -------------------------------------------------------------

    def fen(self, *, shredder: bool = False, en_passant: str = "legal",
            promoted: bool | None = None) -> str:  # fmt: skip
        """The variant FEN as Fairy-Stockfish writes it (the options are python-chess's)."""
        return self._fen

    def epd(self, *, shredder: bool = False, en_passant: str = "legal",
            promoted: bool | None = None, **operations: object) -> str:  # fmt: skip
        """The four position fields of the FEN."""
        return " ".join(self._fen.split(" ")[:4])

    def board_fen(self, *, promoted: bool | None = False) -> str:
        return self._fen.split(" ", 1)[0]

    def _transposition_key(self) -> str:
        return " ".join(self._fen.split(" ")[:4])

    def __str__(self) -> str:
        """python-chess's text board: a letter or ``.`` a square, White down."""
        board = self._fen.split(" ", 1)[0].split("[", 1)[0]
        wide = "+" in board  # shogi's promoted pieces take two characters: all squares do
        return "\n".join(
            " ".join(
                cell.rjust(2 if wide else 1)
                for token in re.findall(r"\d+|\+?[A-Za-z]~?|[*_]", rank)
                for cell in (["."] * int(token) if token.isdigit() else [token])
            )
            for rank in board.split("/")
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._fen!r})"

    def copy(self, *, stack: bool | int = True) -> FairyBoard:
        board = type(self)(self._root_fen)
        keep = len(self._moves) if stack is True else int(stack)
        cut = len(self._moves) - min(keep, len(self._moves))
        board._root_fen = self._before[cut] if cut < len(self._moves) else self._fen
        board._moves = self._moves[cut:]
        board._before = self._before[cut:]
        board.move_stack = [FairyMove.of(text) for text in board._moves]
        board._known = self._known
        board._ended = self._ended
        board.turn = self.turn
        return board

    def root(self) -> FairyBoard:
        return type(self)(self._root_fen)

    def ply(self) -> int:
        return len(self._moves)

    # Moves --------------------------------------------------------------------

    @property
    def legal_moves(self) -> list[FairyMove]:  # type: ignore[override]
        return [FairyMove.of(text) for text in self._legal_texts()]

    def generate_legal_moves(self, from_mask: int = chess.BB_ALL,  # type: ignore[override]
                             to_mask: int = chess.BB_ALL) -> list[FairyMove]:  # fmt: skip
        return self.legal_moves

    def _legal_texts(self) -> tuple[str, ...]:
        return _legal(self.uci_variant, *self._base())

    def is_legal(self, move: chess.Move) -> bool:
        return move.uci() in self._legal_texts()

    def push(self, move: chess.Move) -> None:
        text = move.uci()
        self._before.append(self._fen)
        self._moves.append(text)
        self._known = None
        self.move_stack.append(move if isinstance(move, FairyMove) else FairyMove.of(text))
        self.turn = not self.turn

    def pop(self) -> FairyMove:
        self._moves.pop()
        self._known = self._before.pop()
        self.turn = not self.turn
        return self.move_stack.pop()  # type: ignore[return-value]

    def san(self, move: chess.Move) -> str:
        return _san(self.uci_variant, self._fen, move.uci())

    def san_and_push(self, move: chess.Move) -> str:
        san = self.san(move)
        self.push(move)
        return san

    def parse_san(self, san: str) -> FairyMove:
        """The legal move written ``san`` (check and mate marks optional), or IllegalMoveError.

        Only the moves to the square ``san`` names are written out to compare (castling
        names none): each SAN costs Fairy-Stockfish a call.
        """
        wanted = san.rstrip("+#")
        squares = _SQUARE_RE.findall(wanted.split("/", 1)[0])
        fen = self._fen
        for text in self._legal_texts():
            if (not squares or _target(text) == squares[-1]) and (
                _san(self.uci_variant, fen, text).rstrip("+#") == wanted
            ):
                return FairyMove.of(text)
        raise chess.IllegalMoveError(f"illegal san: {san!r} in {fen}")

    def push_san(self, san: str) -> FairyMove:
        move = self.parse_san(san)
        self.push(move)
        return move

    def parse_uci(self, uci: str) -> FairyMove:
        if uci not in self._legal_texts():
            raise chess.IllegalMoveError(f"illegal uci: {uci!r} in {self._fen}")
        return FairyMove.of(uci)

    def parse_xboard(self, xboard: str) -> FairyMove:
        return self.parse_uci(xboard) if xboard in self._legal_texts() else self.parse_san(xboard)

    def push_uci(self, uci: str) -> FairyMove:
        move = self.parse_uci(uci)
        self.push(move)
        return move

    def is_capture(self, move: chess.Move) -> bool:
        """A move to an occupied square, or en passant (a pawn to the en passant square)."""
        text = move.uci()
        if "@" in text:
            return False
        placement, _, _, en_passant = self._fen.split(" ", 4)[:4]
        target = _target(text)
        return target in _pieces(placement) or (
            target == en_passant and self._san_piece(move) == "P"
        )

    def _san_piece(self, move: chess.Move) -> str:
        san = self.san(move)
        return san[0] if san[0].isupper() and san[0] != "O" else "P"

    def is_en_passant(self, move: chess.Move) -> bool:
        return False  # only the value of what is taken asks, and a pawn's is as good as none

    def is_check(self) -> bool:
        return _in_check(self.uci_variant, *self._base())

    def is_checkmate(self) -> bool:
        return not self._legal_texts() and self.is_check()

    def _immediate(self) -> int | None:
        """The side to move's result when the variant ends the game here (mate included)."""
        key = (len(self._moves), self._fen)
        if self._ended[0] != key:
            self._ended = (key, self._immediate_result())
        return self._ended[1]

    def _immediate_result(self) -> int | None:
        variant, root, moves = self.uci_variant, self._root_fen, self._moves
        if not self._legal_texts():
            return int(load_pyffish().game_result(variant, root, moves))
        ended, result = load_pyffish().is_immediate_game_end(variant, root, moves)
        if ended:
            return int(result)
        ended, result = load_pyffish().is_optional_game_end(variant, root, moves)
        if ended and (result != 0 or self._draw_is_automatic()):
            return int(result)  # perpetual check or chasing lost, or a draw nobody claims
        return None

    def _draw_is_automatic(self) -> bool:
        """Whether the variant's draw by repetition or move count needs no claim."""
        return False

    def is_variant_win(self) -> bool:
        result = self._immediate()
        return result is not None and result > 0

    def is_variant_loss(self) -> bool:
        result = self._immediate()
        return result is not None and result < 0

    def is_variant_draw(self) -> bool:
        return self._immediate() == 0

    def claimable_draw(self) -> bool:
        """A draw the side to move may claim by the variant's rules (repetition, move rule)."""
        ffish = load_pyffish()
        ended, result = ffish.is_optional_game_end(self.uci_variant, self._root_fen, self._moves)
        return bool(ended) and result == 0

    def is_repetition(self, count: int = 3) -> bool:
        return self.claimable_draw()

    def is_fifty_moves(self) -> bool:
        return False  # Fairy-Stockfish's optional game end says it, in is_repetition

    def has_insufficient_material(self, color: chess.Color) -> bool:
        white, black = _insufficient(self.uci_variant, self._fen)
        return bool(white if color == chess.WHITE else black)

    def is_insufficient_material(self) -> bool:
        return all(_insufficient(self.uci_variant, self._fen))

    def is_game_over(self, *, claim_draw: bool = False) -> bool:
        return self.outcome(claim_draw=claim_draw) is not None

    def outcome(self, *, claim_draw: bool = False) -> chess.Outcome | None:
        result = self._immediate()
        if result is None and self.is_insufficient_material():
            result = 0
        if result is None and claim_draw and self.claimable_draw():
            result = 0
        if result is None:
            return None
        winner = None if result == 0 else self.turn if result > 0 else not self.turn
        return chess.Outcome(chess.Termination.VARIANT_WIN if winner is not None
                             else chess.Termination.VARIANT_DRAW, winner)  # fmt: skip

    def status(self) -> chess.Status:
        return chess.STATUS_VALID if fen_problem(self.uci_variant, self._fen) is None \
            else chess.STATUS_EMPTY  # fmt: skip

    def is_valid(self) -> bool:
        return self.status() == chess.STATUS_VALID

    def has_legal_en_passant(self) -> bool:
        return True  # another en passant square than Fairy-Stockfish's names another position
