"""The match configuration: one TOML file plus the command line, checked before any port opens.

A referee box runs unattended, so a typo must stop it at start with one line that says
where the mistake is (``ports.a.parity``), what was written (``'X'``) and what would have
been accepted, rather than surface as a strange failure in the middle of a game.

Which settings there are, where each lives in the file and how it is read is the option
table's (:mod:`serialref.appliance.options`); this module applies it. Every setting has
three possible sources, and the first one present wins:

1. the command line (``overrides``, with the flat names of ``serialref run``'s options),
2. the TOML file: a port's own table (``[ports.a]``) before the file's top level,
3. the built-in default.

Only the value that wins is checked, so a command-line option can rescue a file whose
value is wrong. Relative paths are taken relative to the working directory, exactly as on
the command line (under systemd that is the state directory, ``/var/lib/serialref``).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from serialref.appliance.options import (
    MATCH_OPTIONS,
    OVERRIDE_NAMES,
    PORT_KEYS,
    RUN,
    TOP_LEVEL_KEYS,
    MatchOption,
    Where,
)
from serialref.appliance.values import STANDARD_START, StartPositions, shown
from serialref.errors import ConfigError, GroupedConfigError, InputError
from serialref.referee.adjudicator import DrawRule, ResignRule
from serialref.referee.openings import BookOrder, Opening, OpeningOrder
from serialref.referee.settings import OnInfraction
from serialref.rules import Rules
from serialref.sprt import SprtTest
from serialref.timecontrol import TimeControl
from serialref.wire.address import Address
from serialref.wire.transport import PortSettings

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "ErrorsFound",
    "MatchConfig",
    "PortConfig",
    "check_config",
    "in_file",
    "load_config",
    "match_settings_config",
    "missing_for_run",
    "read_toml",
    "require_port_paths",
]

DEFAULT_CONFIG_PATH = Path("/etc/serialref/match.toml")
"""Where the systemd unit looks; ``serialref run`` reads a file only when given ``--config``."""

_PORT_NAMES = ("a", "b")
_NO_OVERRIDES: Mapping[str, object] = MappingProxyType({})
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


class ErrorsFound:
    """The configuration errors found so far, so that a file's errors are told together.

    Each setting is checked whatever came before it; one that depends on a setting found
    wrong is not checked, since its own value cannot be judged without it.
    """

    def __init__(self) -> None:
        self.errors: list[ConfigError] = []

    @contextmanager
    def checking(self) -> Iterator[None]:
        """Note a :class:`ConfigError` raised inside (each of a :class:`GroupedConfigError`)."""
        try:
            yield
        except GroupedConfigError as exc:
            for error in exc.errors:
                self.note(error)
        except ConfigError as exc:
            self.note(exc)

    def note(self, error: ConfigError) -> None:
        """Add ``error``, once: a top-level ``baud`` is read for each port, but wrong once."""
        if str(error) not in map(str, self.errors):
            self.errors.append(error)

    def raise_any(self) -> None:
        """Every error found, as one :class:`GroupedConfigError`; nothing when none was."""
        if self.errors:
            raise GroupedConfigError(self.errors)


def in_file(exc: ConfigError, path: Path) -> ConfigError:
    """``exc`` naming the file ``path`` (each error of a :class:`GroupedConfigError`), unless it
    names a file already or an option of the command line (``--games``)."""
    if isinstance(exc, GroupedConfigError):
        located = [in_file(error, path) for error in exc.errors]
        return exc if located == list(exc.errors) else GroupedConfigError(located)
    if exc.source or exc.key.startswith("--"):
        return exc
    return ConfigError(exc.key, exc.reason, source=str(path))


@dataclass(frozen=True)
class PortConfig:
    """One player's line: where it is, who is on it and how its bytes are framed."""

    path: str | None
    name: str | None
    settings: PortSettings
    newline: bytes


@dataclass(frozen=True)
class MatchConfig:
    """Everything ``serialref run`` needs, read and checked; ``None`` means "not given".

    One field per match-wide row of the option table, holding its parsed value.
    """

    port_a: PortConfig
    port_b: PortConfig
    games: int
    sprt: SprtTest | None
    rating_interval: int
    draw: DrawRule | None
    resign: ResignRule | None
    maxmoves: int
    tb: tuple[Path, ...] | None
    tb_pieces: int | None
    tc: TimeControl
    variant: Rules
    fen: StartPositions | None
    openings: StartPositions | None
    openings_order: OpeningOrder
    openings_start: int
    openings_plies: int | None
    openings_seed: int
    pgn: Path | None
    journal: Path | None
    event: str
    site: str
    reset_delay: float
    conclude_delay: float
    on_infraction: OnInfraction
    rejoin_window: float
    """Seconds an absent player may stay away before forfeiting (``abandoned``).

    ``0`` is "no window": a ``sign_off`` in a game forfeits at once (PROTOCOL.md 4), while
    a lost line is waited for with the clock running, so only the flag can decide.
    """
    replicate: Address | None
    replicate_key: Path | None
    """The file holding the key shared with the standby (``serialref keygen``)."""
    control_socket: Path | None
    control_group: str | None
    style12: Address | None
    web: Address | None
    log_level: str

    @property
    def start_positions(self) -> StartPositions:
        """Where the games start: the FEN, the openings book as its order deals it out, or
        the variant's usual start."""
        book = self.openings and self.openings.arranged(
            BookOrder(self.openings_order, self.openings_start, self.openings_plies,
                      self.openings_seed)
        )  # fmt: skip
        if self.variant.standard:
            return self.fen or book or STANDARD_START
        usual = StartPositions(
            (Opening(self.variant.starting_fen, rules=self.variant),),
            f"the {self.variant.name} starting position",
        )
        return self.fen or book or usual


@dataclass(frozen=True)
class _Setting:
    """A raw value and where it came from, so an error can point at the right place."""

    key: str
    value: object


def load_config(path: Path | None, overrides: Mapping[str, object] = _NO_OVERRIDES) -> MatchConfig:
    """Read ``path`` (if any), apply ``overrides`` on top and check every value that wins.

    ``overrides`` uses the flat option names of ``serialref run`` (``name_a``,
    ``reset_delay``, ...); a ``None`` value means the option was not given. ``baud`` and
    ``newline`` given on the command line apply to both ports, above the ports' own
    tables. Errors are :class:`ConfigError` naming the key path (``--games`` for a
    command-line value), the value and what is allowed, and the file for a value from it.
    A file that cannot be read at all is an :class:`InputError`.
    """
    unknown_override = sorted(set(overrides) - OVERRIDE_NAMES)
    if unknown_override:
        raise ConfigError(unknown_override[0], "not an option of serialref run")
    document = read_toml(path) if path is not None else {}
    given = {name: value for name, value in overrides.items() if value is not None}
    try:
        return _match_config(document, given)
    except ConfigError as exc:
        # The user must find the line: name the file the wrong value is in.
        located = exc if path is None else in_file(exc, path)
        if located is exc:
            raise
        raise located from exc


def match_settings_config(settings: Mapping[str, object]) -> MatchConfig:
    """Check match settings written at the top of a file other than a match's (an event's).

    They are read as a match file's top level, so an error names the key as the file
    spells it (``tc``), every error of them is found, and the ports are left out.
    """
    return _match_config(dict(settings), {})


def check_config(path: Path) -> MatchConfig:
    """Check a file exactly as ``serialref run --config FILE`` reads it, opening no port.

    A file that leaves settings to the command line is accepted, as ``run`` accepts it
    when the command line gives them: :func:`missing_for_run` says what they are.
    """
    config = load_config(path)
    if not missing_for_run(config):
        try:
            require_port_paths(config)
        except ConfigError as exc:
            raise ConfigError(exc.key, exc.reason, source=str(path)) from exc
    return config


def missing_for_run(config: MatchConfig) -> tuple[str, ...]:
    """What ``serialref run`` would still need from its command line to start this match.

    Both ports (``PORT_A``, ``PORT_B``), and for replication the journal it streams
    and the key it proves itself with.
    """
    missing = [
        f"PORT_{name.upper()}"
        for name, port in (("a", config.port_a), ("b", config.port_b))
        if port.path is None
    ]
    if config.replicate is not None:
        missing += [flag for flag, value in (("--journal", config.journal),
                                             ("--replicate-key", config.replicate_key))
                    if value is None]  # fmt: skip
    return tuple(missing)


def require_port_paths(config: MatchConfig) -> tuple[str, str]:
    """Both port paths, or the error a user sees when one was given nowhere or twice."""
    paths = []
    for name, port in (("a", config.port_a), ("b", config.port_b)):
        if port.path is None:
            raise ConfigError(
                f"ports.{name}.path",
                f"missing; give player {name.upper()}'s device path or pyserial URL "
                f"in the file or as PORT_{name.upper()} on the command line",
            )
        paths.append(port.path)
    path_a, path_b = paths
    if _same_port(path_a, path_b):
        same = (
            f"player A and player B are both given {path_a!r}"
            if path_a == path_b
            else f"{path_a!r} and {path_b!r} are the same port ({_resolved(path_a)!r})"
        )
        raise ConfigError("", f"{same}; each player needs a port of its own")
    return path_a, path_b


def _same_port(path_a: str, path_b: str) -> bool:
    """Whether two port names reach the same line: a device by any path, or one URL.

    Each ``loop://`` is a line of its own, so two of them are different ports.
    """
    if "://" in path_a or "://" in path_b:
        return path_a == path_b and not path_a.startswith("loop://")
    return _resolved(path_a) == _resolved(path_b)


def _resolved(path: str) -> str:
    """The device behind a path (udev symlinks such as ``/dev/serial/by-path/...`` resolved)."""
    return os.path.realpath(path)


def _match_config(document: dict[str, object], given: Mapping[str, object]) -> MatchConfig:
    found = ErrorsFound()
    with found.checking():
        _reject_unknown_keys(document, TOP_LEVEL_KEYS, "")
    ports_table = _ports_table(document, found)
    values: dict[str, Any] = {}
    for option in MATCH_OPTIONS:
        if option.where is not Where.TOP:
            continue
        if option.key in given:
            setting = _Setting(_flag(option), given[option.key])
        else:
            setting = _Setting(option.key, document.get(option.key, option.default))
        if option.kind.needs and option.kind.needs not in values:
            continue  # what it needs is wrong, and reported
        with found.checking():
            if option.excludes and values.get(option.excludes) is not None and setting.value:
                raise ConfigError(
                    setting.key,
                    f"cannot be combined with {option.excludes}; give one or the other",
                )
            needed = (values[option.kind.needs],) if option.kind.needs else ()
            values[option.key] = option.kind.read(setting.key, setting.value, *needed)
    ports: dict[str, PortConfig] = {}
    for name in _PORT_NAMES:
        with found.checking():
            ports[name] = _port_config(name, ports_table.get(name, {}), document, given)
    found.raise_any()
    return MatchConfig(port_a=ports["a"], port_b=ports["b"], **values)


def _flag(option: MatchOption[Any], port: int = 0) -> str:
    """How the user wrote an override: the option of ``serialref run``."""
    return option.flags[RUN][port]


def read_toml(path: Path) -> dict[str, object]:
    """The TOML document in ``path``: an :class:`InputError` when it cannot be read, a
    :class:`ConfigError` with the line and column when it is no TOML."""
    # Imported here: half a megabyte resident in every referee, most of which read no file.
    import tomllib

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(
            f"cannot read configuration file {str(path)!r}: {exc.strerror or exc}"
        ) from exc
    try:
        return tomllib.loads(data.decode("utf-8"))
    except RecursionError:
        # tomllib reads nested arrays and tables by recursion; a few hundred levels
        # exhaust Python's stack long before any setting of ours (two levels) matters.
        raise ConfigError(
            "", "arrays or tables nested too deeply to read (no setting nests more than two)",
            source=str(path),
        ) from None
    except UnicodeDecodeError as exc:
        bad_line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError("", f"line {bad_line}: not UTF-8 text", source=str(path)) from exc
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        position = _TOML_POSITION.search(message)
        if position is None:
            raise ConfigError("", f"invalid TOML: {message}", source=str(path)) from exc
        line, column = position.groups()
        raise ConfigError(
            "",
            f"line {line}, column {column}: invalid TOML: {message[: position.start()]}",
            source=str(path),
        ) from exc


def _reject_unknown_keys(
    table: Mapping[str, object], allowed: tuple[str, ...], prefix: str
) -> None:
    found = ErrorsFound()
    for key in table:
        if key in allowed:
            continue
        close = difflib.get_close_matches(key, allowed, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"expected one of {', '.join(allowed)}"
        found.note(ConfigError(f"{prefix}{key}", f"unknown key; {hint}"))
    found.raise_any()


def _ports_table(
    document: Mapping[str, object], found: ErrorsFound
) -> dict[str, dict[str, object]]:
    """The ports' own tables that can be read; the errors of the others go to ``found``."""
    ports = document.get("ports", {})
    tables: dict[str, dict[str, object]] = {}
    with found.checking():
        if not isinstance(ports, dict):
            raise ConfigError(
                "ports", f"expected a table ([ports.a], [ports.b]), got {shown(ports)}"
            )
        for name, table in ports.items():
            with found.checking():
                if name not in _PORT_NAMES:
                    raise ConfigError(f"ports.{name}", "unknown port; expected 'a' or 'b'")
                if not isinstance(table, dict):
                    raise ConfigError(
                        f"ports.{name}", f"expected a table [ports.{name}], got {shown(table)}"
                    )
                _reject_unknown_keys(table, PORT_KEYS, f"ports.{name}.")
                tables[name] = table
    return tables


def _port_config(
    name: str,
    table: Mapping[str, object],
    document: Mapping[str, object],
    given: Mapping[str, object],
) -> PortConfig:
    index = _PORT_NAMES.index(name)
    values: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    sources: dict[str, str] = {}
    found = ErrorsFound()
    for option in MATCH_OPTIONS:
        if option.where is Where.TOP:
            continue
        setting = _port_setting(option, index, table, document, given)
        with found.checking():
            values[option.key] = option.kind.read(setting.key, setting.value)
            if option.port_setting:
                fields[option.port_setting] = values[option.key]
                sources[option.port_setting] = setting.key
                # PortSettings owns the allowed values, each checked on its own so that
                # every wrong one is found; only we know where the value came from.
                _port_settings({option.port_setting: values[option.key]}, sources)
    found.raise_any()
    settings = _port_settings(fields, sources)
    return PortConfig(
        path=values["path"], name=values["name"], settings=settings, newline=values["newline"]
    )


def _port_settings(fields: Mapping[str, Any], sources: Mapping[str, str]) -> PortSettings:
    """``PortSettings`` of ``fields``; an error names the key the wrong value came from."""
    try:
        return PortSettings(**fields)
    except ConfigError as exc:
        raise ConfigError(sources[exc.key], exc.reason) from exc


def _port_setting(
    option: MatchOption[Any],
    index: int,
    table: Mapping[str, object],
    document: Mapping[str, object],
    given: Mapping[str, object],
) -> _Setting:
    """A port's value: the command line, its own table, the top level (for both), the default."""
    key = option.key
    if option.where is Where.BOTH and key in given:
        return _Setting(_flag(option), given[key])
    if option.where is Where.PORT and option.names and option.names[index] in given:
        return _Setting(_flag(option, index), given[option.names[index]])
    if key in table:
        return _Setting(f"ports.{_PORT_NAMES[index]}.{key}", table[key])
    if option.where is Where.BOTH and key in document:
        return _Setting(key, document[key])
    return _Setting(key, option.default)
