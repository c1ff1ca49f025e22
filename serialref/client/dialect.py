"""What the client adds to python-chess's UCI and XBoard protocols, for both alike.

python-chess speaks both protocols well; the client asks these things more of them.

- **Stopping a search and keeping the engine.** :meth:`Dialect.stop_search` sends
  ``stop`` / ``?`` *without* cancelling the python-chess command, so the engine's answer
  still completes it. (Cancelling an XBoard ``play`` sends ``?`` but never ends the
  command, and every later command would wait behind it.)
- **The search's progress, read once.** An engine prints a line for every step of
  its search (``info ...``, XBoard post lines), a dozen a move, and python-chess would
  tokenize each one. Each dialect holds them back instead and hands python-chess
  only the latest with a score (and any line after it) just before the answer, which
  gives the same final information; it keeps the latest principal variation itself,
  read into moves only when asked for (:meth:`Dialect.variation`), so that an engine
  that ignores ``stop`` still leaves the client a move to play. (A UCI engine's
  search within a game is read apart from python-chess altogether, on a thread:
  :mod:`serialref.client.searchreader`.)
- **Output read in bounded time and memory.** python-chess cuts each line off the
  rest of what it read, copying the rest every time, and keeps a line however long it
  grows; an engine printing megabytes of progress a move kept the client from its own
  deadline. :meth:`Dialect.pipe_data_received` splits each read once and keeps the
  first :data:`MAX_LINE` bytes of a line: what python-chess's tokenizer (which copies
  the line's rest for every word) is given stays small, and so does the memory an
  engine's output can take.
- **One warning for a refused command.** An engine that refuses a command we sent
  (``Error (unknown command): sd``, GNU Chess's ``Invalid move: sd 2``) would make
  python-chess fail the search or warn on every move; the refusal goes to
  :attr:`Dialect.on_refusal` once per line instead, so the player can say which
  option has no effect. A refused *move* still fails the search, as it must.
- **Telling the protocols apart** at start-up: :attr:`Dialect.spoke` turns true when
  the engine says something only this protocol's engines say, :attr:`Dialect.alive`
  when it says anything that is not an echo or a refusal (a banner, say), and
  :attr:`Dialect.refusal` resolves when it rejects the handshake command itself (or,
  asked ``uci``, announces XBoard ``feature`` lines).

The UCI dialect, which also sends a search in one write, is
:mod:`serialref.client.uci`; the XBoard one, with GNU Chess's allowances,
:mod:`serialref.client.xboard`.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable

import chess
import chess.engine

from serialref.errors import escape

__all__ = [
    "FEATURE",
    "MAX_LINE",
    "NUDGE_INTERVAL",
    "PROGRESS",
    "Dialect",
    "played_variation",
]

LOGGER = logging.getLogger(__name__)

PROGRESS = chess.engine.INFO_BASIC | chess.engine.INFO_SCORE
"""What python-chess parses of the progress lines; the variation is read apart, once."""

MAX_LINE = 16 * 1024
"""Bytes of an engine's output line that are read: a variation of some 3,000 plies.

The rest of a longer line is dropped (its variation then ends early).
"""

NUDGE_INTERVAL = 0.05
"""Seconds between the lines that wake an engine whose start-up waits for input."""

_REFUSAL = re.compile(
    r"(?:^|\s)(?:Error\s*(?:\([^()]*\))?|Illegal move\s*(?:\([^()]*\))?|Invalid move"
    r"|Unknown command)\s*:\s*'?(?P<command>[^\s']+)",
    re.IGNORECASE,
)
"""An engine refusing a command: ``Error (unknown command): sd``, ``Invalid move: sd 2``,
also after a prompt (``White (1) : Invalid move: uci``); searched for, not matched."""

FEATURE = re.compile(r"(?:^|\s)feature\b")
"""XBoard's ``feature`` lines, also after a prompt: searched for, not matched."""


class Dialect(chess.engine.Protocol):
    """What both engine classes add to python-chess; see the module docstring.

    :class:`~serialref.client.uci.UciEngine` and
    :class:`~serialref.client.xboard.XBoardEngine` inherit it before python-chess's
    protocol of their engines, and call :meth:`_dialect_init` from their constructor.
    """

    board: chess.Board
    on_refusal: Callable[[str, str], None]
    """Told ``(command, line)`` when the engine refuses a command that is not a move."""

    spoke: bool
    alive: bool
    refusal: asyncio.Future[str]

    def _dialect_init(self, loop: asyncio.AbstractEventLoop) -> None:
        self.on_refusal = _log_refusal
        self.spoke = False
        self.alive = False
        self.refusal = loop.create_future()
        self._held: list[str] = []
        self._stop_sent = False
        self._unfinished = b""
        self._cut = False

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        """Split what was read from the engine into lines, once, and pass each on with
        at most :data:`MAX_LINE` bytes (see the module docstring)."""
        if fd != 1 or isinstance(data, str):
            super().pipe_data_received(fd, data)
            return
        lines = data.split(b"\n")
        lines[0] = self._unfinished + lines[0]
        unfinished = lines.pop()
        if len(unfinished) > MAX_LINE:
            self._note_cut()
        self._unfinished = unfinished[:MAX_LINE]
        for line in lines:
            if len(line) > MAX_LINE:
                self._note_cut()
            text = line[:MAX_LINE].removesuffix(b"\r").decode("utf-8", "replace")
            self._line_received(text)

    def _note_cut(self) -> None:
        """One warning per engine process that prints a line too long to be read whole."""
        if not self._cut:
            self._cut = True
            LOGGER.warning(
                "%s printed a line longer than %d bytes: the rest is dropped", self, MAX_LINE
            )

    def begin_search(self) -> None:
        """A new search starts: forget the last one's progress and stop."""
        self._held = []
        self._stop_sent = False

    def best_move(self) -> chess.Move | None:
        """The first move of the latest principal variation, if legal in the searched position."""
        variation = self.variation(self.board, limit=1)
        if variation and self.board.is_legal(variation[0]):
            return variation[0]
        return None

    def variation(self, board: chess.Board, *, limit: int) -> tuple[chess.Move, ...]:
        """The latest principal variation from ``board``, at most ``limit`` moves.

        The moves are not checked for legality beyond what reading them needs: the
        reply's ``pv`` stops at the first illegal one anyway.
        """
        raise NotImplementedError

    def stop_search(self) -> None:
        """Ask the engine to move now, once per search; its answer ends the search."""
        if not self._stop_sent:
            self._stop_sent = True
            self._send_stop()

    def _send_stop(self) -> None:
        raise NotImplementedError

    def _hold(self, line: str, *, scored: bool) -> None:
        """Keep a progress line back: the latest with a score, and those after it."""
        if scored:
            self._held = [line]
        elif self._held:
            self._held[1:] = [line]
        else:
            self._held = [line]

    def _held_lines(self) -> list[str]:
        """The progress lines held back, in the order they came; forgotten here."""
        held, self._held = self._held, []
        return held

    def _refused(self, line: str, handshake_commands: frozenset[str]) -> bool:
        """Handle a refusal of a command that is not a move; True if ``line`` was one.

        During the handshake, a program that echoes the handshake command back (``cat``)
        refuses it too: no engine answers ``uci`` with ``uci``.
        """
        if line.strip() in handshake_commands and not self.refusal.done():
            self.refusal.set_result(line)
            return True
        match = _REFUSAL.search(line)
        if match is None:
            return False
        command = match.group("command")
        if command in handshake_commands and not self.refusal.done():
            self.refusal.set_result(line)
            return True
        if not self._is_command(command):
            return False
        if command not in ("?", "stop"):  # a stop that crossed the answer: nothing to say
            self.on_refusal(command, line)
        return True

    def _is_command(self, word: str) -> bool:
        raise NotImplementedError


def played_variation(board: chess.Board, words: list[str], *, uci: bool) -> tuple[chess.Move, ...]:
    """The moves ``words`` spell (in UCI, or XBoard's SAN or coordinates), each read and
    played on a copy of ``board``; cut at the first that cannot be."""
    line = board.copy(stack=False)
    moves: list[chess.Move] = []
    for word in words:
        try:
            moves.append(line.push_uci(word) if uci else line.push_xboard(word))
        except ValueError:
            break
    return tuple(moves)


def _log_refusal(command: str, line: str) -> None:
    LOGGER.warning("the engine refused %r: %s", command, escape(line))
