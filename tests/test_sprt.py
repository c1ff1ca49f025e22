"""The SPRT's log-likelihood ratio, as cutechess-cli and fastchess print it.

The cutechess rows were printed by cutechess-cli 1.5.1 (``-sprt ... -ratinginterval 1``)
after each game of two real matches, between seeded random movers (elo0=0 elo1=5
alpha=0.05 beta=0.05) and between a random mover and Stockfish at one node (elo0=-5
elo1=10 alpha=0.1 beta=0.05): wins - losses - draws of the first engine, then the
``SPRT: llr`` it printed (three significant digits), its percentage and its bounds.
"""

from __future__ import annotations

import math

import pytest

from serialref.elo import Score
from serialref.errors import ConfigError
from serialref.sprt import SprtDecision, SprtModel, SprtTest, parse_sprt

CUTECHESS_1_5_1 = [
    # (wins, losses, draws), elo0, elo1, alpha, beta, the line cutechess-cli printed
    ((0, 0, 1), 0, 5, 0.05, 0.05, "SPRT: llr -0.000647 (-0.0%), lbound -2.94, ubound 2.94"),
    ((1, 0, 5), 0, 5, 0.05, 0.05, "SPRT: llr 0.0578 (2.0%), lbound -2.94, ubound 2.94"),
    ((1, 0, 10), 0, 5, 0.05, 0.05, "SPRT: llr 0.0935 (3.2%), lbound -2.94, ubound 2.94"),
    ((1, 1, 14), 0, 5, 0.05, 0.05, "SPRT: llr -0.0106 (-0.4%), lbound -2.94, ubound 2.94"),
    ((1, 2, 18), 0, 5, 0.05, 0.05, "SPRT: llr -0.0968 (-3.3%), lbound -2.94, ubound 2.94"),
    ((1, 2, 23), 0, 5, 0.05, 0.05, "SPRT: llr -0.122 (-4.1%), lbound -2.94, ubound 2.94"),
    ((2, 2, 47), 0, 5, 0.05, 0.05, "SPRT: llr -0.0572 (-1.9%), lbound -2.94, ubound 2.94"),
    ((2, 3, 51), 0, 5, 0.05, 0.05, "SPRT: llr -0.198 (-6.7%), lbound -2.94, ubound 2.94"),
    ((3, 3, 54), 0, 5, 0.05, 0.05, "SPRT: llr -0.056 (-1.9%), lbound -2.94, ubound 2.94"),
    ((0, 1, 0), -5, 10, 0.1, 0.05, "SPRT: llr -0.0578 (-2.6%), lbound -2.89, ubound 2.25"),
    ((0, 16, 0), -5, 10, 0.1, 0.05, "SPRT: llr -0.847 (-37.6%), lbound -2.89, ubound 2.25"),
    ((0, 35, 1), -5, 10, 0.1, 0.05, "SPRT: llr -2.31 (-102.7%), lbound -2.89, ubound 2.25"),
    ((0, 39, 1), -5, 10, 0.1, 0.05, "SPRT: llr -2.57 (-114.3%), lbound -2.89, ubound 2.25"),
]


@pytest.mark.parametrize(("wld", "elo0", "elo1", "alpha", "beta", "line"), CUTECHESS_1_5_1)
def test_cutechess_model_prints_what_cutechess_cli_printed(
    wld: tuple[int, int, int], elo0: float, elo1: float, alpha: float, beta: float, line: str
) -> None:
    test = SprtTest(elo0, elo1, alpha, beta)
    assert test.status_line(Score(*wld)) == line


def test_the_decision_follows_wald_bounds() -> None:
    test = SprtTest(0, 5, 0.05, 0.05)
    assert round(test.lower_bound, 4) == -2.9444
    assert test.upper_bound == -test.lower_bound
    assert test.decision(2.95) is SprtDecision.H1
    assert test.decision(-2.95) is SprtDecision.H0
    assert test.decision(0.0) is SprtDecision.CONTINUE
    # A clean sweep decides: the line says so as cutechess-cli does.
    assert test.status_line(Score(200, 0, 0)).endswith(" - H1 was accepted")
    assert test.status_line(Score(0, 200, 0)).endswith(" - H0 was accepted")


def _independent_logistic_llr(w: int, d: int, lost: int, elo0: float, elo1: float) -> float:
    """The trinomial GSPRT from its definition, with an exact bisection (no ITP)."""
    counts = [lost or 1e-3, d or 1e-3, w or 1e-3]
    n = sum(counts)
    p = [c / n for c in counts]

    def nearest(s: float) -> list[float]:
        shifts = [0.0 - s, 0.5 - s, 1.0 - s]
        lo, hi = -1.0 / shifts[2] + 1e-12, -1.0 / shifts[0] - 1e-12
        for _ in range(200):
            mid = (lo + hi) / 2
            value = sum(pi * a / (1 + mid * a) for pi, a in zip(p, shifts, strict=True))
            lo, hi = (mid, hi) if value > 0 else (lo, mid)
        return [pi / (1 + lo * a) for pi, a in zip(p, shifts, strict=True)]

    s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1))
    q0, q1 = nearest(s0), nearest(s1)
    return n * sum(pi * math.log(b / a) for pi, a, b in zip(p, q0, q1, strict=True))


@pytest.mark.parametrize(
    ("w", "lost", "d", "elo0", "elo1"),
    [(4307, 4063, 8620, 0, 3), (120, 80, 300, 0, 5), (10, 30, 5, -5, 5), (0, 0, 7, 0, 5)],
)
def test_logistic_model_is_the_gsprt_fastchess_computes(
    w: int, lost: int, d: int, elo0: float, elo1: float
) -> None:
    found = SprtTest(elo0, elo1, model=SprtModel.LOGISTIC).llr(Score(w, lost, d))
    assert found == pytest.approx(_independent_logistic_llr(w, d, lost, elo0, elo1), abs=5e-3)


def test_logistic_model_agrees_with_a_published_gsprt_example() -> None:
    # jw1912/SPRT README: --wins 4307 --losses 4063 --draws 8620 --elo0 0 --elo1 3 --gsprt
    # prints "LLR: 2.99".
    assert round(SprtTest(0, 3, model=SprtModel.LOGISTIC).llr(Score(4307, 4063, 8620)), 2) == 2.99


def test_normalized_model_rises_with_a_better_score_and_is_zero_when_even() -> None:
    test = SprtTest(0, 5, model=SprtModel.NORMALIZED)
    better, worse = test.llr(Score(120, 80, 300)), test.llr(Score(80, 120, 300))
    assert better > 0 > worse
    # An even score lies nearer H0 (elo 0) than H1: a small negative ratio.
    assert -0.5 < test.llr(Score(100, 100, 300)) < 0


@pytest.mark.parametrize(
    ("words", "reason"),
    [
        (["elo0=5", "elo1=0"], "must be below elo1"),
        (["alpha=1.5"], "alpha must be between 0 and 1"),
        (["alpha=0.6", "beta=0.5"], r"alpha \+ beta must be below 1"),
        (["elo0=x"], "not a number"),
        (["elo0=nan"], "finite"),
        (["model=fishtest"], "model must be one of cutechess, logistic, normalized"),
        (["gamma=1"], "expected elo0="),
    ],
)
def test_bad_sprt_settings_are_one_clear_error(words: list[str], reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        parse_sprt(words)


def test_parse_takes_cutechess_cli_words() -> None:
    test = parse_sprt(["elo0=-1", "elo1=4", "alpha=0.1", "beta=0.2", "model=logistic"])
    assert test == SprtTest(-1.0, 4.0, 0.1, 0.2, SprtModel.LOGISTIC)


def test_a_sample_far_outside_both_hypotheses_decides_nothing_and_raises_nothing() -> None:
    # Forty games won and elo1=400 normalized Elo: the nearest distributions degenerate;
    # the ratio is NaN, as fastchess's arithmetic gives it, and the test goes on.
    from serialref.pentanomial import Pentanomial

    test = SprtTest(0, 400, model=SprtModel.NORMALIZED)
    llr = test.llr(Score(40, 0, 0), Pentanomial(ww=20))
    assert math.isnan(llr)
    assert test.decision(llr) is SprtDecision.CONTINUE
    assert test.status_line(Score(40, 0, 0), Pentanomial(ww=20)).startswith("LLR: nan")
