"""An event's configuration file (``serialref event --config event.toml``), read and checked.

The event's own keys are at the top of the file; every other top-level key is a match
setting of ``serialref run`` (``tc``, ``openings``, ``reset_delay``, ...), checked by the
same code and applied to every pairing. Each ``[[players]]`` table names a player and
its seat: a built-in player or an engine that the event starts on a virtual cable of
its own (``player``, ``engine`` and the ``serialref client`` settings), or a ``seat``
(a serial port or pyserial URL) where the operator's program answers.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serialref.appliance.config import MatchConfig, load_config
from serialref.appliance.options import OVERRIDE_NAMES
from serialref.errors import ConfigError, InputError
from serialref.event.pairings import EventFormat, Pairing, pairings
from serialref.event.sprt import SprtTest, parse_sprt
from serialref.records import tag_value
from serialref.rules import find_rules
from serialref.wire.address import Address, parse_address

__all__ = ["LISTEN", "EventConfig", "PlayerConfig", "load_event_config"]

_EVENT_KEYS = {"format", "rounds", "games", "concurrency", "directory", "players", "sprt", "event"}
_PER_BOARD = {"port_a", "port_b", "name_a", "name_b", "pgn", "journal", "games", "event",
              "replicate", "replicate_key", "log_level"}  # fmt: skip
_FEEDS = {"control_socket", "control_group", "style12", "web"}
"""The supervisor's socket and the audience's feeds: one each for the whole event."""
_PLAYER_KEYS = {"name", "player", "engine", "seat", "seed", "nodes", "depth", "movetime",
                "protocol", "options", "pace", "notes", "token", "address"}  # fmt: skip
LISTEN = "listen://"
"""The scheme of a TCP seat: the referee listens there and the player connects."""


@dataclass(frozen=True, slots=True)
class PlayerConfig:
    """One player: its name, and either its seat or how the event starts it."""

    name: str
    seat: str | None = None
    player: str | None = None
    engine: str | None = None
    client_options: tuple[str, ...] = ()
    notes: str = ""
    token: str | None = None
    address: str | None = None

    @property
    def listen(self) -> Address | None:
        """Where a TCP seat listens; None for a serial seat or a cable."""
        if self.seat is None or not self.seat.startswith(LISTEN):
            return None
        return parse_address(self.seat.removeprefix(LISTEN), key="seat", any_port=True,
                             default_host="127.0.0.1")  # fmt: skip

    @property
    def started_by_event(self) -> bool:
        return self.player is not None or self.engine is not None

    def client_arguments(self) -> list[str]:
        """The ``serialref client`` arguments after the port, for a player the event starts."""
        who = ["--engine", self.engine] if self.engine else ["--player", str(self.player)]
        token = ["--token", self.token] if self.token is not None else []
        return [*who, "--name", self.name, *token, *self.client_options]


@dataclass(frozen=True, slots=True)
class EventConfig:
    """The whole event, checked."""

    name: str
    format: EventFormat
    players: tuple[PlayerConfig, ...]
    directory: Path
    rounds: int = 1
    games: int = 2
    concurrency: int = 1
    sprt: SprtTest | None = None
    match_settings: Mapping[str, Any] = field(default_factory=dict)
    control_socket: Path | None = None
    control_group: str | None = None
    style12: Address | None = None
    web: Address | None = None

    def pairings(self) -> list[Pairing]:
        return pairings(self.format, [player.name for player in self.players], rounds=self.rounds)

    @property
    def pgn(self) -> Path:
        """The event's PGN file: every finished game, pairing after pairing."""
        return self.directory / "event.pgn"


def load_event_config(path: Path) -> EventConfig:
    """Read and check ``path``; errors name the file and the key."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError("", f"not a valid TOML file: {exc}", source=str(path)) from exc
    try:
        return _event_config(document, path.parent)
    except ConfigError as exc:
        if exc.source:
            raise
        raise ConfigError(exc.key, exc.reason, source=str(path)) from exc


def _event_config(document: Mapping[str, Any], base: Path) -> EventConfig:
    unknown = sorted(set(document) - _EVENT_KEYS - (OVERRIDE_NAMES - _PER_BOARD))
    if unknown:
        raise ConfigError(unknown[0], "not a key of an event file")
    feeds = _feeds(document)
    match_settings = {key: value for key, value in document.items()
                      if key not in _EVENT_KEYS | _FEEDS}  # fmt: skip
    openings = match_settings.get("openings")
    chess960 = find_rules(str(match_settings.get("variant", "standard"))).chess960
    if isinstance(openings, str) and openings and not chess960:
        # Like the directory, a file named in the event file is found next to it (in
        # Chess960, openings are start position numbers, not a file).
        match_settings["openings"] = str(base / openings)
    # Checked now, as each board will read them, so a typo stops the event before it starts.
    load_config(None, {**match_settings, "games": 2})
    raw_players = document.get("players", [])
    if not isinstance(raw_players, list) or not all(isinstance(p, dict) for p in raw_players):
        raise ConfigError("players", "must be a list of [[players]] tables")
    players = tuple(_player(index, raw) for index, raw in enumerate(raw_players))
    _seat_names_apart(players)
    fmt = _choice(document, "format", EventFormat, EventFormat.ROUND_ROBIN)
    sprt = document.get("sprt")
    config = EventConfig(
        name=str(document.get("event", "serialref event")),
        format=fmt,
        players=players,
        directory=base / str(document.get("directory", "event")),
        rounds=_count(document, "rounds", 1),
        games=_count(document, "games", 2),
        concurrency=_count(document, "concurrency", 1),
        sprt=parse_sprt(str(sprt).split()) if sprt is not None else None,
        match_settings=match_settings,
        control_socket=feeds.control_socket,
        control_group=feeds.control_group,
        style12=feeds.style12,
        web=feeds.web,
    )
    config.pairings()  # the players suit the format
    if config.sprt is not None and fmt is not EventFormat.MATCH:
        raise ConfigError("sprt", "an SPRT needs a match of two players (format = \"match\")")
    return config


def _feeds(document: Mapping[str, Any]) -> MatchConfig:
    """The event's socket and feeds, read as ``serialref run`` reads them (same checks)."""
    return load_config(None, {key: document[key] for key in _FEEDS if key in document})


def _player(index: int, raw: Mapping[str, Any]) -> PlayerConfig:
    where = f"players[{index}]"
    unknown = sorted(set(raw) - _PLAYER_KEYS)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}", "not a key of a player")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip() or not name.isprintable():
        raise ConfigError(f"{where}.name", "a printable name is required")
    kinds = [key for key in ("player", "engine") if key in raw]
    tcp = str(raw.get("seat", "")).startswith(LISTEN)
    serial_seat = "seat" in raw and not tcp
    if len(kinds) > 1 or (serial_seat and kinds) or ("seat" not in raw and not kinds):
        raise ConfigError(where, "give exactly one of seat, player (random, greedy) or engine "
                          "(a listen:// seat may have a player or an engine)")  # fmt: skip
    for key in ("token", "address"):
        if key in raw and not tcp:
            raise ConfigError(f"{where}.{key}", "only a listen:// seat takes one")
    if raw.get("player") not in (None, "random", "greedy"):
        raise ConfigError(f"{where}.player", f"must be random or greedy, not {raw['player']!r}")
    options: list[str] = []
    for key in ("seed", "nodes", "depth", "movetime", "pace"):
        if key in raw:
            value = raw[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"{where}.{key}", f"must be a whole number, not {value!r}")
            options += [f"--{key}", str(value)]
    if "protocol" in raw:
        options += ["--protocol", str(raw["protocol"])]
    engine_options = raw.get("options", {})
    if not isinstance(engine_options, dict):
        raise ConfigError(f"{where}.options", "must be a table of engine options")
    for option, value in engine_options.items():
        options += ["--option", f"{option}={value}"]
    if not kinds and options:
        raise ConfigError(where, "a seat's program is started by its operator: no client settings")
    config = PlayerConfig(
        name=name.strip(),
        seat=_text(raw, "seat", where),
        player=_text(raw, "player", where),
        engine=_text(raw, "engine", where),
        client_options=tuple(options),
        notes=str(raw.get("notes", "")),
        token=_text(raw, "token", where),
        address=_text(raw, "address", where),
    )
    try:
        config.listen  # noqa: B018 - checked now, used when the event starts
    except ConfigError as exc:
        raise ConfigError(f"{where}.seat", exc.reason) from exc
    return config


def _seat_names_apart(players: Sequence[PlayerConfig]) -> None:
    """A TCP seat is taken by the name a ``sign_on`` carries: the player's name in its ASCII
    form (:func:`serialref.records.tag_value`). Each seat's must exist and be its own."""
    seats: dict[str, int] = {}
    for index, player in enumerate(players):
        if player.listen is None:
            continue
        signs_on_as = tag_value(player.name)
        if not signs_on_as.strip():
            raise ConfigError(f"players[{index}].name", f"{player.name!r} has no ASCII form for "
                              "a TCP seat's sign_on: add Latin letters or digits")  # fmt: skip
        if signs_on_as in seats:
            other = players[seats[signs_on_as]].name
            raise ConfigError(f"players[{index}].name", f"{player.name!r} signs on as "
                              f"{signs_on_as!r}, as {other!r} does: TCP seats need names that "
                              "differ in ASCII")  # fmt: skip
        seats[signs_on_as] = index


def _text(raw: Mapping[str, Any], key: str, where: str) -> str | None:
    value = raw.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ConfigError(f"{where}.{key}", f"must be a non-empty string, not {value!r}")
    return value


def _count(document: Mapping[str, Any], key: str, default: int) -> int:
    value = document.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(key, f"must be a whole number of at least 1, not {value!r}")
    return value


def _choice(document: Mapping[str, Any], key: str, kind: type[EventFormat],
            default: EventFormat) -> EventFormat:  # fmt: skip
    value = document.get(key, default)
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(item.value for item in kind)
        raise ConfigError(key, f"must be one of {allowed}, not {value!r}") from None
