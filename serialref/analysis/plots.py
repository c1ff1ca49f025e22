"""The report's charts as inline SVG, drawn with matplotlib.

matplotlib's object API is used (:class:`~matplotlib.figure.Figure`, no ``pyplot``):
no global state, no GUI backend, nothing left open between charts. Text stays text
in the SVG (``svg.fonttype: none``) so the page is small and searchable, and the
hash salt is fixed so that the same results give the same page, byte for byte.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from serialref.analysis.report import ResultFile
from serialref.errors import missing_extra

# matplotlib (with numpy, fonttools and pillow: 170 MB) is an extra, for these charts only.
try:
    import matplotlib as mpl
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator
except ImportError as exc:
    raise missing_extra(exc, "matplotlib", "report", "epd report --html") from exc

__all__ = ["node_chart", "ratio_chart", "time_chart"]

_STYLE: dict[Any, Any] = {"svg.fonttype": "none", "svg.hashsalt": "serialref", "font.size": 9.0}

_Chart = TypeVar("_Chart", bound=Callable[..., str])


def _styled(chart: _Chart) -> _Chart:
    """Draw ``chart`` under the report's style: sizes are fixed when artists are made."""

    @functools.wraps(chart)
    def styled(*args: Any, **kwargs: Any) -> str:
        with mpl.rc_context(_STYLE):
            return chart(*args, **kwargs)

    return styled  # type: ignore[return-value]


@_styled
def node_chart(files: Sequence[ResultFile]) -> str:
    """Each file's node counts as a cumulative share of its records (log scale)."""
    figure = Figure(figsize=(7.0, 3.2))
    axes = figure.add_subplot()
    for result_file in files:
        nodes = sorted(r.nodes for r in result_file.results if r.nodes)
        if nodes:
            shares = [100 * (index + 1) / len(nodes) for index in range(len(nodes))]
            axes.step(nodes, shares, where="post", label=result_file.name)
    axes.set_xscale("log")
    axes.set_xlabel("nodes searched (acn)")
    axes.set_ylabel("% of records at or below")
    axes.set_ylim(0, 100)
    axes.grid(alpha=0.3)
    if axes.get_legend_handles_labels()[0]:
        axes.legend(loc="lower right")
    return _svg(figure)


@_styled
def time_chart(files: Sequence[ResultFile]) -> str:
    """How many records of each file took each whole number of seconds (acs)."""
    figure = Figure(figsize=(7.0, 3.2))
    axes = figure.add_subplot()
    width = 0.8 / max(1, len(files))
    for index, result_file in enumerate(files):
        seconds = [r.seconds for r in result_file.results if r.seconds is not None]
        counts: dict[int, int] = {}
        for value in seconds:
            counts[value] = counts.get(value, 0) + 1
        xs = [value + index * width - 0.4 + width / 2 for value in sorted(counts)]
        axes.bar(xs, [counts[value] for value in sorted(counts)], width, label=result_file.name)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("seconds (acs)")
    axes.set_ylabel("records")
    axes.grid(alpha=0.3, axis="y")
    if axes.get_legend_handles_labels()[0]:
        axes.legend()
    return _svg(figure)


@_styled
def ratio_chart(base: ResultFile, other: ResultFile) -> str:
    """Nodes per position, ``other`` against ``base`` (log-log), coloured by who solved it."""
    figure = Figure(figsize=(4.6, 4.2))
    axes = figure.add_subplot()
    theirs = {result.key: result for result in other.results}
    groups: dict[str, tuple[list[int], list[int]]] = {}
    for mine in base.results:
        match = theirs.get(mine.key)
        if match is None or not mine.nodes or not match.nodes:
            continue
        group = _who_solved(mine.solved, match.solved)
        xs, ys = groups.setdefault(group, ([], []))
        xs.append(mine.nodes)
        ys.append(match.nodes)
    for group, (xs, ys) in sorted(groups.items()):
        axes.scatter(xs, ys, s=14, label=group)
    everything = [value for xs, ys in groups.values() for value in (*xs, *ys)]
    if everything:
        low, high = min(everything) / 1.5, max(everything) * 1.5
        axes.plot([low, high], [low, high], color="grey", linewidth=0.8)
        axes.set_xlim(low, high)
        axes.set_ylim(low, high)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.legend(loc="lower right", fontsize=7)
    axes.set_xlabel(f"nodes: {_short(base.name)}")
    axes.set_ylabel(f"nodes: {_short(other.name)}")
    axes.grid(alpha=0.3)
    return _svg(figure)


def _who_solved(base: bool | None, other: bool | None) -> str:
    if base is None or other is None:
        return "no targets"
    return {
        (True, True): "solved by both",
        (True, False): "solved by the first only",
        (False, True): "solved by the second only",
        (False, False): "missed by both",
    }[(base, other)]


def _short(name: str) -> str:
    return name if len(name) <= 40 else "..." + name[-37:]


def _svg(figure: Figure) -> str:
    figure.set_layout_engine("tight")
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]
