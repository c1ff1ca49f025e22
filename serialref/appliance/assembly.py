"""``serialref run``: a referee assembled from a configuration.

Turns a checked :class:`serialref.appliance.config.MatchConfig` into match settings,
port plans and listeners (journal, PGN, console, systemd), runs the daemon and
closes everything, whatever happens.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import os
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TextIO

from serialref.appliance.config import MatchConfig, PortConfig, require_port_paths
from serialref.appliance.notify import SystemdNotifier
from serialref.control.server import ControlServer
from serialref.errors import ConfigError, recorder_error
from serialref.happenings import (
    GameEnded,
    MatchEvent,
    MatchListener,
    PgnAppended,
    Recorder,
)
from serialref.observers.console import ConsoleObserver
from serialref.observers.progress import ProgressObserver
from serialref.observers.sprt import SprtWatch
from serialref.observers.systemd import SystemdStatusObserver
from serialref.recorders.journal import JournalRecorder, set_aside
from serialref.recorders.pgn import PgnRecorder
from serialref.referee.adjudicator import AdjudicationRules
from serialref.referee.daemon import PortPlan, RefereeDaemon
from serialref.referee.resume import (
    MatchInJournal,
    ResumePoint,
    find_unfinished_match,
    holds_finished_match,
)
from serialref.referee.settings import MatchSettings
from serialref.referee.tablebase import SyzygyTables
from serialref.wire.transport import LineDelay

LOGGER = logging.getLogger(__name__)

__all__ = [
    "MatchParts",
    "assemble_match",
    "match_settings",
    "port_plans",
    "run_referee",
    "set_journal_aside",
    "with_runtime_socket",
]

_TYPICAL_REPLY = 160  # bytes: a reply record with a move and some analysis


def match_settings(config: MatchConfig) -> MatchSettings:
    """The referee's view of a configuration, whose values are already read and checked.

    Operator text (names, event, site) reaches the PGN, the standings and terminals as it
    was configured, every letter of it (``Müller``), with only what could drive a
    terminal made a ``?``; the players get its ASCII form on the line
    (:func:`serialref.records.tag_value`).
    """
    start = config.start_positions
    names = tuple(None if name is None else _operator_text(name) for name in
                  (config.port_a.name, config.port_b.name))  # fmt: skip
    return MatchSettings(
        games=config.games,
        time_control=config.tc,
        openings=start.openings,
        openings_source=start.source,
        rules=config.variant,
        event=_operator_text(config.event),
        site=_operator_text(config.site),
        names=(names[0], names[1]),
        reset_delay=config.reset_delay,
        conclude_delay=config.conclude_delay,
        on_infraction=config.on_infraction,
        rejoin_window=config.rejoin_window,
        flag_grace=max(_reply_in_transit(port) for port in (config.port_a, config.port_b)),
        adjudication=AdjudicationRules(
            draw=config.draw,
            resign=config.resign,
            max_moves=config.maxmoves,
            tables=SyzygyTables(config.tb, pieces=config.tb_pieces) if config.tb else None,
        ),
    )


def _operator_text(text: str) -> str:
    """``text`` with every character a terminal would act on (ESC, CR, ...) made a ``?``."""
    return "".join(char if char.isprintable() else "?" for char in text)


def _reply_in_transit(port: PortConfig) -> float:
    """How long a typical reply takes on the line, so a flag is not called while it arrives.

    The reply's own transmission time is not charged to the player (PROTOCOL.md
    5), so a reply may arrive after the flag deadline and still be in time.
    """
    if port.settings.line_delay is LineDelay.OFF:
        return 0.0
    return port.settings.transmission_time(_TYPICAL_REPLY)


def port_plans(config: MatchConfig) -> tuple[PortPlan, PortPlan]:
    """Both ports' paths and line settings; a missing path is a ConfigError."""
    path_a, path_b = require_port_paths(config)
    return (
        PortPlan("a", path_a, config.port_a.settings, config.port_a.newline),
        PortPlan("b", path_b, config.port_b.settings, config.port_b.newline),
    )


def set_journal_aside(journal: Path) -> Path | None:
    """``--new-match``: keep an old journal as ``NAME.1`` (``.2``, ...); where it went."""
    if not journal.is_file() or not journal.stat().st_size:
        return None
    try:
        aside = set_aside(journal)
    except OSError as exc:
        raise recorder_error("set aside", journal, exc) from exc
    LOGGER.warning("starting a new match: the old journal is now %s", aside)
    return aside


@dataclasses.dataclass(frozen=True, slots=True)
class MatchParts:
    """A match ready to be played: what :class:`serialref.referee.daemon.MatchBoard` takes."""

    settings: MatchSettings
    plans: tuple[PortPlan, PortPlan]
    recorders: Sequence[Recorder]
    observers: Sequence[MatchListener]
    resume: ResumePoint | None
    control: ControlServer | None
    sprt: SprtWatch | None = None


def assemble_match(
    config: MatchConfig,
    stack: ExitStack,
    *,
    console: TextIO | None = None,
    progress: TextIO | None = None,
    extra_listeners: Sequence[MatchListener] = (),
    new_match: bool = False,
    request_stop: Callable[[str], None] | None = None,
) -> MatchParts:
    """The configured match's settings, ports, recorders and observers, closed with ``stack``.

    ``console`` gets the live board, ``progress`` the games, the score and the Elo
    estimate. The extra listeners are observers: they see every event and can never
    stop the match. ``new_match`` sets an existing journal aside instead of resuming it.
    The match's SPRT, if it has one, asks ``request_stop`` to end it once it decides.
    """
    settings = match_settings(config)
    stack.callback(settings.adjudication.close)
    plans = port_plans(config)
    resumed: MatchInJournal | None = None
    if config.journal is not None:
        if new_match:
            set_journal_aside(config.journal)
        resumed = find_unfinished_match(config.journal, settings)
        if resumed is None and config.journal.is_file() and config.journal.stat().st_size:
            LOGGER.warning("%s holds no unfinished match: starting a new match", config.journal)
    recorders: list[Recorder] = []
    journal: JournalRecorder | None = None
    if config.journal is not None:
        journal = JournalRecorder(config.journal)
        stack.callback(journal.close)
        recorders.append(journal)
    if config.pgn is not None:
        pgn = PgnRecorder(
            config.pgn,
            backlog=resumed.pgn_backlog if resumed else (),
            unfinished=resumed.unfinished if resumed else None,
            on_appended=_marker(journal),
        )
        stack.callback(pgn.close)
        recorders.append(pgn)
    observers: list[MatchListener] = []
    if console is not None:
        observers.append(ConsoleObserver(console))
    point = resumed.point if resumed is not None else None
    if progress is not None:  # after the console, which redraws above it
        observers.append(ProgressObserver(progress, resumed=point, sprt=config.sprt,
                                          rating_interval=config.rating_interval))  # fmt: skip
    sprt: SprtWatch | None = None
    if config.sprt is not None and request_stop is not None:
        sprt = SprtWatch(config.sprt, request_stop, results=point.results if point else ())
        observers.append(sprt)
    observers.extend(extra_listeners)
    for observer in observers:
        stack.callback(observer.close)
    control = _control_server(config)
    if control is not None:
        stack.callback(control.close)
        observers.append(control)
    observers.extend(_audience(config, stack))
    return MatchParts(settings, plans, recorders, observers, point, control, sprt)


def run_referee(
    config: MatchConfig,
    *,
    console: TextIO | None = None,
    progress: TextIO | None = None,
    extra_listeners: Sequence[MatchListener] = (),
    on_ready: Callable[[], None] | None = None,
    new_match: bool = False,
    once: bool = False,
) -> bool:
    """Play the configured match (:func:`assemble_match`); True when complete, False when stopped.

    A match its SPRT decided is complete: it has played the games it needed.

    ``on_ready`` runs once both ports are open: players started before that
    would lose their first sign-on, which opening a port discards. ``once`` plays the
    journal's match once: a journal whose match was played out ends the referee at once
    (True) instead of starting another, so that a service started again at every boot
    does not play the match again, appended to the same journal and PGN.
    """
    notifier = SystemdNotifier()
    if once and not new_match:
        if config.journal is None:
            raise ConfigError("--once", "needs a journal: it is what tells a finished match")
        if holds_finished_match(config.journal):
            LOGGER.warning("%s holds a finished match: nothing to play (--once); give the "
                           "next match a journal of its own, or --new-match", config.journal)
            notifier.ready()
            notifier.status(f"the match in {config.journal} is finished")
            notifier.stopping()
            return True
    listeners: list[MatchListener] = [GarbageAfterGames(), *extra_listeners]
    if notifier.enabled:  # under systemd: each move's status line costs a datagram
        listeners.append(SystemdStatusObserver(notifier))
    daemon: RefereeDaemon | None = None

    def request_stop(reason: str) -> None:
        assert daemon is not None  # the match publishes nothing before the daemon runs
        daemon.request_stop(reason)

    with ExitStack() as stack:
        parts = assemble_match(config, stack, console=console, progress=progress,
                               extra_listeners=listeners, new_match=new_match,
                               request_stop=request_stop)  # fmt: skip
        daemon = RefereeDaemon(
            parts.settings,
            parts.plans,
            parts.recorders,
            parts.observers,
            on_ready=_both(notifier.ready, on_ready),
            on_idle=notifier.watchdog,
            idle_interval=notifier.watchdog_interval(),
            resume=parts.resume,
        )
        if parts.control is not None:
            parts.control.start(daemon.submit)
        # Everything built so far (modules, python-chess's tables, the openings) lives
        # as long as the match: frozen, full collections during the match skip it
        # (bench/referee.py: CPU per ply at the 99th percentile 0.35 -> 0.25 ms).
        gc.freeze()
        complete = daemon.run() or (parts.sprt is not None and parts.sprt.decided)
        notifier.stopping()
    return complete


class GarbageAfterGames:
    """Collects what finished games left behind, when a game ends (a match listener).

    A game's objects refer to one another (its state machine and its referee, its
    board and their moves), so they are freed by a full collection only, which the
    collector starts once the objects that survived its younger collections come to a
    quarter of those it keeps: after dozens of games, each having raised the
    referee's memory by some 85 kB. Collected at each game's end, the memory stays
    that of one game. Everything built before the match is frozen (``gc.freeze``), so
    a collection walks only what the match made since.
    """

    def handle(self, event: MatchEvent) -> None:
        if isinstance(event, GameEnded):
            gc.collect()

    def close(self) -> None:
        pass


def _control_server(config: MatchConfig) -> ControlServer | None:
    """The supervisor's socket, where the configuration says (:func:`with_runtime_socket`)."""
    if config.control_socket is None:
        return None
    return ControlServer(config.control_socket, group=config.control_group)


def with_runtime_socket(config: MatchConfig) -> MatchConfig:
    """A lone referee's control socket: under systemd, the runtime directory's by default.

    Only ``serialref run`` and ``standby`` take this default: the boards of an event
    would all claim the same socket.
    """
    runtime = os.environ.get("RUNTIME_DIRECTORY", "").split(":")[0]
    if config.control_socket is not None or not runtime:
        return config
    return dataclasses.replace(config, control_socket=Path(runtime) / "control.sock")


def _audience(config: MatchConfig, stack: ExitStack) -> list[MatchListener]:
    """The feeds for the audience the configuration asks for, closed with the match."""
    feeds: list[MatchListener] = []
    if config.style12 is not None:
        from serialref.observers.style12 import Style12Observer

        feeds.append(stack.enter_context(Style12Observer(config.style12)))
    if config.web is not None:
        from serialref.observers.web import WebObserver

        feeds.append(stack.enter_context(WebObserver(config.web)))
    return feeds


def _marker(journal: JournalRecorder | None) -> Callable[[int], None] | None:
    """How the PGN recorder tells the journal a game is in the file."""
    if journal is None:
        return None
    return lambda game: journal.handle(PgnAppended(game=game))


def _both(first: Callable[[], None], second: Callable[[], None] | None) -> Callable[[], None]:
    def run() -> None:
        first()
        if second is not None:
            second()

    return run
