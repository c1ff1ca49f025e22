"""The sequential probability ratio test that stops a match once it has decided.

Engine testers compare a serialref match with the same match under cutechess-cli or
fastchess, so the log-likelihood ratio is computed exactly as those tools compute it from
the same wins, draws and losses, in three models:

- ``cutechess`` (the default): cutechess-cli 1.5's test on the BayesElo scale. Half a
  game is added to each of wins, draws and losses, the draw Elo is estimated from the
  sample, ``elo0``/``elo1`` are scaled to BayesElo and the trinomial laws under both
  hypotheses give the ratio.
- ``logistic`` and ``normalized``: fastchess's generalised SPRT (Van den Bergh's maximum
  likelihood distributions with a given expected score, or a given normalised Elo), with
  an empty outcome counted as a thousandth of a game, and its root finder (ITP, with
  fastchess's tolerances), so the printed figures agree to the last decimal.

The bounds are Wald's: ``log(beta / (1 - alpha))`` and ``log((1 - beta) / alpha)``.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from serialref.elo import Score
from serialref.errors import ConfigError

__all__ = ["SprtDecision", "SprtModel", "SprtTest", "parse_sprt"]

_NELO_SCALE = 800.0 / math.log(10.0)
_EMPTY = 1e-3  # fastchess's count for an outcome that did not happen
_PSEUDO_GAME = 0.5  # cutechess-cli's half game added to each outcome
_SCORES = (0.0, 0.5, 1.0)  # a loss, a draw, a win


class SprtModel(enum.StrEnum):
    """Whose SPRT: cutechess-cli's BayesElo test or one of fastchess's GSPRT models."""

    CUTECHESS = "cutechess"
    LOGISTIC = "logistic"
    NORMALIZED = "normalized"


class SprtDecision(enum.StrEnum):
    """Where the test stands."""

    CONTINUE = "continue"
    H0 = "H0 was accepted"
    H1 = "H1 was accepted"


@dataclass(frozen=True, slots=True)
class SprtTest:
    """H0: the Elo difference is ``elo0``; H1: it is ``elo1``; error rates ``alpha``, ``beta``."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    model: SprtModel = SprtModel.CUTECHESS

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ConfigError("sprt", f"elo0 ({self.elo0:g}) must be below elo1 ({self.elo1:g})")
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 < value < 1.0:
                raise ConfigError("sprt", f"{name} must be between 0 and 1, not {value:g}")
        if self.alpha + self.beta >= 1.0:
            raise ConfigError("sprt", "alpha + beta must be below 1")

    @property
    def lower_bound(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper_bound(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, score: Score) -> float:
        """The log-likelihood ratio of H1 against H0 after ``score`` (the first player's)."""
        if self.model is SprtModel.CUTECHESS:
            return _bayeselo_llr(score, self.elo0, self.elo1)
        counts = [score.losses or _EMPTY, score.draws or _EMPTY, score.wins or _EMPTY]
        total = sum(counts)
        probs = [count / total for count in counts]
        if self.model is SprtModel.LOGISTIC:
            return _gsprt_llr(total, probs, _expected_score(self.elo0), _expected_score(self.elo1))
        return _normalized_llr(total, probs, self.elo0 / _NELO_SCALE, self.elo1 / _NELO_SCALE)

    def decision(self, llr: float) -> SprtDecision:
        if llr >= self.upper_bound:
            return SprtDecision.H1
        if llr <= self.lower_bound:
            return SprtDecision.H0
        return SprtDecision.CONTINUE

    def status_line(self, score: Score) -> str:
        """cutechess-cli's line: ``SPRT: llr 0.0578 (2.0%), lbound -2.94, ubound 2.94``."""
        llr = self.llr(score)
        decision = self.decision(llr)
        verdict = "" if decision is SprtDecision.CONTINUE else f" - {decision.value}"
        return (
            f"SPRT: llr {llr:.3g} ({100.0 * llr / self.upper_bound:.1f}%), "
            f"lbound {self.lower_bound:.2f}, ubound {self.upper_bound:.2f}{verdict}"
        )


def parse_sprt(words: Sequence[str]) -> SprtTest:
    """``elo0=0 elo1=5 alpha=0.05 beta=0.05 [model=cutechess]``, as cutechess-cli takes it."""
    given: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or key not in ("elo0", "elo1", "alpha", "beta", "model"):
            raise ConfigError("sprt", f"expected elo0=, elo1=, alpha=, beta= or model=: {word!r}")
        given[key] = value
    try:
        model = SprtModel(given.pop("model", SprtModel.CUTECHESS))
    except ValueError:
        choices = ", ".join(model.value for model in SprtModel)
        raise ConfigError("sprt", f"model must be one of {choices}") from None
    try:
        numbers = {key: float(value) for key, value in given.items()}
    except ValueError:
        raise ConfigError("sprt", f"not a number in {' '.join(words)!r}") from None
    if not all(math.isfinite(value) for value in numbers.values()):
        raise ConfigError("sprt", "every value must be a finite number")
    return SprtTest(**numbers, model=model)


def _expected_score(elo: float) -> float:
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def _bayeselo_llr(score: Score, elo0: float, elo1: float) -> float:
    wins, draws, losses = (count + _PSEUDO_GAME for count in (score.wins, score.draws,
                                                               score.losses))  # fmt: skip
    games = wins + draws + losses
    p_win, p_loss = wins / games, losses / games
    draw_elo = 200.0 * math.log10((1.0 - p_loss) / p_loss * (1.0 - p_win) / p_win)
    x = 10.0 ** (-draw_elo / 400.0)
    scale = 4.0 * x / ((1.0 + x) * (1.0 + x))

    def laws(bayes_elo: float) -> tuple[float, float, float]:
        win = 1.0 / (1.0 + 10.0 ** ((draw_elo - bayes_elo) / 400.0))
        loss = 1.0 / (1.0 + 10.0 ** ((draw_elo + bayes_elo) / 400.0))
        return win, loss, 1.0 - win - loss

    h0, h1 = laws(elo0 / scale), laws(elo1 / scale)
    return (
        wins * math.log(h1[0] / h0[0])
        + losses * math.log(h1[1] / h0[1])
        + draws * math.log(h1[2] / h0[2])
    )


def _gsprt_llr(total: float, probs: list[float], score0: float, score1: float) -> float:
    """The GSPRT ratio between the distributions nearest the sample with each expected score."""

    def nearest(expected: float) -> list[float]:
        # Van den Bergh, "Comments on Normalized Elo", proposition 1.1.
        shifts = [a - expected for a in _SCORES]
        theta = _itp(
            _theta_equation(probs, shifts), -1.0 / shifts[-1], -1.0 / shifts[0], epsilon=1e-3,
        )  # fmt: skip
        return [p / (1.0 + theta * d) for p, d in zip(probs, shifts, strict=True)]

    return _ratio(total, probs, nearest(score0), nearest(score1))


def _normalized_llr(total: float, probs: list[float], t0: float, t1: float) -> float:
    """The GSPRT ratio between the distributions nearest the sample with each normalised Elo."""

    def nearest(t_star: float) -> list[float]:
        # Van den Bergh, "Comments on Normalized Elo", section 4.1, from a uniform start.
        estimate = [1.0 / len(_SCORES)] * len(_SCORES)
        while True:
            mu = sum(a * p for a, p in zip(_SCORES, estimate, strict=True))
            sigma = math.sqrt(sum(p * (a - mu) ** 2 for a, p in zip(_SCORES, estimate,
                                                                    strict=True)))  # fmt: skip
            phi = [a - 0.5 - 0.5 * t_star * sigma * (1.0 + ((a - mu) / sigma) ** 2)
                   for a in _SCORES]  # fmt: skip
            theta = _itp(_theta_equation(probs, phi), -1.0 / max(phi), -1.0 / min(phi),
                         epsilon=1e-7)  # fmt: skip
            update = [p / (1.0 + theta * f) for p, f in zip(probs, phi, strict=True)]
            change = max(abs(new - old) for new, old in zip(update, estimate, strict=True))
            estimate = update
            if change < 1e-4:
                return estimate

    return _ratio(total, probs, nearest(t0), nearest(t1))


def _theta_equation(probs: list[float], shifts: list[float]) -> Callable[[float], float]:
    """The function whose root is the Lagrange multiplier of the nearest distribution."""
    return lambda x: sum(p * d / (1.0 + x * d) for p, d in zip(probs, shifts, strict=True))


def _ratio(total: float, probs: list[float], h0: list[float], h1: list[float]) -> float:
    return total * sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, h0, h1,
                                                                          strict=True))  # fmt: skip


def _itp(f: Callable[[float], float], a: float, b: float, *, epsilon: float) -> float:
    """The root of ``f`` between ``a`` (f = +inf) and ``b`` (f = -inf), as fastchess finds it.

    Oliveira and Takahashi's ITP method with k1 = 0.1, k2 = 2, n0 = 0.99: a bisection
    that is never slower and usually much faster. fastchess starts it with infinite end
    values, so the first steps are bisections; the same steps give the same root.
    """
    f_a, f_b = math.inf, -math.inf
    a, b, f_a, f_b = b, a, f_b, f_a  # f(a) < 0 < f(b) from here on
    n_max = math.ceil(math.log2(abs(b - a) / (2.0 * epsilon))) + 0.99
    step = 0
    while abs(b - a) > 2.0 * epsilon:
        middle = (a + b) / 2.0
        radius = epsilon * 2.0 ** (n_max - step) - (b - a) / 2.0
        delta = 0.1 * (b - a) ** 2
        regula_falsi = (f_b * a - f_a * b) / (f_b - f_a)
        sigma = math.copysign(1.0, middle - regula_falsi)
        truncated = regula_falsi + sigma * delta if delta <= abs(middle - regula_falsi) else middle
        x = truncated if abs(truncated - middle) <= radius else middle - sigma * radius
        value = f(x)
        if value == 0.0:
            a = b = x
        elif value < 0.0:
            a, f_a = x, value
        else:
            b, f_b = x, value
        step += 1
    return (a + b) / 2.0
