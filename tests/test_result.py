"""serialref.result: PGN results and their points."""

from __future__ import annotations

import pytest

from serialref.result import Result


@pytest.mark.parametrize(
    ("text", "points"),
    [("1-0", (1.0, 0.0)), ("0-1", (0.0, 1.0)), ("1/2-1/2", (0.5, 0.5)), ("*", None)],
)
def test_each_result_gives_its_points(text: str, points: tuple[float, float] | None) -> None:
    assert Result(text).points == points
    assert Result.points_of(text) == points


def test_text_that_is_no_result_gives_no_points() -> None:
    assert Result.points_of("1-1") is None


def test_a_result_is_its_pgn_text() -> None:
    assert str(Result.DRAW) == "1/2-1/2" and Result.WHITE_WINS == "1-0"
