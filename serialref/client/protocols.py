"""The engine dialects: python-chess's UCI and XBoard protocols, plus what the client needs.

python-chess speaks both protocols well; the client asks four things more of them.

- **Stopping a search and keeping the engine.** ``stop_search`` sends ``stop`` / ``?``
  *without* cancelling the python-chess command, so the engine's answer completes it
  (a cancelled XBoard ``play`` never ends, and every later command waits behind it).
- **The search's progress, read once.** An engine prints a dozen progress lines a
  move (``info ...``, XBoard post lines), which python-chess would tokenize each. The
  dialects hand it only the latest with a score (and any after it) just before the
  answer, the same final information, and keep the latest principal variation, read
  into moves only when asked for (:meth:`Dialect.variation`), so that an engine that
  ignores ``stop`` still leaves the client a move to play.
- **Output read in bounded time and memory.** python-chess cuts each line off the
  rest of what it read, copying the rest every time, and keeps a line however long it
  grows; an engine printing megabytes of progress a move kept the client from its own
  deadline. :meth:`Dialect.pipe_data_received` splits each read once and keeps the
  first :data:`MAX_LINE` bytes of a line: what python-chess's tokenizer (which copies
  the line's rest for every word) is given stays small, and so does the memory an
  engine's output can take.
- **A search in one write.** python-chess's ``play`` starts each search afresh: it
  checks the managed options and writes the game's whole history. :meth:`UciEngine.search`
  keeps the ``position`` line from move to move, adds only the new moves and sends it
  with ``go`` in one write; :meth:`UciEngine.new_game` announces a game (``ucinewgame``,
  ``isready``) before its first move is asked for. The engine's first search, and any
  search the line cannot vouch for (a variant, a null move), is python-chess's ``play``.
- **One warning for a refused command.** An engine that refuses a command we sent
  (``Error (unknown command): sd``, GNU Chess's ``Invalid move: sd 2``) would make
  python-chess fail the search or warn on every move; it goes to :attr:`Dialect.on_refusal`
  instead, which names the option that has no effect. A refused *move* fails the search.
- **Telling the protocols apart** at start-up: :attr:`Dialect.spoke` turns true when
  the engine says what only this protocol's engines say, :attr:`Dialect.alive` when it
  says anything but an echo or a refusal, and :attr:`Dialect.refusal` resolves when it
  rejects the handshake command (or, asked ``uci``, announces XBoard ``feature`` lines).

The UCI dialect is here, the XBoard one (with GNU Chess's allowances) in
:mod:`serialref.client.xboard`.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable

import chess
import chess.engine

from serialref.client.positionline import PositionLine
from serialref.errors import escape
from serialref.rules.fairy import FairyBoard

__all__ = [
    "FEATURE",
    "MAX_LINE",
    "NUDGE_INTERVAL",
    "PROGRESS",
    "Dialect",
    "UciEngine",
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

_UCI_SPEECH = re.compile(r"^\s*(?:id|option|uciok)\b")
_UCI_PV = re.compile(r"\bpv\s+(.*)$")


class Dialect(chess.engine.Protocol):
    """What both engine classes add to python-chess; see the module docstring.

    The engine classes below inherit it before python-chess's protocol of their
    engines, and call :meth:`_dialect_init` from their constructor.
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


class UciEngine(Dialect, chess.engine.UciProtocol):
    """python-chess's UCI protocol with the client's additions (module docstring).

    Until the engine has shown which protocol it speaks, an empty line follows ``uci``
    every 50 ms: UCI engines ignore empty lines, and GNU Chess, whose start-up only
    advances while input arrives, then refuses ``uci`` at once instead of after the
    probe's timeout.
    """

    def __init__(self) -> None:
        super().__init__()
        self._dialect_init(self.loop)
        self._history: PositionLine | None = None
        self._batch: list[str] | None = None
        self._pv_line = ""

    async def initialize(self) -> None:
        """python-chess's handshake, with the nudges of the class docstring."""
        nudges = self.loop.create_task(self._nudge())
        try:
            await super().initialize()
        finally:
            nudges.cancel()

    async def _nudge(self) -> None:
        while not (self.spoke or self.refusal.done()):
            await asyncio.sleep(NUDGE_INTERVAL)
            self.send_line("")

    def begin_search(self) -> None:
        """As :meth:`Dialect.begin_search`, and the latest line with a variation is forgotten."""
        super().begin_search()
        self._pv_line = ""

    def _line_received(self, line: str) -> None:
        if line.startswith("info") and self.initialized:
            if " pv " in line:
                # Read into words only if asked for: most such lines are superseded.
                self._pv_line = line
            self._hold(line, scored=" score " in line)
            return
        if not self.initialized:
            if _UCI_SPEECH.match(line):
                self.spoke = True
            elif FEATURE.search(line) and not self.refusal.done():
                self.refusal.set_result(line)  # an XBoard engine announcing itself
            elif self._refused(line, frozenset({"uci"})):
                return
            self.alive = True
        elif self._refused(line, frozenset()):
            return
        for held in self._held_lines():
            super()._line_received(held)
        super()._line_received(line)

    async def new_game(self, game: object) -> None:
        """``ucinewgame``, ``readyok``: ahead of the game's first search (after python-chess's)."""
        if self.first_game or self.game == game:
            return
        self._ucinewgame()
        self.game = game
        self._history = None
        await self.ping()

    async def search(
        self, board: chess.Board, limit: chess.engine.Limit, *, game: object, draw_offered: bool
    ) -> chess.engine.PlayResult:
        """``position`` and ``go`` in one write within a game (module docstring)."""
        steady = not self.first_game and self.game == game and not self.ponderhit
        position = self._position_line(board) if steady else None
        if position is None:
            return await self.play(board, limit, game=game, info=PROGRESS)
        self._batch = [position]
        try:
            self._go(limit)
            lines = self._batch
        finally:
            self._batch = None
        self.board = board.copy(stack=False)
        request = "\n".join(lines)
        return await self.communicate(lambda engine: _UciSearch(engine, request))

    def send_line(self, line: str) -> None:
        """Send ``line``, or keep it for the write that :meth:`search` is putting together."""
        if self._batch is None:
            super().send_line(line)
        else:
            self._batch.append(line)

    def _position_line(self, board: chess.Board) -> str | None:
        """The ``position`` line of ``board``, or None where python-chess must write it.

        The line is extended with the moves played since the last search when the board
        is the same object with the same moves below (the session keeps one board per
        game and only pushes onto it); anything else starts the line again.
        """
        if board.chess960 or type(board).uci_variant != "chess":
            return None
        history = self._history
        stack = board.move_stack
        if history is None or not history.continued_by(board):
            root = board.root()
            fen = root.fen(en_passant="fen")
            start = "position startpos" if fen == chess.STARTING_FEN else f"position fen {fen}"
            history = self._history = PositionLine(board, start)
        new = stack[history.plies :]
        if new:
            if not all(new):
                self._history = None
                return None  # a null move: python-chess warns and sends no history
            history.extend(new)
        return history.line

    def variation(self, board: chess.Board, *, limit: int) -> tuple[chess.Move, ...]:
        """The variation's words are UCI moves, read without the board on python-chess's
        boards; a fairy variant's (squares beyond h8) are read move by move from ``board``."""
        found = _UCI_PV.search(self._pv_line)
        words = found.group(1).split()[:limit] if found else []
        if isinstance(board, FairyBoard):
            return played_variation(board, words, uci=True)
        moves: list[chess.Move] = []
        for word in words:
            try:
                moves.append(chess.Move.from_uci(word))
            except ValueError:
                break
        return tuple(moves)

    def settle_options(self) -> None:
        """Stop re-checking every option before each search: they are set once, for good.

        python-chess keeps ``target_config``, the option values every command starts
        from, so that options given to a single search can be undone; it re-checks all
        of them (a score of ``setoption`` candidates for Stockfish) before each search.
        The client never gives per-search options, so the engine's configuration,
        defaults and ``--option`` values, stays as the handshake and ``configure`` left it.
        """
        self.target_config.clear()

    def _is_command(self, word: str) -> bool:
        return word not in ("", "position") and not chess.engine.UCI_REGEX.match(word)

    def _send_stop(self) -> None:
        self.send_line("stop")


class _UciSearch(chess.engine.BaseCommand[chess.engine.PlayResult]):
    """A ``go`` whose ``position`` was built by :class:`UciEngine` and sent with it.

    It reads the progress lines the dialect passes on and the ``bestmove``, which must be
    legal in the searched position and alone ends the command, even one its caller gave
    up on: until then, every later command waits behind it.
    """

    def __init__(self, engine: UciEngine, request: str) -> None:
        super().__init__(engine)
        self._uci = engine
        self._request = request
        self._info: chess.engine.InfoDict = {}

    def start(self) -> None:
        """Send the ``position`` and ``go`` lines."""
        self._uci.send_line(self._request)

    def line_received(self, line: str) -> None:
        """Progress is read; ``bestmove`` ends the search."""
        token, _, rest = line.partition(" ")
        if token == "info":
            self._info.update(chess.engine._parse_uci_info(rest, self._uci.board, PROGRESS))
        elif token == "bestmove":
            self._answer(rest)
        else:
            LOGGER.warning("%s: unexpected engine output: %s", self._uci, escape(line))

    def cancel(self) -> None:
        """Abandoned: the engine is told to stop, and its ``bestmove`` ends the command."""
        self._uci.stop_search()

    def _answer(self, words: str) -> None:
        move: chess.Move | None = None
        uci = words.split()[:1]
        if uci and uci[0] not in ("(none)", "NULL"):
            try:
                move = self._uci.board.parse_uci(uci[0].lower())
            except ValueError as exc:
                raise chess.engine.EngineError(exc) from exc
        if not self.result.done():
            self.result.set_result(chess.engine.PlayResult(move, None, self._info))
        self.set_finished()


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
