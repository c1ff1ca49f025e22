"""The event's TCP seats: one listener per ``listen://`` address, a seat per player and board.

A player connecting to a listener takes the seat its ``sign_on`` names (``tcsi``'s
program name: the player's name in its ASCII form on the line, ``Muller`` for
``Müller``), if that player's board is being played now, if the connection comes
from the player's ``address`` when the configuration binds it to one, and if its
``token`` operation carries the player's token when the configuration gives one. Any
other connection is refused with a log line that says why; it never reaches a board.
The seat itself is a pseudo-terminal whose other end the board's referee opens as its
port, for as long as the board runs.
"""

from __future__ import annotations

import hmac
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager

from serialref import records
from serialref.epd.parser import parse_record
from serialref.errors import SerialrefError
from serialref.event.config import PlayerConfig
from serialref.records import Refreq
from serialref.wire.address import Address, format_address
from serialref.wire.seatlistener import SeatListener, open_raw_pty

__all__ = ["TOKEN_OPCODE", "TcpSeats"]

LOGGER = logging.getLogger(__name__)

TOKEN_OPCODE = "token"
"""The ``sign_on`` operation that carries a seat's token (spec 5.3: others ignore it)."""


class TcpSeats:
    """The listeners of an event's TCP seats and the seats of the boards being played."""

    def __init__(self, players: Sequence[PlayerConfig]) -> None:
        # Keyed by the name as a sign_on carries it: its ASCII form (records.tag_value).
        self._players = {records.tag_value(p.name): p for p in players if p.listen is not None}
        self._listeners: dict[Address, SeatListener] = {}
        self._open: dict[str, int] = {}  # player -> its board's pty master
        self._lock = threading.Lock()

    @contextmanager
    def listening(self) -> Iterator[None]:
        """Listen on every TCP seat's address for as long as the event runs."""
        with ExitStack() as stack:
            for player in self._players.values():
                address = player.listen
                assert address is not None
                if address not in self._listeners:
                    listener = SeatListener(address, self._admission(address))
                    listener.start()
                    stack.callback(listener.close)
                    self._listeners[address] = listener
            yield

    def connect_url(self, player: PlayerConfig) -> str:
        """The ``socket://`` URL a player connects to (the port the system chose, for 0)."""
        address = player.listen
        assert address is not None
        listener = self._listeners[address]
        return f"socket://{format_address(address.host, listener.port)}"

    @contextmanager
    def seat(self, player: PlayerConfig) -> Iterator[str]:
        """The player's seat for one board: the pty path its referee opens."""
        address = player.listen
        assert address is not None
        master, slave, path = open_raw_pty()
        with self._lock:
            self._open[player.name] = master
        try:
            yield path
        finally:
            with self._lock:
                del self._open[player.name]
            self._listeners[address].release(master)
            os.close(master)
            os.close(slave)

    def _admission(self, address: Address) -> Callable[[bytes, str], int | str]:
        def admit(line: bytes, peer_host: str) -> int | str:
            return self._admit(address, line, peer_host)

        return admit

    def _admit(self, address: Address, line: bytes, peer_host: str) -> int | str:
        try:
            record = parse_record(line.decode("ascii"))
            request = records.player_request(record)
        except (UnicodeDecodeError, SerialrefError):
            return "its first line is not a player's EPD record"
        if request is not Refreq.SIGN_ON:
            return f"its first record is a {request.value}, not a sign_on"
        name = records.sign_on_identity(record).name
        player = self._players.get(name or "")
        if player is None or player.listen != address:
            return f"no seat here for {name!r} (sign_on's tcsi names the player)"
        if player.address is not None and peer_host != player.address:
            return f"seat {name!r} is bound to {player.address}, not {peer_host}"
        if player.token is not None:
            given = record.operand_texts(TOKEN_OPCODE)
            if not given or not hmac.compare_digest(given[0].encode(), player.token.encode()):
                return f"seat {name!r}: token mismatch"
        with self._lock:
            master = self._open.get(player.name)
        if master is None:
            return f"seat {name!r}: no board of this player is being played now"
        return master
