"""Where games start: one FEN for every game, or a book of openings from an EPD or PGN file.

Each opening is played twice, once with each player as White, so that a match
on a book is fair (PROTOCOL.md 5: colours alternate). Every opening is checked
when it is loaded: a position python-chess finds illegal, or one where the game
is already over (mate, stalemate, a dead position), cannot start a game
(PROTOCOL.md 7), and the error names the line that gives it.

A book is dealt out as fastchess deals it (``-openings order= start= plies=``,
``-srand``): :class:`BookOrder` cuts PGN lines, shuffles the book with fastchess's own
generator and shuffle, and starts at the K-th opening, so the same book and settings
play the same openings in the same order under both referees.
"""

from __future__ import annotations

import enum
import hashlib
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import chess

from serialref.epd.parser import parse_lenient
from serialref.epd.position import position_problems
from serialref.errors import ConfigError, RecordError
from serialref.referee.rulings import GameBoard
from serialref.rules import STANDARD, Rules, find_rules

__all__ = [
    "BookOrder",
    "MersenneTwister64",
    "Opening",
    "OpeningOrder",
    "chess960_openings",
    "load_openings",
    "opening_from_fen",
    "openings_digest",
    "start_problem",
]


@dataclass(frozen=True, slots=True)
class Opening:
    """A game's starting point: a position, the moves already played from it, the rules."""

    fen: str = chess.STARTING_FEN
    moves: tuple[str, ...] = ()
    rules: Rules = STANDARD

    def board(self) -> chess.Board:
        board = self.rules.board(self.fen)
        for san in self.moves:
            board.push_san(san)
        return board


def openings_digest(openings: Sequence[Opening]) -> str:
    """A short fingerprint of a list of openings, for telling one match from another."""
    text = "\n".join(f"{opening.fen} {' '.join(opening.moves)}" for opening in openings)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def start_problem(board: chess.Board) -> str | None:
    """Why a game cannot start from ``board``: illegal, or already over; None if it can."""
    problems = position_problems(board)
    if problems:
        return f"not a legal position to play from: {', '.join(problems)}"
    verdict = GameBoard(board).automatic_verdict()
    if verdict is not None:
        return f"the game is already over there ({verdict.reason})"
    return None


_FEN_QUOTE = re.compile(r":\s*'[^']*'$")


def opening_from_fen(fen: str, key: str = "fen", rules: Rules = STANDARD) -> Opening:
    """An opening from a FEN, checked to be a legal position where the game is not over.

    In Chess960 a number 0-959 names a start position (518 is the standard one).
    """
    if rules.chess960 and fen.strip().isdigit():
        return chess960_openings(fen.strip(), key)[0]
    try:
        board = rules.board(fen)
    except ValueError as exc:
        # python-chess ends its message with the part it read (": '8/8'"); ours shows it all.
        raise ConfigError(key, f"{fen!r} is not a FEN: {_FEN_QUOTE.sub('', str(exc))}") from None
    problem = start_problem(board)
    if problem:
        raise ConfigError(key, f"{fen!r}: {problem}")
    return Opening(fen=board.fen(), rules=rules)


CHESS960 = find_rules("chess960")
_NUMBERS_RE = re.compile(r"(\d+)(?:-(\d+))?")


def chess960_openings(numbers: str, key: str = "openings") -> tuple[Opening, ...]:
    """Chess960 start positions by number: ``518``, ``0-959``, ``1,5,100-110``.

    Each is played with both colours, as every opening is.
    """
    openings: list[Opening] = []
    for part in numbers.split(","):
        match = _NUMBERS_RE.fullmatch(part.strip())
        first, last = (int(match.group(1)), int(match.group(2) or match.group(1))) if match else (
            -1, -1)  # fmt: skip
        if not 0 <= first <= last <= 959:
            raise ConfigError(
                key, f"{part.strip()!r} is no Chess960 start position number or range (0-959)"
            )
        openings.extend(
            Opening(fen=chess.Board.from_chess960_pos(number).fen(), rules=CHESS960)
            for number in range(first, last + 1)
        )
    return tuple(openings)


def load_openings(path: Path, rules: Rules = STANDARD) -> tuple[Opening, ...]:
    """Read an EPD (positions) or PGN (positions and moves) file of openings."""
    try:
        text = path.read_bytes().decode("ascii", errors="strict")
    except OSError as exc:
        raise ConfigError("openings", f"cannot read {str(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            "openings", f"{path}: byte {exc.start + 1} is not ASCII (is it an EPD or PGN file?)"
        ) from None
    suffix = path.suffix.lower()
    if suffix == ".epd":
        openings = _epd_openings(path, text, rules)
    elif suffix == ".pgn":
        openings = _pgn_openings(path, text, rules)
    else:
        raise ConfigError("openings", f"{str(path)!r} must end in .epd or .pgn")
    if not openings:
        raise ConfigError("openings", f"{path} holds no openings")
    return openings


def _epd_openings(path: Path, text: str, rules: Rules) -> tuple[Opening, ...]:
    openings = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip(" \t\0"):
            continue
        try:
            board = parse_lenient(line, rules.board).board(rules.board)
        except RecordError as exc:
            raise ConfigError("openings", f"{path}:{number}: {exc}") from None
        problem = start_problem(board)
        if problem:
            raise ConfigError("openings", f"{path}:{number}: {problem}")
        openings.append(Opening(fen=board.fen(), rules=rules))
    return tuple(openings)


def _pgn_openings(path: Path, text: str, rules: Rules) -> tuple[Opening, ...]:
    # Imported here, for a PGN book only: python-chess's PGN module brings its engine
    # module and asyncio, 4 MB resident in a referee that never reads PGN otherwise.
    import chess.pgn

    stream = io.StringIO(text)
    openings: list[Opening] = []
    while (game := chess.pgn.read_game(stream)) is not None:
        if game.errors:
            raise ConfigError("openings", f"{path}: game {len(openings) + 1}: {game.errors[0]}")
        board = game.board()
        if type(board) is not rules.board_type:
            raise ConfigError(
                "openings", f"{path}: game {len(openings) + 1} is "
                f"{game.headers.get('Variant', 'standard chess')!r}, the match plays {rules.name}"
            )
        moves = []
        for move in game.mainline_moves():
            moves.append(board.san(move))
            board.push(move)
        problem = start_problem(board)
        if problem:
            raise ConfigError(
                "openings", f"{path}: game {len(openings) + 1} (line {_line_of(text, stream)}): "
                f"after its moves, {problem}"
            )
        openings.append(Opening(fen=game.board().fen(), moves=tuple(moves), rules=rules))
    return tuple(openings)


def _line_of(text: str, stream: io.StringIO) -> int:
    """The line the reader had reached: the end of the game just read."""
    return text.count("\n", 0, stream.tell()) or 1


class OpeningOrder(enum.StrEnum):
    """The order a book's openings are played in (fastchess's ``order=``)."""

    SEQUENTIAL = "sequential"
    RANDOM = "random"


@dataclass(frozen=True, slots=True)
class BookOrder:
    """Which openings of a book are played, and in which order, exactly as fastchess does it.

    ``plies`` keeps the first N plies of each opening's moves (fastchess's ``plies=``; an
    EPD position has none to cut); ``None`` keeps them all. ``RANDOM`` shuffles the book
    with the generator ``-srand`` seeds (:class:`MersenneTwister64`, fastchess's Fisher-Yates
    shuffle); then the book is turned so that it begins at its ``start``-th opening
    (1-based, as ``start=``; beyond the book's end it counts on from its beginning). The
    pairs of games then take the openings in turn, each with both colours, starting
    over at the end of the book: the K-th pair plays what fastchess's K-th round plays.
    """

    order: OpeningOrder = OpeningOrder.SEQUENTIAL
    start: int = 1
    plies: int | None = None
    seed: int = 0

    def arrange(self, openings: Sequence[Opening]) -> tuple[Opening, ...]:
        """The book as its games take it: cut, shuffled, turned to its start."""
        book = list(openings)
        if self.plies is not None:
            book = [replace(opening, moves=opening.moves[: self.plies]) for opening in book]
        if self.order is OpeningOrder.RANDOM:
            draw = MersenneTwister64(self.seed)
            for index in range(len(book) - 1):
                other = index + draw() % (len(book) - index)
                book[index], book[other] = book[other], book[index]
        offset = (self.start - 1) % len(book) if book else 0
        return tuple(book[offset:] + book[:offset])

    def describe(self) -> str:
        """What sets this order apart from the book's own, for the match's identity: empty for
        the book as written, else ``, random order (seed 7), from opening 3, 8 plies``."""
        parts = []
        if self.order is OpeningOrder.RANDOM:
            parts.append(f"random order (seed {self.seed})")
        if self.start != 1:
            parts.append(f"from opening {self.start}")
        if self.plies is not None:
            parts.append(f"{self.plies} plies")
        return "".join(f", {part}" for part in parts)


_MASK64 = (1 << 64) - 1


class MersenneTwister64:
    """C++'s ``std::mt19937_64``, seeded as ``seed(value)`` seeds it: the generator fastchess
    shuffles its book with.

    Python's :mod:`random` is the 32-bit Mersenne Twister with a seeding of its own, and
    numpy has no 64-bit one, so the same seed can only give fastchess's order through
    the generator itself, written from its definition (C++ [rand.eng.mers] and
    [rand.predef]: the 10000th number after the default seed 5489 is
    9981545732273789042).
    """

    _N, _M = 312, 156

    def __init__(self, seed: int) -> None:
        state = [seed & _MASK64]
        for index in range(1, self._N):
            previous = state[-1]
            state.append((6364136223846793005 * (previous ^ (previous >> 62)) + index) & _MASK64)
        self._state = state
        self._index = self._N

    def __call__(self) -> int:
        """The next 64-bit number."""
        if self._index >= self._N:
            self._twist()
        value = self._state[self._index]
        self._index += 1
        value ^= (value >> 29) & 0x5555555555555555
        value ^= (value << 17) & 0x71D67FFFEDA60000
        value ^= (value << 37) & 0xFFF7EEE000000000
        return (value ^ (value >> 43)) & _MASK64

    def _twist(self) -> None:
        state, size = self._state, self._N
        for index in range(size):
            upper = (state[index] & 0xFFFFFFFF80000000) | (state[(index + 1) % size] & 0x7FFFFFFF)
            mixed = upper >> 1
            if upper & 1:
                mixed ^= 0xB5026F5AA96619E9
            state[index] = state[(index + self._M) % size] ^ mixed
        self._index = 0
