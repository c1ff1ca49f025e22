"""serialref.wire.backoff: the pauses between attempts to get a line back."""

from __future__ import annotations

from serialref.wire.backoff import FIRST_PAUSE, LONGEST_PAUSE, Backoff


def test_the_pause_doubles_up_to_the_longest_and_stays_there() -> None:
    backoff = Backoff()
    pauses = [backoff.pause() for _ in range(8)]
    assert pauses[:6] == [FIRST_PAUSE, 0.4, 0.8, 1.6, 3.2, LONGEST_PAUSE]
    assert pauses[6:] == [LONGEST_PAUSE, LONGEST_PAUSE]


def test_a_success_starts_the_next_loss_from_the_first_pause() -> None:
    backoff = Backoff(0.5, 2.0)
    assert [backoff.pause(), backoff.pause(), backoff.pause()] == [0.5, 1.0, 2.0]
    backoff.reset()
    assert backoff.pause() == 0.5
