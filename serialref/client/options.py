"""The engine options of ``serialref client``: how to run one engine and how it plays."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import chess.engine

from serialref.client.startup import EngineProtocol
from serialref.errors import ConfigError

__all__ = ["EngineSettings", "parse_engine_options"]


@dataclass(frozen=True, slots=True)
class EngineSettings:
    """How to run one engine and how it plays; the ``serialref client`` options.

    ``protocol`` ``None`` means: find out (UCI first, then XBoard). ``nodes``,
    ``depth`` and ``movetime`` (seconds) limit the search on top of the clock; at most
    one may be set. The score policies are in centipawns from the engine's point of
    view; only their magnitude counts, so ``--resign-below 600`` and ``--resign-below
    -600`` mean the same. ``max_restarts`` bounds the restarts in a row that produce no
    move, so an engine that dies on every position ends in a fault rather than a loop.
    ``start_timeout`` bounds a handshake the engine has begun (a silent program is given
    :data:`~serialref.client.startup.PROBE_TIMEOUT`).
    """

    command: tuple[str, ...]
    protocol: EngineProtocol | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    nodes: int | None = None
    depth: int | None = None
    movetime: float | None = None
    draw_offer_below: int | None = None
    draw_accept_below: int | None = None
    resign_below: int | None = None
    resign_moves: int = 3
    hang_margin: float = 10.0
    start_timeout: float = 10.0
    max_restarts: int = 3

    def __post_init__(self) -> None:
        if not self.command:
            raise ConfigError("engine", "an engine command is required")
        limits = [
            name for name in ("nodes", "depth", "movetime") if getattr(self, name) is not None
        ]
        if len(limits) > 1:
            raise ConfigError(limits[1], f"cannot be combined with {limits[0]}")
        for name in ("nodes", "depth", "movetime", "resign_moves"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ConfigError(name, f"must be positive, not {value!r}")
        if self.hang_margin < 0 or self.start_timeout <= 0:
            raise ConfigError("hang_margin", "timeouts must be positive")

    @classmethod
    def from_command_line(cls, command: str, **settings: Any) -> EngineSettings:
        """Settings for a command given as one shell-quoted string (``"gnuchess --xboard"``)."""
        try:
            words = tuple(shlex.split(command))
        except ValueError as exc:
            raise ConfigError("engine", f"cannot split {command!r}: {exc}") from exc
        return cls(command=words, **settings)

    def fixed_limit(self) -> chess.engine.Limit | None:
        """The search limit given on top of the clock, if any."""
        if self.nodes is None and self.depth is None and self.movetime is None:
            return None
        return chess.engine.Limit(nodes=self.nodes, depth=self.depth, time=self.movetime)


def parse_engine_options(pairs: Sequence[str]) -> dict[str, str]:
    """``NAME=VALUE`` strings (``--option``) as a mapping; python-chess checks the values."""
    options: dict[str, str] = {}
    for pair in pairs:
        name, sign, value = pair.partition("=")
        if not sign or not name.strip():
            raise ConfigError("option", f"expected NAME=VALUE, not {pair!r}")
        options[name.strip()] = value
    return options
