"""What the standby checks in each journal entry before it may reach the mirror.

The mirror is what a takeover resumes from, so an entry is written only if a
referee could have written it, in that place in the journal:

- it is an entry the journal's own decoder reads (a known event, known fields),
  and every field holds what the event's dataclass declares. The types are read
  from the dataclasses' annotations, so a new event or field is checked the
  day it is added to :mod:`serialref.happenings`;
- it makes sense after the entries before it: games start inside a match from a
  legal position that is not over; a move or an end only for a game in
  progress; plies consecutive; each move legal on that game's board, its SAN
  and FEN those of python-chess; a result one of PGN's, and the board's own
  where the board decides (a mate is scored as that mate, a stalemate as a
  draw).

The grouping rules are those of :func:`~serialref.recorders.journal.games_from_journal`,
which a takeover reads the mirror with: a fresh ``MatchStarted`` begins again,
a resumed one continues the games in progress, and a ``GameStarted`` for a
game in progress continues it.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from serialref.errors import ProtocolError
from serialref.happenings import (
    GameEnded,
    GameStarted,
    MatchEvent,
    MatchStarted,
    MovePlayed,
)
from serialref.recorders.journal import decode_entry
from serialref.referee.openings import Opening, start_problem
from serialref.referee.rulings import GameBoard, Verdict
from serialref.result import Result
from serialref.rules import Rules, rules_of_tags

__all__ = ["PGN_RESULTS", "JournalValidator"]

PGN_RESULTS = frozenset(Result)


@dataclass
class _Game:
    """A game in progress: its board from the start position, openings and moves played."""

    game: GameBoard
    rules: Rules
    plies: int = 0
    verdict: Verdict | None = None  # the board's own verdict (mate, stalemate, ...)


class JournalValidator:
    """Checks journal entries in order; keeps the games in progress between them."""

    def __init__(self) -> None:
        self._in_match = False
        self._games: dict[int, _Game] = {}

    def check(self, raw: bytes) -> MatchEvent:
        """The event of the entry ``raw`` (without its LF), taken into account; or ProtocolError.

        An entry that is refused leaves no trace: the next one is checked as if
        it had never come.
        """
        try:
            event = decode_entry(raw)
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            raise ProtocolError(f"not a journal entry: {exc}", raw=raw[:80]) from None
        name = type(event).__name__
        try:
            _check_fields(event)
            self._take(event)
        except ValueError as exc:
            raise ProtocolError(f"{name} refused: {exc}", raw=raw[:80]) from None
        return event

    def _take(self, event: MatchEvent) -> None:
        if isinstance(event, MatchStarted):
            if not event.resumed:
                self._games.clear()
            self._in_match = True
        elif isinstance(event, GameStarted):
            self._start(event)
        elif isinstance(event, MovePlayed):
            self._play(event)
        elif isinstance(event, GameEnded):
            self._end(event)

    def _start(self, event: GameStarted) -> None:
        if not self._in_match:
            raise ValueError("a game started before any MatchStarted")
        if event.game in self._games:
            return  # started again before its first move; the first start counts
        rules = rules_of_tags(event.tags)
        try:
            board = Opening(event.fen, event.opening_moves, rules).board()
        except ValueError as exc:
            raise ValueError(
                f"cannot set up {event.fen!r} {list(event.opening_moves)}: {exc}"
            ) from None
        problem = start_problem(board)  # the referee's own rule for a start position
        if problem is not None:
            raise ValueError(f"{event.fen!r}: {problem}")
        self._games[event.game] = _Game(GameBoard(board), rules)

    def _play(self, event: MovePlayed) -> None:
        game = self._game_in_progress(event.game)
        if event.ply != game.plies + 1:
            raise ValueError(f"ply {event.ply} of game {event.game} after ply {game.plies}")
        board = game.game.board
        if game.verdict is not None:
            raise ValueError(f"a move in a finished game ({game.verdict.reason})")
        try:
            move = game.rules.move(event.uci)
        except ValueError:
            raise ValueError(f"unreadable move {event.uci!r}") from None
        if not board.is_legal(move):
            raise ValueError(f"illegal move {event.uci!r} in {board.fen()!r}")
        san = board.san(move)
        if event.san != san:
            raise ValueError(f"the move {event.uci!r} is {san!r}, not {event.san!r}")
        after = board.copy(stack=False)
        after.push(move)
        fen = after.fen(en_passant="fen")
        if event.fen != fen:
            raise ValueError(f"the position after {san} is {fen!r}, not {event.fen!r}")
        game.game.push(move)
        game.plies += 1
        game.verdict = game.game.automatic_verdict()  # the referee's own rules

    def _end(self, event: GameEnded) -> None:
        game = self._game_in_progress(event.game)
        if event.result not in PGN_RESULTS:
            raise ValueError(f"{event.result!r} is not a PGN result")
        verdict = game.verdict
        if verdict is not None and event.result != verdict.result:
            raise ValueError(
                f"result {event.result!r}, but the board says {verdict.result} ({verdict.reason})"
            )
        del self._games[event.game]

    def _game_in_progress(self, number: int) -> _Game:
        game = self._games.get(number)
        if game is None:
            raise ValueError(f"game {number} is not in progress")
        return game


def _check_fields(event: MatchEvent) -> None:
    """Every field holds what its annotation declares; ValueError names the first that does not."""
    kind: type = type(event)
    for name, hint, conforms in _field_checks(kind):
        value = getattr(event, name)
        if not conforms(value):
            raise ValueError(f"{name} = {value!r:.60} is not {_spell(hint)}")


_Check = Callable[[object], bool]


@functools.cache
def _field_checks(kind: type) -> tuple[tuple[str, Any, _Check], ...]:
    """Each field's name, annotation and check, worked out once per event class."""
    hints = typing.get_type_hints(kind)
    return tuple(
        (field.name, hints[field.name], _check_for(hints[field.name]))
        for field in dataclasses.fields(kind)
    )


def _anything(value: object) -> bool:
    return True


def _check_for(hint: Any) -> _Check:
    """Whether a JSON value fits the annotation ``hint``; JSON arrays fit tuples and lists alike."""
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if hint is Any or hint is object:
        return _anything
    if hint is None or hint is type(None):
        return lambda value: value is None
    if origin is typing.Union or origin is types.UnionType:
        options = tuple(_check_for(option) for option in arguments)
        return lambda value: any(check(value) for check in options)
    if origin is typing.Literal:
        return lambda value: any(
            type(value) is type(option) and value == option for option in arguments
        )
    if hint is bool:
        return lambda value: isinstance(value, bool)
    if hint is int:
        return lambda value: isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return lambda value: isinstance(value, int | float) and not isinstance(value, bool)
    if hint is tuple or hint is list:
        origin = hint
    variadic = len(arguments) == 2 and arguments[1] is Ellipsis
    if origin is tuple and arguments and not variadic:
        checks = tuple(_check_for(argument) for argument in arguments)
        return lambda value: (
            isinstance(value, tuple | list)
            and len(value) == len(checks)
            and all(check(item) for check, item in zip(checks, value, strict=True))
        )
    if origin is tuple or origin is list:
        item_check = _check_for(arguments[0]) if arguments else _anything
        return lambda value: isinstance(value, tuple | list) and all(map(item_check, value))
    if origin is dict:
        key_check, value_check = (
            (_check_for(arguments[0]), _check_for(arguments[1])) if arguments else (_anything,) * 2
        )
        return lambda value: (
            isinstance(value, dict)
            and all(key_check(key) and value_check(item) for key, item in value.items())
        )
    if isinstance(origin, type):
        return lambda value: isinstance(value, origin)
    if isinstance(hint, type):
        return lambda value: isinstance(value, hint)
    return _anything  # an annotation JSON cannot be held to (a TypeVar): the decoder's check stands


def _spell(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else str(hint)
