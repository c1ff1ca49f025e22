"""The chess clock: both sides' time for one game, and its clock face.

The clock is pure bookkeeping: every method that depends on the time takes ``at``,
a reading of the caller's monotonic clock in seconds. Nothing here reads a clock or
sleeps, so the referee can inject its clock and tests can drive time by hand.

Sides are indexed 0 for White and 1 for Black wherever a pair of values appears
(``consumed``, ``moves_made``, snapshots, ``consumed_ms``). ``chess.WHITE`` is
``True == 1``, so ``pair[chess.WHITE]`` would pick Black's value: use
:func:`side_index` instead of indexing with a colour.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping

import chess

from serialref.errors import ConfigError, ProgrammingError
from serialref.timecontrol import TimeControl

__all__ = ["ChessClock", "format_clock", "side_index"]

LOGGER = logging.getLogger(__name__)

_SNAPSHOT_KEY = "clock snapshot"

# Sums of float move times drift by a few ulps (0.2 + 0.7 + 0.1 < 1.0); rounding down
# whole seconds must not turn such a sum into the second below it.
_ROUNDING_SLACK = 1e-6

_SIDE_NAMES = {chess.WHITE: "white", chess.BLACK: "black"}


def side_index(side: chess.Color) -> int:
    """Index of ``side`` in a (White, Black) pair: 0 for White, 1 for Black.

    ``chess.WHITE`` is ``True``, which indexes as 1; this helper exists so that no
    caller writes ``pair[side]`` and silently swaps the players.
    """
    return 0 if side == chess.WHITE else 1


def format_clock(seconds: float, *, tenths: bool = False) -> str:
    """Render a time as the PGN ``%clk`` form ``H:MM:SS``, or ``H:MM:SS.s`` with ``tenths``.

    Rounded down, because a clock face shows a second (or a tenth) as gone only when
    all of it is gone; negative times (a fallen flag) show as ``0:00:00``, as a clock
    face would. Untimed games have no clock face: callers skip ``%clk`` when the
    remaining time is infinite (``int(inf)`` raises ``OverflowError`` here).
    """
    if tenths:
        deciseconds = max(0, math.floor(seconds * 10 + _ROUNDING_SLACK))
        whole, tenth = divmod(deciseconds, 10)
        return f"{format_clock(whole)}.{tenth}"
    whole = max(0, math.floor(seconds + _ROUNDING_SLACK))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


class ChessClock:
    """Both sides' time for one game.

    Pure: every method takes the time ``at`` from the caller's monotonic clock, so
    tests drive time without sleeping. What is stored is the time each side has
    *consumed* and the moves it has made; the clock face (:meth:`remaining`) is
    derived from them and the control, which keeps restore exact and the EPD ``cc``
    values (time consumed) first-hand.

    A move runs from :meth:`start` to :meth:`stop`. :meth:`pause` and :meth:`unpause`
    stop charging anyone (a supervisor fault, a port down) without ending the move.
    """

    def __init__(
        self,
        control: TimeControl,
        *,
        consumed: tuple[float, float] = (0.0, 0.0),
        moves_made: tuple[int, int] = (0, 0),
    ) -> None:
        """Start a clock, or continue one from a journal's (White, Black) pairs."""
        if len(consumed) != 2 or not all(math.isfinite(value) and value >= 0 for value in consumed):
            raise ConfigError(_SNAPSHOT_KEY, f"consumed {consumed!r}: need two times >= 0")
        if len(moves_made) != 2 or not all(
            isinstance(count, int) and not isinstance(count, bool) and count >= 0
            for count in moves_made
        ):
            raise ConfigError(
                _SNAPSHOT_KEY, f"moves_made {moves_made!r}: need two move counts >= 0"
            )
        self._control = control
        self._consumed = [float(consumed[0]), float(consumed[1])]
        self._moves = [moves_made[0], moves_made[1]]
        self._mover: chess.Color | None = None
        # Start of the interval now being charged; None while paused or not running.
        self._since: float | None = None
        # Time of the move in progress charged before `_since` (earlier intervals).
        self._banked = 0.0
        # A move interrupted by a crash: (side, time already spent), resumed by start().
        self._carried: tuple[chess.Color, float] | None = None
        self._paused = False
        # Time the supervisor gave each side beyond the control (``serialref ctl add-time``).
        self._added = [0.0, 0.0]

    @property
    def control(self) -> TimeControl:
        """The time control this clock runs."""
        return self._control

    @property
    def running(self) -> chess.Color | None:
        """The side whose move is in progress (also while paused), or ``None``."""
        return self._mover

    @property
    def paused(self) -> bool:
        """Whether charging is suspended by :meth:`pause`."""
        return self._paused

    def start(self, side: chess.Color, at: float) -> None:
        """Begin ``side``'s move at ``at`` (the moment its ``respond`` was drained).

        After a restore, the side whose move was interrupted continues it: the time it
        had already spent counts towards this move.
        """
        if self._mover is not None:
            raise ProgrammingError(
                f"clock: cannot start {_SIDE_NAMES[side]}, "
                f"{_SIDE_NAMES[self._mover]}'s move is still running"
            )
        self._banked = 0.0
        if self._carried is not None:
            carried_side, carried_time = self._carried
            if carried_side != side:
                raise ProgrammingError(
                    f"clock: cannot start {_SIDE_NAMES[side]}, the restored game has "
                    f"{_SIDE_NAMES[carried_side]}'s move in progress"
                )
            self._banked = carried_time
            self._carried = None
        self._mover = side
        self._since = None if self._paused else at

    def stop(self, at: float) -> float:
        """End the running move at ``at``; return the time charged for it (PGN ``%emt``).

        ``at`` is when the player stopped thinking: the referee takes a reply's own
        line time off its arrival. The increment and any period bonus follow from the
        new move count. The move counts even if the flag fell: ask :meth:`flag_fell` first.
        """
        if self._mover is None:
            raise ProgrammingError("clock: stop() with no move running")
        side = self._mover
        charge = self._move_charge(at)
        index = side_index(side)
        self._consumed[index] += charge
        self._moves[index] += 1
        self._mover = None
        self._since = None
        self._banked = 0.0
        LOGGER.debug(
            "%s moved: %.3f s charged, %d moves, %.3f s consumed",
            _SIDE_NAMES[side],
            charge,
            self._moves[index],
            self._consumed[index],
        )
        return charge

    def pause(self, at: float) -> None:
        """Stop charging anyone from ``at`` on; a second pause changes nothing.

        Pauses come from faults, which can repeat, hence idempotent.
        """
        if self._paused:
            return
        if self._since is not None:
            self._banked += max(0.0, at - self._since)
            self._since = None
        self._paused = True

    def unpause(self, at: float) -> None:
        """Charge the running side again from ``at``; without a pause, nothing changes."""
        if not self._paused:
            return
        self._paused = False
        if self._mover is not None:
            self._since = at

    def add_time(self, side: chess.Color, seconds: float) -> None:
        """Give ``side`` more time on its clock face (negative takes time away).

        Kept apart from the time consumed, which the players are told (``cc``) and
        which only thinking changes.
        """
        self._added[side_index(side)] += seconds

    def discount(self, began: float, ended: float) -> None:
        """Charge no one for ``began``..``ended``: the referee was not running (PROTOCOL.md 7).

        The running move's start moves later by the part of the interval it overlaps,
        so a reply read after the stall is charged up to the stall's beginning at most.
        """
        if self._since is None:
            return
        overlap = ended - max(began, self._since)
        if overlap > 0:
            self._since += overlap

    def consumed(self, side: chess.Color, at: float | None = None) -> float:
        """Thinking time ``side`` has used, including the running move when ``at`` is given."""
        total = self._consumed[0 if side == chess.WHITE else 1]  # side_index, inline: hot
        if self._carried is not None and self._carried[0] == side:
            total += self._carried[1]
        if self._mover == side:
            total += self._move_charge(at)
        return total

    def remaining(self, side: chess.Color, at: float | None = None) -> float:
        """What ``side``'s clock face shows: negative once its flag fell, inf if untimed."""
        if self._control.untimed:
            return math.inf
        first = self._control.periods[0]
        index = 0 if side == chess.WHITE else 1  # side_index, inline: asked on every move
        added = self._added[index]
        if first.sandclock:
            return (
                first.seconds / 2 + added - self.consumed(side, at) + self.consumed(not side, at)
            )
        return self._control.allotment(self._moves[index]) + added - self.consumed(side, at)

    def flag_deadline(self) -> float | None:
        """The ``at`` when the running side's time runs out (to wait on), if it can.

        ``None`` when no move is running, while paused, and for untimed controls.
        """
        if self._control.untimed or self._mover is None or self._since is None:
            return None
        return self._since + self.remaining(self._mover, self._since)

    def flag_fell(self, at: float) -> bool:
        """Whether the running side has no time left at ``at`` (remaining <= 0).

        Exactly at :meth:`flag_deadline` the flag has fallen, so a timer woken at the
        deadline always finds it fallen.
        """
        if self._control.untimed or self._mover is None:
            return False
        deadline = self.flag_deadline()
        if deadline is not None:
            # Compared with the deadline itself, not recomputed: float rounding must not
            # leave a timer that woke at the deadline seeing a sliver of time left.
            return at >= deadline
        return self.remaining(self._mover, at) <= 0

    def consumed_ms(self, at: float | None = None) -> tuple[int, int]:
        """(White, Black) time consumed in whole milliseconds, rounded down: EPD ``ccms``.

        ``cc`` is the same pair in whole seconds (spec 6.6), the milliseconds divided by
        1000, so the two never disagree about a second. A millisecond not yet fully
        used has not been consumed, as a second has not for ``cc``.
        """
        return (
            math.floor((self.consumed(chess.WHITE, at) + _ROUNDING_SLACK) * 1000),
            math.floor((self.consumed(chess.BLACK, at) + _ROUNDING_SLACK) * 1000),
        )

    def moves_made(self, side: chess.Color) -> int:
        """Moves ``side`` has completed on this clock."""
        return self._moves[side_index(side)]

    def snapshot(self, at: float | None = None) -> dict[str, object]:
        """JSON-able state for the journal, to :meth:`restore` after a crash.

        Period bookkeeping needs nothing beyond the move counts. A move in progress is
        kept with the time spent on it so far (including the running interval when
        ``at`` is given); the ``at`` values themselves are not, because another
        process's monotonic clock means nothing.
        """
        move: dict[str, object] | None = None
        if self._mover is not None:
            move = {"side": _SIDE_NAMES[self._mover], "elapsed": self._move_charge(at)}
        elif self._carried is not None:
            move = {"side": _SIDE_NAMES[self._carried[0]], "elapsed": self._carried[1]}
        return {
            "control": self._control.text,
            "consumed": list(self._consumed),
            "moves_made": list(self._moves),
            "move": move,
        }

    @classmethod
    def restore(cls, control: TimeControl, snapshot: Mapping[str, object]) -> ChessClock:
        """Rebuild a clock from :meth:`snapshot`; nothing runs until :meth:`start`.

        The time between the snapshot and this call is charged to no one (PROTOCOL 6).
        The snapshot's control must be equal to ``control`` (the same periods, however
        written), so a clock is never continued under another time control.
        """
        recorded = snapshot.get("control")
        if not isinstance(recorded, str) or _parsed_or_none(recorded) != control:
            raise ConfigError(
                _SNAPSHOT_KEY, f"control {recorded!r} does not match {control.text!r}"
            )
        clock = cls(
            control,
            consumed=_times(snapshot.get("consumed")),
            moves_made=_counts(snapshot.get("moves_made")),
        )
        move = snapshot.get("move")
        if move is not None:
            clock._carried = _carried_move(move)
        return clock

    def _move_charge(self, at: float | None) -> float:
        """What the move in progress costs if it ended at ``at`` (without ``at``: banked time)."""
        elapsed = self._banked
        if at is not None and self._since is not None:
            elapsed += max(0.0, at - self._since)
        return elapsed


def _parsed_or_none(text: str) -> TimeControl | None:
    """A snapshot's control, or None when it is not one (a corrupt journal)."""
    try:
        return TimeControl.parse(text)
    except ConfigError:
        return None


def _two_numbers(value: object, name: str) -> tuple[float | int, float | int]:
    """A (White, Black) pair of JSON numbers, with a clear error for anything else."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ConfigError(_SNAPSHOT_KEY, f"{name} {value!r}: need a (white, black) pair")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int | float):
            raise ConfigError(_SNAPSHOT_KEY, f"{name} {value!r}: {item!r} is not a number")
    return value[0], value[1]


def _times(value: object) -> tuple[float, float]:
    """The snapshot's consumed times (range checked by the constructor)."""
    white, black = _two_numbers(value, "consumed")
    return float(white), float(black)


def _counts(value: object) -> tuple[int, int]:
    """The snapshot's move counts; a float count means a corrupt journal."""
    white, black = _two_numbers(value, "moves_made")
    if not (isinstance(white, int) and isinstance(black, int)):
        raise ConfigError(_SNAPSHOT_KEY, f"moves_made {value!r}: need whole move counts")
    return white, black


def _carried_move(move: object) -> tuple[chess.Color, float]:
    """The interrupted move of a snapshot: its side and the time already spent."""
    if not isinstance(move, Mapping):
        raise ConfigError(_SNAPSHOT_KEY, f"move {move!r}: need a mapping or null")
    side_name = move.get("side")
    if side_name not in ("white", "black"):
        raise ConfigError(_SNAPSHOT_KEY, f"move side {side_name!r}: need white or black")
    elapsed = move.get("elapsed")
    if (
        isinstance(elapsed, bool)
        or not isinstance(elapsed, int | float)
        or not (math.isfinite(elapsed) and elapsed >= 0)
    ):
        raise ConfigError(_SNAPSHOT_KEY, f"move elapsed {elapsed!r}: need a time >= 0")
    return (chess.WHITE if side_name == "white" else chess.BLACK), float(elapsed)
