"""What each analysis verb does to one record (spec 7.2 ``pfga``, 7.3 ``pfms``, 7.5 ``pfts``).

A task says which records it searches and turns an engine's :class:`~serialref.
analysis.engine.Search` into the operations it adds; the run around it (order, jobs,
restarts, progress) is the same for all three, in :mod:`serialref.analysis.run`.

The **limit** is hard by default (spec 7.2 prefers it for comparing programs): the
engine is told ``go depth``, ``go nodes`` or ``go movetime``, each an absolute bound.
With ``--soft`` and ``--movetime`` the engine is given a clock instead, worth
:data:`SOFT_MOVES` positions at that time per position with as many moves to go,
and its own time management decides how much of it each position gets. A node or
depth count has no soft form in either engine protocol, so ``--soft`` needs
``--movetime``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import chess
import chess.engine

from serialref.analysis.engine import AnalysisEngine, Search
from serialref.analysis.scores import CHECKMATED, centipawns
from serialref.analysis.targets import has_targets, is_solved
from serialref.epd.operations import Operand, Operation
from serialref.epd.record import EpdRecord
from serialref.errors import ConfigError, EngineError

__all__ = ["SOFT_MOVES", "Analyse", "Effort", "Mate", "Outcome", "Targets", "Task"]

SOFT_MOVES = 8
"""Moves to go on the clock a ``--soft`` search is given: room to spend more or less."""

HANG_MARGIN = 10.0
"""Seconds past its time limit after which a search counts as hung and is retried."""


@dataclass(frozen=True, slots=True)
class Effort:
    """The analysis effort per position (spec 7.2): one limit, hard unless ``soft``."""

    depth: int | None = None
    nodes: int | None = None
    movetime: float | None = None
    soft: bool = False

    def __post_init__(self) -> None:
        given = [name for name in ("depth", "nodes", "movetime") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ConfigError("limit", "give exactly one of --depth, --nodes and --movetime")
        for name in given:
            if getattr(self, name) <= 0:
                raise ConfigError(name, f"must be positive, not {getattr(self, name)!r}")
        if self.soft and self.movetime is None:
            raise ConfigError(
                "soft", "--soft needs --movetime: engines keep node and depth counts exactly"
            )

    def limit(self, *, mate: int | None = None) -> chess.engine.Limit:
        """The python-chess limit of one search (``mate``: stop at a mate in that many)."""
        if self.soft and self.movetime is not None:
            clock = self.movetime * SOFT_MOVES
            return chess.engine.Limit(
                white_clock=clock, black_clock=clock, remaining_moves=SOFT_MOVES, mate=mate
            )
        return chess.engine.Limit(
            depth=self.depth, nodes=self.nodes, time=self.movetime, mate=mate
        )

    @property
    def patience(self) -> float | None:
        """Seconds past the time limit before a search counts as hung
        (see :class:`~serialref.analysis.engine.AnalysisEngine`)."""
        if self.movetime is None:
            return None
        return self.movetime * (SOFT_MOVES if self.soft else 1) + HANG_MARGIN


@dataclass(frozen=True, slots=True)
class Outcome:
    """A record after its task: the new record, and whether it counts as solved."""

    record: EpdRecord
    solved: bool | None


class Task(Protocol):
    """One analysis verb."""

    def wants(self, record: EpdRecord, board: chess.Board) -> bool:
        """Whether ``record`` is searched; the others go through :meth:`unsearched`."""

    def unsearched(self, record: EpdRecord, board: chess.Board) -> EpdRecord:
        """The output record of one that is not searched."""

    async def run(self, record: EpdRecord, board: chess.Board, engine: AnalysisEngine) -> Outcome:
        """Search ``board`` on ``engine`` and annotate ``record``."""


def _variation(board: chess.Board, moves: tuple[chess.Move, ...]) -> tuple[str, ...]:
    """The engine's variation in SAN, up to its first move that is not legal."""
    line = board.copy(stack=False)
    sans = []
    for move in moves:
        if not line.is_legal(move):
            break
        sans.append(line.san(move))
        line.push(move)
    return tuple(sans)


def _counts(search: Search) -> list[Operation]:
    counts = [Operation.of("acs", _whole_seconds(search.seconds))]
    if search.nodes is not None:
        counts.append(Operation.of("acn", search.nodes))
    return counts


def _whole_seconds(seconds: float) -> int:
    """Seconds to the nearest whole one, halves up (``round`` would take 2.5 to 2)."""
    return math.floor(seconds + 0.5)


def _predicted(board: chess.Board, search: Search, name: str) -> tuple[str, ...]:
    sans = _variation(board, search.pv)
    if not sans:
        raise EngineError(f"{name} gave no legal principal variation")
    return sans


def _moves(opcode: str, sans: tuple[str, ...]) -> Operation:
    return Operation(opcode, tuple(Operand(san) for san in sans))


class Analyse:
    """Spec 7.2 ``pfga``: every record gets ``pv``, ``ce``, ``pm``, ``sm``, ``acn``, ``acs``."""


    def __init__(self, effort: Effort) -> None:
        self._limit = effort.limit()

    def wants(self, record: EpdRecord, board: chess.Board) -> bool:
        """Every record: a position without moves is answered without an engine."""
        return not _no_moves(board)

    def unsearched(self, record: EpdRecord, board: chess.Board) -> EpdRecord:
        """Spec 7.2 for a position without moves: an empty ``pv`` and its ``ce``, no ``pm``."""
        ce = CHECKMATED if board.is_checkmate() else 0
        return record.with_operations(
            Operation("pv"), Operation.of("ce", ce), Operation.of("acn", 0), Operation.of("acs", 0)
        )

    async def run(self, record: EpdRecord, board: chess.Board, engine: AnalysisEngine) -> Outcome:
        """One search, its score and its variation."""
        search = await engine.search(board, self._limit)
        if search.score is None:
            raise EngineError(f"{engine.name} gave no score")
        sans = _predicted(board, search, engine.name)
        annotated = record.with_operations(
            _moves("pv", sans),
            Operation.of("ce", centipawns(search.score)),
            _moves("pm", sans[:1]),
            _moves("sm", sans[:1]),
            *_counts(search),
        )
        return Outcome(annotated, is_solved(record, board, search.pv[0]))


def _no_moves(board: chess.Board) -> bool:
    return not any(board.generate_legal_moves())


class Targets:
    """Spec 7.5 ``pfts``: records with ``bm`` and/or ``am`` get ``pm``, ``pv``, ``acn``, ``acs``."""


    def __init__(self, effort: Effort) -> None:
        self._limit = effort.limit()

    def wants(self, record: EpdRecord, board: chess.Board) -> bool:
        """Records with targets, unless the side to move has no move at all."""
        return has_targets(record) and not _no_moves(board)

    def unsearched(self, record: EpdRecord, board: chess.Board) -> EpdRecord:
        """Copied as it is."""
        return record

    async def run(self, record: EpdRecord, board: chess.Board, engine: AnalysisEngine) -> Outcome:
        """One search; its first move is the prediction judged against the targets."""
        search = await engine.search(board, self._limit)
        sans = _predicted(board, search, engine.name)
        annotated = record.with_operations(
            _moves("pm", sans[:1]), _moves("pv", sans), *_counts(search)
        )
        return Outcome(annotated, is_solved(record, board, search.pv[0]))


class Mate:
    """Spec 7.3 ``pfms``: a forced mate searched for in ``first``..``last`` fullmoves.

    The spec's passes (mate in 1 over the file, then mate in 2 over what is left...)
    are run record by record: each record goes through its passes before the next
    one is written, which gives the same file and keeps ``--jobs`` and ``--resume``.
    """


    def __init__(self, effort: Effort, first: int, last: int) -> None:
        if not 1 <= first <= last:
            raise ConfigError("moves", "expected N or FIRST..LAST with 1 <= FIRST <= LAST")
        self._effort = effort
        self._passes = range(first, last + 1)

    def wants(self, record: EpdRecord, board: chess.Board) -> bool:
        """Spec 7.3: no ``dm``, or one longer than the first pass's length."""
        return not _no_moves(board) and self._known(record) > self._passes[0]

    def unsearched(self, record: EpdRecord, board: chess.Board) -> EpdRecord:
        """Copied as it is."""
        return record

    async def run(self, record: EpdRecord, board: chess.Board, engine: AnalysisEngine) -> Outcome:
        """The passes in turn until one finds a mate; ``solved`` says whether one did."""
        nodes, seconds = 0, 0.0
        for moves in self._passes:
            if self._known(record) <= moves:
                break
            search = await engine.search(board, self._effort.limit(mate=moves))
            nodes += search.nodes or 0
            seconds += search.seconds
            mate = None if search.score is None else search.score.mate()
            if mate is not None and 0 < mate <= moves and search.pv:
                sans = _predicted(board, search, engine.name)
                record = record.with_operations(
                    Operation.of("dm", moves),
                    _moves("pm", sans[:1]),
                    _moves("pv", sans),
                    Operation.of("acn", nodes),
                    Operation.of("acs", _whole_seconds(seconds)),
                )
                return Outcome(record, True)
        return Outcome(record, False)

    @staticmethod
    def _known(record: EpdRecord) -> int:
        """The record's ``dm``, or a length longer than any search when it has none."""
        return record.integer("dm") if "dm" in record else 1 << 31
