"""The final report of an event, from any PGN file: standings, crosstable, pairs; text or HTML.

Where games come in pairs (same start, colours swapped), each player's and each pair's
pentanomial counts and normalized Elo are reported as fastchess reports them.

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
from serialref.observers.output import printable
from serialref.pentanomial import Pentanomial, nelo_line, ptnml_line
from serialref.pentanomial import estimate as pair_estimate
from serialref.sprt import SprtTest
from serialref.tournament.standings import FinishedGame, Standings, standings

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
        yield FinishedGame(white, black, headers.get("Result", "*"), headers.get("Round", "?"),
                           headers.get("FEN", ""))  # fmt: skip


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


def _nelo(counts: Pentanomial) -> str:
    """A player's normalized Elo against the field, from its pairs; ``-`` without one."""
    if not counts.pairs:
        return "-"
    found = pair_estimate(counts)
    return f"{found.nelo:.1f} +/- {found.nelo_error:.1f}"


def _ptnml(counts: Pentanomial) -> str:
    return f"[{', '.join(str(count) for count in counts.counts())}]" if counts.pairs else "-"


def pair_lines(table: Standings, sprt: SprtTest | None = None) -> list[str]:
    """Each pair's score and Elo difference, cutechess-cli style, and its game pairs,
    fastchess style, then the SPRT of a match."""
    lines: list[str] = []
    for (first, second), score in table.pairs.items():
        found = estimate(score)
        los = "-" if math.isnan(found.los) else f"{found.los:.1f} %"
        lines.append(
            f"{printable(first)} vs {printable(second)}: {score.wins} - {score.losses} - "
            f"{score.draws}  [{score.ratio:.3f}] {score.games}, Elo difference: {_elo(score)}, "
            f"LOS: {los}"
        )
        counts = table.pentanomials.get((first, second), Pentanomial())
        if counts.pairs:
            lines += [nelo_line(counts), ptnml_line(counts)]
        if sprt is not None and len(table.pairs) == 1:
            lines.append(sprt.status_line(score, counts))
    return lines


def text_report(table: Standings, *, title: str = "", sprt: SprtTest | None = None) -> str:
    """The standings, the crosstable and the pairs as aligned text."""
    names = [printable(name) for name in table.names()]
    width = max((len(name) for name in names), default=4)
    lines = [title] if title else []
    elos = [_elo(player.score) for player in table.players]
    # The pairs' columns, where games came in pairs: the Elo column is padded for them.
    paired = any(player.pentanomial.pairs for player in table.players)
    elo_width = max(len("Elo vs field"), *(len(elo) for elo in elos)) if paired else 0
    nelos = [_nelo(player.pentanomial) for player in table.players]
    nelo_width = max(len("nElo"), *(len(nelo) for nelo in nelos)) if paired else 0
    pair_columns = f"  {'nElo':>{nelo_width}}  Ptnml(0-2)" if paired else ""
    lines.append(
        f"{'Rank':>4}  {'Name':<{width}}  {'Points':>6}  {'Games':>5}  {'W-L-D':>9}  "
        f"{'SB':>7}  {'Score':>6}  {'Elo vs field':<{elo_width}}{pair_columns}".rstrip()
    )
    for player, name, elo, nelo in zip(table.players, names, elos, nelos, strict=True):
        score = player.score
        wld = f"{score.wins}-{score.losses}-{score.draws}"
        pair_cells = f"  {nelo:>{nelo_width}}  {_ptnml(player.pentanomial)}" if paired else ""
        lines.append(
            f"{player.rank:>4}  {name:<{width}}  {player.points:>6g}  {score.games:>5}  "
            f"{wld:>9}  {player.sonneborn_berger:>7.2f}  {_ratio(score):>6}  "
            f"{elo:<{elo_width}}{pair_cells}"
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
