"""Where games start: one FEN for every game, or a book of openings from an EPD or PGN file.

Each opening is played twice, once with each player as White, so that a match
on a book is fair (PROTOCOL.md 5: colours alternate).
"""

from __future__ import annotations

import io
from pathlib import Path

import chess
import chess.pgn

from serialref.adjudication import position_problems
from serialref.epd import parse_lenient
from serialref.errors import ConfigError, RecordError
from serialref.match import Opening

__all__ = ["load_openings", "opening_from_fen"]


def opening_from_fen(fen: str) -> Opening:
    """An opening from a FEN, checked to be a legal position."""
    try:
        board = chess.Board(fen)
    except ValueError as exc:
        raise ConfigError("fen", f"{fen!r} is not a FEN: {exc}") from None
    problems = position_problems(board)
    if problems:
        raise ConfigError("fen", f"{fen!r} is not a legal position: {', '.join(problems)}")
    return Opening(fen=board.fen())


def load_openings(path: Path) -> tuple[Opening, ...]:
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
        openings = _epd_openings(path, text)
    elif suffix == ".pgn":
        openings = _pgn_openings(path, text)
    else:
        raise ConfigError("openings", f"{str(path)!r} must end in .epd or .pgn")
    if not openings:
        raise ConfigError("openings", f"{path} holds no openings")
    return openings


def _epd_openings(path: Path, text: str) -> tuple[Opening, ...]:
    openings = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip(" \t\0"):
            continue
        try:
            board = parse_lenient(line).board()
        except RecordError as exc:
            raise ConfigError("openings", f"{path}:{number}: {exc}") from None
        problems = position_problems(board)
        if problems:
            raise ConfigError(
                "openings", f"{path}:{number}: not a legal position: {', '.join(problems)}"
            )
        openings.append(Opening(fen=board.fen()))
    return tuple(openings)


def _pgn_openings(path: Path, text: str) -> tuple[Opening, ...]:
    stream = io.StringIO(text)
    openings: list[Opening] = []
    while (game := chess.pgn.read_game(stream)) is not None:
        if game.errors:
            raise ConfigError("openings", f"{path}: game {len(openings) + 1}: {game.errors[0]}")
        board = game.board()
        moves = []
        for move in game.mainline_moves():
            moves.append(board.san(move))
            board.push(move)
        openings.append(Opening(fen=game.board().fen(), moves=tuple(moves)))
    return tuple(openings)
