"""The match configuration: one TOML file plus the command line, checked before any port opens.

A referee box runs unattended, so a typo must stop it at start with one line that says
where the mistake is (``ports.a.parity``), what was written (``'X'``) and what would have
been accepted, rather than surface as a strange failure in the middle of a game.

Every setting has three possible sources, and the first one present wins:

1. the command line (``overrides``, with the flat names of ``serialref run``'s options),
2. the TOML file: a port's own table (``[ports.a]``) before the file's top level,
3. the built-in default.

Only the value that wins is checked, so a command-line option can rescue a file whose
value is wrong. Relative paths are taken relative to the working directory, exactly as on
the command line (under systemd that is the state directory, ``/var/lib/serialref``).
"""

from __future__ import annotations

import difflib
import math
import os
import re
import socket
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar

from serialref.errors import ConfigError, InputError
from serialref.referee.openings import opening_from_fen
from serialref.referee.settings import OnInfraction
from serialref.timecontrol import TimeControl
from serialref.wire.transport import LineDelay, PortSettings

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "OVERRIDE_NAMES",
    "MatchConfig",
    "PortConfig",
    "check_config",
    "load_config",
    "missing_port_paths",
    "require_port_paths",
]

DEFAULT_CONFIG_PATH = Path("/etc/serialref/match.toml")
"""Where the systemd unit looks; ``serialref run`` reads a file only when given ``--config``."""

NEWLINES: Mapping[str, bytes] = MappingProxyType({"crlf": b"\r\n", "lf": b"\n"})
LOG_LEVELS = ("debug", "info", "warning", "error")

_TOP_LEVEL_KEYS = (
    "games", "tc", "fen", "openings", "pgn", "journal", "event", "site", "reset_delay",
    "conclude_delay", "on_infraction", "rejoin_window", "replicate", "replicate_key", "log_level",
    "baud", "newline", "ports",
)
_PORT_KEYS = (
    "path", "name", "baud", "bytesize", "parity", "stopbits", "rtscts", "xonxoff", "newline",
    "line_delay", "write_timeout",
)
_PORT_NAMES = ("a", "b")

OVERRIDE_NAMES = frozenset({
    "port_a", "port_b", "games", "tc", "fen", "openings", "pgn", "journal", "event", "site",
    "name_a", "name_b", "reset_delay", "conclude_delay", "baud", "newline", "on_infraction",
    "rejoin_window", "replicate", "replicate_key", "log_level",
})
"""Keys ``load_config`` accepts in ``overrides``: the ``serialref run`` options, ``-`` as ``_``."""

_NO_OVERRIDES: Mapping[str, object] = MappingProxyType({})

_DEFAULTS: Mapping[str, object] = MappingProxyType({
    "games": 1,
    "tc": "300+3",
    "fen": "",
    "openings": "",
    "pgn": "",
    "journal": "",
    "event": "serialref match",
    "site": "",
    "reset_delay": 5.0,
    "conclude_delay": 5.0,
    "on_infraction": "forfeit",
    "rejoin_window": 0.0,
    "replicate": "",
    "replicate_key": "",
    "log_level": "info",
    "baud": 9600,
    "newline": "crlf",
})

_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")

_T = TypeVar("_T")


@dataclass(frozen=True)
class PortConfig:
    """One player's line: where it is, who is on it and how its bytes are framed."""

    path: str | None
    name: str | None
    settings: PortSettings
    newline: bytes


@dataclass(frozen=True)
class MatchConfig:
    """Everything ``serialref run`` needs, checked; ``None`` means "not given"."""

    port_a: PortConfig
    port_b: PortConfig
    games: int
    tc: str
    fen: str | None
    openings: Path | None
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
    replicate: str | None
    replicate_key: Path | None
    """The file holding the key shared with the standby (``serialref keygen``)."""
    log_level: str


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
    document = _read_toml(path) if path is not None else {}
    given = {name: value for name, value in overrides.items() if value is not None}
    try:
        return _match_config(document, given)
    except ConfigError as exc:
        if path is None or exc.source or exc.key.startswith("--"):
            raise
        # The user must find the line: name the file the wrong value is in.
        raise ConfigError(exc.key, exc.reason, source=str(path)) from exc


def check_config(path: Path) -> MatchConfig:
    """Check a file exactly as ``serialref run --config FILE`` reads it, opening no port.

    A file without port paths is accepted, as ``run`` accepts it when the command line
    gives them: :func:`missing_port_paths` says what would still have to be given.
    """
    config = load_config(path)
    if not missing_port_paths(config):
        try:
            require_port_paths(config)
        except ConfigError as exc:
            raise ConfigError(exc.key, exc.reason, source=str(path)) from exc
    return config


def missing_port_paths(config: MatchConfig) -> tuple[str, ...]:
    """``PORT_A`` and/or ``PORT_B``: the ports neither the file nor the command line gave."""
    return tuple(
        f"PORT_{name.upper()}"
        for name, port in (("a", config.port_a), ("b", config.port_b))
        if port.path is None
    )


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
    _reject_unknown_keys(document, _TOP_LEVEL_KEYS, "")
    ports_table = _ports_table(document)

    def setting(name: str) -> _Setting:
        if name in given:
            return _Setting(_option(name), given[name])
        if name in document:
            return _Setting(name, document[name])
        return _Setting(name, _DEFAULTS[name])

    fen = _optional(_text(setting("fen")))
    openings = _optional_path(setting("openings"))
    if fen is not None:
        opening_from_fen(fen, setting("fen").key)
        if openings is not None:
            raise ConfigError(
                setting("openings").key, "cannot be combined with fen; give one or the other"
            )
    if openings is not None and not openings.is_file():
        raise ConfigError(
            setting("openings").key, f"{str(openings)!r} is not a file; expected an EPD or PGN file"
        )
    return MatchConfig(
        port_a=_port_config("a", ports_table.get("a", {}), document, given),
        port_b=_port_config("b", ports_table.get("b", {}), document, given),
        games=_whole_number(setting("games"), minimum=1),
        tc=_time_control(setting("tc")),
        fen=fen,
        openings=openings,
        pgn=_optional_path(setting("pgn")),
        journal=_optional_path(setting("journal")),
        event=_text(setting("event")),
        site=_optional(_text(setting("site"))) or socket.gethostname(),
        reset_delay=_seconds(setting("reset_delay")),
        conclude_delay=_seconds(setting("conclude_delay")),
        on_infraction=OnInfraction(
            _choice(setting("on_infraction"), tuple(choice.value for choice in OnInfraction))
        ),
        rejoin_window=_seconds(setting("rejoin_window")),
        replicate=_replica_address(setting("replicate")),
        replicate_key=_optional_path(setting("replicate_key")),
        log_level=_choice(setting("log_level"), LOG_LEVELS),
    )


def _read_toml(path: Path) -> dict[str, object]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(
            f"cannot read configuration file {str(path)!r}: {exc.strerror or exc}"
        ) from exc
    try:
        return tomllib.loads(data.decode("utf-8"))
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
    for key in table:
        if key in allowed:
            continue
        close = difflib.get_close_matches(key, allowed, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"expected one of {', '.join(allowed)}"
        raise ConfigError(f"{prefix}{key}", f"unknown key; {hint}")


def _ports_table(document: Mapping[str, object]) -> dict[str, dict[str, object]]:
    ports = document.get("ports", {})
    if not isinstance(ports, dict):
        raise ConfigError("ports", f"expected a table ([ports.a], [ports.b]), got {_shown(ports)}")
    tables: dict[str, dict[str, object]] = {}
    for name, table in ports.items():
        if name not in _PORT_NAMES:
            raise ConfigError(f"ports.{name}", "unknown port; expected 'a' or 'b'")
        if not isinstance(table, dict):
            raise ConfigError(
                f"ports.{name}", f"expected a table [ports.{name}], got {_shown(table)}"
            )
        _reject_unknown_keys(table, _PORT_KEYS, f"ports.{name}.")
        tables[name] = table
    return tables


def _port_config(
    name: str,
    table: Mapping[str, object],
    document: Mapping[str, object],
    given: Mapping[str, object],
) -> PortConfig:
    def own(key: str, option: str | None = None) -> _Setting | None:
        if option is not None and option in given:
            return _Setting(_option(option), given[option])
        if key in table:
            return _Setting(f"ports.{name}.{key}", table[key])
        return None

    def shared(key: str) -> _Setting:
        """Set for both ports at the top level or on the command line, overridable per port."""
        return own(key, key) or _Setting(key, document.get(key, _DEFAULTS[key]))

    defaults = PortSettings()
    sources = {
        "baudrate": shared("baud"),
        "bytesize": own("bytesize"),
        "parity": own("parity"),
        "stopbits": own("stopbits"),
        "line_delay": own("line_delay"),
        "write_timeout": own("write_timeout"),
    }
    baudrate = _whole_number(sources["baudrate"], default=defaults.baudrate)
    bytesize = _whole_number(sources["bytesize"], default=defaults.bytesize)
    parity = _text(sources["parity"], default=defaults.parity)
    stopbits = _number(sources["stopbits"], default=defaults.stopbits)
    delay = sources["line_delay"]
    line_delay = (
        defaults.line_delay
        if delay is None
        else LineDelay(_choice(delay, tuple(choice.value for choice in LineDelay)))
    )
    write_timeout = _number(sources["write_timeout"], default=defaults.write_timeout)
    rtscts = _boolean(own("rtscts"), default=defaults.rtscts)
    xonxoff = _boolean(own("xonxoff"), default=defaults.xonxoff)
    try:
        settings = PortSettings(
            baudrate=baudrate, bytesize=bytesize, parity=parity, stopbits=stopbits,
            rtscts=rtscts, xonxoff=xonxoff, line_delay=line_delay, write_timeout=write_timeout,
        )
    except ConfigError as exc:
        # PortSettings owns the allowed values; only we know where the value came from.
        source = sources.get(exc.key)
        raise ConfigError(source.key if source else f"ports.{name}", exc.reason) from exc
    return PortConfig(
        path=_optional(_text(own("path", f"port_{name}"))),
        name=_optional(_text(own("name", f"name_{name}"))),
        settings=settings,
        newline=NEWLINES[_choice(shared("newline"), NEWLINES)],
    )


def _shown(value: object) -> str:
    """A value as the TOML file spells it: ``true``, not Python's ``True``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    return repr(value)


def _option(name: str) -> str:
    """How the user wrote an override: the command-line option."""
    return "--" + name.replace("_", "-")


def _checked(setting: _Setting | None, default: _T, read: Callable[[_Setting], _T]) -> _T:
    return default if setting is None else read(setting)


def _whole_number(setting: _Setting | None, *, minimum: int = 0, default: int = 0) -> int:
    def read(found: _Setting) -> int:
        value = found.value
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            allowed = f"a whole number >= {minimum}" if minimum else "a whole number"
            raise ConfigError(found.key, f"expected {allowed}, got {_shown(value)}")
        return value

    return _checked(setting, default, read)


def _number(setting: _Setting | None, *, default: float) -> float:
    def read(found: _Setting) -> float:
        if isinstance(found.value, bool) or not isinstance(found.value, int | float):
            raise ConfigError(found.key, f"expected a number, got {_shown(found.value)}")
        if not math.isfinite(found.value):
            raise ConfigError(found.key, f"expected a finite number, got {_shown(found.value)}")
        return found.value

    return _checked(setting, default, read)


def _seconds(setting: _Setting) -> float:
    seconds = _number(setting, default=0.0)
    if seconds < 0:
        raise ConfigError(setting.key, f"expected seconds >= 0, got {_shown(setting.value)}")
    return float(seconds)


def _boolean(setting: _Setting | None, *, default: bool) -> bool:
    def read(found: _Setting) -> bool:
        if not isinstance(found.value, bool):
            raise ConfigError(found.key, f"expected true or false, got {_shown(found.value)}")
        return found.value

    return _checked(setting, default, read)


def _text(setting: _Setting | None, *, default: str = "") -> str:
    def read(found: _Setting) -> str:
        if isinstance(found.value, Path):
            return str(found.value)
        if not isinstance(found.value, str):
            raise ConfigError(found.key, f"expected a string, got {_shown(found.value)}")
        return found.value

    return _checked(setting, default, read)


def _choice(setting: _Setting, allowed: Mapping[str, object] | tuple[str, ...]) -> str:
    value = _text(setting)
    if value not in allowed:
        choices = ", ".join(repr(choice) for choice in allowed)
        raise ConfigError(setting.key, f"expected one of {choices}, got {value!r}")
    return value


def _optional(text: str) -> str | None:
    return text or None


def _optional_path(setting: _Setting) -> Path | None:
    text = _text(setting)
    return Path(text).expanduser() if text else None


def _time_control(setting: _Setting) -> str:
    text = _text(setting)
    try:
        TimeControl.parse(text)
    except ConfigError as exc:
        raise ConfigError(setting.key, exc.reason) from exc
    return text.strip()


def _replica_address(setting: _Setting) -> str | None:
    text = _text(setting)
    if not text:
        return None
    host, separator, port = text.rpartition(":")
    bracketed = host.startswith("[") and host.endswith("]")
    if bracketed:
        host = host[1:-1]
    port_ok = port.isascii() and port.isdecimal() and 1 <= int(port) <= 65535
    if not (separator and host and port_ok and (bracketed or ":" not in host)):
        raise ConfigError(
            setting.key,
            f"expected HOST:PORT such as '127.0.0.1:7600' or '[::1]:7600', got {text!r}",
        )
    return text
