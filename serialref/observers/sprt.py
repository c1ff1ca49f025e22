"""The SPRT of a match: follows its results and asks for the stop once the test decides.

It only asks: the stop goes through the referee's loop (``request_stop``), which ends
the match in order, every player told ``disconnect``, with a reason that says the SPRT
decided (:func:`serialref.sprt.decision_in`), so a restarted referee knows the
match is over. Should it fail, the referee's publisher detaches it as it does any
observer (:mod:`serialref.referee.publisher`), and the match plays its games to the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from serialref.happenings import GameEnded, MatchEnded, MatchEvent
from serialref.pentanomial import MatchTally
from serialref.referee.settings import MatchSettings
from serialref.sprt import SprtDecision, SprtTest, decision_in

__all__ = ["SprtWatch"]

_OTHER = {"a": "b", "b": "a"}


class SprtWatch:
    """Player A's results against player B, tested after each game.

    ``results`` are the games already played, as (White's port, PGN result), for a
    match that resumes; ``stop`` asks for the match to end with the given reason.
    ``status`` is the test's status line when it decided; ``decided`` says, once the
    match has ended, whether the test ended it.
    """

    def __init__(
        self,
        test: SprtTest,
        stop: Callable[[str], None],
        *,
        results: Iterable[tuple[str, str]] = (),
    ) -> None:
        self._test = test
        self._stop = stop
        self._tally = MatchTally("a")
        for white_port, result in results:
            self._tally.add(white_port, _OTHER[white_port], result)
        self.status: str | None = None
        self.decided = False

    def close(self) -> None:
        """Nothing to release."""

    def handle(self, event: MatchEvent) -> None:
        if isinstance(event, GameEnded) and self.status is None:
            white_port = MatchSettings.white_port(event.game)
            self._tally.add(white_port, _OTHER[white_port], event.result)
            score, pairs = self._tally.score, self._tally.pairs
            decision = self._test.decision(self._test.llr(score, pairs))
            if decision is not SprtDecision.CONTINUE:
                self.status = self._test.status_line(score, pairs)
                self._stop(self._test.stop_reason(decision))
        elif isinstance(event, MatchEnded):
            self.decided = decision_in(event.reason) is not None
