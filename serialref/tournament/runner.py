"""``serialref event``: every pairing of an event refereed by one process, boards at once.

Each pairing is a match of its own, refereed exactly as ``serialref run`` referees one
(:func:`serialref.appliance.assembly.assemble_match`: its journal, its PGN file, resume
after a crash), so a match stays what it was and an event is matches side by side. Every
board is played on one event loop (:class:`serialref.referee.loop.RefereeLoop`) on one
thread, the referee's; the event's own thread starts the next pairing as a board ends
(its seats, its players, its files) and adds it to the loop, up to ``concurrency``
boards at once, never one player on two boards at once.

The event's journal (``event.jsonl`` in its directory) holds the pairings and, fsynced,
each one that is complete. Run again after a crash (even SIGKILL), the event skips what
is complete and resumes the unfinished pairings mid-game from their own journals. The
event's PGN file is made from the pairings' files, in pairing order, each time a
pairing ends, so it holds every finished game exactly once.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import logging
import os
import queue
import threading
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from serialref.appliance.assembly import GarbageAfterGames, assemble_match
from serialref.appliance.config import load_config
from serialref.elo import Score
from serialref.errors import ConfigError, RecorderError, SerialrefError, recorder_error
from serialref.happenings import MatchEnded, MatchListener
from serialref.recorders.filemode import private_file
from serialref.recorders.journal import cut_torn_tail, read_journal
from serialref.referee.daemon import MatchBoard
from serialref.referee.loop import RefereeLoop, stop_signals
from serialref.sprt import decision_in
from serialref.tournament.audience import TournamentAudience
from serialref.tournament.config import TournamentConfig
from serialref.tournament.pairings import Pairing
from serialref.tournament.progress import BoardProgress, TournamentProgress
from serialref.tournament.report import read_pgn_games, text_report
from serialref.tournament.seats import Seat, open_seat
from serialref.tournament.standings import Standings, standings
from serialref.tournament.tcpseats import TcpSeats

__all__ = ["TournamentRunner"]

LOGGER = logging.getLogger(__name__)

_PLAYER_CHECK = 0.5
"""Seconds between two looks at the players the event started (see ``_check_players``)."""


@dataclass(frozen=True, slots=True)
class _BoardDone:
    """A board has left the loop: its match complete (or decided), stopped, or failed."""

    pairing: Pairing
    complete: bool
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class _LoopFailed:
    """The referee's thread itself failed: a bug, raised by the event's thread."""

    error: BaseException


class TournamentRunner:
    """Plays an event's pairings, ``concurrency`` boards at once, until all are complete."""

    def __init__(self, config: TournamentConfig, *, out: TextIO | None = None) -> None:
        self.config = config
        self._out = out
        self._pairings = config.pairings()
        self._players = {player.name: player for player in config.players}
        self._journal_lock = threading.Lock()  # the seats' threads record refusals too
        self._tcp = TcpSeats(config.players, record=self._record_refusal)
        self.audience = TournamentAudience(config, self.request_stop)
        self._loop = RefereeLoop()
        self._done: queue.SimpleQueue[_BoardDone | _LoopFailed] = queue.SimpleQueue()
        self._boards: dict[int, MatchBoard] = {}
        self._stacks: dict[int, ExitStack] = {}
        self._closers: list[threading.Thread] = []
        self._seats: dict[int, list[tuple[str, Path, Seat]]] = {}
        self._stopping = ""
        self._over = False
        total = len(self._pairings) * config.games
        self._progress = TournamentProgress(out, total_games=total, table=self.standings,
                                            table_text=_table_only,
                                            table_every=config.rating_interval)  # fmt: skip

    # ----------------------------------------------------------------- files

    def _path(self, pairing: Pairing, suffix: str) -> Path:
        return self.config.directory / f"pairing-{pairing.number:03d}{suffix}"

    @property
    def journal(self) -> Path:
        return self.config.directory / "event.jsonl"

    def standings(self) -> Standings:
        """The standings from every pairing's PGN file as it is now."""
        paths = [self._path(p, ".pgn") for p in self._pairings if self._path(p, ".pgn").exists()]
        return standings(read_pgn_games(paths), [player.name for player in self.config.players])

    # ------------------------------------------------------------------- run

    def run(self) -> bool:
        """Play every pairing not yet complete; True when the whole event is."""
        try:
            self.config.directory.mkdir(mode=0o750, parents=True, exist_ok=True)
        except OSError as exc:
            raise recorder_error("create", self.config.directory, exc) from exc
        complete = self._open_journal()
        pending = [p for p in self._pairings if p.number not in complete]
        for finished in [p for p in pending if _journal_complete(self._path(p, ".jsonl"))]:
            self._mark_complete(finished)  # its match ended just before a crash
            pending.remove(finished)
        running: set[int] = set()
        busy: set[str] = set()
        failure: BaseException | None = None
        referee = threading.Thread(target=self._referee, name="referee")
        with (stop_signals(self.request_stop), self._tcp.listening(),
              self.audience.opened()):  # fmt: skip
            referee.start()
            try:
                while (pending and not self._stopping) or running:
                    while len(running) < self.config.concurrency and not self._stopping:
                        pairing = next((p for p in pending if not {p.first, p.second} & busy),
                                       None)  # fmt: skip
                        if pairing is None:
                            break
                        pending.remove(pairing)
                        busy |= {pairing.first, pairing.second}
                        running.add(pairing.number)
                        try:
                            self._start_board(pairing)
                        except Exception as exc:  # the board never began: it is done at once
                            self._done.put(_BoardDone(pairing, False, exc))
                    try:
                        done = self._done.get(timeout=_PLAYER_CHECK)
                    except queue.Empty:
                        self._check_players()
                        continue
                    if isinstance(done, _LoopFailed):
                        raise done.error
                    running.discard(done.pairing.number)
                    busy -= {done.pairing.first, done.pairing.second}
                    self._close_board(done.pairing)
                    if done.error is not None:
                        failure = failure or done.error
                        self._stop_all(f"pairing {done.pairing.number} failed")
                    elif done.complete:
                        self._mark_complete(done.pairing)
                    else:  # stopped on its own (the supervisor's abort): the event stops too
                        self._stop_all(f"pairing {done.pairing.number} was stopped")
                    self._write_event_pgn()
            finally:
                self._over = True
                self._stop_all("the event is over")
                self._loop.call(lambda: None)  # wakes the loop up to see it is over
                referee.join()
                for number in list(self._stacks):
                    self._stacks.pop(number).close()
                for closer in self._closers:
                    closer.join()
        self._write_event_pgn()  # also when a restart found nothing left to play
        if failure is not None:
            raise failure
        whole = not pending and not self._stopping
        if self._out is not None:
            self._progress.write(text_report(self.standings(), title=self._title(whole),
                                             sprt=self.config.sprt))  # fmt: skip
        return whole

    def request_stop(self, reason: str) -> None:
        """End the event in order: every board stops its match; safe from signal handlers."""
        self._stop_all(reason)

    def _referee(self) -> None:
        """The referee's thread: every board on one loop, until the event is over."""
        try:
            self._loop.run(stay=lambda: not self._over)
        except BaseException as exc:  # handed to the event's thread, which raises it
            self._done.put(_LoopFailed(exc))

    def _title(self, finished: bool) -> str:
        state = "complete" if finished else f"stopped ({self._stopping})"
        return f"{self.config.name}: {state}; PGN {self.config.pgn}"

    def _stop_all(self, reason: str) -> None:
        if not self._over:
            self._stopping = self._stopping or reason
        for board in list(self._boards.values()):
            board.request_stop(reason)

    # ---------------------------------------------------------------- boards

    def _start_board(self, pairing: Pairing) -> None:
        """Open the pairing's seats and files and add its board to the loop."""
        with ExitStack() as stack:
            board = self._board(pairing, stack)
            self._boards[pairing.number] = board
            self._stacks[pairing.number] = stack.pop_all()
        self._loop.add(board)
        self.audience.join(pairing.number, f"{pairing.first} vs {pairing.second}", board.submit)
        if self._stopping:  # a stop that came while the board was being built
            board.request_stop(self._stopping)

    def _check_players(self) -> None:
        """A player the event started that has gone while its board plays stops the event.

        Its board would otherwise wait for it for ever (an engine that cannot start, a
        port another program holds): the event stops in order, saying who and where
        its log is, and resumes when run again.
        """
        for number, seats in list(self._seats.items()):
            board = self._boards.get(number)
            for name, log, seat in seats:
                code = seat.exit_code()
                if code is None or board is None or board.done:
                    continue
                reason = (f"player {name!r} of pairing {number} exited (code {code}) during its "
                          f"match; see {log}")  # fmt: skip
                LOGGER.error("%s", reason)
                self._seats.pop(number, None)
                self._stop_all(reason)
                break

    def _close_board(self, pairing: Pairing) -> None:
        """Close what the board's match held (files, seats, players) once it left the loop.

        Players not told ``disconnect`` (an orderly stop) are given a moment to leave
        before they are ended: once the event stops, the boards' players are waited for
        side by side rather than one board after another.
        """
        self._boards.pop(pairing.number, None)
        self._seats.pop(pairing.number, None)
        self.audience.leave(pairing.number)
        stack = self._stacks.pop(pairing.number, None)
        if stack is None:
            return
        if not self._stopping:
            stack.close()
            return
        closer = threading.Thread(target=stack.close, name=f"close-board-{pairing.number}")
        closer.start()
        self._closers.append(closer)

    def _board(self, pairing: Pairing, stack: ExitStack) -> MatchBoard:
        seats = [open_seat(stack, self._players[name], self._path(pairing, f"-{side}.log"),
                           self._tcp)
                 for side, name in (("a", pairing.first), ("b", pairing.second))]  # fmt: skip
        config = load_config(None, {
            **self.config.match_settings,
            "games": self.config.games,
            "event": self.config.name,
            "name_a": pairing.first,
            "name_b": pairing.second,
            "port_a": seats[0].url,
            "port_b": seats[1].url,
            "pgn": self._path(pairing, ".pgn"),
            "journal": self._path(pairing, ".jsonl"),
        })  # fmt: skip
        config = dataclasses.replace(config, sprt=self.config.sprt)  # the event's, for a match

        so_far = self._score_so_far(pairing)
        progress = BoardProgress(self._progress, pairing, self.config.games, score=so_far)
        audience = self.audience.listeners(pairing.number)

        def stop(reason: str) -> None:
            board.request_stop(reason)  # the board is made below, before its first game

        # A finished game's objects are freed by a full collection only (GarbageAfterGames).
        listeners: list[MatchListener] = [GarbageAfterGames(), progress, *audience]
        parts = assemble_match(config, stack, extra_listeners=listeners, request_stop=stop)

        self._seats[pairing.number] = [
            (name, self._path(pairing, f"-{side}.log"), seat)
            for (side, name), seat in zip((("a", pairing.first), ("b", pairing.second)), seats,
                                          strict=True)
        ]  # fmt: skip

        def start_players() -> None:
            for seat in seats:
                seat.start()

        def on_end(ended: MatchBoard) -> None:
            sprt = parts.sprt
            decided = sprt is not None and sprt.decided
            if decided and sprt is not None and sprt.status is not None:
                self._progress.write(sprt.status)
            self._done.put(_BoardDone(pairing, ended.referee.complete or decided, ended.error))

        # The PGN's Round is the event's round, each game of the pairing a sub-round.
        settings = dataclasses.replace(parts.settings, event_round=pairing.round)
        board = MatchBoard(self._loop, settings, parts.plans, parts.recorders,
                           parts.observers, on_ready=start_players, on_end=on_end,
                           resume=parts.resume)  # fmt: skip
        # What the board holds lives as long as its match: frozen, full collections
        # during the match skip it (as ``serialref run`` does).
        gc.freeze()
        return board

    def _score_so_far(self, pairing: Pairing) -> Score:
        """The first player's score in the games of the pairing already in its PGN file."""
        path = self._path(pairing, ".pgn")
        score = Score()
        if path.exists():
            for game in read_pgn_games([path]):
                score = score.after(game.result, as_white=game.white == pairing.first)
        return score

    # -------------------------------------------------------------- journal

    def _identity(self) -> dict[str, object]:
        return {
            "event": self.config.name,
            "games": self.config.games,
            "pairings": [[p.number, p.first, p.second] for p in self._pairings],
        }

    def _open_journal(self) -> set[int]:
        """The pairings the journal shows complete; a new journal starts with the identity."""
        identity = self._identity()
        if not self.journal.exists() or not self.journal.stat().st_size:
            self._append({"identity": identity})
            return set()
        complete: set[int] = set()
        try:
            # A last line without its newline was cut by a crash (perhaps inside a
            # character): it goes, and that pairing's own journal tells where it stands.
            cut_torn_tail(self.journal)
            text = self.journal.read_text(encoding="utf-8")
            entries = [json.loads(line) for line in text.splitlines() if line.strip()]
        except (OSError, ValueError) as exc:
            raise SerialrefError(f"cannot read the event journal {self.journal}: {exc}") from exc
        if not entries or entries[0].get("identity") != identity:
            raise ConfigError(
                "directory",
                f"{str(self.config.directory)!r} holds another event (other players, pairings "
                "or games): give this event a directory of its own",
            )
        for entry in entries[1:]:
            if isinstance(entry.get("complete"), int):
                complete.add(entry["complete"])
        LOGGER.warning("resuming the event: %d of %d pairings complete", len(complete),
                       len(self._pairings))  # fmt: skip
        return complete

    def _mark_complete(self, pairing: Pairing) -> None:
        self._append({"complete": pairing.number, "first": pairing.first,
                      "second": pairing.second})  # fmt: skip

    def _append(self, entry: dict[str, object]) -> None:
        try:
            with self._journal_lock, open(
                self.journal, "a", encoding="utf-8", opener=private_file
            ) as handle:
                handle.write(json.dumps(entry) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise recorder_error("write", self.journal, exc) from exc

    def _record_refusal(self, entry: dict[str, object]) -> None:
        """A TCP seat's refusal, in the event's journal; one that cannot be written is only
        logged (a full disk is for the boards' journals to stop the event on)."""
        try:
            self._append(entry)
        except RecorderError as exc:
            LOGGER.warning("%s", exc)

    def _write_event_pgn(self) -> None:
        """The event's PGN: the pairings' files one after another, replaced at once."""
        target = self.config.pgn
        parts = [self._path(p, ".pgn") for p in self._pairings]
        temporary = target.with_name(target.name + ".new")
        try:
            with open(temporary, "w", encoding="utf-8", opener=private_file) as out:
                for part in parts:
                    if part.exists():
                        text = part.read_text(encoding="utf-8").strip()
                        if text:
                            out.write(text + "\n\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, target)
        except OSError as exc:
            raise recorder_error("write", target, exc) from exc



def _journal_complete(path: Path) -> bool:
    """Whether a pairing's journal ends with its match complete, or decided by the SPRT."""
    if not path.exists() or not path.stat().st_size:
        return False
    ends = [event for event in read_journal(path) if isinstance(event, MatchEnded)]
    return bool(ends) and (ends[-1].complete or decision_in(ends[-1].reason) is not None)


def _table_only(table: Standings) -> str:
    """The standings table alone (no crosstable, no pairs): printed after every game."""
    text = text_report(table)
    return text.split("\n\n", 1)[0] + "\n"
