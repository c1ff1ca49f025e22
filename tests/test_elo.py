"""Elo difference, error margin and LOS as cutechess-cli computes them.

The reference values were worked out by hand from the formulas (trinomial standard
error, logistic Elo curve, cutechess-cli's approximate inverse erf for the 95 % bounds);
cutechess-cli 1.5.1 prints the same figures for the same wins, losses and draws.
"""

from __future__ import annotations

import math

import pytest

from serialref.elo import Score, estimate


@pytest.mark.parametrize(
    ("score", "difference", "margin", "los", "draw_ratio"),
    [
        # mu = 7.5/14 = 0.5357: -400 log10(1/mu - 1) = 24.86
        (Score(1, 0, 13), 24.9, 47.3, 84.1, 92.9),
        (Score(1, 1, 14), 0.0, 60.7, 50.0, 87.5),
        (Score(2, 1, 14), 20.5, 69.8, 71.8, 82.4),
        (Score(4, 1, 30), 29.9, 42.8, 91.0, 85.7),
        (Score(6, 2, 42), 27.9, 38.1, 92.1, 84.0),
        (Score(7, 7, 66), 0.0, 31.9, 50.0, 82.5),
    ],
)
def test_figures_match_cutechess_to_the_printed_decimal(
    score: Score, difference: float, margin: float, los: float, draw_ratio: float
) -> None:
    found = estimate(score)
    assert round(found.difference + 0.0, 1) == difference
    assert round(found.margin, 1) == margin
    assert round(found.los, 1) == los
    assert round(found.draw_ratio * 100, 1) == draw_ratio


def test_the_margin_uses_cutechess_approximate_normal_quantile() -> None:
    # With the exact quantile (1.95996) the margin of 1-0-13 would print 47.4, not 47.3.
    assert round(estimate(Score(1, 0, 13)).margin, 2) == 47.34


@pytest.mark.parametrize(
    ("score", "difference", "los"),
    [
        (Score(1, 0, 0), math.inf, 84.1),
        (Score(4, 0, 0), math.inf, 97.7),
        (Score(0, 3, 0), -math.inf, 4.2),
    ],
)
def test_a_clean_sweep_is_infinite_with_an_undefined_margin(
    score: Score, difference: float, los: float
) -> None:
    found = estimate(score)
    assert found.difference == difference
    assert math.isnan(found.margin)
    assert round(found.los, 1) == los


def test_only_draws_give_no_difference_no_margin_and_no_los() -> None:
    found = estimate(Score(0, 0, 5))
    assert (found.difference, found.margin, found.draw_ratio) == (0.0, 0.0, 1.0)
    assert math.isnan(found.los)


def test_no_game_gives_nothing_and_never_raises() -> None:
    found = estimate(Score())
    assert all(math.isnan(value) for value in (found.difference, found.margin, found.los))
    assert math.isnan(Score().ratio)


def test_scores_count_results_from_either_side() -> None:
    score = Score()
    for result, as_white in (("1-0", True), ("1-0", False), ("0-1", False), ("*", True),
                             ("1/2-1/2", False)):  # fmt: skip
        score = score.after(result, as_white=as_white)
    assert (score.wins, score.losses, score.draws) == (2, 1, 1)
    assert (score.games, score.points, score.ratio) == (4, 2.5, 0.625)
