"""Time controls: the PGN ``TimeControl`` syntax, parsed and walked period by period.

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
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from serialref.errors import ConfigError

__all__ = ["MAX_SECONDS", "TimeControl", "TimeControlPeriod"]

_CONFIG_KEY = "tc"

MAX_SECONDS = 999 * 24 * 3600
"""The EPD clock basetype (DDD:HH:MM:SS) cannot show 1000 days, so no period may be longer."""
_MAX_DIGITS = 9

_NUMBER = r"[0-9]+(?:\.[0-9]+)?"
_DESCRIPTOR = re.compile(
    r"(?P<sandclock>\*)?"
    r"(?:(?P<moves>[0-9]+)/)?"
    rf"(?P<seconds>{_NUMBER})"
    rf"(?:\+(?P<increment>{_NUMBER}))?"
)
_MAX_DECIMALS = 6
_CLOCK_READING = re.compile(
    r"(?:(?P<moves>[0-9]+)/)?"
    r"(?P<clock>[0-9]+(?::[0-5][0-9]){1,2})"
    rf"(?:\+(?P<increment>{_NUMBER}))?"
)
"""A time as a clock shows it (``1:00``, ``1:30:00``), as in cutechess-cli's ``tc=1:00+1``."""


def _format_number(value: float) -> str:
    """Seconds as PGN writes them: an integer when whole, else the shortest plain decimal.

    ``repr`` gives the shortest digits that read back as the same float, but in
    scientific notation for small values (``1e-06``), which the grammar does not have.
    """
    if float(value).is_integer():
        return str(int(value))
    from decimal import Decimal  # here: a third of a megabyte that whole seconds never need

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
        if not (math.isfinite(self.seconds) and 0 < self.seconds <= MAX_SECONDS):
            raise ConfigError(
                _CONFIG_KEY,
                f"{self}: the period's time must be more than 0 s and at most 999 days",
            )
        if not (math.isfinite(self.increment) and 0 <= self.increment <= MAX_SECONDS):
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
        try:
            return cls(periods=_parse_periods(value), text=value, unknown=False, untimed=False)
        except ConfigError as exc:
            raise _clock_reading_error(value) or exc from exc

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
        periods = self.periods
        if len(periods) == 1 and periods[0].moves is None:
            # One period for the whole game (``300+2``), the usual control: the clock
            # asks on every move, so the general sum is skipped.
            return periods[0].seconds + moves_made * periods[0].increment
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


def _clock_reading_error(value: str) -> ConfigError | None:
    """The error for a control written as a clock reads (``1:00+1``, cutechess-cli's
    ``minutes:seconds``), with what it likely means in seconds; None for anything else.

    PGN joins periods with ``:`` and counts in seconds, so ``1:00+1`` reads as a period
    of 1 s followed by one of 0 s: an error that says only the latter puzzles everyone
    who wrote the former.
    """
    match = _CLOCK_READING.fullmatch(value)
    if match is None:
        return None
    seconds = 0
    for part in match["clock"].split(":"):
        seconds = seconds * 60 + int(part)
    moves = f"{match['moves']}/" if match["moves"] else ""
    increment = f"+{match['increment']}" if match["increment"] else ""
    guess = f"; did you mean {f'{moves}{seconds}{increment}'!r}?" if seconds else ""
    return ConfigError(
        _CONFIG_KEY,
        f"{value!r}: ':' joins periods ('40/7200:3600': 40 moves in 7200 s, then 3600 s "
        f"for the rest) and times are in seconds{guess}",
    )


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
    if max(seconds, increment) > MAX_SECONDS:
        raise ConfigError(
            _CONFIG_KEY, f"{where}: longer than 999 days, the most an EPD clock value shows"
        )
    return TimeControlPeriod(
        moves=moves, seconds=seconds, increment=increment, sandclock=sandclock
    )
