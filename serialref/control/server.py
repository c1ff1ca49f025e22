"""The referee's end of the control socket: a Unix socket for the supervisor's commands.

The socket is made mode 0660 (and given ``group``, when one is set), so the users who
may steer a match are those the file system lets in; each command is journaled with
the uid the kernel reports for its sender (``SO_PEERCRED``), not one the client claims.

Connections are served on threads of their own, never the referee's: a client that
connects and says nothing, or never reads its answer, times out on its own thread. At
most :data:`MAX_CLIENTS` are served at once; the next one is told so and closed.
Accepting goes through an :class:`~serialref.wire.acceptor.Acceptor`, which pauses
instead of spinning when the process is out of descriptors, and whose reserve ranks
the supervisor above the audience: ``ctl status`` answers under any audience.
What a command does runs on the referee's thread, between two lines, through
:meth:`serialref.referee.daemon.MatchBoard.submit`; the connection's thread waits
for the answer a bounded time.

An event has one socket for all its boards (:meth:`ControlServer.start_event`): boards
join and leave as their pairings start and end; ``status`` lists them all, and a command
goes to the board the request names (``--board N``), or to the only one being played.
"""

from __future__ import annotations

import grp
import logging
import math
import os
import selectors
import socket
import stat
import struct
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from serialref.control.protocol import MAX_LINE, Reply, Request, decode_request, encode_reply
from serialref.control.status import RecentLines, match_status
from serialref.errors import CommandError, ControlError
from serialref.happenings import MatchEvent, SupervisorCommand
from serialref.observers.output import printable
from serialref.referee.match import MatchReferee
from serialref.referee.supervisor import carry_out
from serialref.wire.acceptor import SUPERVISOR_RESERVE, Acceptor

__all__ = ["MAX_CLIENTS", "ControlServer", "Submit"]

LOGGER = logging.getLogger(__name__)

Submit = Callable[[Callable[[MatchReferee], None]], None]
"""How work reaches the referee's thread (:meth:`RefereeDaemon.submit`)."""

MAX_CLIENTS = 16
"""Control clients served at once (each on a thread of its own, for 5 s at most)."""

_MODE = 0o660
_BACKLOG = 128  # clients waiting to be accepted: each is then served, or told it must wait
_CLIENT_TIMEOUT = 5.0  # seconds a client has to send its request and take its answer
_ANSWER_WITHIN = 5.0  # seconds the referee has to answer before the client is told so
_PEER_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid
_LONE = 1  # the board number of a lone match (``serialref run``)


@dataclass(frozen=True, slots=True)
class _Board:
    """A board the socket steers: how work reaches its referee, its recent lines, its name."""

    submit: Submit
    recent: RecentLines
    title: str


class ControlServer:
    """Listens on ``path`` until :meth:`close`; also a listener, for ``status``'s records."""

    def __init__(self, path: Path, *, group: str | None = None) -> None:
        self.path = path
        self.recent = RecentLines()
        self._boards: dict[int, _Board] = {}
        self._event: str | None = None
        self._open_seats: tuple[str, ...] = ()
        self._stop_event: Callable[[str], None] | None = None
        self._clients: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        # Requests a board's referee still holds, by board: it will not answer once it ended.
        self._unanswered: dict[threading.Event, Submit] = {}
        self._listener = _listen(path, group)
        self._acceptor = Acceptor(self._listener, "control socket", reserve=SUPERVISOR_RESERVE,
                                  logger=LOGGER)  # fmt: skip
        self._wake_reader, self._wake_writer = os.pipe()
        self._thread = threading.Thread(target=self._accept, name="control-socket")

    def start(self, submit: Submit) -> None:
        """Take connections from now on; their commands go to the lone match by ``submit``."""
        self._boards[_LONE] = _Board(submit, self.recent, "")
        self._thread.start()
        LOGGER.info("control socket: %s", self.path)

    def start_event(self, name: str, stop: Callable[[str], None], *,
                    open_seats: tuple[str, ...] = ()) -> None:  # fmt: skip
        """Take connections for the event ``name``, whose boards come with :meth:`add_board`.

        ``stop`` ends the event in order: ``abort`` without a board calls it.
        ``open_seats`` names the players whose TCP seat anyone may take (``status`` says so).
        """
        self._event, self._stop_event = name, stop
        self._open_seats = open_seats
        self._thread.start()
        LOGGER.info("control socket: %s", self.path)

    def add_board(self, number: int, title: str, submit: Submit, recent: RecentLines) -> None:
        """A board of the event is being played; ``recent`` must listen to its match."""
        with self._lock:
            self._boards[number] = _Board(submit, recent, title)

    def remove_board(self, number: int) -> None:
        """A board of the event has ended."""
        with self._lock:
            board = self._boards.pop(number, None)
            for unanswered, submit in self._unanswered.items():
                if board is not None and submit == board.submit:
                    unanswered.set()  # its referee has left the loop: no answer will come

    def handle(self, event: MatchEvent) -> None:
        self.recent.handle(event)

    def close(self) -> None:
        """Stop listening, let the clients served go (with an answer), remove the socket."""
        self._closing.set()
        with suppress(OSError):
            os.write(self._wake_writer, b"\0")
        with self._lock:
            for unanswered in self._unanswered:
                unanswered.set()  # the referee has stopped: it will not answer them
        if self._thread.ident is not None:
            self._thread.join()
        with self._lock:
            clients = list(self._clients)
        for client in clients:
            client.join()
        self._listener.close()
        os.close(self._wake_reader)
        os.close(self._wake_writer)
        with suppress(FileNotFoundError):
            self.path.unlink()

    # ---------------------------------------------------------------- threads

    def _accept(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._wake_reader, selectors.EVENT_READ)
            while not self._closing.is_set():
                watched = self._listener in selector.get_map()
                if self._acceptor.paused == watched:
                    if watched:
                        selector.unregister(self._listener)
                    else:
                        selector.register(self._listener, selectors.EVENT_READ)
                due = self._acceptor.due() - time.monotonic()
                for key, _ in selector.select(None if math.isinf(due) else max(due, 0.0)):
                    if key.fileobj is self._listener:
                        self._take_client()
                self._acceptor.log.settle()
        self._acceptor.log.close()

    def _take_client(self) -> None:
        accepted = self._acceptor.accept()
        if accepted is None:
            return
        connection, _ = accepted
        connection.setblocking(True)  # its own thread waits on it, within _CLIENT_TIMEOUT
        with self._lock:
            self._clients = {client for client in self._clients if client.is_alive()}
            if len(self._clients) >= MAX_CLIENTS:
                busy = f"{MAX_CLIENTS} control clients are being served at once: try again soon"
                self._acceptor.log.note("too many clients", f"control socket: {busy}")
                _answer(connection, Reply(False, error=busy))
                connection.close()
                return
            client = threading.Thread(target=self._serve, args=(connection,), name="control")
            self._clients.add(client)
        client.start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(_CLIENT_TIMEOUT)
            try:
                uid = _peer_uid(connection)
                request = decode_request(_read_line(connection))
            except CommandError as exc:
                _answer(connection, Reply(False, error=str(exc)))
                return
            except OSError as exc:
                LOGGER.warning("control socket: a client went away: %s", exc)
                return
            _answer(connection, self._ask_referee(request, uid))

    def _ask_referee(self, request: Request, uid: int) -> Reply:
        """Carry the request out on the board it names; the answer, or why there is none."""
        with self._lock:
            boards = dict(self._boards)
        if self._event is None or request.board is not None:
            return self._ask_board(boards, request, uid)
        if request.command == "status":
            return self._event_status(boards, uid)
        if request.command == "abort" and self._stop_event is not None:
            said = " ".join(request.args) or "aborted by the supervisor"
            for number in sorted(boards):
                self._ask_board(boards, Request("abort", request.args, number), uid)
            self._stop_event(f"supervisor (uid {uid}): {printable(said)}")
            return self._event_status(boards, uid)
        if len(boards) != 1:
            playing = ", ".join(map(str, sorted(boards))) or "none"
            return Reply(False, error=f"name a board with --board N: the event plays "
                                      f"{len(boards)} at once (boards {playing})")  # fmt: skip
        return self._ask_board(boards, Request(request.command, request.args, *boards), uid)

    def _ask_board(self, boards: dict[int, _Board], request: Request, uid: int) -> Reply:
        number = _LONE if request.board is None else request.board
        board = boards.get(number)
        if board is None:
            playing = ", ".join(map(str, sorted(boards))) or "none"
            return Reply(False, error=f"no board {number} is being played (boards: {playing})")
        reply = self._ask(board, request, uid)
        if self._event is None or not reply.ok:
            return reply
        return Reply(True, {"board": number, "title": board.title, **(reply.status or {})})

    def _event_status(self, boards: dict[int, _Board], uid: int) -> Reply:
        """Every board's status, in board order (a board that just ended is left out)."""
        shown = []
        for number in sorted(boards):
            reply = self._ask_board(boards, Request("status", (), number), uid)
            if reply.ok and reply.status is not None:
                shown.append(reply.status)
        event = {"name": self._event, "boards": [status["board"] for status in shown],
                 "open_seats": list(self._open_seats)}  # fmt: skip
        return Reply(True, {"event": event, "boards": shown})

    def _ask(self, board: _Board, request: Request, uid: int) -> Reply:
        """Run the request on the referee's thread; its answer, or why there is none."""
        answered = threading.Event()
        replies: list[Reply] = []

        def task(match: MatchReferee) -> None:
            try:
                if request.command != "status":
                    command = SupervisorCommand(request.command, request.args, uid)
                    carry_out(match, command)
                    said = " ".join((request.command, *request.args))
                    where = "" if request.board is None else f" on board {request.board}"
                    LOGGER.warning("supervisor (uid %d)%s: %s", uid, where, printable(said))
                replies.append(Reply(True, match_status(match, board.recent)))
            except CommandError as exc:
                replies.append(Reply(False, error=str(exc)))
            finally:
                answered.set()

        with self._lock:
            if self._closing.is_set():
                return Reply(False, error="the match is over")
            self._unanswered[answered] = board.submit
        board.submit(task)
        answered.wait(_ANSWER_WITHIN)
        with self._lock:
            self._unanswered.pop(answered, None)
        if not replies:
            return Reply(False, error="the referee did not answer (is the match over?)")
        return replies[0]


def _listen(path: Path, group: str | None) -> socket.socket:
    """A listening Unix socket at ``path``, mode 0660, in ``group``; replaces a stale one."""
    gid = _group_id(group)
    _remove_stale(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
        os.chmod(path, _MODE)
        if gid is not None:
            os.chown(path, -1, gid)
        listener.listen(_BACKLOG)
    except OSError as exc:
        listener.close()
        raise ControlError(
            f"cannot make the control socket {str(path)!r}: {exc.strerror or exc}"
        ) from exc
    return listener


def _group_id(group: str | None) -> int | None:
    if not group:
        return None
    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        raise ControlError(f"control socket group {group!r}: no such group") from None


def _remove_stale(path: Path) -> None:
    """A socket left by a referee that died is removed; a live one, or any other file, is not."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ControlError(f"control socket {str(path)!r}: {exc.strerror or exc}") from exc
    if not stat.S_ISSOCK(mode):
        raise ControlError(f"control socket {str(path)!r}: a file that is not a socket is there")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            path.unlink()
            return
        except OSError as exc:
            raise ControlError(f"control socket {str(path)!r}: {exc.strerror or exc}") from exc
    raise ControlError(f"control socket {str(path)!r}: another referee is listening there")


def _peer_uid(connection: socket.socket) -> int:
    credentials = connection.getsockopt(
        socket.SOL_SOCKET, socket.SO_PEERCRED, _PEER_CREDENTIALS.size
    )
    _, uid, _ = _PEER_CREDENTIALS.unpack(credentials)
    return int(uid)


def _read_line(connection: socket.socket) -> bytes:
    """One request line, at most :data:`MAX_LINE` bytes."""
    data = b""
    while b"\n" not in data:
        chunk = connection.recv(4096)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_LINE:
            raise CommandError(f"request longer than {MAX_LINE} bytes")
    return data.split(b"\n", 1)[0]


def _answer(connection: socket.socket, reply: Reply) -> None:
    with suppress(OSError):
        connection.sendall(encode_reply(reply))
