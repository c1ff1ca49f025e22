"""From an engine's search to a player's decision: scores, analysis and the score policies.

The reply carries the engine's analysis as the EPD specification writes it (``ce`` in
the spec 6.7 encoding, ``pv``, ``acn``, ``acs``, ``acd``), and the ``--draw-offer-below``,
``--draw-accept-below`` and ``--resign-below`` policies judge the same score.
"""

from __future__ import annotations

import logging

import chess
import chess.engine

from serialref.client.options import EngineSettings
from serialref.client.players import Analysis, Decision, ThinkRequest

__all__ = ["MATE_SCORE", "ScorePolicy", "spec_centipawns"]

LOGGER = logging.getLogger(__name__)

MATE_SCORE = 32767
"""Spec 6.7: mate values count plies down from here."""

_MATE_POLICY_SCORE = 100_000
"""Centipawns a mate counts as for the draw and resign policies (beyond any real score)."""

_CE_LIMIT = 31_999
"""Largest centipawn ``ce`` that cannot be read as a mate (spec 6.7: above 32000 is mate)."""


def spec_centipawns(score: chess.engine.Score) -> int:
    """A score from the mover's point of view as spec 6.7's ``ce``.

    A mate in N moves is 2N-1 plies away (``32767 - (2N - 1)``); being mated in N is 2N
    plies away (``-32767 + 2N``). Centipawn scores are kept clear of those bands (beyond
    +-32000), and absurdly long mates are kept inside them.
    """
    mate = score.mate()
    if mate is not None:
        # Beyond 383 moves the arithmetic would leave the mate band; clamp inside it.
        if mate > 0:
            return max(_CE_LIMIT + 2, MATE_SCORE - (2 * mate - 1))
        return min(-_CE_LIMIT - 2, -MATE_SCORE + 2 * -mate)
    centipawns = score.score()
    assert centipawns is not None  # not a mate, so a centipawn score
    return max(-_CE_LIMIT, min(_CE_LIMIT, centipawns))


class ScorePolicy:
    """Turns one engine's search results into decisions, game after game.

    Only the resignation policy has a memory (the moves in a row the score stayed
    low), which :meth:`new_game` clears.
    """

    def __init__(self, settings: EngineSettings) -> None:
        self._settings = settings
        self._losing_streak = 0

    def new_game(self) -> None:
        """A new game: the resignation count starts over."""
        self._losing_streak = 0

    def decide(
        self,
        name: str,
        request: ThinkRequest,
        result: chess.engine.PlayResult,
        variation: tuple[chess.Move, ...],
        *,
        xboard: bool,
    ) -> Decision:
        """The decision for ``request`` from the engine ``name``'s ``result``."""
        board = request.board
        move = result.move
        analysis = _analysis(board.turn, move, variation, result.info)
        score = _policy_score(board.turn, result.info)
        if result.resigned:
            LOGGER.info("%s resigns", name)
            return Decision(None, resign=True, analysis=analysis)
        if request.draw_offered and self._accepts_draw(result, score, xboard=xboard):
            LOGGER.info("%s accepts the draw offer (score %s)", name, score)
            return Decision(None, draw_accept=True, analysis=analysis)
        if self._resigns(score):
            LOGGER.info("%s resigns by the score policy (score %s)", name, score)
            return Decision(None, resign=True, analysis=analysis)
        offer = (result.draw_offered and not request.draw_offered) or _within(
            score, self._settings.draw_offer_below
        )
        return Decision(move, draw_offer=offer, analysis=analysis)

    def _accepts_draw(
        self, result: chess.engine.PlayResult, score: int | None, *, xboard: bool
    ) -> bool:
        """XBoard engines answer ``draw`` with ``offer draw``; UCI ones go by the score."""
        if xboard:
            return result.draw_offered
        return _within(score, self._settings.draw_accept_below)

    def _resigns(self, score: int | None) -> bool:
        threshold = self._settings.resign_below
        if threshold is None or score is None:
            return False
        self._losing_streak = self._losing_streak + 1 if score <= -abs(threshold) else 0
        return self._losing_streak >= self._settings.resign_moves


def _within(score: int | None, threshold: int | None) -> bool:
    return threshold is not None and score is not None and abs(score) < abs(threshold)


def _policy_score(turn: chess.Color, info: chess.engine.InfoDict) -> int | None:
    score = info.get("score")
    return None if score is None else score.pov(turn).score(mate_score=_MATE_POLICY_SCORE)


def _analysis(
    turn: chess.Color,
    move: chess.Move | None,
    variation: tuple[chess.Move, ...],
    info: chess.engine.InfoDict,
) -> Analysis:
    """``ce``, ``pv``, ``acn``, ``acs`` and ``acd`` from the search's last ``info`` and
    variation."""
    score = info.get("score")
    pv = variation
    if move is not None and pv[:1] != (move,):
        pv = (move,)
    elapsed = info.get("time")
    return Analysis(
        centipawns=None if score is None else spec_centipawns(score.pov(turn)),
        pv=pv if move is not None else (),
        nodes=info.get("nodes"),
        seconds=None if elapsed is None else int(elapsed),
        depth=info.get("depth"),
    )
