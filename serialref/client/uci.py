"""The UCI dialect: python-chess's UCI protocol with the client's additions.

What both dialects add to python-chess is :class:`~serialref.client.dialect.Dialect`'s;
a UCI engine is also sent each search in one write.

python-chess's ``play`` starts each search afresh: it checks the managed options,
writes the FEN of the game's start and every move of the game, and parses each line
of the engine's progress. Within a UCI game the client sends the same history again
with a move or two more, so :meth:`UciEngine.search` keeps the ``position`` line from
move to move and adds only the new moves, and sends it with ``go`` in one write;
:meth:`UciEngine.new_game` announces a game (``ucinewgame``, ``isready``) before its
first move is asked for. The engine's very first search, and any search the line
cannot vouch for (a variant, a null move), is python-chess's ``play``.
"""

from __future__ import annotations

import asyncio
import logging
import re

import chess
import chess.engine

from serialref.client.dialect import (
    FEATURE,
    NUDGE_INTERVAL,
    PROGRESS,
    Dialect,
    played_variation,
)
from serialref.errors import escape
from serialref.rules.fairy import FairyBoard

__all__ = ["UciEngine"]

LOGGER = logging.getLogger(__name__)

_UCI_SPEECH = re.compile(r"^\s*(?:id|option|uciok)\b")
_UCI_PV = re.compile(r"\bpv\s+(.*)$")


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
        self._history: _PositionLine | None = None
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
            history = self._history = _PositionLine(board, start)
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

    It reads what python-chess's own play command reads for the client: the progress
    lines the dialect passes on (the latest with a score, and those after it) and the
    ``bestmove``, which must be legal in the searched position. The ``bestmove`` alone
    ends the command, even one its caller gave up on: until then, every later command
    waits behind it.
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


class _PositionLine:
    """The ``position`` line of one game's board as far as it was last sent.

    Building the line again from the start every move costs a UCI move per ply
    played, so the line is kept, with the board and the last move it was built from,
    and only extended.
    """

    def __init__(self, board: chess.Board, start: str) -> None:
        self.board = board
        self.line = start
        self.plies = 0
        self._last: chess.Move | None = None

    def continued_by(self, board: chess.Board) -> bool:
        """Whether ``board`` is this game's board with the moves sent still below."""
        stack = board.move_stack
        return (
            board is self.board
            and len(stack) >= self.plies
            and (self.plies == 0 or stack[self.plies - 1] is self._last)
        )

    def extend(self, moves: list[chess.Move]) -> None:
        """Add ``moves``, played after those already in the line."""
        if self.plies == 0:
            self.line += " moves"
        self.line += "".join([f" {move.uci()}" for move in moves])
        self.plies += len(moves)
        self._last = moves[-1]
