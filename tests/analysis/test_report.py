"""Gastric's figures against an independent count of the same result files.

The files are written here, with known predictions, node counts and times; the
expected figures are counted again in this file with plain string handling and
numpy, not with the report's own code.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import numpy as np
import processes
import pytest

from serialref.analysis.page import render_page
from serialref.analysis.report import compare, distribution, read_results, text_report

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3"

# id, position, bm, am, pm, acn, acs: for two "programs" A and B
ROWS_A = [
    ("t1", START, "e4", "", "e4", 1000, 1),
    ("t2", START, "d4 e4", "", "Nf3", 2500, 2),
    ("t3", AFTER_E4, "c5", "", "c5", 400, 0),
    ("t4", AFTER_E4, "", "a5", "e5", 9000, 7),
    ("t5", START, "", "f3", "f3", 120, 0),
    ("t6", AFTER_E4, "", "", "e5", 777, 3),
    ("t7", START, "Nf3", "", "", 0, 0),
]
ROWS_B = [
    ("t1", START, "e4", "", "d4", 3000, 2),
    ("t2", START, "d4 e4", "", "d4", 5000, 3),
    ("t3", AFTER_E4, "c5", "", "c5", 800, 1),
    ("t4", AFTER_E4, "", "a5", "a5", 4500, 2),
    ("t5", START, "", "f3", "e4", 360, 1),
    ("t6", AFTER_E4, "", "", "e5", 777, 3),
    ("t8", START, "e4", "", "e4", 50, 0),
]


def write(path: Path, rows: list[tuple[str, str, str, str, str, int, int]]) -> Path:
    lines = []
    for name, position, bm, am, pm, acn, acs in rows:
        ops = [f'id "{name}"', f"acn {acn}", f"acs {acs}"]
        ops += [f"bm {bm}"] * bool(bm) + [f"am {am}"] * bool(am) + [f"pm {pm}"] * bool(pm)
        lines.append(position + " " + "; ".join(ops) + ";")
    lines.append("this is no record")
    path.write_text("\n".join(lines) + "\n")
    return path


def independent(rows: list[tuple[str, str, str, str, str, int, int]]) -> dict[str, object]:
    judged = [row for row in rows if row[2] or row[3]]
    solved = [
        row[0] for row in judged
        if row[4] and (not row[2] or row[4] in row[2].split()) and row[4] not in row[3].split()
    ]
    return {
        "judged": len(judged),
        "solved": solved,
        "missed": [row[0] for row in judged if row[0] not in solved],
        "nodes": [row[5] for row in rows],
        "seconds": [row[6] for row in rows],
    }


@pytest.fixture(scope="module", autouse=True)
def _fonts_loaded(tmp_path_factory: pytest.TempPathFactory) -> None:
    """matplotlib keeps the font files it has used open for the life of the process (a
    cache, not a leak): load them before the leak guard takes its first count."""
    path = write(tmp_path_factory.mktemp("fonts") / "a.epd", ROWS_A)
    render_page([read_results(str(path)), read_results(str(path))])


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return write(tmp_path / "a.epd", ROWS_A), write(tmp_path / "b.epd", ROWS_B)


def test_solved_missed_and_distributions_equal_an_independent_count(
    files: tuple[Path, Path],
) -> None:
    for path, rows in zip(files, (ROWS_A, ROWS_B), strict=True):
        result = read_results(str(path))
        expected = independent(rows)
        assert len(result.judged) == expected["judged"]
        assert [r.label for r in result.solved] == expected["solved"]
        assert [r.label for r in result.missed] == expected["missed"]
        assert len(result.unreadable) == 1
        assert result.unreadable[0].startswith(f"{path}:{len(rows) + 1}:1: ")
        for values in (expected["nodes"], expected["seconds"]):
            dist = distribution([r.nodes if values is expected["nodes"] else r.seconds
                                 for r in result.results])  # type: ignore[misc]
            assert dist is not None
            numbers = np.array(values)
            assert dist.count == len(numbers)
            assert (dist.low, dist.high) == (numbers.min(), numbers.max())
            assert dist.quantiles == pytest.approx(np.percentile(numbers, [25, 50, 75, 90]))
            assert dist.mean == pytest.approx(numbers.mean())
            assert dist.total == numbers.sum()


def test_the_comparison_equals_an_independent_count(files: tuple[Path, Path]) -> None:
    a, b = (read_results(str(path)) for path in files)
    comparison = compare(a, b)
    a_solved, b_solved = independent(ROWS_A)["solved"], independent(ROWS_B)["solved"]
    common = [row[0] for row in ROWS_A if row[0] in {other[0] for other in ROWS_B}]
    assert comparison.common == len(common) == 6
    assert comparison.only_base == [n for n in common if n in a_solved and n not in b_solved]
    assert comparison.only_other == [n for n in common if n in b_solved and n not in a_solved]
    assert comparison.both_solved == [n for n in common if n in a_solved and n in b_solved]
    by_name = {row[0]: row for row in ROWS_B}
    ratios = [by_name[row[0]][5] / row[5] for row in ROWS_A if row[0] in by_name and row[5]]
    assert comparison.node_ratios == pytest.approx(ratios)
    dist = distribution(comparison.node_ratios)
    assert dist is not None and dist.geometric == pytest.approx(np.exp(np.log(ratios).mean()))


def test_the_text_report_prints_those_figures(files: tuple[Path, Path]) -> None:
    text = text_report([read_results(str(path)) for path in files])
    counts = independent(ROWS_A)
    solved = counts["solved"]
    assert isinstance(solved, list)
    assert f"solved             {len(solved)} ({100 * len(solved) / 6:.1f}%)" in text
    missed = counts["missed"]
    assert isinstance(missed, list)
    assert f"missed             {len(missed)}: {', '.join(missed)}\n" in text
    nodes = np.array(counts["nodes"])
    figures = [len(nodes), nodes.min(), *np.percentile(nodes, [25, 50, 75, 90]), nodes.max()]
    figures += [nodes.mean(), nodes.sum()]
    assert re.search(r"nodes \(acn\) +" + " +".join(f"{f:.0f}" for f in figures) + "\n", text)
    assert "positions in both  6" in text


def test_the_page_holds_the_figures_the_charts_and_nothing_unescaped(
    tmp_path: Path, files: tuple[Path, Path]
) -> None:
    hostile = tmp_path / "<b>x&y.epd"
    hostile.write_text(files[0].read_text().replace('"t2"', '"<script>t2"'))
    page = render_page([read_results(str(hostile)), read_results(str(files[1]))])
    assert "<script>" not in page and html.escape("<script>t2") in page  # missed: listed
    assert html.escape(str(hostile)) in page and str(hostile) not in page
    assert page.count("<svg") == 3  # nodes, time, and one comparison
    assert "<td>66.7</td>" in page or "<td>50.0</td>" in page


def test_the_command_writes_text_and_html(tmp_path: Path, files: tuple[Path, Path]) -> None:
    page = tmp_path / "report.html"
    result = processes.run(
        [sys.executable, "-m", "serialref", "epd", "report", *map(str, files), "--html", str(page)],
        capture_output=True, text=True, check=False, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Gastric report: 2 result files\n")
    assert page.read_text().startswith("<!DOCTYPE html>")
    missing = processes.run(
        [sys.executable, "-m", "serialref", "epd", "report", str(tmp_path / "none.epd")],
        capture_output=True, text=True, check=False, timeout=60,
    )
    assert missing.returncode != 0 and missing.stderr.count("\n") == 1
    assert "cannot read" in missing.stderr
