"""The UCI dialect: python-chess's UCI protocol with the client's additions.

What both dialects add to python-chess is :class:`~serialref.client.dialect.Dialect`'s;
a UCI engine's search within a game also leaves python-chess's engine layer.

python-chess's ``play`` starts each search afresh: it checks the managed options,
writes the FEN of the game's start and every move of the game, and parses each line
of the engine's progress, each read on its own turn of the event loop. Within a UCI
game the client sends the same history again with a move or two more, so
:meth:`UciEngine.search` keeps the ``position`` line from move to move, adds only the
new moves and writes it with ``go`` in one write; the engine's output is read by a
thread (:mod:`serialref.client.searchreader`) that wakes the event loop once, with the
``bestmove``, and of the progress only the latest ``info`` line with a score is read.
:meth:`UciEngine.new_game` announces a game (``ucinewgame``, ``isready``) before its
first move is asked for. The engine's very first search, and any search the line
cannot vouch for (a variant, a null move), is python-chess's ``play``; the handshake,
options, ``isready`` and ``quit`` stay python-chess's too.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

import chess
import chess.engine

from serialref.client.dialect import (
    FEATURE,
    MAX_LINE,
    NUDGE_INTERVAL,
    PROGRESS,
    Dialect,
    played_variation,
)
from serialref.client.searchreader import SearchLines, SearchReader
from serialref.rules.fairy import FairyBoard

__all__ = ["UciEngine"]

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
        self._reader: SearchReader | None = None
        self._lines: SearchLines | None = None  # the latest search the reader kept lines of
        self.returncode.add_done_callback(self._ended)

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
        self._lines = None

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

    def start_search(
        self,
        board: chess.Board,
        limit: chess.engine.Limit,
        *,
        game: object,
        draw_offered: bool,
        ended: Callable[[], None],
    ) -> asyncio.Future[chess.engine.PlayResult]:
        """The search, started now: within a game ``position`` and ``go`` go out in one
        write at once and the reader's thread reads the answer (module docstring).

        ``ended`` is called as soon as the search has its result or error. Cancelling
        the future tells the engine to stop; its ``bestmove`` still ends the search, and
        nothing else is written to the engine before it.
        """
        steady = not self.first_game and self.game == game and not self.ponderhit
        position = self._position_line(board) if steady else None
        if position is None:
            search = asyncio.ensure_future(self.play(board, limit, game=game, info=PROGRESS))
            search.add_done_callback(lambda _: ended())
            return search
        reader = self._reader or self._start_reader()
        if reader.searching is not None:
            failed = self.loop.create_future()
            failed.set_exception(chess.engine.EngineError("a search began before the last ended"))
            ended()
            return failed
        self._batch = [position]
        try:
            self._go(limit)
            request = "\n".join(self._batch)
        finally:
            self._batch = None
        self.board = board
        lines = self._lines = reader.expect_answer(self._result, ended)
        super().send_line(request)
        lines.answer.add_done_callback(self._abandoned)
        return lines.answer

    def _abandoned(self, answer: asyncio.Future[chess.engine.PlayResult]) -> None:
        if answer.cancelled():
            self.stop_search()

    def _start_reader(self) -> SearchReader:
        """The reader takes the engine's output over from python-chess's transport."""
        assert self.transport is not None
        pending, self._unfinished = self._unfinished, b""
        reader = self._reader = SearchReader(
            self.transport.get_pipe_transport(1),  # type: ignore[arg-type]
            deliver=self._line_received,
            cut=self._note_cut,
            max_line=MAX_LINE,
            pending=pending,
        )
        return reader

    def _result(self, lines: SearchLines, answer: str) -> chess.engine.PlayResult:
        """The ``bestmove``, legal in the searched board, with what the kept ``info`` lines
        say. (An abandoned search is read too, on a board that may have moved on: its
        result or error is for nobody.)"""
        board = self.board
        info: chess.engine.InfoDict = {}
        for line in lines.info_lines():
            info.update(chess.engine._parse_uci_info(line[5:], board, PROGRESS))
        move: chess.Move | None = None
        uci = answer.split()[1:2]
        if uci and uci[0] not in ("(none)", "NULL"):
            try:
                move = board.parse_uci(uci[0].lower())
            except ValueError as exc:
                raise chess.engine.EngineError(exc) from exc
        return chess.engine.PlayResult(move, None, info)

    def _ended(self, returncode: asyncio.Future[int]) -> None:
        """The process ended: a search in flight fails as python-chess's would."""
        if self._reader is not None and not returncode.cancelled():
            code = returncode.result()
            self._reader.engine_ended(
                chess.engine.EngineTerminatedError(
                    f"engine process died unexpectedly (exit code: {code})"
                )
            )

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
        found = _UCI_PV.search(self._lines.variation_line() if self._lines else self._pv_line)
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
