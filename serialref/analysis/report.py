"""Gastric (spec 3.3): what a test-suite run says, read back from its result files.

For each file: how many records were judged (they have ``bm`` or ``am``) and solved
(their ``pm`` is a ``bm`` move and no ``am`` move), which were missed by ``id``, and
the distributions of node counts (``acn``) and seconds (``acs``). For two or more
files, each is compared with the first, position by position (matched by ``id``,
else by position): what one solved and the other did not, and the per-position
ratios of nodes and of time. Quantiles are the inclusive linear ones (numpy's
default), so a spreadsheet gives the same figures.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from serialref.analysis.inputs import read_entries
from serialref.analysis.targets import has_targets, is_solved
from serialref.errors import InputError, RecordError

__all__ = [
    "QUANTILES",
    "Comparison",
    "Distribution",
    "Result",
    "ResultFile",
    "compare",
    "distribution",
    "distribution_cells",
    "read_results",
    "text_report",
]

QUANTILES = (0.25, 0.5, 0.75, 0.9)
"""The quantiles every distribution shows, besides its minimum, maximum and mean."""


@dataclass(frozen=True, slots=True)
class Result:
    """One record of a result file, as the report sees it."""

    key: str
    label: str
    solved: bool | None
    nodes: int | None
    seconds: int | None


@dataclass(frozen=True, slots=True)
class ResultFile:
    """A result file's records, and the lines that could not be read as records."""

    name: str
    results: tuple[Result, ...]
    unreadable: tuple[str, ...] = ()

    @property
    def judged(self) -> list[Result]:
        """The records with targets."""
        return [result for result in self.results if result.solved is not None]

    @property
    def missed(self) -> list[Result]:
        """The records with targets whose prediction misses them (or that have none)."""
        return [result for result in self.results if result.solved is False]

    @property
    def solved(self) -> list[Result]:
        """The records solved."""
        return [result for result in self.results if result.solved]


@dataclass(frozen=True, slots=True)
class Distribution:
    """Count, minimum, quantiles (:data:`QUANTILES`), maximum, mean, total, and for
    positive values the geometric mean (the mean of ratios: 2x and 0.5x cancel out)."""

    count: int
    low: float
    quantiles: tuple[float, ...]
    high: float
    mean: float
    total: float
    geometric: float | None


def distribution(values: Sequence[float]) -> Distribution | None:
    """The distribution of ``values``; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return Distribution(
        count=len(ordered),
        low=ordered[0],
        quantiles=tuple(_quantile(ordered, q) for q in QUANTILES),
        high=ordered[-1],
        mean=statistics.fmean(ordered),
        total=math.fsum(ordered),
        geometric=statistics.geometric_mean(ordered) if ordered[0] > 0 else None,
    )


def _quantile(ordered: Sequence[float], q: float) -> float:
    """The inclusive linear quantile (numpy's default method) of sorted values."""
    position = (len(ordered) - 1) * q
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


@dataclass(frozen=True, slots=True)
class Comparison:
    """A result file against the first one, over the positions both hold."""

    base: ResultFile
    other: ResultFile
    common: int
    both_solved: list[str]
    only_base: list[str]
    only_other: list[str]
    node_ratios: list[float]
    time_ratios: list[float]


def compare(base: ResultFile, other: ResultFile) -> Comparison:
    """``other`` against ``base``: solved by one only, and ratios other / base."""
    theirs = {result.key: result for result in other.results}
    pairs = [(mine, theirs[mine.key]) for mine in base.results if mine.key in theirs]
    return Comparison(
        base=base,
        other=other,
        common=len(pairs),
        both_solved=[a.label for a, b in pairs if a.solved and b.solved],
        only_base=[a.label for a, b in pairs if a.solved and b.solved is False],
        only_other=[a.label for a, b in pairs if a.solved is False and b.solved],
        node_ratios=[b.nodes / a.nodes for a, b in pairs if a.nodes and b.nodes is not None],
        time_ratios=[
            b.seconds / a.seconds for a, b in pairs if a.seconds and b.seconds is not None
        ],
    )


def read_results(path: str) -> ResultFile:
    """The results in the EPD file at ``path``; a line that is no record is noted, not fatal."""
    try:
        with Path(path).open("rb") as source:
            entries = read_entries(source, path)
    except OSError as exc:
        raise InputError(f"cannot read {path!r}: {exc.strerror}") from exc
    results = []
    unreadable = []
    for entry in entries:
        record, board = entry.record, entry.board
        if record is None or board is None:
            unreadable.append(entry.problem)
            continue
        label = record.operand_texts("id")[0] if "id" in record else f"line {entry.number}"
        key = label if "id" in record else record.position
        solved = None
        if has_targets(record):
            try:
                predicted = record.move("pm", board) if "pm" in record else None
                solved = is_solved(record, board, predicted)
            except RecordError as exc:
                unreadable.append(f"{path}:{entry.number}: {exc.reason}")
                continue
        results.append(
            Result(
                key=key,
                label=label,
                solved=solved,
                nodes=record.integer("acn") if "acn" in record else None,
                seconds=record.integer("acs") if "acs" in record else None,
            )
        )
    return ResultFile(path, tuple(results), tuple(unreadable))


# --------------------------------------------------------------------- text


def text_report(files: Sequence[ResultFile]) -> str:
    """The report as plain text: one section per file, then the comparisons."""
    lines = [f"Gastric report: {len(files)} result file{'s' if len(files) != 1 else ''}"]
    for result_file in files:
        lines += ["", f"== {result_file.name} ==", *_file_lines(result_file)]
    for other in files[1:]:
        comparison = compare(files[0], other)
        lines += ["", f"== {other.name} against {files[0].name} ==", *_comparison_lines(comparison)]
    return "\n".join(lines) + "\n"


def _file_lines(result_file: ResultFile) -> list[str]:
    judged, solved, missed = result_file.judged, result_file.solved, result_file.missed
    lines = [
        f"records            {len(result_file.results)}",
        f"with bm or am      {len(judged)}",
        f"solved             {len(solved)}{_percent(len(solved), len(judged))}",
        f"missed             {len(missed)}{_labels(missed)}",
    ]
    if result_file.unreadable:
        lines.append(f"unreadable lines   {len(result_file.unreadable)}")
        lines += [f"  {problem}" for problem in result_file.unreadable]
    nodes = [r.nodes for r in result_file.results if r.nodes is not None]
    seconds = [r.seconds for r in result_file.results if r.seconds is not None]
    lines += _table(
        [("nodes (acn)", distribution(nodes)), ("seconds (acs)", distribution(seconds))]
    )
    return lines


def _comparison_lines(comparison: Comparison) -> list[str]:
    base, other = comparison.base.name, comparison.other.name
    lines = [
        f"positions in both  {comparison.common}",
        f"solved by both     {len(comparison.both_solved)}",
        f"solved only by {base}: {len(comparison.only_base)}{_names(comparison.only_base)}",
        f"solved only by {other}: {len(comparison.only_other)}{_names(comparison.only_other)}",
    ]
    lines += _table(
        [
            ("node ratio", distribution(comparison.node_ratios)),
            ("time ratio", distribution(comparison.time_ratios)),
        ],
        ratios=True,
    )
    return lines


def _table(rows: list[tuple[str, Distribution | None]], *, ratios: bool = False) -> list[str]:
    heads = ["n", "min", *(f"{round(q * 100)}%" for q in QUANTILES), "max", "mean"]
    heads.append("geo.mean" if ratios else "total")
    lines = ["".ljust(16) + "".join(head.rjust(11) for head in heads)]
    for title, dist in rows:
        cells = distribution_cells(dist, ratios=ratios)
        lines.append(title.ljust(16) + "".join(cell.rjust(11) for cell in cells))
    return lines


def distribution_cells(dist: Distribution | None, *, ratios: bool) -> list[str]:
    """Count, minimum, quantiles, maximum, mean, then the geometric mean of ratios or the
    total of counts, as the text and the HTML report print them."""
    if dist is None:
        return ["0", *["-"] * (len(QUANTILES) + 4)]
    final = dist.geometric if ratios else dist.total
    values = [dist.low, *dist.quantiles, dist.high, dist.mean, final]
    return [str(dist.count), *(_number(value, ratios) for value in values)]


def _number(value: float | None, ratio: bool) -> str:
    if value is None:
        return "-"
    if ratio:
        return f"{value:.3f}"
    return f"{value:.0f}" if value == round(value) or abs(value) >= 100 else f"{value:.1f}"


def _percent(part: int, whole: int) -> str:
    return f" ({100 * part / whole:.1f}%)" if whole else ""


def _labels(results: Sequence[Result]) -> str:
    return _names([result.label for result in results])


def _names(names: Sequence[str]) -> str:
    return ": " + ", ".join(names) if names else ""
