"""The event's TCP seats: one listener per ``listen://`` address, a seat per player and board.

A player connecting to a listener takes the seat its ``sign_on`` names (``tcsi``'s
program name: the player's name in its ASCII form on the line, ``Muller`` for
``Müller``), if that player's board is being played now, if the connection comes
from the player's ``address`` when the configuration binds it to one, and if its
``token`` operation carries the player's token when the configuration gives one. Any
other connection is refused with a log line that says why; it never reaches a board.
The seat itself is a pseudo-terminal whose other end the board's referee opens as its
port, for as long as the board runs.

A token is a password, so it is kept as one: compared in constant time, never logged,
and taken out of every line before the seat sees it (:func:`scrub_token`), so neither
a board's journal nor ``ctl status`` ever holds it. A host that gives
:data:`LOCKOUT_AFTER` wrong tokens in a row waits before it may sign on again, twice as
long after each further one (up to :data:`LOCKOUT_LONGEST` seconds): guessing a token
takes years, and costs the log and the journal a few lines per window, the rest counted.
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager

from serialref import records
from serialref.epd.parser import parse_record
from serialref.errors import SerialrefError
from serialref.records import Refreq
from serialref.tournament.config import PlayerConfig
from serialref.wire.address import Address, format_address
from serialref.wire.nullmodem import open_raw_pty
from serialref.wire.seatlistener import Record, Refusal, SeatListener

__all__ = ["LOCKOUT_AFTER", "LOCKOUT_LONGEST", "TOKEN_OPCODE", "TcpSeats", "scrub_token"]

LOGGER = logging.getLogger(__name__)

TOKEN_OPCODE = "token"
"""The ``sign_on`` operation that carries a seat's token (spec 5.3: others ignore it)."""

LOCKOUT_AFTER = 3
"""Wrong tokens in a row from one host after which it must wait to sign on again."""

LOCKOUT_LONGEST = 60.0
"""Seconds the longest wait lasts (the first is one second, each next one twice as long)."""

_HOSTS_REMEMBERED = 1024

# The token operation, its operands (quoted or bare) and the blanks before it: what follows
# a blank, a semicolon or the line's start and reads ``token ...;``.
_TOKEN_OPERATION = re.compile(
    rb'[ \t]*(?<![^\s;])' + TOKEN_OPCODE.encode() + rb'(?:[ \t]+(?:"[^"\r\n]*"|[^\s;"]+))*[ \t]*;'
)


def scrub_token(lines: bytes) -> bytes:
    """``lines`` without their ``token`` operations: what the seat, and its journal, see."""
    return _TOKEN_OPERATION.sub(b"", lines)


class _WrongTokens:
    """Wrong tokens by host, and until when each host that gave too many must wait."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._hosts: OrderedDict[str, tuple[int, float]] = OrderedDict()  # wrong, locked until

    def wait_left(self, host: str) -> float:
        """Seconds ``host`` must still wait before its next sign_on is heard (0: none)."""
        return max(0.0, self._hosts.get(host, (0, 0.0))[1] - self._clock())

    def wrong(self, host: str) -> None:
        count = self._hosts.pop(host, (0, 0.0))[0] + 1
        wait = min(2.0 ** (count - LOCKOUT_AFTER), LOCKOUT_LONGEST) if count >= LOCKOUT_AFTER else 0
        self._hosts[host] = (count, self._clock() + wait)
        while len(self._hosts) > _HOSTS_REMEMBERED:
            self._hosts.popitem(last=False)

    def right(self, host: str) -> None:
        self._hosts.pop(host, None)


class TcpSeats:
    """The listeners of an event's TCP seats and the seats of the boards being played."""

    def __init__(self, players: Sequence[PlayerConfig], *, record: Record | None = None) -> None:
        """``record`` keeps refusals (a few per window, then a count) where the event keeps
        its own record."""
        # Keyed by the name as a sign_on carries it: its ASCII form (records.tag_value).
        self._players = {records.tag_value(p.name): p for p in players if p.listen is not None}
        self._record = record
        self._listeners: dict[Address, SeatListener] = {}
        self._open: dict[str, int] = {}  # player -> its board's pty master
        self._wrong_tokens = _WrongTokens()
        self._lock = threading.Lock()

    @contextmanager
    def listening(self) -> Iterator[None]:
        """Listen on every TCP seat's address for as long as the event runs."""
        with ExitStack() as stack:
            for player in self._players.values():
                address = player.listen
                assert address is not None
                if address not in self._listeners:
                    listener = SeatListener(address, self._admission(address),
                                            scrub=scrub_token, record=self._record)  # fmt: skip
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

    def _admission(self, address: Address) -> Callable[[bytes, str], int | Refusal]:
        def admit(line: bytes, peer_host: str) -> int | Refusal:
            return self._admit(address, line, peer_host)

        return admit

    def _admit(self, address: Address, line: bytes, peer_host: str) -> int | Refusal:
        with self._lock:
            wait = self._wrong_tokens.wait_left(peer_host)
        if wait:
            return Refusal("locked", f"{peer_host} gave {LOCKOUT_AFTER} or more wrong tokens: "
                                     f"it may sign on again in {wait:.0f} s")  # fmt: skip
        try:
            record = parse_record(line.decode("ascii"))
            request = records.player_request(record)
        except (UnicodeDecodeError, SerialrefError):
            return Refusal("not EPD", "its first line is not a player's EPD record")
        if request is not Refreq.SIGN_ON:
            return Refusal("not sign_on", f"its first record is a {request.value}, not a sign_on")
        name = records.sign_on_identity(record).name
        player = self._players.get(name or "")
        if player is None or player.listen != address:
            return Refusal("no seat", f"no seat here for {name!r} (sign_on's tcsi names the "
                                      "player)")  # fmt: skip
        if player.address is not None and peer_host != player.address:
            return Refusal("address", f"seat {name!r} is bound to {player.address}, "
                                      f"not {peer_host}")  # fmt: skip
        if player.token is not None:
            given = record.operand_texts(TOKEN_OPCODE)
            right = bool(given) and hmac.compare_digest(given[0].encode(), player.token.encode())
            with self._lock:
                (self._wrong_tokens.right if right else self._wrong_tokens.wrong)(peer_host)
            if not right:
                return Refusal("token", f"seat {name!r}: token mismatch")
        with self._lock:
            master = self._open.get(player.name)
        if master is None:
            return Refusal("no board", f"seat {name!r}: no board of this player is being "
                                       "played now")  # fmt: skip
        return master
