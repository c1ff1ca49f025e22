"""Hot standby: the primary streams its journal to a standby, which takes over when it falls silent.

The primary adds a :class:`JournalReplicator` to its listeners. The standby runs a
:class:`JournalMirror`, which copies the primary's journal into its own file and
returns once the primary has been silent for ``takeover_after`` seconds; then
:func:`take_over` runs the referee on the mirror, which resumes the match as a
restarted referee would (PROTOCOL.md 6). :func:`stand_by` is the whole
``serialref standby`` verb.

The wire, one TCP connection per primary, ASCII lines ending in LF::

    standby -> primary   serialref-standby 1 <mirror size> <sha256 of the mirror, hex>
    primary -> standby   serialref-primary 1 <offset: the mirror size, or 0>
    primary -> standby   the primary's journal from <offset>, whole lines only, and an
                         empty line (heartbeat) whenever nothing was sent for a while

Why the primary sends its journal *file* rather than encoding events itself: the
mirror then is byte for byte the primary's journal, including what was written
before this process started. A primary restarted by systemd resumes its match
from its journal, and its standby must hold the start of that match too. The
file is also the only buffer: nothing piles up in memory while the standby is
away, and :meth:`JournalReplicator.handle` just wakes the sender thread.

Why the offset handshake: a standby restarted while the primary runs, or a
primary reconnecting, continues where the mirror ends, and the mirror is never
emptied by a reconnect (it may be the only copy left). A mirror that is not a
prefix of the primary's journal (another match, another file) is set aside
under a new name and rebuilt from byte 0.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import itertools
import json
import logging
import os
import select
import socket
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TextIO

from serialref.config import MatchConfig
from serialref.errors import ConfigError, PortOpenError, ProtocolError, escape
from serialref.events import MatchEvent
from serialref.recorders.journal import recorder_error
from serialref.referee import match_settings, run_referee
from serialref.resume import find_unfinished_match

__all__ = [
    "HEARTBEAT_INTERVAL",
    "TAKEOVER_AFTER",
    "JournalMirror",
    "JournalReplicator",
    "open_mirror",
    "parse_address",
    "run_standby",
    "stand_by",
    "take_over",
]

LOGGER = logging.getLogger(__name__)

HEARTBEAT_INTERVAL = 0.5
"""Seconds of quiet after which the primary sends a heartbeat."""

TAKEOVER_AFTER = 3.0
"""Seconds of silence after which the standby takes over (``--takeover-after``)."""

_VERSION = 1
_STANDBY_HELLO = b"serialref-standby"
_PRIMARY_HELLO = b"serialref-primary"
_HELLO_LIMIT = 256
"""Longest handshake line, in bytes."""
_MAX_ENTRY = 1 << 20
"""Longest journal entry either side accepts; also the most the primary reads at once."""
_IO_TIMEOUT = 2.0
"""Seconds a connect, the handshake or one send may take before the link counts as broken."""
_FIRST_PAUSE = 0.2
_LAST_PAUSE = 5.0


def parse_address(text: str, *, key: str = "address") -> tuple[str, int]:
    """``HOST:PORT`` (IPv6 hosts in brackets) as a host and a port; port 0 picks a free one."""
    host, separator, port = text.rpartition(":")
    bracketed = host.startswith("[") and host.endswith("]")
    if bracketed:
        host = host[1:-1]
    port_ok = port.isascii() and port.isdecimal() and int(port) <= 65535
    if not (separator and host and port_ok and (bracketed or ":" not in host)):
        raise ConfigError(
            key, f"expected HOST:PORT such as '127.0.0.1:7600' or '[::1]:7600', got {text!r}"
        )
    return host, int(port)


def _format_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


# --------------------------------------------------------------------------- primary


class JournalReplicator:
    """Streams the primary's journal and a heartbeat to a standby; a ``MatchListener``.

    List it after the :class:`~serialref.recorders.journal.JournalRecorder` (as
    ``run_referee``'s ``extra_listeners`` are), so that the entry an event wakes
    it for is already in the file. Everything that can wait or fail happens on a
    background thread: :meth:`handle` only sets an event, so a standby that is
    absent, slow or gone never stalls or stops the referee. The thread starts at
    the first event, so a referee that fails before its match starts leaves no
    thread behind.

    The heartbeat comes from that thread, not from the referee's: it says the
    process is alive. A referee hung inside a live process is the systemd
    watchdog's to kill, and then the heartbeat stops too.
    """

    def __init__(
        self,
        address: str,
        journal: Path,
        *,
        heartbeat_interval: float = HEARTBEAT_INTERVAL,
        io_timeout: float = _IO_TIMEOUT,
    ) -> None:
        self._address = address
        self._host, self._port = parse_address(address, key="replicate")
        self._journal = journal
        self._heartbeat_interval = heartbeat_interval
        self._io_timeout = io_timeout
        self._grew = threading.Event()
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None

    def handle(self, event: MatchEvent) -> None:
        """The journal may have grown: wake the sender (starting it at the first event)."""
        if self._thread is None and not self._closing.is_set():
            self._thread = threading.Thread(
                target=self._run, name="serialref-replicator", daemon=True
            )
            self._thread.start()
        self._grew.set()

    def close(self) -> None:
        """Send what the standby still lacks (if connected), then stop and join the thread.

        Sending the last entries matters: a standby that saw ``MatchEnded`` of a
        complete match does not take it over.
        """
        self._closing.set()
        self._grew.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        pause = _FIRST_PAUSE
        reported = False  # a failure was logged as a warning; repeat at debug level
        while not self._closing.is_set():
            try:
                with socket.create_connection(
                    (self._host, self._port), timeout=self._io_timeout
                ) as connection:
                    offset = self._handshake(connection)
                    LOGGER.info("replicating %s to %s from byte %d",
                                self._journal, self._address, offset)  # fmt: skip
                    pause, reported = _FIRST_PAUSE, False
                    self._stream(connection, offset)
                    return
            except (OSError, ProtocolError) as exc:
                LOGGER.log(
                    logging.DEBUG if reported else logging.WARNING,
                    "standby %s: %s; trying again in %.1f s",
                    self._address, exc, pause,
                )  # fmt: skip
                reported = True
            if self._closing.wait(pause):
                return
            pause = min(pause * 2, _LAST_PAUSE)

    def _handshake(self, connection: socket.socket) -> int:
        """Read the standby's mirror size and digest; answer where its copy continues."""
        hello = b""
        while not hello.endswith(b"\n"):
            chunk = connection.recv(_HELLO_LIMIT)
            if not chunk:
                raise ProtocolError("the standby closed the connection during the handshake")
            hello += chunk
            if len(hello) > _HELLO_LIMIT:
                raise ProtocolError("the standby's greeting is too long", raw=hello[:80])
        fields = hello.split()
        if len(fields) != 4 or fields[:2] != [_STANDBY_HELLO, b"%d" % _VERSION]:
            raise ProtocolError("not a serialref standby (version 1)", raw=hello)
        try:
            size = int(fields[2])
            digest = bytes.fromhex(fields[3].decode("ascii"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ProtocolError("unreadable standby greeting", raw=hello) from exc
        if self._journal_starts_with(size, digest):
            offset = size
        else:
            offset = 0
            if size:
                LOGGER.warning("standby %s: its mirror is not a copy of %s; sending it all again",
                               self._address, self._journal)  # fmt: skip
        connection.sendall(b"%s %d %d\n" % (_PRIMARY_HELLO, _VERSION, offset))
        return offset

    def _journal_starts_with(self, size: int, digest: bytes) -> bool:
        """Whether the journal's first ``size`` bytes hash to ``digest`` (the mirror's)."""
        prefix = hashlib.sha256()
        try:
            with self._journal.open("rb") as journal:
                left = size
                while left:
                    chunk = journal.read(min(left, _MAX_ENTRY))
                    if not chunk:
                        return False
                    prefix.update(chunk)
                    left -= len(chunk)
        except FileNotFoundError:
            if size:
                return False
        return prefix.digest() == digest

    def _stream(self, connection: socket.socket, offset: int) -> None:
        """Send new whole lines as they appear, and a heartbeat when quiet, until closed."""
        last_sent = time.monotonic()
        while True:
            data = self._complete_lines(offset)
            if data:
                connection.sendall(data)
                offset += len(data)
                last_sent = time.monotonic()
                continue
            if self._closing.is_set():
                return
            now = time.monotonic()
            due = last_sent + self._heartbeat_interval
            if now >= due:
                connection.sendall(b"\n")
                last_sent = now
            elif self._grew.wait(due - now):
                self._grew.clear()

    def _complete_lines(self, offset: int) -> bytes:
        """Whole journal lines from ``offset`` on (at most ``_MAX_ENTRY`` bytes of them)."""
        try:
            with self._journal.open("rb") as journal:
                size = journal.seek(0, os.SEEK_END)
                if size < offset:
                    raise ProtocolError(f"{self._journal} shrank below the {offset} bytes sent")
                journal.seek(offset)
                data = journal.read(_MAX_ENTRY)
        except FileNotFoundError:
            if offset:
                raise
            return b""
        end = data.rfind(b"\n") + 1
        if end == 0 and len(data) == _MAX_ENTRY:
            raise ProtocolError(f"{self._journal}: an entry at byte {offset} is over 1 MiB")
        return data[:end]


# --------------------------------------------------------------------------- standby


class _Outcome(enum.Enum):
    """How a spell of mirroring ended."""

    SILENT = "the primary fell silent"
    HEARD = "a primary was heard"
    TIME_UP = "the time given is up"
    STOPPED = "stop() was called"


@dataclass
class _PrimaryLink:
    """One connection from a primary and what arrived of its current line."""

    sock: socket.socket
    peer: str
    unfinished: bytearray = field(default_factory=bytearray)
    greeted: bool = False  # the primary answered the handshake


class JournalMirror:
    """The standby's copy of the primary's journal, kept on a listening socket.

    The socket is bound at construction, so ``address`` tells the bound port
    when port 0 was asked for. One primary is mirrored at a time; a new
    connection replaces the old one (a primary that restarted reconnects before
    its old connection is known to be dead). Only whole lines reach the file, so
    a line cut by a primary that died mid-write is dropped with its connection.
    Each batch received is flushed and ``fsync``-ed before the next is read,
    which covers every move entry as the primary's own journal does.
    """

    def __init__(
        self, address: str, journal: Path, *, takeover_after: float = TAKEOVER_AFTER
    ) -> None:
        if not takeover_after > 0:
            raise ConfigError("takeover_after", f"expected seconds > 0, got {takeover_after!r}")
        host, port = parse_address(address)
        self.journal = journal
        self._takeover_after = takeover_after
        self._link: _PrimaryLink | None = None
        self._stopped = False
        self._digest, self._size = _hash_whole_lines(journal)
        with ExitStack() as stack:
            try:
                self._file = stack.enter_context(journal.open("ab"))
            except OSError as exc:
                raise recorder_error("open", journal, exc) from exc
            try:
                family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                            flags=socket.AI_PASSIVE)[0][0]  # fmt: skip
                self._listener = stack.enter_context(
                    socket.create_server((host, port), family=family)
                )
            except OSError as exc:
                raise ConfigError(
                    "address", f"cannot listen on {address!r}: {exc.strerror or exc}"
                ) from exc
            self._wake_r, self._wake_w = socket.socketpair()
            stack.pop_all()
        bound = self._listener.getsockname()
        self.address = _format_address(bound[0], bound[1])
        LOGGER.info("standby listening on %s, mirroring to %s (%d bytes so far)",
                    self.address, journal, self._size)  # fmt: skip

    def __enter__(self) -> JournalMirror:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def wait_for_silence(self) -> bool:
        """Mirror until a primary heard during this call has been silent ``takeover_after`` s.

        A standby started alone waits for a primary for as long as it takes: it
        cannot tell a primary that is not up yet from one that died, and a match
        it has never heard of is not its to start. Returns True on silence, False
        when :meth:`stop` was called. A mirror that cannot be written raises
        :class:`~serialref.errors.RecorderError`.
        """
        return self._mirror(until=None) is _Outcome.SILENT

    def mirror_for(self, seconds: float) -> bool:
        """Mirror for up to ``seconds``; True as soon as a primary is heard.

        A takeover waiting for busy ports spends its pauses here: a primary that
        was only cut off for a while (a network hiccup) is heard again, and its
        mirror stays current instead of going stale while the standby waits.
        """
        return self._mirror(until=time.monotonic() + seconds) is _Outcome.HEARD

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called; every later wait then returns at once."""
        return self._stopped

    def _mirror(self, *, until: float | None) -> _Outcome:
        """Take connections and entries until silence (``until`` None) or until ``until``."""
        heard_at: float | None = None
        while not self._stopped:
            now = time.monotonic()
            if until is not None:
                if heard_at is not None:
                    return _Outcome.HEARD
                if now >= until:
                    return _Outcome.TIME_UP
                timeout: float | None = until - now
            elif heard_at is not None:
                timeout = heard_at + self._takeover_after - now
                if timeout <= 0:
                    LOGGER.warning("the primary has been silent for %.1f s", self._takeover_after)
                    self._drop_link()
                    return _Outcome.SILENT
            else:
                timeout = None
            link = self._link
            watched = [self._listener, self._wake_r, *([link.sock] if link else [])]
            ready, _, _ = select.select(watched, [], [], timeout)
            if self._wake_r in ready:
                self._wake_r.recv(64)
                self._stopped = True
            if link is not None and link.sock in ready and self._receive(link):
                heard_at = time.monotonic()
            if self._listener in ready:
                self._accept()
        return _Outcome.STOPPED

    def stop(self) -> None:
        """End the current and every later wait (from any thread or a signal handler)."""
        try:
            self._wake_w.send(b"!")
        except OSError:  # closed already: nothing waits any more
            LOGGER.debug("stop() after close()")

    def close(self) -> None:
        """Release the socket and the file; idempotent."""
        self._drop_link()
        for closable in (self._listener, self._wake_r, self._wake_w, self._file):
            closable.close()

    def _accept(self) -> None:
        sock, peer = self._listener.accept()
        name = _format_address(peer[0], peer[1])
        if self._link is not None:
            LOGGER.warning("primary %s replaces %s", name, self._link.peer)
            self._drop_link()
        try:
            sock.settimeout(_IO_TIMEOUT)
            sock.sendall(b"%s %d %d %s\n" % (_STANDBY_HELLO, _VERSION, self._size,
                                             self._digest.hexdigest().encode("ascii")))  # fmt: skip
        except OSError as exc:
            LOGGER.warning("primary %s: %s", name, exc)
            sock.close()
            return
        LOGGER.info("primary %s connected", name)
        self._link = _PrimaryLink(sock, name)

    def _receive(self, link: _PrimaryLink) -> bool:
        """Take what arrived; True when it came from a primary that has answered the handshake.

        A closed, broken or misbehaving connection is dropped, and with it the
        unfinished line it may have left. A mirror that cannot be written is not
        the connection's fault: that :class:`RecorderError` goes up to the caller.
        """
        try:
            data = link.sock.recv(65536)
        except OSError as exc:
            data, problem = b"", str(exc)
        else:
            problem = "connection closed"
        try:
            if data:
                self._take(link, data)
                return link.greeted
        except ProtocolError as exc:
            problem = f"{exc}{f' ({exc.raw})' if exc.raw else ''}"
        if link.unfinished:
            problem += f"; dropped the {len(link.unfinished)} bytes of an unfinished entry"
        LOGGER.warning("primary %s: %s", link.peer, problem)
        self._drop_link()
        return False

    def _take(self, link: _PrimaryLink, data: bytes) -> None:
        """Append the whole journal lines in ``data`` to the mirror; keep a cut line back."""
        link.unfinished += data
        end = link.unfinished.rfind(b"\n") + 1
        if end == 0:
            if len(link.unfinished) > _MAX_ENTRY:
                raise ProtocolError("an entry over 1 MiB", raw=bytes(link.unfinished[:80]))
            return
        lines = bytes(link.unfinished[:end]).split(b"\n")[:-1]
        del link.unfinished[:end]
        entries = []
        try:
            for line in lines:
                if not link.greeted:
                    self._start_at(link, line)
                elif line:  # an empty line is a heartbeat
                    _check_entry(line)
                    entries.append(line + b"\n")
        finally:
            self._append(b"".join(entries))

    def _start_at(self, link: _PrimaryLink, line: bytes) -> None:
        fields = line.split()
        if len(fields) != 3 or fields[:2] != [_PRIMARY_HELLO, b"%d" % _VERSION]:
            raise ProtocolError("not a serialref primary (version 1)", raw=line)
        offset = int(fields[2]) if fields[2].isdigit() else -1
        if offset not in (0, self._size):
            raise ProtocolError(f"the primary starts at byte {offset}, the mirror has {self._size}")
        if offset == 0 and self._size:
            self._set_mirror_aside()
        link.greeted = True
        LOGGER.info("primary %s: mirroring from byte %d", link.peer, offset)

    def _set_mirror_aside(self) -> None:
        """Keep a mirror of another journal under a new name; it may be someone's only copy."""
        candidates = (
            self.journal.with_name(f"{self.journal.name}.replaced-{number}")
            for number in itertools.count(1)
        )
        aside = next(path for path in candidates if not path.exists())
        self._file.close()
        try:
            self.journal.rename(aside)
            self._file = self.journal.open("ab")
        except OSError as exc:
            raise recorder_error("replace", self.journal, exc) from exc
        LOGGER.warning("%s was not a copy of the primary's journal; kept it as %s",
                       self.journal, aside)  # fmt: skip
        self._digest, self._size = hashlib.sha256(), 0

    def _append(self, data: bytes) -> None:
        if not data:
            return
        try:
            self._file.write(data)
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as exc:
            raise recorder_error("write", self.journal, exc) from exc
        self._digest.update(data)
        self._size += len(data)

    def _drop_link(self) -> None:
        if self._link is not None:
            self._link.sock.close()
            self._link = None


def _check_entry(line: bytes) -> None:
    """A journal entry is one JSON object naming its event; anything else must not be mirrored.

    Only the shape is checked: a resume reads the entry with the journal's own
    decoder, which says which line is wrong should a primary ever send nonsense.
    """
    try:
        entry = json.loads(line.decode("ascii"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"not a journal entry: {exc}", raw=line[:80]) from exc
    if not (isinstance(entry, dict) and isinstance(entry.get("event"), str)):
        raise ProtocolError("not a journal entry: no event named", raw=line[:80])


def _hash_whole_lines(path: Path) -> tuple[hashlib._Hash, int]:
    """Digest and size of the journal's whole lines; a line cut by a crash is cut off."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    except OSError as exc:
        raise recorder_error("read", path, exc) from exc
    keep = data.rfind(b"\n") + 1
    if keep < len(data):
        LOGGER.warning("%s: cut off %d bytes of an entry left incomplete: %s",
                       path, len(data) - keep, escape(data[keep:][:80]))  # fmt: skip
        try:
            os.truncate(path, keep)
        except OSError as exc:
            raise recorder_error("truncate", path, exc) from exc
    return hashlib.sha256(data[:keep]), keep


def run_standby(address: str, journal: Path, *, takeover_after: float = TAKEOVER_AFTER) -> None:
    """Mirror the primary at ``address`` into ``journal`` until it has been silent a while."""
    with JournalMirror(address, journal, takeover_after=takeover_after) as mirror:
        mirror.wait_for_silence()


def open_mirror(
    config: MatchConfig, address: str, *, takeover_after: float = TAKEOVER_AFTER
) -> JournalMirror:
    """The standby's mirror at the configured journal (which a standby must have)."""
    if config.journal is None:
        raise ConfigError(
            "journal", "a standby needs --journal: the file it mirrors the primary's journal to"
        )
    return JournalMirror(address, config.journal, takeover_after=takeover_after)


def take_over(
    config: MatchConfig,
    *,
    console: TextIO | None = None,
    mirror: JournalMirror | None = None,
    first_pause: float = _FIRST_PAUSE,
    max_pause: float = _LAST_PAUSE,
) -> bool | None:
    """Run the referee on ``config`` (resuming from its journal), retrying until it has the ports.

    A primary that is hung rather than dead still holds its ports (an exclusive
    lock on a local device, the single connection ser2net allows on an
    ``rfc2217://`` port), and the referee's open fails. So every
    :class:`~serialref.errors.PortOpenError` is logged once and the open tried
    again after a pause doubling from ``first_pause`` to ``max_pause`` seconds.

    With a ``mirror``, the pauses are spent mirroring: if the primary is heard
    again, it was alive after all, and None is returned so that the caller
    stands by again. False when the mirror was stopped; otherwise the
    referee's result (True: the match is complete).
    """
    pause = first_pause
    while True:
        try:
            return run_referee(config, console=console)
        except PortOpenError as exc:
            LOGGER.warning("taking over: %s; trying again in %.1f s", exc, pause)
        if mirror is None:
            time.sleep(pause)
        elif mirror.mirror_for(pause):
            LOGGER.warning("the primary is back: standing by again")
            return None
        elif mirror.stopped:
            return False
        pause = min(pause * 2, max_pause)


def stand_by(config: MatchConfig, mirror: JournalMirror, *, console: TextIO | None = None) -> bool:
    """``serialref standby``: mirror the primary, and take its match over when it falls silent.

    A primary that fell silent after its match ended complete leaves nothing to
    take over: the standby goes on waiting for the next primary. A match
    interrupted by SIGTERM is taken over, as a restarted referee would resume it;
    stop the standby first to keep such a match stopped. Returns the referee's
    result, or False when :meth:`JournalMirror.stop` was called.
    """
    resumable = dataclasses.replace(config, journal=mirror.journal)
    settings = match_settings(config)
    while True:
        if not mirror.wait_for_silence():
            return False
        if find_unfinished_match(mirror.journal, settings) is None:
            LOGGER.warning("the primary's match in %s is complete; standing by for the next one",
                           mirror.journal)  # fmt: skip
            continue
        LOGGER.warning("taking over the match from %s", mirror.journal)
        complete = take_over(resumable, console=console, mirror=mirror)
        if complete is not None:
            return complete
