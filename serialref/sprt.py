"""The sequential probability ratio test that stops a match once it has decided.

Engine testers compare a serialref match with the same match under cutechess-cli or
fastchess, so the log-likelihood ratio is computed exactly as those tools compute it from
the same results, in three models:

- ``cutechess`` (the default): cutechess-cli 1.5's test on the BayesElo scale. Half a
  game is added to each of wins, draws and losses, the draw Elo is estimated from the
  sample, ``elo0``/``elo1`` are scaled to BayesElo and the trinomial laws under both
  hypotheses give the ratio.
- ``logistic`` and ``normalized``: fastchess's generalised SPRT (Van den Bergh's maximum
  likelihood distributions with a given expected score, or a given normalised Elo), with
  an empty outcome counted as a thousandth, and its root finder (ITP, with fastchess's
  tolerances and iteration limit), so the printed figures agree to the last decimal.
  Like fastchess (``-report penta=true``, its default) they count game pairs, the five
  pentanomial outcomes (:mod:`serialref.pentanomial`), as soon as there is a pair; games
  that never pair (a file of single games) are counted one by one, as fastchess does
  with ``-report penta=false``.

The bounds are Wald's: ``log(beta / (1 - alpha))`` and ``log((1 - beta) / alpha)``. A
match the test decided is stopped with a reason that records the decision
(``SPRT: H1 was accepted``, :func:`decision_in`), which tells a restarted referee that
the match is over.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from serialref.elo import Score
from serialref.errors import ConfigError
from serialref.pentanomial import Pentanomial, quotient

__all__ = ["SprtDecision", "SprtModel", "SprtTest", "decision_in", "parse_sprt"]

_STOP = "SPRT: "
"""How the reason of a match the SPRT stopped begins (``SPRT: H1 was accepted``)."""

_NELO_SCALE = 800.0 / math.log(10.0)
_EMPTY = 1e-3  # fastchess's count for an outcome that did not happen
_PSEUDO_GAME = 0.5  # cutechess-cli's half game added to each outcome
_GAME_SCORES = (0.0, 0.5, 1.0)  # a loss, a draw, a win
_PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # a pair's points per game, LL to WW
_MLE_ROUNDS = 10  # fastchess's limit on the normalized model's fixed-point iteration


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

    def llr(self, score: Score, pairs: Pentanomial | None = None) -> float:
        """The log-likelihood ratio of H1 against H0 after ``score`` and ``pairs``.

        Both are the first player's: its games, and its game pairs, which fastchess's
        models count instead of the games once there is one.
        """
        if self.model is SprtModel.CUTECHESS:
            return _bayeselo_llr(score, self.elo0, self.elo1)
        counts: Sequence[int] = (score.losses, score.draws, score.wins)
        outcomes: Sequence[float] = _GAME_SCORES
        scale = 1.0
        if pairs is not None and pairs.pairs:
            counts, outcomes, scale = pairs.counts(), _PAIR_SCORES, math.sqrt(2.0)
        regular = [count or _EMPTY for count in counts]
        total = sum(regular)
        probs = [count / total for count in regular]
        if self.model is SprtModel.LOGISTIC:
            return _gsprt_llr(total, outcomes, probs, _expected_score(self.elo0),
                              _expected_score(self.elo1))  # fmt: skip
        return _normalized_llr(total, outcomes, probs, scale * self.elo0 / _NELO_SCALE,
                               scale * self.elo1 / _NELO_SCALE)  # fmt: skip

    def decision(self, llr: float) -> SprtDecision:
        if llr >= self.upper_bound:
            return SprtDecision.H1
        if llr <= self.lower_bound:
            return SprtDecision.H0
        return SprtDecision.CONTINUE

    def status_line(self, score: Score, pairs: Pentanomial | None = None) -> str:
        """The line of the tool whose model this is, as that tool prints it.

        cutechess-cli: ``SPRT: llr 0.0578 (2.0%), lbound -2.94, ubound 2.94``, with
        `` - H1 was accepted`` once decided; fastchess: ``LLR: 0.36 (12.2%) (-2.94, 2.94)
        [0.00, 5.00]``, its share of the bound it leans to.
        """
        llr = self.llr(score, pairs)
        if self.model is not SprtModel.CUTECHESS:
            share = llr / self.upper_bound if llr >= 0 else -llr / self.lower_bound
            return (
                f"LLR: {llr:.2f} ({100.0 * share:.1f}%) ({self.lower_bound:.2f}, "
                f"{self.upper_bound:.2f}) [{self.elo0:.2f}, {self.elo1:.2f}]"
            )
        decision = self.decision(llr)
        verdict = "" if decision is SprtDecision.CONTINUE else f" - {decision.value}"
        return (
            f"SPRT: llr {llr:.3g} ({100.0 * llr / self.upper_bound:.1f}%), "
            f"lbound {self.lower_bound:.2f}, ubound {self.upper_bound:.2f}{verdict}"
        )

    def completed_line(self, decision: SprtDecision) -> str | None:
        """fastchess's last word on a decided test (``SPRT ([0.00, 5.00]) completed - H1 was
        accepted``); None for cutechess-cli's, whose status line says it."""
        if self.model is SprtModel.CUTECHESS:
            return None
        return f"SPRT ([{self.elo0:.2f}, {self.elo1:.2f}]) completed - {decision.value}"

    def stop_reason(self, decision: SprtDecision) -> str:
        """Why a match this test decided was stopped: ``SPRT: H1 was accepted``."""
        return f"{_STOP}{decision.value}"


def decision_in(reason: str) -> SprtDecision | None:
    """The SPRT's decision that stopped a match for ``reason``; None for another stop."""
    if not reason.startswith(_STOP):
        return None
    try:
        return SprtDecision(reason.removeprefix(_STOP))
    except ValueError:
        return None


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


def _gsprt_llr(total: float, scores: Sequence[float], probs: list[float], score0: float,
               score1: float) -> float:  # fmt: skip
    """The GSPRT ratio between the distributions nearest the sample with each expected score."""

    def nearest(expected: float) -> list[float]:
        # Van den Bergh, "Comments on Normalized Elo", proposition 1.1.
        shifts = [a - expected for a in scores]
        theta = _itp(
            _theta_equation(probs, shifts), -1.0 / shifts[-1], -1.0 / shifts[0], epsilon=1e-3,
        )  # fmt: skip
        return [quotient(p, 1.0 + theta * d) for p, d in zip(probs, shifts, strict=True)]

    return _ratio(total, probs, nearest(score0), nearest(score1))


def _normalized_llr(total: float, scores: Sequence[float], probs: list[float], t0: float,
                    t1: float) -> float:  # fmt: skip
    """The GSPRT ratio between the distributions nearest the sample with each normalised Elo."""

    def nearest(t_star: float) -> list[float]:
        # Van den Bergh, "Comments on Normalized Elo", section 4.1, from a uniform start,
        # for at most as many rounds as fastchess gives it.
        estimate = [1.0 / len(scores)] * len(scores)
        for _ in range(_MLE_ROUNDS):
            mu = sum(a * p for a, p in zip(scores, estimate, strict=True))
            variance = sum(p * (a - mu) ** 2 for a, p in zip(scores, estimate, strict=True))
            sigma = math.sqrt(variance) if variance >= 0 else math.nan  # NaN: as std::sqrt
            phi = [a - 0.5 - 0.5 * t_star * sigma * (1.0 + quotient(a - mu, sigma) ** 2)
                   for a in scores]  # fmt: skip
            theta = _itp(_theta_equation(probs, phi), quotient(-1.0, max(phi)),
                         quotient(-1.0, min(phi)), epsilon=1e-7)  # fmt: skip
            update = [quotient(p, 1.0 + theta * f) for p, f in zip(probs, phi, strict=True)]
            change = max(abs(new - old) for new, old in zip(update, estimate, strict=True))
            estimate = update
            if change < 1e-4:
                break
        return estimate

    return _ratio(total, probs, nearest(t0), nearest(t1))


def _theta_equation(probs: list[float], shifts: list[float]) -> Callable[[float], float]:
    """The function whose root is the Lagrange multiplier of the nearest distribution."""
    return lambda x: sum(quotient(p * d, 1.0 + x * d) for p, d in zip(probs, shifts, strict=True))


def _ratio(total: float, probs: list[float], h0: list[float], h1: list[float]) -> float:
    """``total`` times the mean log ratio; a hypothesis the sample rules out gives an infinity
    (or NaN, which decides nothing), as in fastchess, never an error."""
    return total * sum(p * (_log(b) - _log(a)) for p, a, b in zip(probs, h0, h1, strict=True))


def _log(value: float) -> float:
    """``std::log``: -inf at zero, NaN below it."""
    if value > 0:
        return math.log(value)
    return -math.inf if value == 0 else math.nan


def _itp(f: Callable[[float], float], a: float, b: float, *, epsilon: float) -> float:
    """The root of ``f`` between ``a`` (f = +inf) and ``b`` (f = -inf), as fastchess finds it.

    Oliveira and Takahashi's ITP method with k1 = 0.1, k2 = 2, n0 = 0.99: a bisection
    that is never slower and usually much faster. fastchess starts it with infinite end
    values, so the first steps are bisections; the same steps give the same root.
    """
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.nan  # no interval to search: a ratio that decides nothing
    if abs(b - a) <= 2.0 * epsilon:
        return (a + b) / 2.0
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
