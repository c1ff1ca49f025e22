"""The final report of an event, from any PGN file: standings, crosstable, pairs; text or HTML.

The report reads only the Seven Tag Roster of each game (``chess.pgn.read_headers``), so
it works on PGN written by serialref, cutechess-cli or fastchess alike, and on files
of many thousand games without parsing a move. Names come from files anyone may have
written: the text report escapes what a terminal would act on, the HTML one escapes
markup.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

import chess.pgn

from serialref.elo import Score, estimate
from serialref.errors import InputError
from serialref.event.sprt import SprtTest
from serialref.event.standings import FinishedGame, Standings, standings
from serialref.observers.output import printable

__all__ = [
    "games_from_pgn",
    "html_report",
    "pair_lines",
    "read_pgn_games",
    "report_from_pgn",
    "text_report",
]

_SYMBOL = {1.0: "1", 0.5: "=", 0.0: "0"}


def games_from_pgn(handle: TextIO) -> Iterator[FinishedGame]:
    """The games of an open PGN file, in file order; entries without players are skipped."""
    while (headers := chess.pgn.read_headers(handle)) is not None:
        white, black = headers.get("White"), headers.get("Black")
        if not white or not black:
            continue
        yield FinishedGame(white, black, headers.get("Result", "*"), headers.get("Round", "?"))


def read_pgn_games(paths: Sequence[Path]) -> list[FinishedGame]:
    """Every game of the PGN files ``paths``; a file that cannot be read is an InputError."""
    games: list[FinishedGame] = []
    for path in paths:
        try:
            with path.open(encoding="utf-8-sig", errors="replace") as handle:
                games.extend(games_from_pgn(handle))
        except OSError as exc:
            raise InputError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from exc
    return games


def _cell(results: Iterable[float]) -> str:
    return "".join(_SYMBOL.get(points, "?") for points in results)


def _elo(score: Score) -> str:
    found = estimate(score)
    if math.isnan(found.difference):
        return "-"
    margin = "" if math.isnan(found.margin) else f" +/- {found.margin:.1f}"
    return f"{found.difference + 0.0:.1f}{margin}"


def _ratio(score: Score) -> str:
    return f"{100.0 * score.ratio:.1f}%" if score.games else "-"


def pair_lines(table: Standings, sprt: SprtTest | None = None) -> list[str]:
    """Each pair's score and Elo difference, cutechess-cli style, then the SPRT of a match."""
    lines: list[str] = []
    for (first, second), score in table.pairs.items():
        found = estimate(score)
        los = "-" if math.isnan(found.los) else f"{found.los:.1f} %"
        lines.append(
            f"{printable(first)} vs {printable(second)}: {score.wins} - {score.losses} - "
            f"{score.draws}  [{score.ratio:.3f}] {score.games}, Elo difference: {_elo(score)}, "
            f"LOS: {los}"
        )
        if sprt is not None and len(table.pairs) == 1:
            lines.append(sprt.status_line(score))
    return lines


def text_report(table: Standings, *, title: str = "", sprt: SprtTest | None = None) -> str:
    """The standings, the crosstable and the pairs as aligned text."""
    names = [printable(name) for name in table.names()]
    width = max((len(name) for name in names), default=4)
    lines = [title] if title else []
    lines.append(
        f"{'Rank':>4}  {'Name':<{width}}  {'Points':>6}  {'Games':>5}  {'W-L-D':>9}  "
        f"{'SB':>7}  {'Score':>6}  Elo vs field"
    )
    for player, name in zip(table.players, names, strict=True):
        score = player.score
        wld = f"{score.wins}-{score.losses}-{score.draws}"
        lines.append(
            f"{player.rank:>4}  {name:<{width}}  {player.points:>6g}  {score.games:>5}  "
            f"{wld:>9}  {player.sonneborn_berger:>7.2f}  {_ratio(score):>6}  {_elo(score)}"
        )
    if len(table.players) > 1:
        cells = [[_cell(table.crosstable.get((row, column), ())) if row != column else "*"
                  for column in table.names()] for row in table.names()]  # fmt: skip
        cell_width = max(3, *(len(cell) for row in cells for cell in row))
        lines += ["", "Crosstable", f"{'':>4}  {'':<{width}}  " + "  ".join(
            f"{rank:>{cell_width}}" for rank in range(1, len(names) + 1))]  # fmt: skip
        for player, name, row in zip(table.players, names, cells, strict=True):
            lines.append(f"{player.rank:>4}  {name:<{width}}  "
                         + "  ".join(f"{cell:>{cell_width}}" for cell in row))  # fmt: skip
    pairs = pair_lines(table, sprt)
    if pairs:
        lines += ["", *pairs]
    return "\n".join(lines) + "\n"


def html_report(table: Standings, *, title: str = "Event report") -> str:
    """A static page (no script, no external file) with the standings and the crosstable."""
    esc = html.escape
    rows = []
    for player in table.players:
        score = player.score
        rows.append(
            f"<tr><td>{player.rank}</td><td>{esc(player.name)}</td><td>{player.points:g}</td>"
            f"<td>{score.games}</td><td>{score.wins}-{score.losses}-{score.draws}</td>"
            f"<td>{player.sonneborn_berger:.2f}</td><td>{_ratio(score)}</td>"
            f"<td>{esc(_elo(score))}</td></tr>"
        )
    names = table.names()
    cross = []
    for player in table.players:
        cells = "".join(
            f"<td>{esc(_cell(table.crosstable.get((player.name, column), ())) or '')}</td>"
            if column != player.name else "<td>*</td>"
            for column in names
        )  # fmt: skip
        cross.append(f"<tr><td>{player.rank}</td><td>{esc(player.name)}</td>{cells}</tr>")
    heads = "".join(f"<th>{rank}</th>" for rank in range(1, len(names) + 1))
    pairs = "".join(f"<li>{esc(line)}</li>" for line in pair_lines(table))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>
<style>body{{font-family:sans-serif}}table{{border-collapse:collapse}}
td,th{{border:1px solid #999;padding:2px 8px;text-align:right}}</style></head>
<body><h1>{esc(title)}</h1>
<h2>Standings</h2>
<table><tr><th>Rank</th><th>Name</th><th>Points</th><th>Games</th><th>W-L-D</th><th>SB</th>
<th>Score</th><th>Elo vs field</th></tr>
{chr(10).join(rows)}
</table>
<h2>Crosstable</h2>
<table><tr><th></th><th>Name</th>{heads}</tr>
{chr(10).join(cross)}
</table>
<h2>Pairs</h2>
<ul>{pairs}</ul>
</body></html>
"""


def report_from_pgn(paths: Sequence[Path]) -> Standings:
    """The standings of every game in the PGN files ``paths``."""
    return standings(read_pgn_games(paths))
