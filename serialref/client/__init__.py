"""The player side of the referee protocol: ``serialref client``.

A :class:`~serialref.client.players.Player` decides moves; the
:class:`~serialref.client.session.PlayerSession` speaks the protocol for it; and
:func:`~serialref.client.runner.run_client` connects the two to a serial port. The
built-in players live here; the engine bridge adds UCI and XBoard programs.
"""

from __future__ import annotations

from serialref.client.players import GreedyPlayer, Player, RandomPlayer
from serialref.errors import ConfigError

__all__ = ["BUILTIN_PLAYERS", "make_builtin_player"]

BUILTIN_PLAYERS = {"random": RandomPlayer, "greedy": GreedyPlayer}
"""The ``--player`` choices and the class behind each."""


def make_builtin_player(kind: str, seed: int | None = None, *, pace: float = 0.0) -> Player:
    """The built-in player called ``kind`` (``random`` or ``greedy``), seeded for replay.

    Without a seed the player draws from the operating system's randomness, so two
    unseeded clients do not play the same game over and over. ``pace`` is a wait
    in seconds before each move, so that people can watch.
    """
    try:
        player_class = BUILTIN_PLAYERS[kind]
    except KeyError:
        choices = ", ".join(sorted(BUILTIN_PLAYERS))
        raise ConfigError("player", f"must be one of {choices}, not {kind!r}") from None
    return player_class(seed, pace=pace)
