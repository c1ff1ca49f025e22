"""A game's clocks as the referee reports them, and the budget they leave the player.

The client sets both clocks from each record that carries them (spec 8: "the client
should set the values of its internal clocks to the values specified"): from ``ccms``,
the time consumed in milliseconds (PROTOCOL.md 2), or from ``cc`` in whole seconds when
a referee sends no ``ccms``. It keeps no estimate of its own, so a restore's
``respond`` sets the clocks as exactly as any other. The player's own time counts as
the most the report allows (up to a second more with ``cc`` alone), plus a safety
margin, so that the player's clock ends where its deadline is.

:class:`ReportedClocks` is one report (one is read from every ``respond``);
:class:`GameClocks` holds the latest of one game with its time control, and works out
the :class:`~serialref.client.players.ThinkingBudget` of the side to move from them.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

import chess

from serialref.client.players import ThinkingBudget
from serialref.clock import side_index
from serialref.epd.record import EpdRecord
from serialref.errors import ConfigError, RecordError
from serialref.records import consumed_ms
from serialref.timecontrol import TimeControl

__all__ = ["SAFETY_MARGIN", "GameClocks", "ReportedClocks", "reported_clocks"]

LOGGER = logging.getLogger(__name__)

SAFETY_MARGIN = 0.1
"""Seconds kept back from the clock for scheduling jitter and for stopping an engine.

It must hold the engine's grace to answer ``stop`` (0.05 s), the lateness of the
client's timer and the work of sending the reply. Measured on the 2-core development
machine at a load of 3: timers fire 0.13 ms late (median), 0.9 ms (p99), 4.7 ms at
worst; GNU Chess answers ``?`` within 8 ms, Stockfish ``stop`` within 1 ms. The
runner adds the line time of a respond and a reply on a real serial line.
"""


class ReportedClocks(NamedTuple):
    """The time each side has consumed as the referee reported it, and how exactly.

    ``consumed_ms`` is (White, Black) in whole milliseconds. ``rounding_ms`` is the
    most the report can understate a side's time: none worth counting for ``ccms``
    (less than a millisecond, well inside the safety margin), up to a second for a
    referee that sends ``cc`` alone. A tuple, because one is made for every move.
    """

    consumed_ms: tuple[int, int] = (0, 0)
    rounding_ms: int = 0

    @classmethod
    def from_cc(cls, seconds: tuple[int, int]) -> ReportedClocks:
        """The clocks of a record with ``cc`` alone (whole seconds, rounded down, spec 6.6)."""
        return cls((seconds[0] * 1000, seconds[1] * 1000), 1000)

    def most_consumed(self, index: int) -> float:
        """Seconds side ``index`` (0 White, 1 Black) may have consumed: the worst case."""
        return (self.consumed_ms[index] + self.rounding_ms) / 1000


def reported_clocks(record: EpdRecord) -> ReportedClocks | None:
    """The clocks a referee record carries (``ccms``, else ``cc``), or None if it has none.

    A ``ccms`` that cannot be read is logged and the record's ``cc`` counts instead,
    as for a referee that sends no ``ccms``. The strict parser has already checked
    ``cc``.
    """
    if "ccms" in record:
        try:
            return ReportedClocks(consumed_ms(record))
        except RecordError as exc:
            LOGGER.warning("ignored the referee's ccms: %s; its cc counts", exc)
    if "cc" in record:
        return ReportedClocks.from_cc(record.clock_pair("cc"))
    return None


class GameClocks:
    """One game's clocks: its time control and the referee's latest report of them.

    ``reported`` is replaced by each record that carries clocks (spec 8.1.5: they count
    on whichever record carries them); ``control`` comes from the ``TimeControl`` tag.
    """

    def __init__(self, start: chess.Board) -> None:
        """A game that starts from ``start``, untimed until its ``TimeControl`` tag comes."""
        self.control: TimeControl | None = None
        self.reported = ReportedClocks()
        self._start_ply = _ply(start)

    def start_from(self, board: chess.Board) -> None:
        """The game starts from ``board`` after all (its position read by a variant's rules)."""
        self._start_ply = _ply(board)

    def read_control(self, text: str) -> None:
        """The ``TimeControl`` tag; one that cannot be read leaves the game untimed."""
        try:
            self.control = TimeControl.parse(text)
        except ConfigError as exc:
            LOGGER.warning("ignored the TimeControl tag: %s", exc)
            self.control = None

    def take(self, record: EpdRecord) -> None:
        """The clocks ``record`` carries, if any (the strict parser has checked ``cc``)."""
        clocks = reported_clocks(record)
        if clocks is not None:
            self.reported = clocks

    def budget(self, board: chess.Board, safety_margin: float) -> ThinkingBudget:
        """The clocks for the side to move in ``board`` (the player), from the latest report.

        The player's time used is the most the report allows, plus ``safety_margin``,
        so the player's clock ends where the deadline is.
        """
        plies = max(0, _ply(board) - self._start_ply)
        first_mover_moves, second_mover_moves = (plies + 1) // 2, plies // 2
        white_started = self._start_ply % 2 == 0
        moves_made = (
            (first_mover_moves, second_mover_moves)
            if white_started
            else (second_mover_moves, first_mover_moves)
        )
        mine = side_index(board.turn)
        consumed = [value / 1000 for value in self.reported.consumed_ms]
        consumed[mine] = self.reported.most_consumed(mine) + safety_margin
        return ThinkingBudget.from_clocks(
            self.control,
            consumed=(consumed[0], consumed[1]),
            moves_made=moves_made,
            turn=board.turn,
        )


def _ply(board: chess.Board) -> int:
    """Half-moves since the start of a game that began with White at move 1."""
    return 2 * (board.fullmove_number - 1) + (board.turn == chess.BLACK)
