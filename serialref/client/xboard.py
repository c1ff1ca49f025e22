"""The XBoard dialect: python-chess's XBoard protocol with the client's additions
(:mod:`serialref.client.dialect`) and Debian's GNU Chess's allowances.

GNU Chess 6 (Debian's ``gnuchess``) needs four allowances more, all in
:class:`XBoardEngine`. Its start-up can drop the line that follows the first one: its
input thread reads standard input through a buffer, and its adapter thread, once it
starts, switches that buffer off and so discards what was read past the first line
(``protover 2`` after ``xboard``). That switch waits for the input's lock, which the
input thread holds while it waits for a line, so the start-up only advances while
input keeps arriving. So the handshake is warmed up: ``xboard``, then ``protover 2``
at once and again every 50 ms until a ``feature`` line shows it was heard (the
adapter, which answers it, has then started), then the features' ``done=1`` is
awaited before python-chess's own handshake (which gives the feature exchange 2 s)
runs. A prompt engine answers the first ``protover`` and merely does the feature
exchange twice; the ``feature`` lines of a repeated ``protover`` that arrive after
the handshake are dropped. Until it hears ``xboard`` it prints a prompt without a
line end, so its first answer can read ``White (1) : Invalid move: uci``: refusals
and ``feature`` lines are recognised wherever they stand on the line. It announces
moves in the pre-``move`` CECP forms (``My move is : e2e4``, echoed as ``1. ... e2e4``),
which are translated or dropped. It echoes other lines python-chess does not know
(``TCMove = 35``, ``1. e7e5``, ``Fischer increment of 0 seconds.``), dropped here
rather than warned about on every move. And it answers ``ping`` from its input thread
at once while its search thread may still announce the move it found: after
``resign`` python-chess ends the search on the pong, and that move arrives during the
next game's search, where python-chess would take it for the answer. A move cannot be
told stale by timing or by position in the stream, so the rule is by legality: once a
game-over line was seen, the first move announcement that is illegal in the position
being searched is dropped. A legal one is passed on (an engine that prints no stale
move keeps its first move), and either way the allowance ends there: a second
illegal move is the engine's own fault.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable

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

__all__ = ["XBoardEngine"]

LOGGER = logging.getLogger(__name__)

_XBOARD_COMMANDS = frozenset(
    [
        "xboard", "protover", "accepted", "rejected", "new", "variant", "force", "go", "playother",
        "white", "black", "level", "st", "sd", "nps", "time", "otim", "?", "ping", "draw",
        "result", "setboard", "edit", "hint", "bk", "undo", "remove", "hard", "easy", "post",
        "nopost", "analyze", "name", "rating", "ics", "computer", "pause", "resume", "memory",
        "cores", "egtpath", "option", "exit", ".", "random", "quit",
    ]
)
"""Commands python-chess sends to XBoard engines; refusing anything else is refusing a move."""

_FEATURES_DONE = re.compile(r"(?:^|\s)feature\b.*\bdone=1\b")
_LEGACY_MOVE = re.compile(r"^\s*My move is\s*:\s*(\S+)\s*$")
_MOVE_ANNOUNCEMENT = re.compile(r"^\s*move\s+(\S+)")
_GAME_OVER = re.compile(r"^\s*(?:resign\s*$|(?:1-0|0-1|1/2-1/2)(?:\s|$))")
"""The lines after which python-chess ends a search without a move (it pings and stops)."""

_ECHOES = re.compile(
    r"^\s*(?:\d+\s*\.\s*(?:\.\.\.\s*)?\S+\s*$"  # 1. e7e5 (theirs), 1. ... e2e4 (ours)
    r"|Chess\s*$|TCMove\s*=|Fischer increment of\b"
    r"|tell(?:ics|icsnoalias|user|all|opponent|others)\b)"
)
"""GNU Chess's echoes and chatter, which python-chess would warn about line by line."""

_MOVE_NUMBER = re.compile(r"^\d+\.+$")
_POST = re.compile(r"\d\S*(?:\s+\S+){3}")
"""An XBoard post line: ply, score, time and nodes, then the variation."""


class XBoardEngine(Dialect, chess.engine.XBoardProtocol):
    """python-chess's XBoard protocol with the client's additions and GNU Chess's allowances."""

    def __init__(self) -> None:
        super().__init__()
        self._dialect_init(self.loop)
        self._warm_up: asyncio.Future[None] | None = None
        self._stale_move_possible = False
        self._post_line = ""

    async def initialize(self) -> None:
        """Warm the engine up (see the module docstring), then python-chess's handshake."""
        self._warm_up = self.loop.create_future()
        self.send_line("xboard")
        nudges = self.loop.create_task(self._nudge())
        try:
            await self._warm_up
            await super().initialize()
        finally:
            nudges.cancel()

    async def _nudge(self) -> None:
        """``protover 2`` now and every 50 ms until the engine shows it heard one."""
        while not (self.spoke or self.refusal.done()):
            self.send_line("protover 2")
            await asyncio.sleep(NUDGE_INTERVAL)

    def _line_received(self, line: str) -> None:
        if self._warm_up is not None and not self._warm_up.done():
            LOGGER.debug("%s: >> %s (warm-up)", self, escape(line))
            if FEATURE.search(line):
                self.spoke = True
            if _FEATURES_DONE.search(line):
                self._warm_up.set_result(None)
            elif not self._refused(line, frozenset({"xboard", "protover"})):
                self.alive = True
            return
        if self.initialized and FEATURE.search(line):
            LOGGER.debug("%s: >> %s (a repeated protover's answer, ignored)", self, escape(line))
            return
        if _ECHOES.match(line):
            LOGGER.debug("%s: >> %s (echo, ignored)", self, escape(line))
            return
        if self._refused(line, frozenset()):
            return
        legacy = _LEGACY_MOVE.match(line)
        if legacy:
            line = f"move {legacy.group(1)}"
        if _GAME_OVER.match(line):
            self._stale_move_possible = True
        elif self._stale_move_possible and (announced := _MOVE_ANNOUNCEMENT.match(line)):
            self._stale_move_possible = False
            if not self._is_legal(announced.group(1)):
                LOGGER.debug("%s: >> %s (stale move after a game over, ignored)", self, line)
                return
        elif _POST.match(line):
            # Split into words only if asked for: most such lines are superseded.
            self._post_line = line
            self._hold(line, scored=True)  # python-chess keeps only the latest post anyway
            return
        for held in self._held_lines():
            super()._line_received(held)
        super()._line_received(line)

    def begin_search(self) -> None:
        """As :meth:`Dialect.begin_search`, and the last search's variation is forgotten."""
        super().begin_search()
        self._post_line = ""

    def start_search(
        self,
        board: chess.Board,
        limit: chess.engine.Limit,
        *,
        game: object,
        draw_offered: bool,
        ended: Callable[[], None],
    ) -> asyncio.Future[chess.engine.PlayResult]:
        """python-chess's ``play``: an XBoard engine is told each move as it comes anyway.

        ``ended`` is called when the search has ended, as for a UCI engine.
        """
        search = asyncio.ensure_future(
            self.play(board, limit, game=game, info=PROGRESS, draw_offered=draw_offered)
        )
        search.add_done_callback(lambda _: ended())
        return search

    def variation(self, board: chess.Board, *, limit: int) -> tuple[chess.Move, ...]:
        """The variation's words are SAN or coordinates, read move by move from ``board``."""
        words = [word for word in self._post_line.split()[4:] if not _MOVE_NUMBER.match(word)]
        return played_variation(board, words[:limit], uci=False)

    def settle_options(self) -> None:
        """Nothing to do: XBoard engines are sent their few options with each ``new``."""

    def _is_command(self, word: str) -> bool:
        return word in _XBOARD_COMMANDS

    def _send_stop(self) -> None:
        self.send_line("?")

    def _is_legal(self, announced: str) -> bool:
        try:
            self.board.parse_xboard(announced)
        except ValueError:
            return False
        return True
