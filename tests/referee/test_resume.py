"""Finding where a journal's match stood, and rebuilding its unfinished game.

The journals are a real referee's events (tests/matchevents.py), cut where a crash or a
stop would have left them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import chess
import pytest
from matchevents import FOOLS_MATE, played_match

from serialref.clock import ChessClock
from serialref.errors import ConfigError
from serialref.happenings import (
    GameEnded,
    GameStarted,
    MatchEnded,
    MatchEvent,
    MovePlayed,
    PgnAppended,
    PlayerSignedOff,
    PlayerSignedOn,
    SupervisorCommand,
)
from serialref.recorders.journal import JournalRecorder
from serialref.referee.game.replay import resumed_game
from serialref.referee.game.states import GameState
from serialref.referee.resume import find_unfinished_match, unfinished_match
from serialref.referee.settings import MatchSettings
from serialref.timecontrol import TimeControl

JOURNAL = Path("match.jsonl")
TC = TimeControl.parse("60+1")
SETTINGS = MatchSettings(games=2, time_control=TC, event="Test", site="Lab")
TWO_GAMES = played_match("60+1", games=(FOOLS_MATE, FOOLS_MATE))


def cut_after(kind: type[MatchEvent], count: int) -> list[MatchEvent]:
    """The journal up to and with the ``count``-th event of ``kind``: a crash just after it."""
    seen = 0
    for index, event in enumerate(TWO_GAMES):
        if isinstance(event, kind):
            seen += 1
            if seen == count:
                return list(TWO_GAMES[: index + 1])
    raise AssertionError(f"the match has fewer than {count} {kind.__name__}")


def test_a_complete_match_or_none_at_all_is_not_resumed(tmp_path: Path) -> None:
    assert unfinished_match(TWO_GAMES, SETTINGS, JOURNAL) is None
    assert unfinished_match([], SETTINGS, JOURNAL) is None
    assert find_unfinished_match(tmp_path / "none.jsonl", SETTINGS) is None


def test_a_match_its_sprt_decided_is_over_and_one_stopped_otherwise_is_not() -> None:
    first_game = cut_after(GameEnded, 1)
    decided = MatchEnded(complete=False, score=(1.0, 0.0), reason="SPRT: H1 was accepted")
    stopped = MatchEnded(complete=False, score=(1.0, 0.0), reason="SIGTERM")
    assert unfinished_match([*first_game, decided], SETTINGS, JOURNAL) is None
    assert unfinished_match([*first_game, stopped], SETTINGS, JOURNAL) is not None


def test_after_a_crash_in_the_second_game_the_players_are_restored_at_once() -> None:
    found = unfinished_match(cut_after(MovePlayed, 7), SETTINGS, JOURNAL)
    assert found is not None
    point = found.point
    assert (point.games_done, point.results) == (1, (("a", "0-1"),))
    assert (point.names, point.signed_on, point.orderly, point.clocks) == (
        ("Alpha", "Beta"), (True, True), False, None,
    )  # fmt: skip
    assert point.game is not None and point.game.game == 2
    assert [move.san for move in point.moves] == ["f3", "e5", "g4"]
    assert found.unfinished is not None and found.unfinished.started == point.game
    assert [game.started.game for game in found.pgn_backlog] == [1]


def test_a_game_in_the_pgn_is_not_in_the_backlog() -> None:
    events = [*cut_after(GameEnded, 1), PgnAppended(game=1)]
    found = unfinished_match(events, SETTINGS, JOURNAL)
    assert found is not None
    assert found.pgn_backlog == ()
    assert found.point.game is None and found.unfinished is None


def test_a_crashed_game_continues_from_its_last_move() -> None:
    found = unfinished_match(cut_after(MovePlayed, 7), SETTINGS, JOURNAL)
    assert found is not None
    last = found.point.moves[-1]
    game = resumed_game(found.point, TC)
    assert game.state is GameState.PLAYING
    assert game.board.fen(en_passant="fen") == last.fen
    assert game.board.move_stack[-1] == chess.Move.from_uci("g2g4")
    assert (game.clock.consumed(chess.WHITE), game.clock.consumed(chess.BLACK)) == last.consumed
    assert game.clock.moves_made(chess.WHITE) == 2
    assert not game.offer_pending


def test_a_game_with_no_move_yet_starts_from_its_opening() -> None:
    found = unfinished_match(cut_after(GameStarted, 2), SETTINGS, JOURNAL)
    assert found is not None
    game = resumed_game(found.point, TC)
    assert game.board == chess.Board()
    assert game.clock.consumed(chess.WHITE) == game.clock.consumed(chess.BLACK) == 0.0


def stopped_in_order(events: list[MatchEvent]) -> tuple[list[MatchEvent], ChessClock]:
    clock = ChessClock(TC, consumed=(4.0, 3.0), moves_made=(2, 1))
    clock.start(chess.BLACK, 100.0)
    clock.pause(102.5)  # Black had thought 2.5 s when the referee was stopped
    stop = MatchEnded(complete=False, score=(0.0, 1.0), reason="SIGTERM",
                      clocks=clock.snapshot(102.5))  # fmt: skip
    return [*events, stop], clock


def test_after_an_orderly_stop_both_players_are_awaited_with_the_clock_as_it_stood() -> None:
    events, clock = stopped_in_order(cut_after(MovePlayed, 7))
    found = unfinished_match(events, SETTINGS, JOURNAL)
    assert found is not None
    assert (found.point.orderly, found.point.signed_on) == (True, (False, False))
    game = resumed_game(found.point, TC)
    assert game.state is GameState.SUSPENDED
    assert game.clock.snapshot(200.0) == clock.snapshot(200.0)


def test_once_both_are_back_after_a_stop_it_is_a_crash_again() -> None:
    events, _ = stopped_in_order(cut_after(MovePlayed, 7))
    events += [PlayerSignedOn("a", "Alpha"), PlayerSignedOn("b", "Beta")]
    found = unfinished_match(events, SETTINGS, JOURNAL)
    assert found is not None
    assert (found.point.orderly, found.point.signed_on) == (False, (True, True))
    assert found.point.clocks is not None  # no move since: the stopped clock still holds


def test_a_move_after_the_stop_makes_the_stopped_clock_stale() -> None:
    events, _ = stopped_in_order(cut_after(MovePlayed, 7))
    move = cut_after(MovePlayed, 8)[-1]
    events += [PlayerSignedOn("a", "Alpha"), PlayerSignedOn("b", "Beta"), move]
    found = unfinished_match(events, SETTINGS, JOURNAL)
    assert found is not None
    assert found.point.clocks is None
    assert found.point.moves[-1] == move


def test_a_game_ended_after_the_stop_leaves_its_clock_behind() -> None:
    # Stopped in Black's move; once both were back Black resigned, the next game began,
    # and the referee crashed before its first move: that game starts on fresh clocks.
    events, _ = stopped_in_order(cut_after(MovePlayed, 3))
    ended = next(event for event in TWO_GAMES if isinstance(event, GameEnded))
    second = [event for event in TWO_GAMES if isinstance(event, GameStarted)][1]
    events += [
        PlayerSignedOn("a", "Alpha"),
        PlayerSignedOn("b", "Beta"),
        dataclasses.replace(ended, result="1-0", reason="Black resigns"),
        second,
    ]
    found = unfinished_match(events, SETTINGS, JOURNAL)
    assert found is not None
    assert found.point.game == second
    assert found.point.clocks is None
    game = resumed_game(found.point, TC)
    assert (game.clock.consumed(chess.WHITE), game.clock.consumed(chess.BLACK)) == (0.0, 0.0)
    game.clock.start(chess.WHITE, 200.0)
    assert game.clock.remaining(chess.WHITE, 201.0) == 59.0


def test_a_game_started_again_after_the_stop_leaves_the_stopped_clock_behind() -> None:
    # Stopped in Black's move; once both were back the supervisor started the game
    # again, and the referee crashed in the reset delay: the fresh game has fresh clocks.
    events, _ = stopped_in_order(cut_after(MovePlayed, 3))
    events += [
        PlayerSignedOn("a", "Alpha"),
        PlayerSignedOn("b", "Beta"),
        SupervisorCommand(command="restart-game", args=(), uid=0, game=1),
    ]
    found = unfinished_match(events, SETTINGS, JOURNAL)
    assert found is not None
    assert (found.point.clocks, found.point.moves) == (None, ())
    game = resumed_game(found.point, TC)
    assert game.board == chess.Board()
    assert (game.clock.consumed(chess.WHITE), game.clock.consumed(chess.BLACK)) == (0.0, 0.0)
    assert (game.clock.moves_made(chess.WHITE), game.clock.moves_made(chess.BLACK)) == (0, 0)


@pytest.mark.parametrize(("control", "period", "bonus"), [("40/20:10+0.2", 20.0, 10.0),
                                                          ("40/7200:3600", 7200.0, 3600.0)])
def test_a_game_started_again_gets_its_period_bonus_with_its_own_40th_move(
    control: str, period: float, bonus: float
) -> None:
    tc = TimeControl.parse(control)
    clock = ChessClock(tc, consumed=(4.0, 3.0), moves_made=(2, 2))
    stop = MatchEnded(complete=False, score=(0.0, 0.0), reason="SIGTERM",
                      clocks=clock.snapshot())  # fmt: skip
    played = played_match(control)
    third_move = [i for i, event in enumerate(played) if isinstance(event, MovePlayed)][2]
    events = [
        *played[: third_move + 1], stop, PlayerSignedOn("a", "Alpha"),
        PlayerSignedOn("b", "Beta"),
        SupervisorCommand(command="restart-game", args=(), uid=0, game=1),
    ]  # fmt: skip
    settings = dataclasses.replace(SETTINGS, games=1, time_control=tc)
    found = unfinished_match(events, settings, JOURNAL)
    assert found is not None
    fresh = resumed_game(found.point, tc).clock
    now = 0.0
    for _ in range(39):
        for side in (chess.WHITE, chess.BLACK):
            fresh.start(side, now)
            now += 0.1
            fresh.stop(now)
    assert fresh.remaining(chess.WHITE) == pytest.approx(period - 3.9)  # 39 moves: no bonus
    fresh.start(chess.WHITE, now)
    fresh.stop(now + 0.1)
    assert fresh.remaining(chess.WHITE) == pytest.approx(period + bonus - 4.0)  # the 40th


def test_a_player_that_left_is_not_restored() -> None:
    events = [*cut_after(MovePlayed, 7), PlayerSignedOff("b", "line lost: unplugged")]
    found = unfinished_match(events, SETTINGS, JOURNAL)
    assert found is not None
    assert found.point.signed_on == (True, False)


def test_only_the_last_match_started_afresh_counts() -> None:
    unfinished = cut_after(MovePlayed, 2)
    assert unfinished_match([*unfinished, *TWO_GAMES], SETTINGS, JOURNAL) is None
    found = unfinished_match([*TWO_GAMES, *unfinished], SETTINGS, JOURNAL)
    assert found is not None and found.point.games_done == 0


@pytest.mark.parametrize(
    ("change", "option", "said"),
    [
        ({"games": 3}, "games", "games 2, not 3"),
        ({"time_control": TimeControl.parse("300+2")}, "tc", "time control '60+1', not '300+2'"),
        ({"event": "Other"}, "event", "event 'Test', not 'Other'"),
        ({"names": ("Alpha", None)}, "name_a/name_b", "names None and None, not 'Alpha' and None"),
    ],
)
def test_a_journal_of_another_match_is_refused_naming_the_setting(
    change: dict[str, object], option: str, said: str
) -> None:
    settings = dataclasses.replace(SETTINGS, **change)  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as caught:
        unfinished_match(cut_after(MovePlayed, 1), settings, JOURNAL)
    assert caught.value.key == option
    assert str(caught.value) == (
        f"{option}: {JOURNAL} holds an unfinished match with {said}: give the same setting "
        "to resume it, or --new-match to keep that journal aside and start a new match"
    )


def test_the_same_time_control_written_otherwise_is_the_same_match() -> None:
    settings = dataclasses.replace(SETTINGS, time_control=TimeControl.parse("60.0+1"))
    assert unfinished_match(cut_after(MovePlayed, 1), settings, JOURNAL) is not None


def test_find_reads_the_journal_file(tmp_path: Path) -> None:
    path = tmp_path / "match.jsonl"
    journal = JournalRecorder(path)
    for event in cut_after(MovePlayed, 3):
        journal.handle(event)
    journal.close()
    found = find_unfinished_match(path, SETTINGS)
    assert found is not None
    assert [move.san for move in found.point.moves] == ["f3", "e5", "g4"]
