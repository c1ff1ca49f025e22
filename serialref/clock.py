"""Time controls (PGN ``TimeControl`` syntax) and the referee's chess clock.

The clock is pure bookkeeping: every method that depends on the time takes ``at``,
a reading of the caller's monotonic clock in seconds. Nothing here reads a clock or
sleeps, so the referee can inject its clock and tests can drive time by hand.

Time-control rules, from the PGN standard, section 9.6.1 (``TimeControl`` tag):

- Descriptors are joined by ``:`` and used in order; "the last field appearing is
  considered to be implicitly repeated for further control periods as needed". So
  ``40/7200`` gives 7200 s more after every 40 moves, and ``40/7200:20/3600`` repeats
  ``20/3600`` after move 60. A last period without a move count (``3600``,
  ``300+2``) lasts the rest of the game, so its repetition never comes into play.
- ``moves/seconds``: that many moves in that many seconds. When a side completes the
  period's last move, the next period's seconds are added to its clock (FIDE practice:
  unused time carries over).
- ``seconds`` (sudden death), ``seconds+increment`` and ``*seconds`` (sandclock)
  "should only be used for the last descriptor": they last the rest of the game, so
  anything after them could never start. Such controls are rejected, not guessed at.
- ``?`` (unknown) and ``-`` (none) are "usually the only descriptor present"; a clock
  cannot run "unknown for 40 moves, then 300", so here they must stand alone.
  Neither ever lets a flag fall.
- Increments are added after the move, to the mover ("the number of extra seconds
  added after each move is made"), before any period bonus that move earns.

Sandclock (``*180``): the standard describes a sandclock "set at the start of the
period with an equal amount of sand in each of the two chambers" whose integer gives
"the total number of seconds in the sandclock period", with "a time forfeit indicated
by an empty upper chamber"; its example is "a common three minute egg timer". The
sand of a 180-second egg timer is 180 seconds in total, so each side starts with half
of it (90 s); the sand the mover lets fall lands in the opponent's chamber, so every
second one side thinks is taken from its clock and added to the other's, and the two
remaining times always sum to the field's seconds. (Some hardware clocks start both
sides with the full amount instead, doubling the sand; that contradicts "equal amount
of sand ... total number of seconds", so it is not followed here.) A sandclock shares
one supply of sand between the players, so it cannot follow per-player periods and
must be the only descriptor.

Extensions beyond the standard, accepted because match organisers use them and the
period record holds them: an increment on a move-count period (``40/5400+30:1800+30``,
the FIDE classical control), an increment of zero (``300+0``, as servers write it), and
times and increments with a decimal fraction (``10+0.1``, ``40/120.5:60+0.25``,
``*0.5``), the controls of engine testing as cutechess-cli and fastchess write them.
Numbers are plain decimals (``0.5``, not ``.5`` or ``5e-1``) with at most six digits
after the point: a time control is configuration, not a measurement.

A :class:`TimeControl` keeps the text it was configured with (``10+0.10`` stays
``10+0.10`` in the PGN tag, as the organiser wrote it), while two controls are equal
when their periods are: ``300+0`` and ``300`` run the same clock, so a journal written
under one can be resumed under the other.

Sides are indexed 0 for White and 1 for Black wherever a pair of values appears
(``consumed``, ``moves_made``, snapshots, ``cc_seconds``). ``chess.WHITE`` is
``True == 1``, so ``pair[chess.WHITE]`` would pick Black's value: use
:func:`side_index` instead of indexing with a colour.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

import chess

from serialref.errors import ConfigError, ProgrammingError

__all__ = [
    "ChessClock",
    "TimeControl",
    "TimeControlPeriod",
    "format_clock",
    "side_index",
]

LOGGER = logging.getLogger(__name__)

_CONFIG_KEY = "tc"
_SNAPSHOT_KEY = "clock snapshot"

# The EPD clock basetype (DDD:HH:MM:SS) cannot show 1000 days, so no period may be longer.
_MAX_SECONDS = 999 * 24 * 3600
_MAX_DIGITS = 9

# Sums of float move times drift by a few ulps (0.2 + 0.7 + 0.1 < 1.0); rounding down
# whole seconds must not turn such a sum into the second below it.
_ROUNDING_SLACK = 1e-6

_NUMBER = r"[0-9]+(?:\.[0-9]+)?"
_DESCRIPTOR = re.compile(
    r"(?P<sandclock>\*)?"
    r"(?:(?P<moves>[0-9]+)/)?"
    rf"(?P<seconds>{_NUMBER})"
    rf"(?:\+(?P<increment>{_NUMBER}))?"
)
_MAX_DECIMALS = 6

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


def _format_number(value: float) -> str:
    """Seconds as PGN writes them: an integer when whole, else the shortest plain decimal.

    ``repr`` gives the shortest digits that read back as the same float, but in
    scientific notation for small values (``1e-06``), which the grammar does not have.
    """
    if float(value).is_integer():
        return str(int(value))
    return format(Decimal(repr(value)), "f")


@dataclass(frozen=True, slots=True)
class TimeControlPeriod:
    """One descriptor of a PGN ``TimeControl`` value.

    ``moves`` is ``None`` for a period that lasts the rest of the game. For a
    sandclock, ``seconds`` is the total sand of both chambers (see the module docstring).
    """

    moves: int | None
    seconds: float
    increment: float = 0.0
    sandclock: bool = False

    def __post_init__(self) -> None:
        """Refuse periods no clock can run, so a bad value fails where it is made."""
        if self.moves is not None and (
            isinstance(self.moves, bool) or not isinstance(self.moves, int) or self.moves <= 0
        ):
            raise ConfigError(_CONFIG_KEY, f"{self}: the number of moves must be positive")
        if not (math.isfinite(self.seconds) and 0 < self.seconds <= _MAX_SECONDS):
            raise ConfigError(
                _CONFIG_KEY,
                f"{self}: the period's time must be more than 0 s and at most 999 days",
            )
        if not (math.isfinite(self.increment) and 0 <= self.increment <= _MAX_SECONDS):
            raise ConfigError(
                _CONFIG_KEY, f"{self}: the increment must be between 0 s and 999 days"
            )
        if self.sandclock and (self.moves is not None or self.increment):
            raise ConfigError(
                _CONFIG_KEY, f"{self}: a sandclock has neither a move count nor an increment"
            )

    def __str__(self) -> str:
        """The descriptor's canonical PGN text."""
        text = _format_number(self.seconds)
        if self.sandclock:
            return f"*{text}"
        if self.moves is not None:
            text = f"{self.moves}/{text}"
        if self.increment:
            text = f"{text}+{_format_number(self.increment)}"
        return text


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A whole PGN ``TimeControl`` value: its periods and the text it was configured with.

    Build it with :meth:`parse`; direct construction is checked for the same rules and
    for ``text`` reading as ``periods``, so a ``TimeControl`` is always one the clock
    can run and whose tag text says what it does. Equality and hashing look at the
    periods only (see the module docstring): ``text`` is how the control is shown.
    """

    periods: tuple[TimeControlPeriod, ...]
    text: str = field(compare=False)
    unknown: bool
    untimed: bool

    def __post_init__(self) -> None:
        """Check the rules of PGN 9.6.1 that involve more than one period."""
        if not self.periods:
            expected = "?" if self.unknown else "-"
            if self.text != expected or not self.untimed:
                raise ConfigError(
                    _CONFIG_KEY,
                    f"a control without periods is '?' (unknown) or '-' (none), not {self.text!r}",
                )
            return
        if self.unknown or self.untimed:
            raise ConfigError(_CONFIG_KEY, f"{self.text!r} has periods, so it is timed")
        for position, period in enumerate(self.periods):
            if period.sandclock and len(self.periods) > 1:
                raise ConfigError(
                    _CONFIG_KEY,
                    f"{str(period)!r} in {self.text!r}: a sandclock shares one supply of "
                    "sand between both players, so it must be the only period",
                )
            if period.moves is None and position < len(self.periods) - 1:
                raise ConfigError(
                    _CONFIG_KEY,
                    f"{str(period)!r} in {self.text!r}: a period without a move count "
                    "lasts the rest of the game, so no period may follow it",
                )
        try:
            written = _parse_periods(self.text)
        except ConfigError:
            written = ()
        if written != self.periods:
            raise ConfigError(
                _CONFIG_KEY,
                f"text {self.text!r} does not match its periods ({self.canonical!r})",
            )

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Read a PGN ``TimeControl`` value; the result keeps ``text`` without its blanks.

        Surrounding whitespace is ignored; anything else outside the grammar raises
        :class:`~serialref.errors.ConfigError` naming the offending descriptor.
        """
        value = text.strip()
        if value in ("?", "-"):
            return cls(periods=(), text=value, unknown=value == "?", untimed=True)
        if not value:
            raise ConfigError(
                _CONFIG_KEY, "empty time control; write '-' for none or '?' for unknown"
            )
        return cls(periods=_parse_periods(value), text=value, unknown=False, untimed=False)

    @property
    def canonical(self) -> str:
        """The shortest text for these periods (``300`` for ``300+0``, ``0.5`` for ``0.50``)."""
        if not self.periods:
            return "?" if self.unknown else "-"
        return ":".join(str(period) for period in self.periods)

    def __str__(self) -> str:
        """The configured text, ready for the PGN ``TimeControl`` tag."""
        return self.text

    def allotment(self, moves_made: int) -> float:
        """Time a side has been given after ``moves_made`` moves (non-sandclock).

        The seconds of every period entered so far (the last move-count period
        repeating) plus every increment earned. Derived from the move count alone, so
        a clock restored from ``moves_made`` and ``consumed`` shows exactly what the
        original showed.
        """
        return sum(
            period.seconds + moves * period.increment
            for period, moves in self._entered(moves_made)
        )

    def period_of(self, moves_made: int) -> TimeControlPeriod:
        """The period a side that has made ``moves_made`` moves plays its next move in."""
        *_, (period, _) = self._entered(moves_made)
        return period

    def moves_to_go(self, moves_made: int) -> int | None:
        """Moves until the next period's bonus; None when no bonus comes."""
        *_, (period, moves) = self._entered(moves_made)
        return None if period.moves is None else period.moves - moves

    def _entered(self, moves_made: int) -> Iterator[tuple[TimeControlPeriod, int]]:
        """Each period a side has entered after ``moves_made`` moves, with its moves in it.

        A side enters the next period as it completes the current one's last move (its
        bonus is then due); the last move-count period repeats (PGN 9.6.1).
        """
        moves_left = moves_made
        for position, period in enumerate(self.periods):
            last = position == len(self.periods) - 1
            if period.moves is None or (not last and moves_left < period.moves):
                yield period, moves_left
                return
            if last:
                repeats, within = divmod(moves_left, period.moves)
                for _ in range(repeats):
                    yield period, period.moves
                yield period, within
                return
            yield period, period.moves
            moves_left -= period.moves


def _parse_periods(value: str) -> tuple[TimeControlPeriod, ...]:
    """The descriptors of a timed control written without surrounding blanks."""
    return tuple(_parse_descriptor(part, value) for part in value.split(":"))


def _parse_descriptor(part: str, whole: str) -> TimeControlPeriod:
    """One ``:``-separated descriptor; errors quote it and the whole value."""
    where = f"{part!r} in {whole!r}"
    if not part:
        raise ConfigError(_CONFIG_KEY, f"{whole!r}: empty period between ':' separators")
    if part in ("?", "-"):
        raise ConfigError(
            _CONFIG_KEY, f"{where}: {part!r} must be the only descriptor of the control"
        )
    match = _DESCRIPTOR.fullmatch(part)
    if match is None:
        raise ConfigError(
            _CONFIG_KEY,
            f"{where}: expected 'moves/seconds', 'seconds', 'seconds+increment' or "
            "'*seconds', with seconds such as 300 or 0.5",
        )
    numbers = {name: value for name, value in match.groupdict().items() if value}
    for name, digits in numbers.items():
        if name == "sandclock":
            continue
        whole_part, _, fraction = digits.partition(".")
        if len(whole_part) > _MAX_DIGITS:
            raise ConfigError(_CONFIG_KEY, f"{where}: {digits} is too large")
        if len(fraction) > _MAX_DECIMALS:
            raise ConfigError(
                _CONFIG_KEY,
                f"{where}: {digits} has more than {_MAX_DECIMALS} digits after the point",
            )
    sandclock = "sandclock" in numbers
    if sandclock and ("moves" in numbers or "increment" in numbers):
        raise ConfigError(
            _CONFIG_KEY, f"{where}: a sandclock '*seconds' has no move count or increment"
        )
    moves = int(numbers["moves"]) if "moves" in numbers else None
    seconds = float(numbers["seconds"])
    increment = float(numbers.get("increment", "0"))
    if moves == 0:
        raise ConfigError(_CONFIG_KEY, f"{where}: the number of moves must be positive")
    if seconds == 0:
        raise ConfigError(_CONFIG_KEY, f"{where}: the period's time must be positive")
    if max(seconds, increment) > _MAX_SECONDS:
        raise ConfigError(
            _CONFIG_KEY, f"{where}: longer than 999 days, the most an EPD clock value shows"
        )
    return TimeControlPeriod(
        moves=moves, seconds=seconds, increment=increment, sandclock=sandclock
    )


class ChessClock:
    """Both sides' time for one game.

    Pure: every method takes the time ``at`` from the caller's monotonic clock, so
    tests drive time without sleeping. What is stored is the time each side has
    *consumed* and the moves it has made; the clock face (:meth:`remaining`) is
    derived from them and the control, which keeps restore exact and the EPD ``cc``
    values (time consumed) first-hand.

    A move runs from :meth:`start` to :meth:`stop`. :meth:`pause` and :meth:`resume`
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

    def resume(self, at: float) -> None:
        """Charge the running side again from ``at``; without a pause, nothing changes."""
        if not self._paused:
            return
        self._paused = False
        if self._mover is not None:
            self._since = at

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
        total = self._consumed[side_index(side)]
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
        if first.sandclock:
            return first.seconds / 2 - self.consumed(side, at) + self.consumed(not side, at)
        return self._control.allotment(self._moves[side_index(side)]) - self.consumed(side, at)

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

    def cc_seconds(self, at: float | None = None) -> tuple[int, int]:
        """(White, Black) time consumed in whole seconds, rounded down, for EPD ``cc``.

        The EPD clock basetype has no resolution below one second (spec 6.6), and a
        second not yet fully used has not been consumed.
        """
        return (
            math.floor(self.consumed(chess.WHITE, at) + _ROUNDING_SLACK),
            math.floor(self.consumed(chess.BLACK, at) + _ROUNDING_SLACK),
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
