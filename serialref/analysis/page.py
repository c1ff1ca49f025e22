"""The Gastric report as one self-contained HTML page: tables, and the charts inline.

Everything on the page comes from the same figures as the text report
(:mod:`serialref.analysis.report`); the page adds the charts of
:mod:`serialref.analysis.plots`. It needs no network and no other file, so it can
be mailed or archived as it is; every text from a result file is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from serialref.analysis.plots import node_chart, ratio_chart, time_chart
from serialref.analysis.report import (
    QUANTILES,
    Comparison,
    Distribution,
    ResultFile,
    compare,
    distribution,
    distribution_cells,
)
from serialref.errors import SerialrefError

__all__ = ["render_page", "write_page"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 62em; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #e4e4e4; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.ids { font-family: ui-monospace, monospace; font-size: 0.9em; }
.chart svg { max-width: 100%; height: auto; }
.pair { display: flex; gap: 2em; align-items: flex-start; flex-wrap: wrap; }
body { padding: 0 1em; }
"""


def write_page(files: Sequence[ResultFile], path: Path) -> None:
    """Write the page to ``path``."""
    try:
        path.write_text(render_page(files), encoding="utf-8")
    except OSError as exc:
        raise SerialrefError(f"cannot write {str(path)!r}: {exc.strerror}") from exc


def render_page(files: Sequence[ResultFile]) -> str:
    """The whole page."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>Gastric report</title>',
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Gastric report</h1>",
        f"<p>{len(files)} result file{'s' if len(files) != 1 else ''}.</p>",
        "<h2>Summary</h2>",
        _summary(files),
        "<h2>Node counts</h2>",
        f'<div class="chart">{node_chart(files)}</div>',
        "<h2>Time</h2>",
        f'<div class="chart">{time_chart(files)}</div>',
    ]
    for result_file in files:
        parts += _file_section(result_file)
    for other in files[1:]:
        parts += _comparison_section(compare(files[0], other))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _summary(files: Sequence[ResultFile]) -> str:
    head = ["file", "records", "with bm/am", "solved", "%", "missed", "nodes", "seconds"]
    rows = []
    for result_file in files:
        judged, solved = len(result_file.judged), len(result_file.solved)
        nodes = sum(r.nodes for r in result_file.results if r.nodes is not None)
        seconds = sum(r.seconds for r in result_file.results if r.seconds is not None)
        rows.append(
            [
                result_file.name,
                str(len(result_file.results)),
                str(judged),
                str(solved),
                f"{100 * solved / judged:.1f}" if judged else "-",
                str(len(result_file.missed)),
                str(nodes),
                str(seconds),
            ]
        )
    return _table(head, rows)


def _file_section(result_file: ResultFile) -> list[str]:
    parts = [f"<h2>{_text(result_file.name)}</h2>"]
    missed = [result.label for result in result_file.missed]
    parts.append(f"<p>Missed ({len(missed)}): {_ids(missed)}</p>")
    nodes = [r.nodes for r in result_file.results if r.nodes is not None]
    seconds = [r.seconds for r in result_file.results if r.seconds is not None]
    parts.append(
        _distributions(
            [("nodes (acn)", distribution(nodes)), ("seconds (acs)", distribution(seconds))],
            last="total",
        )
    )
    if result_file.unreadable:
        items = "".join(f"<li>{_text(problem)}</li>" for problem in result_file.unreadable)
        parts.append(f"<p>Lines that are not readable records:</p><ul class=\"ids\">{items}</ul>")
    return parts


def _comparison_section(comparison: Comparison) -> list[str]:
    base, other = comparison.base.name, comparison.other.name
    rows = [
        ["positions in both", str(comparison.common)],
        ["solved by both", str(len(comparison.both_solved))],
        [f"solved only by {base}", str(len(comparison.only_base))],
        [f"solved only by {other}", str(len(comparison.only_other))],
    ]
    return [
        f"<h2>{_text(other)} against {_text(base)}</h2>",
        '<div class="pair"><div>',
        _table(["", ""], rows),
        f"<p>Solved only by {_text(base)}: {_ids(comparison.only_base)}</p>",
        f"<p>Solved only by {_text(other)}: {_ids(comparison.only_other)}</p>",
        f"<p>Ratios per position, {_text(other)} / {_text(base)}:</p>",
        _distributions(
            [
                ("nodes", distribution(comparison.node_ratios)),
                ("time", distribution(comparison.time_ratios)),
            ],
            last="geo. mean",
        ),
        f'</div><div class="chart">{ratio_chart(comparison.base, comparison.other)}</div></div>',
    ]


def _distributions(rows: list[tuple[str, Distribution | None]], *, last: str) -> str:
    head = ["", "n", "min", *(f"{round(q * 100)}%" for q in QUANTILES), "max", "mean", last]
    body = [[title, *distribution_cells(dist, ratios=last != "total")] for title, dist in rows]
    return _table(head, body)


def _table(head: list[str], rows: list[list[str]]) -> str:
    header = "".join(f"<th>{_text(cell)}</th>" for cell in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{_text(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"


def _ids(labels: Sequence[str]) -> str:
    return f'<span class="ids">{_text(", ".join(labels))}</span>' if labels else "none"


def _text(text: str) -> str:
    return html.escape(text, quote=True)
