"""Standing by: mirror the primary, and take its match over when it falls silent.

The referee that takes over is passed in (``run_match``, in practice
:func:`serialref.appliance.assembly.run_referee` with its console bound), so this package
sits below the assembly and can be tested with a stand-in.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path

from serialref.appliance.config import MatchConfig
from serialref.appliance.notify import SystemdNotifier
from serialref.errors import ConfigError, PortOpenError
from serialref.referee.resume import find_unfinished_match
from serialref.referee.settings import MatchSettings
from serialref.standby.mirror import TAKEOVER_AFTER, JournalMirror
from serialref.wire.backoff import Backoff

__all__ = ["MatchRunner", "open_mirror", "stand_by", "take_over"]

LOGGER = logging.getLogger(__name__)

MatchRunner = Callable[[MatchConfig], bool]
"""Runs the configured match (resuming from its journal); True when it is complete."""



def open_mirror(
    config: MatchConfig, address: str, key: bytes, *, takeover_after: float = TAKEOVER_AFTER
) -> JournalMirror:
    """The standby's mirror at the configured journal (which a standby must have)."""
    journal: Path | None = config.journal
    if journal is None:
        raise ConfigError(
            "journal", "a standby needs --journal: the file it mirrors the primary's journal to"
        )
    return JournalMirror(address, journal, key, takeover_after=takeover_after)


def take_over(
    config: MatchConfig,
    run_match: MatchRunner,
    mirror: JournalMirror,
    *,
    backoff: Backoff | None = None,
) -> bool | None:
    """Run the match on ``config`` (resuming from its journal), retrying until it has the ports.

    A primary that is hung rather than dead still holds its ports (an exclusive
    lock on a local device, the single connection ser2net allows on an
    ``rfc2217://`` port), and the referee's open fails. So every
    :class:`~serialref.errors.PortOpenError` is logged and the open tried again
    after the ``backoff``'s pause (by default 0.2 s doubling to 5 s).

    The pauses are spent mirroring: if the primary is heard again, it was alive
    after all, and None is returned so that the caller stands by again. False
    when the mirror was stopped; otherwise ``run_match``'s result.
    """
    backoff = backoff or Backoff()
    while True:
        try:
            return run_match(config)
        except PortOpenError as exc:
            pause = backoff.pause()
            LOGGER.warning("taking over: %s; trying again in %.1f s", exc, pause)
        if mirror.mirror_for(pause):
            LOGGER.warning("the primary is back: standing by again")
            return None
        if mirror.stopped:
            return False


def stand_by(
    config: MatchConfig,
    settings: MatchSettings,
    mirror: JournalMirror,
    run_match: MatchRunner,
    *,
    notifier: SystemdNotifier | None = None,
) -> bool:
    """``serialref standby``: mirror the primary, and take its match over when it falls silent.

    A primary that fell silent after its match ended complete leaves nothing to
    take over: the standby goes on waiting for the next primary. A match
    interrupted by SIGTERM is taken over, as a restarted referee would resume it;
    stop the standby first to keep such a match stopped. Returns the match's
    result, or False when :meth:`JournalMirror.stop` was called.
    """
    resumable = dataclasses.replace(config, journal=mirror.journal)
    if notifier is not None:
        notifier.ready()
        notifier.status(f"standing by on {mirror.address}, mirroring to {mirror.journal}")
    while True:
        if not mirror.wait_for_silence():
            return False
        if find_unfinished_match(mirror.journal, settings) is None:
            LOGGER.warning("the primary's match in %s is complete; standing by for the next one",
                           mirror.journal)  # fmt: skip
            continue
        LOGGER.warning("taking over the match from %s", mirror.journal)
        if notifier is not None:
            notifier.status(f"taking over the match from {mirror.journal}")
        complete = take_over(resumable, run_match, mirror)
        if complete is not None:
            return complete
