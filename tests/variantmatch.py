"""A whole match over pty cables with the referee and two players in threads, for variant tests."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import pyffish

from serialref.client.players import GreedyPlayer, Player, RandomPlayer
from serialref.client.runner import run_client
from serialref.recorders.journal import JournalRecorder
from serialref.recorders.pgn import PgnRecorder
from serialref.referee.daemon import PortPlan, RefereeDaemon
from serialref.referee.openings import Opening
from serialref.referee.settings import MatchSettings
from serialref.rules import find_rules
from serialref.timecontrol import TimeControl
from serialref.wire.nullmodem import null_modem_cable

TIMEOUT = 60.0


def _in_thread(target: Callable[[], object], name: str) -> threading.Thread:
    thread = threading.Thread(target=target, name=name)
    thread.start()
    return thread


def _client(path: str, player: Player) -> threading.Thread:
    return _in_thread(lambda: run_client(path, player, once=True), f"test-client-{path}")


def play_match(
    tmp_path: Path, settings: MatchSettings, players: tuple[Player, Player] | None = None
) -> tuple[bool, Path, Path]:
    """A whole match (default: a greedy and a random player); (complete, PGN, journal)."""
    first, second = players or (GreedyPlayer(1), RandomPlayer(2))
    pgn, journal = tmp_path / "match.pgn", tmp_path / "journal.jsonl"
    with ExitStack() as stack:
        cables = [stack.enter_context(null_modem_cable()) for _ in "ab"]
        recorders: list[JournalRecorder | PgnRecorder] = [
            JournalRecorder(journal),
            PgnRecorder(pgn),
        ]
        ready = threading.Event()
        daemon = RefereeDaemon(
            settings,
            [PortPlan("a", cables[0].path_a), PortPlan("b", cables[1].path_a)],
            recorders,
            [],
            on_ready=ready.set,
        )
        result: list[bool] = []
        referee = _in_thread(lambda: result.append(daemon.run()), "test-referee")
        try:
            assert ready.wait(5.0), "the referee did not open its ports"
            players = [
                _client(cables[0].path_b, first),
                _client(cables[1].path_b, second),
            ]
            referee.join(TIMEOUT)
            for player in players:
                player.join(TIMEOUT)
        finally:
            if referee.is_alive():
                daemon.request_stop("test over")
                referee.join(TIMEOUT)
            for recorder in recorders:
                recorder.close()
    assert not referee.is_alive()
    return bool(result and result[0]), pgn, journal


def settings_for(variant: str, **values: object) -> MatchSettings:
    rules = find_rules(variant)
    values.setdefault("openings", (Opening(rules.starting_fen, rules=rules),))
    return MatchSettings(
        rules=rules,
        time_control=TimeControl.parse("-"),
        reset_delay=0.02,
        conclude_delay=0.02,
        **values,  # type: ignore[arg-type]
    )


_TAG_RE = re.compile(r'^\[(\w+) "(.*)"\]$', re.MULTILINE)


def replay_with_pyffish(variant: str, pgn: str) -> tuple[dict[str, str], str, list[str]]:
    """The PGN's tags, and its moves as pyffish reads them: (tags, start FEN, UCI moves)."""
    tags = dict(_TAG_RE.findall(pgn))
    movetext = re.sub(r"\{[^}]*\}", " ", pgn[pgn.index("\n\n") :])
    marks = re.compile(r"\d+\.+|1-0|0-1|1/2-1/2|\*")
    sans = [word for word in movetext.split() if not marks.fullmatch(word)]
    start = tags.get("FEN", pyffish.start_fen(variant))
    moves: list[str] = []
    for san in sans:
        fen = pyffish.get_fen(variant, start, moves)
        matching = [
            uci
            for uci in pyffish.legal_moves(variant, start, moves)
            if pyffish.get_san(variant, fen, uci, False, pyffish.NOTATION_SAN) == san
        ]
        assert len(matching) == 1, f"{san} in {fen}: {matching}"
        moves.append(matching[0])
    return tags, start, moves
