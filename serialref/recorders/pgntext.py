"""One game of a match as PGN text: what the PGN file holds for each finished game.

Text from players (names in tags, analysis, reasons) must never break the file.
python-chess writes tag values verbatim, quotes and backslashes included, and
accepts line breaks in the Seven Tag Roster; in comments it drops ``}`` but
keeps line breaks. So this module escapes tag values as the PGN standard says
(``\\\\`` and ``\\"``, section 8.1.1), replaces every unprintable character
with a space, and in comments turns braces and brackets into parentheses, which
also keeps a player from forging ``[%clk ...]`` commands. python-chess reads
an escaped tag back still escaped (it does not unescape); other PGN tools do.

A move's comment is what engine testers' tools read: the clock (``[%clk]``), the
move's time (``[%emt]``), the player's score and depth as python-chess writes and
reads them (``[%eval 0.29,19]``, ``[%eval #-3]``: from White's side, in pawns), then
fastchess's ``n=`` (nodes) and ``pv="..."`` (the principal variation, in SAN as the
player sent it). The game's times are cutechess-cli's tags ``GameStartTime``,
``GameEndTime`` and ``GameDuration``.

The text is laid out exactly as ``chess.pgn``'s ``StringExporter`` lays it out (tags,
a blank line, movetext in lines of at most 80 characters), with the SAN each move was
announced with, but without ``chess.pgn`` itself: that module imports python-chess's
engine module and with it ``asyncio``, 4 MB resident in a referee that otherwise never
needs them.
"""

from __future__ import annotations

import datetime
import logging
import math
import re
from collections.abc import Sequence

import chess

from serialref.analysis.scores import CHECKMATED, mate_in
from serialref.clock import format_clock, side_index
from serialref.happenings import GameEnded, GameStarted, MovePlayed
from serialref.rules import rules_of_tags

__all__ = ["pgn_text"]

LOGGER = logging.getLogger(__name__)

# Tags whose value this module derives from the events, whatever GameStarted.tags says.
_DERIVED_TAGS = frozenset({"Result", "Termination", "PlyCount", "SetUp", "FEN"})

# PGN's Seven Tag Roster, first in every game, and the values of those not known
# (PGN standard 8.1.1, as ``chess.pgn.Headers`` fills them in).
_TAG_ROSTER = {
    "Event": "?",
    "Site": "?",
    "Date": "????.??.??",
    "Round": "?",
    "White": "?",
    "Black": "?",
    "Result": "*",
}
# A tag name PGN allows (``chess.pgn.TAG_NAME_REGEX``).
_TAG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+#=:-]*")
_COLUMNS = 80
"""The movetext's widest line, as ``chess.pgn.StringExporter`` writes it."""

_COMMENT_DELIMITERS = str.maketrans("{}[]", "()()")


def _printable(text: str) -> str:
    """Replace what could end a line or drive a terminal (controls, line separators)."""
    return "".join(char if char.isprintable() else " " for char in text)


def _tag_value(text: str) -> str:
    """A PGN string token's contents: printable, with backslash and quote escaped."""
    return _printable(text).replace("\\", "\\\\").replace('"', '\\"')


def _comment_text(text: str) -> str:
    """Text that cannot close a ``{...}`` comment or open a ``[%...]`` command in it."""
    return " ".join(_printable(text).translate(_COMMENT_DELIMITERS).split())


def _eval_command(mover: chess.Color, analysis: dict[str, str]) -> str:
    """The mover's ``ce`` (spec 6.7: centipawns from the mover's side, mates in the spec's
    encoding) as ``[%eval 0.35,19]`` or ``[%eval #-3,19]``, from White's side as
    ``chess.pgn``'s ``set_eval`` writes it (and its ``eval()`` reads it back); empty
    without one, or for ``ce`` values that are no score of a move played (the mover
    checkmated, the spec's mark of an illegal position)."""
    try:
        ce = int(analysis["ce"])
    except (KeyError, ValueError):
        return ""
    if ce <= CHECKMATED:
        return ""
    depth = analysis.get("acd", "")
    depth_suffix = f",{int(depth)}" if depth.isdigit() else ""
    sign = 1 if mover == chess.WHITE else -1
    mate = mate_in(ce)
    if mate is None:
        return f"[%eval {sign * ce / 100:.2f}{depth_suffix}]"
    return f"[%eval #{sign * mate}{depth_suffix}]"


def _analysis_text(mover: chess.Color, analysis: dict[str, str]) -> str:
    """``[%eval 0.35,19] n=120000 pv="Nf3 Nc6 Bb5"`` from a move's EPD analysis opcodes."""
    parts = []
    score = _eval_command(mover, analysis)
    if score:
        parts.append(score)
    nodes = analysis.get("acn", "")
    if nodes.isdigit():
        parts.append(f"n={nodes}")
    variation = _comment_text(analysis.get("pv", "")).replace('"', "'")
    if variation:
        parts.append(f'pv="{variation}"')
    return " ".join(parts)


_TENTHS_BELOW = 10.0
"""Seconds under which ``%clk`` and ``%emt`` show tenths: whole seconds would hide them."""


def _pgn_clock(seconds: float) -> str:
    return format_clock(seconds, tenths=seconds < _TENTHS_BELOW)


def _move_comment(turn: chess.Color, played: MovePlayed) -> str:
    """The comment after ``played`` (a move of ``turn``): its clock and analysis.

    Clocks use the referee's own clock face (:func:`serialref.clock.format_clock`:
    rounded down, never negative), so the PGN shows what the console and Style 12
    show; an unlimited clock (``inf``) has no ``[%clk]``. Below ten seconds a clock or
    a move time shows tenths (``[%emt 0:00:00.1]``), as a clock face in time trouble
    does: at ``10+0.1`` every move would otherwise read ``0:00:00``.
    """
    remaining = played.remaining[side_index(turn)]
    parts = [f"[%clk {_pgn_clock(remaining)}]"] if math.isfinite(remaining) else []
    parts.append(f"[%emt {_pgn_clock(played.elapsed)}]")
    analysis = _analysis_text(turn, played.analysis)
    if analysis:
        parts.append(analysis)
    return " ".join(parts)


def _headers(
    started: GameStarted, plies: int, ended: GameEnded | None, start: chess.Board, usual: str
) -> dict[str, str]:
    """The Seven Tag Roster and ``TimeControl`` from ``started.tags``, the result and
    ``Termination`` from ``ended`` (``*`` and ``unterminated`` without it),
    ``PlyCount``, the game's times, ``SetUp``/``FEN`` for a start other than ``usual``,
    then any other tag of ``started.tags`` whose name PGN allows; in that order."""
    headers = dict(_TAG_ROSTER)
    for name, value in started.tags.items():
        if name in _TAG_ROSTER or name == "TimeControl":
            headers[name] = _tag_value(value)
    headers["Result"] = _tag_value(ended.result) if ended else "*"
    headers["Termination"] = _tag_value(ended.termination) if ended else "unterminated"
    headers["PlyCount"] = str(plies)
    if ended is not None:
        headers["GameDuration"] = _duration(ended.wall - started.wall)
        headers["GameEndTime"] = _timestamp(ended.wall)
    headers["GameStartTime"] = _timestamp(started.wall)
    if start.fen() != usual:
        headers["SetUp"] = "1"
        headers["FEN"] = start.fen()
    for name, value in started.tags.items():
        if name in headers or name in _DERIVED_TAGS:
            continue
        if _TAG_NAME.fullmatch(name):
            headers[name] = _tag_value(value)
        else:
            LOGGER.warning("game %d: %r is not a PGN tag name; tag left out", started.game, name)
    return headers


def _timestamp(wall: float) -> str:
    """``2026-11-27T14:21:22.512 CET``: a time as cutechess-cli writes ``GameStartTime``
    (Qt's ``yyyy-MM-ddThh:mm:ss.zzz t``: local time, milliseconds, the zone's name)."""
    moment = datetime.datetime.fromtimestamp(wall).astimezone()
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d} {moment.tzname()}"


def _duration(seconds: float) -> str:
    """``01:02:03``: cutechess-cli's ``GameDuration``, whole seconds rounded down (past a
    day the hours go on counting, where cutechess-cli leaves the tag out)."""
    whole = max(0, int(seconds))
    return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


class _Movetext:
    """A game's moves, comments and result laid out in lines as ``chess.pgn`` writes them.

    Each move is given with the SAN it was announced with: SAN needs the legal moves of
    the position (for disambiguation, check and mate), which the referee generated when
    the move was played; doing it again was the largest cost of a PGN game.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._line = ""
        # Black's move number is written at the start and after a comment only.
        self._number_black = True

    def move(self, board: chess.Board, san: str) -> None:
        """``san``, played in ``board``, with its move number where PGN shows one."""
        if board.turn == chess.WHITE:
            self._token(f"{board.fullmove_number}. ")
        elif self._number_black:
            self._token(f"{board.fullmove_number}... ")
        self._token(f"{san} ")
        self._number_black = False

    def comment(self, text: str) -> None:
        self._token(f"{{ {text.strip()} }} ")
        self._number_black = True

    def end(self, result: str) -> list[str]:
        """The result token; the lines of the whole movetext."""
        self._token(f"{result} ")
        self._flush()
        return self.lines

    def _token(self, token: str) -> None:
        """A token on the current line, or on a new one where it would pass the width."""
        if _COLUMNS - len(self._line) < len(token):
            self._flush()
        self._line += token

    def _flush(self) -> None:
        if self._line:
            self.lines.append(self._line.rstrip())
        self._line = ""


def pgn_text(
    started: GameStarted, moves: Sequence[MovePlayed], ended: GameEnded | None
) -> str:
    """One game of the match as PGN text (``ended=None``: still in progress).

    Opening moves come first without clocks; each played move has its clock and
    analysis in a comment; ``ended.reason`` is a comment after the last move. Every
    move is checked legal where it is played. Raises ``ValueError`` (python-chess's)
    for an invalid FEN, opening move or played move.
    """
    rules = rules_of_tags(started.tags)
    board = rules.board(started.fen)
    headers = _headers(
        started, len(started.opening_moves) + len(moves), ended, board, rules.starting_fen
    )
    reason = _comment_text(ended.reason) if ended else ""
    movetext = _Movetext()
    last = len(started.opening_moves) + len(moves) - 1
    if reason and last < 0:
        movetext.comment(reason)
    for index, san in enumerate(started.opening_moves):
        move = board.parse_san(san)
        movetext.move(board, san)
        board.push(move)
        if reason and index == last:
            movetext.comment(reason)
    for index, played in enumerate(moves, start=len(started.opening_moves)):
        move = rules.move(played.uci)
        if not board.is_legal(move):
            raise ValueError(f"illegal move {move.uci()} in {board.fen()}")
        comment = _move_comment(board.turn, played)
        movetext.move(board, played.san)
        board.push(move)
        if reason and index == last:
            comment = f"{comment} {reason}"
        movetext.comment(comment)
    tags = [f'[{name} "{value}"]' for name, value in headers.items()]
    return "\n".join([*tags, "", *movetext.end(headers["Result"])]).rstrip()
