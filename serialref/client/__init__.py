"""The player side of the referee protocol: ``serialref client``.

A :class:`~serialref.client.players.Player` decides moves; the
:class:`~serialref.client.session.PlayerSession` speaks the protocol for it; and
:func:`~serialref.client.runner.run_client` connects the two to a serial port. The
built-in players, and the factory that names them, are in :mod:`~serialref.client.players`;
the engine bridge (:mod:`~serialref.client.engine`) adds UCI and XBoard programs.
"""

from __future__ import annotations

from serialref.client.players import BUILTIN_PLAYERS, make_builtin_player

__all__ = ["BUILTIN_PLAYERS", "make_builtin_player"]
