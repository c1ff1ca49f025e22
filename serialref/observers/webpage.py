"""The web board's HTML: the page, and each game's section of it.

The server draws everything the page shows (the board's SVG, the players with their
scores and clocks, the moves, the result), so the page holds the games without
JavaScript; its script only puts each new section in place and ticks the running
clock. Every text from a player or an event file is escaped here, once.

Scores are written as engine testers write them: the ``ce`` of the player's last
move in pawns from that player's side, ``+0.32``, or a mate, ``#3`` (mates in three) and
``#-3`` (is mated in three), decoded from the EPD mate encoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from serialref.analysis.scores import CHECKMATED, mate_in
from serialref.observers.diagram import PIECE_DEFINITIONS
from serialref.rules import Rules

__all__ = ["GameView", "page", "score_text", "section_html", "variant_title"]

_SIDES = ("white", "black")


@dataclass(frozen=True, slots=True)
class GameView:
    """One game as its section shows it.

    ``clocks`` read as of now; ``first_move`` is the full-move number of ``moves[0]``
    and whether White played it; ``trimmed`` says the first moves of a very long game
    are no longer kept; ``checks`` are the checks each side must still give (three-check).
    """

    board: int | None
    game: int | None
    event: str
    variant: str
    names: tuple[str, str]
    clocks: tuple[float | None, float | None]
    running: str | None
    analysis: tuple[dict[str, str], dict[str, str]]
    moves: Sequence[str]
    first_move: tuple[int, bool]
    trimmed: bool
    fen: str
    svg: str
    checks: tuple[int, int] | None
    result: str | None
    reason: str
    paused: bool
    over: str | None

    @property
    def title(self) -> str:
        """``Game 3 - Club match``, ``Board 2, game 3``, or ``Waiting for a game``."""
        if self.game is None:
            return "Waiting for a game" if self.board is None else f"Board {self.board}"
        if self.board is not None:
            return f"Board {self.board}, game {self.game}"
        return f"Game {self.game}" + (f" - {self.event}" if self.event else "")

    @property
    def scores(self) -> tuple[str, str]:
        """Each player's last score as testers write it, or ``""``."""
        white, black = (score_text(side.get("ce", "")) for side in self.analysis)
        return white, black

    @property
    def outcome(self) -> str:
        """``1-0 (White mates)``, ``paused``, or ``""`` while the game goes on."""
        if self.result:
            return f"{self.result} ({self.reason})"
        return "paused" if self.paused else ""


def variant_title(rules: Rules) -> str:
    """The variant's name as the page shows it: ``Standard chess``, ``Crazyhouse``, ``Xiangqi``."""
    if rules.standard:
        return "Standard chess"
    return rules.pgn_name[:1].upper() + rules.pgn_name[1:]


def score_text(ce: str) -> str:
    """A ``ce`` operand as testers write it: ``+0.32``, ``-1.50``, ``#3``, ``#-3``; else ``""``."""
    try:
        centipawns = int(ce)
    except ValueError:
        return ""
    if abs(centipawns) > -CHECKMATED:
        return ""  # -32768: the spec's mark of an illegal position, no score
    mate = mate_in(centipawns)
    if mate is None:
        return f"{centipawns / 100:+.2f}"
    return f"#{mate}" if mate > 0 else f"#-{-mate}"


def section_html(view: GameView) -> str:
    """The game's ``<section>``: title, players, board, FEN, moves and result."""
    board = "" if view.board is None else f' data-board="{view.board}"'
    # A match's page is titled with its game; an event's names each board over its section.
    heading = "" if view.board is None else f'<span class="heading">{escape(view.title)}</span> '
    players = [_player(view, side) for side in (0, 1)]
    return (
        f'<section class="game"{board} data-fen="{escape(view.fen)}">'
        f"<h2>{heading}"
        f'<span class="variant">{escape(view.variant)}</span></h2>'
        f'<div class="play"><div class="side">{players[1]}'
        f'<div class="diagram">{view.svg}</div>{players[0]}'
        f"{_checks(view)}"
        f'<div class="fen" title="FEN">{escape(view.fen)}</div></div>'
        f'<div class="record"><div class="moves"><div class="movetext">{_moves(view)}</div></div>'
        f'<div class="result">{escape(view.outcome)}</div></div></div></section>'
    )


def page(template: str, message: dict[str, object]) -> str:
    """The whole page for ``message`` (a match's game, or an event's boards)."""
    boards = message.get("boards", [message])
    assert isinstance(boards, list)
    sections = "".join(str(board["html"]) for board in boards)
    status = str(message.get("over") or "")
    return (
        template.replace("<!--layout-->", "event" if "boards" in message else "match")
        .replace("<!--title-->", escape(str(message["title"])))
        .replace("<!--status-->", escape(status))
        .replace("<!--pieces-->", PIECE_DEFINITIONS)
        .replace("<!--games-->", sections)
    )


def _player(view: GameView, side: int) -> str:
    """A player's row (name, score, clock) and the line it expects."""
    colour = _SIDES[side]
    seconds = view.clocks[side]
    running = " running" if view.running == colour else ""
    clock = '<span class="clock">-</span>'
    if seconds is not None:
        reading = f'data-seconds="{seconds:.1f}">{_clock_text(seconds)}'
        clock = f'<span class="clock{running}" {reading}</span>'

    line = view.analysis[side].get("pv", "")
    return (
        f'<div class="player {colour}"><span class="name">{escape(view.names[side])}</span>'
        f'<span class="score">{escape(view.scores[side])}</span>{clock}</div>'
        f'<div class="pv {colour}">{escape(line)}</div>'
    )


def _checks(view: GameView) -> str:
    """Three-check's checks still to give, when the variant counts them."""
    if view.checks is None:
        return ""
    (white, black), names = view.checks, [escape(name) for name in view.names]
    return f'<div class="checks">Checks to give: {names[0]} {white}, {names[1]} {black}</div>'


def _moves(view: GameView) -> str:
    """The moves, numbered, the last one marked."""
    number, white = view.first_move
    parts = ['<span class="trimmed">...</span> '] if view.trimmed else []
    for index, san in enumerate(view.moves):
        if white or index == 0:
            parts.append(f'<span class="number">{number}.{"" if white else ".."}</span> ')
        last = " last" if index == len(view.moves) - 1 else ""
        parts.append(f'<span class="move{last}">{escape(san)}</span> ')
        if not white:
            number += 1
        white = not white
    return "".join(parts)


def _clock_text(seconds: float) -> str:
    """``4:59``, ``1:02:03``, ``-0:03``: as the page's script writes it too."""
    sign = "-" if seconds < 0 else ""
    whole = int(abs(seconds))
    hours, minutes, rest = whole // 3600, whole // 60 % 60, whole % 60
    if hours:
        return f"{sign}{hours}:{minutes:02d}:{rest:02d}"
    return f"{sign}{minutes}:{rest:02d}"
