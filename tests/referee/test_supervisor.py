"""The supervisor's commands as the referee carries them out, on a fake wire and clock."""

from __future__ import annotations

import math
from pathlib import Path

import chess
import pytest
from doubles import Harness

from serialref.errors import CommandError
from serialref.happenings import GameEnded, MatchEvent, MovePlayed, SupervisorCommand
from serialref.referee.resume import unfinished_match
from serialref.referee.supervisor import carry_out
from serialref.timecontrol import TimeControl


def command(harness: Harness, name: str, *args: str) -> None:
    carry_out(harness.referee, SupervisorCommand(name, args, uid=1000))


def remaining(harness: Harness) -> tuple[float, float]:
    game = harness.referee.game
    assert game is not None
    now = harness.clock.now
    clock = game.sheet.chess_clock
    return clock.remaining(chess.WHITE, now), clock.remaining(chess.BLACK, now)


@pytest.fixture
def playing() -> Harness:
    harness = Harness()
    harness.start_game()
    harness.move("a", "e4")
    return harness


def test_a_pause_stops_both_clocks_and_holds_the_next_respond(playing: Harness) -> None:
    command(playing, "pause")
    frozen = remaining(playing)
    asked = playing.commands("a").count("respond")
    playing.move("b", "e5", think=5.0)  # Black was thinking: its move counts, not its time
    assert remaining(playing)[1] == frozen[1] + 1  # the increment only
    assert playing.commands("a").count("respond") == asked
    playing.advance(3600.0)  # no flag falls while paused
    assert playing.referee.game is not None and not playing.events.of(GameEnded)
    command(playing, "resume")
    assert playing.commands("a").count("respond") == asked + 1
    playing.advance(2.0)
    assert remaining(playing)[0] == pytest.approx(frozen[0] - 2.0)  # charged from the resume on


def test_a_pause_between_games_holds_the_next_games_first_respond() -> None:
    harness = Harness(games=2)
    command(harness, "pause")
    harness.start_game()
    assert "respond" not in harness.commands("a") + harness.commands("b")
    command(harness, "resume")
    assert harness.commands("a")[-1] == "respond"


def test_adjudication_ends_the_game_and_counts(playing: Harness) -> None:
    command(playing, "adjudicate", "0-1", "White", "lost", "on", "the", "board")
    ended = playing.ended()
    assert (ended.result, ended.termination, ended.reason) == (
        "0-1", "adjudication", "White lost on the board")  # fmt: skip
    assert playing.referee.score == [0.0, 1.0]
    assert playing.commands("a")[-2:] == ["inform", "conclude"]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("adjudicate",), "adjudicate needs a RESULT"),
        (("adjudicate", "2-0"), "'2-0' is not a result"),
        (("add-time", "white"), "add-time needs SIDE"),
        (("add-time", "red", "30"), "add-time needs SIDE"),
        (("add-time", "white", "nan"), "'nan' is not a number of seconds"),
        (("restore", "c"), "restore needs one port, A or B"),
        (("pause", "now"), "pause takes no arguments"),
        (("resume",), "the match is not paused"),
        (("explode",), "unknown command 'explode'"),
    ],
)
def test_a_refused_command_changes_nothing(
    playing: Harness, args: tuple[str, ...], error: str
) -> None:
    before = list(playing.events.events)
    with pytest.raises(CommandError, match=error):
        command(playing, *args)
    assert playing.events.events == before


def test_commands_that_need_a_game_say_so() -> None:
    harness = Harness()
    for name in ("adjudicate", "restart-game", "restore", "add-time"):
        args = {"adjudicate": ("1-0",), "restore": ("a",), "add-time": ("white", "5")}
        with pytest.raises(CommandError, match="no game is under way"):
            command(harness, name, *args.get(name, ()))


def test_add_time_moves_the_flag(playing: Harness) -> None:
    before = remaining(playing)
    command(playing, "add-time", "black", "30")
    assert remaining(playing) == (before[0], before[1] + 30)
    (journaled,) = playing.events.of(SupervisorCommand)
    assert journaled == SupervisorCommand("add-time", ("black", "30"), uid=1000, game=1)


def test_restart_game_starts_over_from_the_initial_position(playing: Harness) -> None:
    playing.move("b", "e5")
    command(playing, "restart-game")
    assert playing.commands("a")[-1] == playing.commands("b")[-1] == "reset"
    playing.advance(5.0)
    playing.board = chess.Board()
    playing.move("a", "d4")
    assert playing.events.of(MovePlayed)[-1].ply == 1
    assert remaining(playing)[0] == 61.0 - 1.0


def test_restore_sends_the_game_again(playing: Harness) -> None:
    before = len(playing.lines("a"))
    command(playing, "restore", "A")
    assert playing.commands("a")[before:] == ["reset", "inform", "execute"]


def test_abort_stops_the_match_in_order(playing: Harness) -> None:
    command(playing, "abort")
    assert playing.referee.done and not playing.referee.complete
    assert playing.commands("a")[-1] == playing.commands("b")[-1] == "disconnect"
    with pytest.raises(CommandError, match="the match is over"):
        command(playing, "pause")


def journal_after(harness: Harness) -> list[MatchEvent]:
    return list(harness.events.events)


def test_a_restart_reads_the_pause_the_added_time_and_the_restart_back(playing: Harness) -> None:
    playing.move("b", "e5")
    command(playing, "add-time", "white", "10")
    command(playing, "restart-game")
    command(playing, "add-time", "black", "7.5")
    playing.advance(5.0)
    playing.board = chess.Board()
    playing.move("a", "c4")
    command(playing, "pause")
    found = unfinished_match(journal_after(playing), playing.referee.settings, Path("j"))
    assert found is not None
    point = found.point
    assert point.paused
    assert point.added == (0.0, 7.5)  # White's 10 s were for the game before the restart
    assert [move.san for move in point.moves] == ["c4"]
    command(playing, "resume")
    found = unfinished_match(journal_after(playing), playing.referee.settings, Path("j"))
    assert found is not None and not found.point.paused


def test_untimed_clocks_take_added_time_without_harm() -> None:
    harness = Harness(time_control=TimeControl.parse("-"))
    harness.start_game()
    command(harness, "add-time", "white", "60")
    assert remaining(harness) == (math.inf, math.inf)
