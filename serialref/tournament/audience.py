"""The event's supervisor socket and audience feeds: one of each for all its boards.

Each is made once for the event (``control_socket``, ``style12``, ``web`` in the event
file): the socket steers whichever board a command names, and the feeds show every board
being played. A board takes part through listeners of its own (:meth:`TournamentAudience.
listeners`), so what it does reaches them tagged with its number, and leaves when its
pairing ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from serialref.control.server import ControlServer, Submit
from serialref.control.status import RecentLines
from serialref.happenings import MatchListener
from serialref.observers.feed import FeedServer
from serialref.tournament.config import TournamentConfig

__all__ = ["TournamentAudience"]


class TournamentAudience:
    """The event's control socket and feeds, for as long as :meth:`opened` lasts."""

    def __init__(self, config: TournamentConfig, stop: Callable[[str], None]) -> None:
        self._config = config
        self._stop = stop
        self._control: ControlServer | None = None
        self._feeds: list[FeedServer] = []
        self._recent: dict[int, RecentLines] = {}

    @contextmanager
    def opened(self) -> Iterator[None]:
        """Listen where the event file says; everything is closed when the block ends."""
        config = self._config
        with ExitStack() as stack:
            if config.style12 is not None:
                from serialref.observers.style12 import Style12Observer

                self._feeds.append(stack.enter_context(Style12Observer(config.style12)))
            if config.web is not None:
                from serialref.observers.web import WebObserver

                web = WebObserver(config.web, event=config.name)
                self._feeds.append(stack.enter_context(web))
            if config.control_socket is not None:
                control = ControlServer(config.control_socket, group=config.control_group)
                stack.callback(control.close)
                open_seats = tuple(player.name for player in config.players if player.open)
                control.start_event(config.name, self._stop, open_seats=open_seats)
                self._control = control
            yield

    @property
    def feeds(self) -> tuple[FeedServer, ...]:
        """The feeds being served (their ``address`` is where: a port 0 is the system's choice)."""
        return tuple(self._feeds)

    def listeners(self, number: int) -> list[MatchListener]:
        """Board ``number``'s listeners: its recent lines for ``status``, its feeds."""
        listeners: list[MatchListener] = [feed.board(number) for feed in self._feeds]
        if self._control is not None:
            self._recent[number] = RecentLines()
            listeners.append(self._recent[number])
        return listeners

    def join(self, number: int, title: str, submit: Submit) -> None:
        """The board is being played: the socket's commands may name it from now on."""
        recent = self._recent.pop(number, None)
        if self._control is not None and recent is not None:
            self._control.add_board(number, title, submit, recent)

    def leave(self, number: int) -> None:
        """The board has ended (its feed listeners say so as they are closed)."""
        self._recent.pop(number, None)
        if self._control is not None:
            self._control.remove_board(number)
