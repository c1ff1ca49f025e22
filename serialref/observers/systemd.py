"""systemd's ``STATUS=`` line kept on the game and move in progress (``systemctl status``)."""

from __future__ import annotations

from typing import Protocol

from serialref.happenings import GameEnded, GameStarted, MatchEvent, MovePlayed

__all__ = ["StatusLine", "SystemdStatusObserver"]


class StatusLine(Protocol):
    """Where the status goes: :class:`serialref.appliance.notify.SystemdNotifier`."""

    def status(self, text: str) -> None: ...

    def close(self) -> None: ...


class SystemdStatusObserver:
    """Keeps systemd's ``STATUS=`` on the game and move in progress."""

    def __init__(self, notifier: StatusLine) -> None:
        self._notifier = notifier
        self._game = ""

    def handle(self, event: MatchEvent) -> None:
        if isinstance(event, GameStarted):
            self._game = f"game {event.game}: {event.tags['White']} - {event.tags['Black']}"
            self._notifier.status(self._game)
        elif isinstance(event, MovePlayed):
            # A game resumed from the journal has no GameStarted: its number must do.
            game = self._game or f"game {event.game}"
            self._notifier.status(f"{game}, ply {event.ply} {event.san}")
        elif isinstance(event, GameEnded):
            self._notifier.status(f"game {event.game} ended {event.result} ({event.reason})")

    def close(self) -> None:
        self._notifier.close()
