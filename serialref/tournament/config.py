"""An event's configuration file (``serialref event --config event.toml``), read and checked.

The event's own keys are at the top of the file; every other top-level key is a match
setting of ``serialref run`` (``tc``, ``openings``, ``reset_delay``, ...), checked by the
same code and applied to every pairing. Each ``[[players]]`` table names a player and
its seat: a built-in player or an engine that the event starts on a virtual cable of
its own (``player``, ``engine`` and the ``serialref client`` settings), or a ``seat``
(a serial port or pyserial URL) where the operator's program answers.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serialref.appliance.config import ErrorsFound, in_file, match_settings_config, read_toml
from serialref.appliance.options import OVERRIDE_NAMES
from serialref.errors import ConfigError
from serialref.records import tag_value
from serialref.rules import find_rules
from serialref.sprt import SprtTest, parse_sprt
from serialref.tournament.pairings import Pairing, TournamentFormat, pairings
from serialref.wire.address import Address, parse_address

__all__ = [
    "LISTEN",
    "PlayerConfig",
    "TournamentConfig",
    "is_tournament_file",
    "load_tournament_config",
]

_EVENT_KEYS = {"format", "rounds", "games", "concurrency", "directory", "players", "sprt", "event"}
_PER_BOARD = {"port_a", "port_b", "name_a", "name_b", "pgn", "journal", "games", "event",
              "replicate", "replicate_key", "log_level"}  # fmt: skip
_FEEDS = {"control_socket", "control_group", "style12", "web"}
"""The supervisor's socket and the audience's feeds: one each for the whole event."""
_PLAYER_KEYS = {"name", "player", "engine", "seat", "seed", "nodes", "depth", "movetime",
                "protocol", "options", "pace", "notes", "token", "address", "open"}  # fmt: skip
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
    open: bool = False
    """A TCP seat beyond this machine that anyone who signs on with the name may take."""

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
class TournamentConfig:
    """The whole event, checked."""

    name: str
    format: TournamentFormat
    players: tuple[PlayerConfig, ...]
    directory: Path
    rounds: int = 1
    games: int = 2
    concurrency: int = 1
    sprt: SprtTest | None = None
    rating_interval: int = 1
    """The standings are printed after every N-th game (0: at the end only)."""
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


def is_tournament_file(document: Mapping[str, object]) -> bool:
    """Whether a TOML document describes an event: it names players, or a format.

    A match's file has neither key (``serialref run`` refuses both), so ``config check``
    can tell the two apart by their content.
    """
    return "players" in document or "format" in document


def load_tournament_config(path: Path) -> TournamentConfig:
    """Read and check ``path``; errors name the file and the key, every one of them
    (a :class:`~serialref.errors.GroupedConfigError` when there are several)."""
    document = read_toml(path)
    try:
        return _tournament_config(document, path.parent)
    except ConfigError as exc:
        located = in_file(exc, path)
        if located is exc:
            raise
        raise located from exc


def _tournament_config(document: Mapping[str, Any], base: Path) -> TournamentConfig:
    found = ErrorsFound()
    for key in sorted(set(document) - _EVENT_KEYS - (OVERRIDE_NAMES - _PER_BOARD)):
        found.note(ConfigError(key, "not a key of an event file"))
    settings = {key: value for key, value in document.items()
                if key not in _EVENT_KEYS and key in OVERRIDE_NAMES - _PER_BOARD}  # fmt: skip
    match_settings = {key: value for key, value in settings.items() if key not in _FEEDS}
    openings = match_settings.get("openings")
    if isinstance(openings, str) and openings and not _chess960(match_settings):
        # Like the directory, a file named in the event file is found next to it (in
        # Chess960, openings are start position numbers, not a file).
        match_settings["openings"] = str(base / openings)
    tables = match_settings.get("tb")
    if isinstance(tables, str):  # so are the tables' directories, joined by ":"
        match_settings["tb"] = ":".join(str(base / Path(part).expanduser())
                                        for part in tables.replace(";", ":").split(":") if part)
    feeds = None
    with found.checking():
        # Checked now, as each board will read them, so a typo stops the event before it
        # starts; the socket and the feeds (one each for the event) by the same rules.
        feeds = match_settings_config({**settings, **match_settings, "games": 2})
    raw_players = document.get("players", [])
    players: list[PlayerConfig] = []
    if not isinstance(raw_players, list) or not all(isinstance(p, dict) for p in raw_players):
        found.note(ConfigError("players", "must be a list of [[players]] tables"))
        raw_players = []
    for index, raw in enumerate(raw_players):
        with found.checking():
            players.append(_player(index, raw))
    with found.checking():
        _seat_names_apart(players)
    fmt = TournamentFormat.ROUND_ROBIN
    with found.checking():
        fmt = _choice(document, "format", TournamentFormat, TournamentFormat.ROUND_ROBIN)
    counts = {"rounds": 1, "games": 2, "concurrency": 1}
    for key, default in counts.items():
        with found.checking():
            counts[key] = _count(document, key, default)
    sprt = None
    with found.checking():
        sprt = parse_sprt(str(document["sprt"]).split()) if "sprt" in document else None
        if sprt is not None and fmt is not TournamentFormat.MATCH:
            raise ConfigError("sprt", "an SPRT needs a match of two players (format = \"match\")")
    directory = base / str(document.get("directory", "event"))
    if directory.exists() and not directory.is_dir():
        found.note(ConfigError("directory", f"{str(directory)!r} is a file, not a directory"))
    found.raise_any()
    assert feeds is not None  # no error was found, so the settings were read
    config = TournamentConfig(
        name=str(document.get("event", "serialref event")),
        format=fmt,
        players=tuple(players),
        directory=directory,
        sprt=sprt,
        rating_interval=feeds.rating_interval if "rating_interval" in document else 1,
        match_settings=match_settings,
        control_socket=feeds.control_socket,
        control_group=feeds.control_group,
        style12=feeds.style12,
        web=feeds.web,
        **counts,
    )
    config.pairings()  # the players suit the format
    return config


def _chess960(match_settings: Mapping[str, Any]) -> bool:
    """Whether the event plays Chess960 (its openings are numbers); False for a bad variant,
    whose error the match settings' check reports."""
    try:
        return find_rules(str(match_settings.get("variant", "standard"))).chess960
    except ConfigError:
        return False


def _player(index: int, raw: Mapping[str, Any]) -> PlayerConfig:
    where = f"players[{index}]"
    found = ErrorsFound()
    for key in sorted(set(raw) - _PLAYER_KEYS):
        found.note(ConfigError(f"{where}.{key}", "not a key of a player"))
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip() or not name.isprintable():
        found.note(ConfigError(f"{where}.name", "a printable name is required"))
    kinds = [key for key in ("player", "engine") if key in raw]
    tcp = str(raw.get("seat", "")).startswith(LISTEN)
    serial_seat = "seat" in raw and not tcp
    if len(kinds) > 1 or (serial_seat and kinds) or ("seat" not in raw and not kinds):
        found.note(ConfigError(
            where, "give exactly one of seat, player (random, greedy) or engine "
            "(a listen:// seat may have a player or an engine)",
        ))  # fmt: skip
    for key in ("token", "address", "open"):
        if key in raw and not tcp:
            found.note(ConfigError(f"{where}.{key}", "only a listen:// seat takes one"))
    if not isinstance(raw.get("open", False), bool):
        found.note(ConfigError(f"{where}.open", f"must be true or false, not {raw['open']!r}"))
    if raw.get("player") not in (None, "random", "greedy"):
        found.note(
            ConfigError(f"{where}.player", f"must be random or greedy, not {raw['player']!r}")
        )
    options: list[str] = []
    for key in ("seed", "nodes", "depth", "movetime", "pace"):
        if key in raw:
            value = raw[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                found.note(ConfigError(f"{where}.{key}", f"must be a whole number, not {value!r}"))
            options += [f"--{key}", str(value)]
    if "protocol" in raw:
        options += ["--protocol", str(raw["protocol"])]
    engine_options = raw.get("options", {})
    if not isinstance(engine_options, dict):
        found.note(ConfigError(f"{where}.options", "must be a table of engine options"))
        engine_options = {}
    for option, value in engine_options.items():
        options += ["--option", f"{option}={value}"]
    if not kinds and options:
        found.note(
            ConfigError(where, "a seat's program is started by its operator: no client settings")
        )
    texts: dict[str, str | None] = {}
    for key in ("seat", "player", "engine", "token", "address"):
        with found.checking():
            texts[key] = _text(raw, key, where)
    found.raise_any()
    config = PlayerConfig(
        name=str(name).strip(),
        client_options=tuple(options),
        notes=str(raw.get("notes", "")),
        open=raw.get("open", False) is True,
        **texts,
    )
    try:
        listen = config.listen
    except ConfigError as exc:
        raise ConfigError(f"{where}.seat", exc.reason) from exc
    if listen is not None:
        _check_guarded(config, listen, where)
    return config


def _check_guarded(player: PlayerConfig, listen: Address, where: str) -> None:
    """A seat others can reach needs a token or an address, or ``open = true`` saying so.

    Without either, whoever reaches the port and signs on with the player's name takes
    the seat, even mid-game, cutting the real player off.
    """
    guarded = player.token is not None or player.address is not None
    if player.open and guarded:
        raise ConfigError(f"{where}.open", "a seat with a token or an address is not open")
    if not guarded and not player.open and not _loopback(listen.host):
        raise ConfigError(
            f"{where}.seat",
            f"{listen} can be reached from other machines and the seat has neither token nor "
            "address: anyone could take it by the player's name; give it a token (or "
            "address), or open = true if that is meant",
        )


def _loopback(host: str) -> bool:
    """Whether only this machine can reach ``host`` (a name other than localhost may not)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


def _choice(document: Mapping[str, Any], key: str, kind: type[TournamentFormat],
            default: TournamentFormat) -> TournamentFormat:  # fmt: skip
    value = document.get(key, default)
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(item.value for item in kind)
        raise ConfigError(key, f"must be one of {allowed}, not {value!r}") from None
