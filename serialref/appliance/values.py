"""How one setting's raw value becomes the value the referee uses, or a one-line error.

A raw value is what TOML made of the file (a string, a number, a boolean) or what
argparse made of an option (a string, a number, a path). A :class:`Kind` checks one raw
value and returns it parsed: a :class:`~serialref.clock.TimeControl`, an enum, a path,
the openings as loaded. When it cannot, it raises a :class:`ConfigError` naming the key
the user wrote, the value as TOML spells it (``true``, not Python's ``True``) and what is
allowed. The option table (:mod:`serialref.appliance.options`) gives every setting its
kind, so a setting is parsed once, here, and nowhere else.
"""

from __future__ import annotations

import enum
import math
import re
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from serialref.errors import ConfigError
from serialref.referee.openings import (
    BookOrder,
    Opening,
    chess960_openings,
    load_openings,
    opening_from_fen,
)
from serialref.referee.tablebase import table_directories
from serialref.rules import STANDARD, Rules, find_rules, variant_names
from serialref.sprt import SprtTest, parse_sprt
from serialref.timecontrol import TimeControl
from serialref.wire.address import Address, parse_address

__all__ = [
    "STANDARD_START",
    "Kind",
    "StartPositions",
    "address",
    "adjudication_rule",
    "boolean",
    "choice",
    "choice_of",
    "host_name_or_text",
    "listen_address",
    "number",
    "opening_book",
    "optional_path",
    "optional_text",
    "optional_whole_number",
    "record_file",
    "seconds",
    "shown",
    "sprt_test",
    "start_position",
    "table_paths",
    "text",
    "time_control",
    "whole_number",
]

_SHOWN = 60
"""Characters of a wrong value an error quotes: a whole array could fill the screen."""

_T = TypeVar("_T")
_E = TypeVar("_E", bound=enum.Enum)


@dataclass(frozen=True, slots=True)
class Kind(Generic[_T]):
    """One type of setting: how it is read, and how the docs and ``--help`` describe it.

    ``read`` takes the key as the user wrote it (``ports.b.baud``, ``--baud``), so its
    error points at the right place. ``argument`` turns the command line's text into
    the raw value TOML would have given (``--games 3`` is the integer 3), so both
    sources go through the same ``read``; ``choices`` and ``metavar`` are for ``--help``.
    ``needs`` names an earlier option whose value ``read`` takes as a third argument
    (a start position is read by the rules of the ``variant``). ``nargs`` is argparse's,
    for a value the command line writes as several words (``--sprt elo0=0 elo1=5``) and
    the file as one string; ``read`` then takes the list of words too.
    """

    describe: str
    read: Callable[..., _T]
    argument: Callable[[str], object] = str
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    needs: str = ""
    nargs: str | None = None


@dataclass(frozen=True, slots=True)
class StartPositions:
    """Where the games of a match start, as read: the openings, and how the user named them.

    ``source`` (the FEN as given, the book's path) is part of what makes a match the
    one its journal holds, so it is kept exactly as written.
    """

    openings: tuple[Opening, ...]
    source: str

    def arranged(self, order: BookOrder) -> StartPositions:
        """The openings as ``order`` deals them out; the source says how, unless as written."""
        if order == BookOrder():
            return self
        return StartPositions(order.arrange(self.openings), self.source + order.describe())


STANDARD_START = StartPositions((Opening(),), "the standard starting position")


def shown(value: object) -> str:
    """A value as the TOML file spells it: ``true``, not Python's ``True``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    written = repr(value)
    return written if len(written) <= _SHOWN else f"{written[: _SHOWN - 3]}..."


def _string(key: str, value: object) -> str:
    if isinstance(value, Path):
        return str(value)
    if not isinstance(value, str):
        raise ConfigError(key, f"expected a string, got {shown(value)}")
    return value


def text(*, describe: str = "string") -> Kind[str]:
    """Any string; ``describe`` states the values its user accepts."""
    return Kind(describe, _string)


def optional_text(*, metavar: str | None = None) -> Kind[str | None]:
    """A string; empty means "not given"."""
    return Kind("string", lambda key, value: _string(key, value) or None, metavar=metavar)


def host_name_or_text() -> Kind[str]:
    """A string; empty means this machine's host name."""
    return Kind("string", lambda key, value: _string(key, value) or socket.gethostname())


def whole_number(*, minimum: int = 0, maximum: int | None = None, describe: str = ""
                 ) -> Kind[int]:  # fmt: skip
    """An integer from ``minimum`` to ``maximum``; ``describe`` states a bound checked elsewhere."""

    def read(key: str, value: object) -> int:
        if (isinstance(value, bool) or not isinstance(value, int) or value < minimum
                or (maximum is not None and value > maximum)):  # fmt: skip
            if maximum is not None:
                allowed = f"a whole number from {minimum} to {maximum}"
            else:
                allowed = f"a whole number >= {minimum}" if minimum else "a whole number"
            raise ConfigError(key, f"expected {allowed}, got {shown(value)}")
        return value

    if maximum is not None:
        described = describe or f"integer {minimum} to {maximum}"
    else:
        described = describe or (f"integer >= {minimum}" if minimum else "integer")
    return Kind(described, read, int, metavar="N")


def optional_whole_number(*, minimum: int = 0) -> Kind[int | None]:
    """An integer >= ``minimum``; empty means "not given"."""

    def read(key: str, value: object) -> int | None:
        return None if value == "" else whole_number(minimum=minimum).read(key, value)

    return Kind(f"integer >= {minimum}", read, int, metavar="N")


def _finite(key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(key, f"expected a number, got {shown(value)}")
    if not math.isfinite(value):
        raise ConfigError(key, f"expected a finite number, got {shown(value)}")
    return value


def number(*, describe: str) -> Kind[float]:
    """A finite number; ``describe`` states the bounds its user checks."""
    return Kind(describe, _finite, float)


def seconds() -> Kind[float]:
    """A duration in seconds, 0 or more."""

    def read(key: str, value: object) -> float:
        amount = _finite(key, value)
        if amount < 0:
            raise ConfigError(key, f"expected seconds >= 0, got {shown(value)}")
        return float(amount)

    return Kind("seconds >= 0", read, float, metavar="SECONDS")


def boolean() -> Kind[bool]:
    """``true`` or ``false``."""

    def read(key: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise ConfigError(key, f"expected true or false, got {shown(value)}")
        return value

    return Kind("boolean", read)


def choice(values: Mapping[str, _T]) -> Kind[_T]:
    """One of a few words, each standing for a value."""
    words = tuple(values)

    def read(key: str, value: object) -> _T:
        word = _string(key, value)
        if word not in values:
            allowed = ", ".join(repr(each) for each in words)
            raise ConfigError(key, f"expected one of {allowed}, got {word!r}")
        return values[word]

    quoted = [f'`"{word}"`' for word in words]
    describe = " or ".join(quoted) if len(quoted) == 2 else ", ".join(quoted)
    return Kind(describe, read, choices=words)


def choice_of(kind: type[_E]) -> Kind[_E]:
    """One of a string enum's values."""
    return choice({str(member.value): member for member in kind})


def optional_path() -> Kind[Path | None]:
    """A file's path (``~`` expanded); empty means "none"."""

    def read(key: str, value: object) -> Path | None:
        written = _string(key, value)
        return Path(written).expanduser() if written else None

    return Kind("path", read, Path, metavar="FILE")


def record_file() -> Kind[Path | None]:
    """A file the referee appends its records to (the PGN, the journal); empty means "none".

    What the recorders would refuse as they open it is refused here, before a port opens
    and in ``config check`` alike: a directory, and a file in a directory that does not
    exist. A relative path's directory depends on where the referee runs (under systemd,
    its state directory), so only an absolute path's is looked for.
    """

    def read(key: str, value: object) -> Path | None:
        written = _string(key, value)
        if not written:
            return None
        path = Path(written).expanduser()
        if path.is_dir():
            raise ConfigError(key, f"{written!r} is a directory; name a file in it")
        if path.is_absolute() and not path.parent.is_dir():
            raise ConfigError(
                key, f"the directory {str(path.parent)!r} does not exist; create it first"
            )
        return path

    return Kind("path", read, Path, metavar="FILE")


def time_control() -> Kind[TimeControl]:
    """A PGN ``TimeControl`` value."""

    def read(key: str, value: object) -> TimeControl:
        try:
            return TimeControl.parse(_string(key, value))
        except ConfigError as exc:
            raise ConfigError(key, exc.reason) from exc

    return Kind("string", read, metavar="TIMECONTROL")


def address() -> Kind[Address | None]:
    """``HOST:PORT`` to connect to; empty means "none"."""

    def read(key: str, value: object) -> Address | None:
        written = _string(key, value)
        return parse_address(written, key=key) if written else None

    return Kind('`"HOST:PORT"`', read, metavar="HOST:PORT")


def variant() -> Kind[Rules]:
    """The rules games are played by: standard chess or a variant, by any usual name."""

    def read(key: str, value: object) -> Rules:
        return find_rules(_string(key, value), key)

    return Kind(f"one of {', '.join(variant_names())}", read, metavar="VARIANT")


def listen_address() -> Kind[Address | None]:
    """``HOST:PORT`` to listen on; a bare ``PORT`` is this machine only; empty means "none"."""

    def read(key: str, value: object) -> Address | None:
        written = _string(key, value)
        if not written:
            return None
        return parse_address(written, key=key, default_host="127.0.0.1", any_port=True)

    return Kind('`"HOST:PORT"`', read, metavar="HOST:PORT")


def start_position() -> Kind[StartPositions | None]:
    """A FEN every game starts from, checked to be playable; empty means "none"."""

    def read(key: str, value: object, rules: Rules = STANDARD) -> StartPositions | None:
        fen = _string(key, value)
        return StartPositions((opening_from_fen(fen, key, rules),), fen) if fen else None

    return Kind("string", read, metavar="FEN", needs="variant")


def opening_book() -> Kind[StartPositions | None]:
    """An EPD or PGN file of openings, or Chess960 start positions by number; empty: none."""

    def read(key: str, value: object, rules: Rules = STANDARD) -> StartPositions | None:
        if rules.chess960 and isinstance(value, str) and re.fullmatch(r"[\d, -]+", value):
            return StartPositions(chess960_openings(value, key), f"chess960 {value}")
        path = optional_path().read(key, value)
        if path is None:
            return None
        if not path.is_file():
            raise ConfigError(key, f"{str(path)!r} is not a file; expected an EPD or PGN file")
        try:
            return StartPositions(load_openings(path, rules), str(path))
        except ConfigError as exc:
            raise ConfigError(key, exc.reason) from exc

    return Kind("path", read, Path, metavar="FILE", needs="variant")


def _words(key: str, value: object) -> list[str]:
    """The ``KEY=VALUE`` words of a cutechess-cli option: the command line's, or the file's
    string split at blanks."""
    if isinstance(value, list):
        return [_string(key, word) for word in value]
    return _string(key, value).split()


def sprt_test() -> Kind[SprtTest | None]:
    """An SPRT in cutechess-cli's words (``elo0=0 elo1=5 alpha=0.05 beta=0.05``); empty: none."""

    def read(key: str, value: object) -> SprtTest | None:
        words = _words(key, value)
        if not words:
            return None
        try:
            return parse_sprt(words)
        except ConfigError as exc:
            raise ConfigError(key, exc.reason) from exc

    return Kind('`"elo0=E0 elo1=E1 alpha=A beta=B [model=M]"`', read, metavar="KEY=VALUE",
                nargs="+")  # fmt: skip


def adjudication_rule(parse: Callable[[str, Sequence[str]], _T], describe: str
                      ) -> Kind[_T | None]:  # fmt: skip
    """A rule of cutechess-cli's ``-draw`` or ``-resign``, in its words (``movecount=3
    score=1000``), read by ``parse``; empty: none."""

    def read(key: str, value: object) -> _T | None:
        words = _words(key, value)
        return parse(key, words) if words else None

    return Kind(describe, read, metavar="KEY=VALUE", nargs="+")


def table_paths() -> Kind[tuple[Path, ...] | None]:
    """Directories of Syzygy tables, joined by ``:`` as cutechess-cli's ``-tb`` takes them;
    empty: none."""

    def read(key: str, value: object) -> tuple[Path, ...] | None:
        written = _string(key, value)
        return table_directories(key, written) if written else None

    return Kind("directories joined by `:`", read, metavar="PATHS")
