"""The referee's own adjudication, as cutechess-cli's ``-draw``, ``-resign``, ``-maxmoves`` and
``-tb`` adjudicate, with their spelling.

Engine testers end hopeless games early to save time: a game both players score as
level for long enough is drawn, one whose loser scores it lost for long enough is
lost, a game too long is drawn, a position the endgame tables know ends as they say.
After every move that did not end the game by itself, :func:`adjudicate` looks at the
board and at the scores the players reported with their moves (their ``ce``, spec
6.7: centipawns from the mover's side, mates as the spec encodes them) and returns the
verdict, or None. It is pure: the same board and scores give the same verdict, so a
restarted referee that reads the scores back from its journal decides as before.

cutechess-cli's rules, which this follows to the ply (``GameAdjudicator::addEval``):

- **tables** first, after any move, scored or not (:mod:`serialref.referee.tablebase`);
- a move without a score (cutechess-cli: a book move; here: a reply without ``ce``)
  adjudicates nothing by score and starts the counts again: the draw count, and the
  mover's own counts;
- **draw**: the plies in a row whose score is within ``score`` centipawns of zero,
  counted again from a capture or a pawn move (which counts as the first); at least
  ``movecount`` moves of each side (``2 * movecount`` plies), and ``movenumber`` full
  moves played since the game's start position (its opening's moves included).
  ``movenumber=0`` turns the rule off, as in cutechess-cli;
- **resign**: the mover's own moves in a row scored at ``-score`` or below; at
  ``movecount`` of them the mover loses. ``twosided=true`` also needs the opponent's
  last ``movecount`` moves scored at ``score`` or above. ``movecount=0`` turns it off;
- **maxmoves**: ``N`` full moves played (``2N`` plies) draw the game. cutechess-cli
  checks it only after a scored move; here every move counts, so that players that
  send no score meet the limit too.

The reasons are cutechess-cli's, which its PGN carries in the last move's comment:
``Draw by adjudication``, ``White wins by adjudication``, ``Draw by adjudication:
maximal game length``, ``Black wins by adjudication: SyzygyTB``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice

import chess

from serialref.errors import ConfigError
from serialref.referee.rulings import Termination, Verdict
from serialref.referee.tablebase import SyzygyTables
from serialref.result import Result

__all__ = [
    "AdjudicationRules",
    "DrawRule",
    "GameAdjudicator",
    "ResignRule",
    "adjudicate",
    "parse_draw_rule",
    "parse_resign_rule",
    "reported_score",
]

_TABLES = "SyzygyTB"
_GAME_LENGTH = "maximal game length"


@dataclass(frozen=True, slots=True)
class DrawRule:
    """``-draw movenumber=N movecount=N score=CP``."""

    move_number: int
    move_count: int
    score: int


@dataclass(frozen=True, slots=True)
class ResignRule:
    """``-resign movecount=N score=CP [twosided=true]``."""

    move_count: int
    score: int
    two_sided: bool = False


@dataclass(frozen=True, slots=True)
class AdjudicationRules:
    """What the referee adjudicates by; the defaults adjudicate nothing."""

    draw: DrawRule | None = None
    resign: ResignRule | None = None
    max_moves: int = 0
    tables: SyzygyTables | None = None

    def __bool__(self) -> bool:
        return bool(self.draw or self.resign or self.max_moves or self.tables)

    def close(self) -> None:
        """Close the tables' files, if a probe opened any."""
        if self.tables is not None:
            self.tables.close()


def parse_draw_rule(key: str, words: Sequence[str]) -> DrawRule:
    """``movenumber=N movecount=N score=CP``, each required, as cutechess-cli's ``-draw``."""
    given = _parameters(key, words, required=("movenumber", "movecount", "score"))
    return DrawRule(_count(key, given, "movenumber"), _count(key, given, "movecount"),
                    _count(key, given, "score"))  # fmt: skip


def parse_resign_rule(key: str, words: Sequence[str]) -> ResignRule:
    """``movecount=N score=CP [twosided=true|false]``, as cutechess-cli's ``-resign``."""
    given = _parameters(key, words, required=("movecount", "score"), optional=("twosided",))
    two_sided = given.get("twosided", "false")
    if two_sided not in ("true", "false"):
        raise ConfigError(key, f"twosided must be true or false, not {two_sided!r}")
    return ResignRule(_count(key, given, "movecount"), _count(key, given, "score"),
                      two_sided == "true")  # fmt: skip


def _parameters(
    key: str, words: Sequence[str], *, required: Sequence[str], optional: Sequence[str] = ()
) -> dict[str, str]:
    """``name=value`` words, each name known and given once, every required one given."""
    known = (*required, *optional)
    given: dict[str, str] = {}
    for word in words:
        name, sep, value = word.partition("=")
        if not sep or name not in known:
            expected = ", ".join(f"{name}=" for name in known)
            raise ConfigError(key, f"expected {expected}: {word!r}")
        if name in given:
            raise ConfigError(key, f"{name} given twice")
        given[name] = value
    missing = [name for name in required if name not in given]
    if missing:
        raise ConfigError(key, f"{', '.join(missing)} missing in {' '.join(words)!r}")
    return given


def _count(key: str, given: Mapping[str, str], name: str) -> int:
    value = given[name]
    if not value.isdigit() or not value.isascii():
        raise ConfigError(key, f"{name} must be a whole number >= 0, not {value!r}")
    return int(value)


def reported_score(analysis: Mapping[str, str]) -> int | None:
    """The mover's score a reply's analysis gives (its ``ce``); None without a readable one."""
    try:
        return int(analysis["ce"])
    except (KeyError, ValueError):
        return None


def adjudicate(
    rules: AdjudicationRules, board: chess.Board, scores: Sequence[int | None]
) -> Verdict | None:
    """The verdict after the move just played on ``board``, or None to play on.

    ``scores`` are the players' scores of the moves they played in this game, in order,
    the last one the move just played (None where a reply had no ``ce``); moves before
    them (an opening's) had none.
    """
    if rules.tables is not None:
        result = rules.tables.result(board)
        if result is not None:
            return _verdict(result, _TABLES)
    plies = len(board.move_stack)
    if scores and scores[-1] is not None:
        if rules.draw is not None and rules.draw.move_number > 0:
            draw = rules.draw
            # Counted again from the last capture or pawn move, itself included.
            since_zeroing = islice(reversed(scores), board.halfmove_clock + 1)
            level = _run(since_zeroing, lambda score: abs(score) <= draw.score)
            if plies // 2 >= draw.move_number and level >= 2 * draw.move_count:
                return _verdict(Result.DRAW)
        if rules.resign is not None and rules.resign.move_count > 0:
            resign = rules.resign
            lost = _run(islice(reversed(scores), 0, None, 2), lambda score: score <= -resign.score)
            won = _run(islice(reversed(scores), 1, None, 2), lambda score: score >= resign.score)
            if lost >= resign.move_count and (not resign.two_sided or won >= resign.move_count):
                mover = not board.turn
                return _verdict(Result.WHITE_WINS if mover == chess.BLACK else Result.BLACK_WINS)
    if rules.max_moves > 0 and plies >= 2 * rules.max_moves:
        return _verdict(Result.DRAW, _GAME_LENGTH)
    return None


class GameAdjudicator:
    """One game's adjudication: its rules, and the scores of the moves played so far.

    ``scores`` are those of the moves a restarted referee reads back from its journal.
    """

    def __init__(self, rules: AdjudicationRules, scores: Iterable[int | None] = ()) -> None:
        self.rules = rules
        self.scores = list(scores)

    def note(self, analysis: Mapping[str, str]) -> None:
        """A move was played: its reply's ``analysis`` gives its score (or none)."""
        self.scores.append(reported_score(analysis))

    def verdict(self, board: chess.Board) -> Verdict | None:
        """The verdict after the last move played on ``board``, or None (and None before
        any move: the referee adjudicates moves, not start positions)."""
        if not self.rules or not self.scores:
            return None
        return adjudicate(self.rules, board, self.scores)


def _run(latest_first: Iterable[int | None], holds: Callable[[int], bool]) -> int:
    """How many scores in a row, the latest first, are scores for which ``holds``."""
    count = 0
    for score in latest_first:
        if score is None or not holds(score):
            break
        count += 1
    return count


def _verdict(result: Result, why: str = "") -> Verdict:
    """cutechess-cli's words for an adjudication (``Chess::Result::description``)."""
    if result is Result.DRAW:
        reason = "Draw by adjudication"
    else:
        reason = f"{'White' if result is Result.WHITE_WINS else 'Black'} wins by adjudication"
    return Verdict(result, Termination.ADJUDICATION, f"{reason}: {why}" if why else reason)
