"""Match progress in cutechess-cli's words: games, running score, Elo; a failure detaches it."""

from __future__ import annotations

import io
import logging
import math

import chess
import pytest
from matchevents import FOOLS_MATE, played_match, untimed_game

from serialref.elo import Score
from serialref.happenings import (
    GameEnded,
    GameStarted,
    MatchEnded,
    MatchEvent,
    MatchStarted,
    MovePlayed,
)
from serialref.observers.progress import ProgressObserver
from serialref.pentanomial import Pentanomial, nelo_line, ptnml_line
from serialref.referee.publisher import Publisher
from serialref.referee.resume import ResumePoint
from serialref.sprt import SprtModel, SprtTest


def started(game: int, white_port: str, names: tuple[str, str] = ("Alpha", "Beta")) -> GameStarted:
    white, black = names if white_port == "a" else names[::-1]
    tags = {"White": white, "Black": black, "TimeControl": "60+1"}
    black_port = "b" if white_port == "a" else "a"
    return GameStarted(game, white_port, black_port, chess.STARTING_FEN, tags)


def ended(game: int, result: str, reason: str) -> GameEnded:
    return GameEnded(game, result, "normal", reason, chess.STARTING_FEN, (1.0, 1.0))


def feed(observer: ProgressObserver, *events: MatchEvent) -> None:
    for event in events:
        observer.handle(event)
    observer.close()


def test_a_match_reads_like_cutechess() -> None:
    out = io.StringIO()
    feed(
        ProgressObserver(out),
        MatchStarted(games=4, time_control="60+1", ports=("a", "b")),
        started(1, "a"),
        ended(1, "1-0", "White mates"),
        started(2, "b"),
        ended(2, "1-0", "White mates"),
        started(3, "a"),
        ended(3, "1/2-1/2", "threefold repetition"),
        started(4, "b"),
        ended(4, "0-1", "Black mates"),
        MatchEnded(complete=True, score=(2.5, 1.5)),
    )
    assert out.getvalue().splitlines() == [
        "Started game 1 of 4 (Alpha vs Beta)",
        "Finished game 1 (Alpha vs Beta): 1-0 {White mates}",
        "Score of Alpha vs Beta: 1 - 0 - 0  [1.000] 1",
        "Started game 2 of 4 (Beta vs Alpha)",
        "Finished game 2 (Beta vs Alpha): 1-0 {White mates}",
        "Score of Alpha vs Beta: 1 - 1 - 0  [0.500] 2",
        "Started game 3 of 4 (Alpha vs Beta)",
        "Finished game 3 (Alpha vs Beta): 1/2-1/2 {threefold repetition}",
        "Score of Alpha vs Beta: 1 - 1 - 1  [0.500] 3",
        "Started game 4 of 4 (Beta vs Alpha)",
        "Finished game 4 (Beta vs Alpha): 0-1 {Black mates}",
        "Score of Alpha vs Beta: 2 - 1 - 1  [0.625] 4",
        # mu = 0.625: -400 log10(0.6) = 88.7; LOS 0.5 + 0.5 erf(1 / sqrt(6)) = 71.8 %;
        # 4 games put the upper bound past a score of 1: no margin, as cutechess-cli says.
        "Elo difference: 88.7 +/- nan, LOS: 71.8 %, DrawRatio: 25.0 %",
        # Games 1-2 and 3-4 are pairs: a win each with White, then a draw and Alpha's win.
        nelo_line(Pentanomial(wl=1, wd=1)),
        "Ptnml(0-2): [0, 0, 1, 1, 0], WL/DD Ratio: inf",
        "Finished match",
    ]


FOUR_GAMES = (
    MatchStarted(games=6, time_control="60+1", ports=("a", "b")),
    started(1, "a"), ended(1, "1-0", "White mates"),
    started(2, "b"), ended(2, "0-1", "Black mates"),
    started(3, "a"), ended(3, "1/2-1/2", "threefold repetition"),
    started(4, "b"), ended(4, "1/2-1/2", "threefold repetition"),
)  # fmt: skip


def test_a_rating_interval_prints_the_elo_lines_every_n_games_and_at_the_end() -> None:
    out = io.StringIO()
    sprt = SprtTest(0, 5, model=SprtModel.NORMALIZED)
    feed(ProgressObserver(out, sprt=sprt, rating_interval=2), *FOUR_GAMES,
         started(5, "a"), ended(5, "1-0", "White mates"),
         MatchEnded(complete=False, score=(3.5, 1.5), reason="SIGTERM"))  # fmt: skip
    lines = out.getvalue().splitlines()
    elo = [index for index, line in enumerate(lines) if line.startswith("Elo difference")]
    games = [index for index, line in enumerate(lines) if line.startswith("Score of")]
    # After games 2 and 4, and at the end after game 5 (the interval had not come round).
    assert [sum(game < index for game in games) for index in elo] == [2, 4, 5]
    assert lines[elo[0] + 1: elo[0] + 4] == [
        nelo_line(Pentanomial(ww=1)),
        ptnml_line(Pentanomial(ww=1)),
        sprt.status_line(Score(2, 0, 0), Pentanomial(ww=1)),
    ]
    assert lines[elo[1] + 2] == "Ptnml(0-2): [0, 0, 1, 0, 1], WL/DD Ratio: 0.00"
    assert lines[-1] == "Match stopped: SIGTERM"


def test_the_end_is_not_printed_twice_when_the_interval_came_round() -> None:
    out = io.StringIO()
    feed(ProgressObserver(out, rating_interval=2), *FOUR_GAMES,
         MatchEnded(complete=True, score=(3.0, 1.0)))  # fmt: skip
    lines = out.getvalue().splitlines()
    assert sum(line.startswith("Elo difference") for line in lines) == 2
    assert lines[-3:] == [
        nelo_line(Pentanomial(ww=1, dd=1)),
        "Ptnml(0-2): [0, 0, 1, 0, 1], WL/DD Ratio: 0.00",
        "Finished match",
    ]


@pytest.mark.parametrize("model", [SprtModel.CUTECHESS, SprtModel.NORMALIZED])
def test_a_match_the_sprt_decided_is_finished_with_the_tools_words(model: SprtModel) -> None:
    out = io.StringIO()
    sprt = SprtTest(0, 5, model=model)
    feed(ProgressObserver(out, sprt=sprt), *FOUR_GAMES,
         MatchEnded(complete=False, score=(3.0, 1.0), reason="SPRT: H1 was accepted"))  # fmt: skip
    lines = out.getvalue().splitlines()
    assert lines[-1] == "Finished match"
    if model is SprtModel.CUTECHESS:
        assert lines[-2].startswith("SPRT: llr ")
    else:
        assert lines[-3].startswith("LLR: ")
        assert lines[-2] == "SPRT ([0.00, 5.00]) completed - H1 was accepted"


def test_an_unfinished_game_is_reported_and_not_counted() -> None:
    out = io.StringIO()
    feed(
        ProgressObserver(out),
        MatchStarted(games=2, time_control="60+1", ports=("a", "b")),
        started(1, "a"),
        ended(1, "*", "player fault: engine crashed"),
        MatchEnded(complete=False, score=(0.0, 0.0), reason="SIGTERM"),
    )
    assert out.getvalue().splitlines() == [
        "Started game 1 of 2 (Alpha vs Beta)",
        "Finished game 1 (Alpha vs Beta): * {player fault: engine crashed}",
        "Score of Alpha vs Beta: 0 - 0 - 0  [nan] 0",
        "Match stopped: SIGTERM",
    ]


def test_a_clean_sweep_prints_what_cutechess_prints() -> None:
    out = io.StringIO()
    feed(
        ProgressObserver(out),
        MatchStarted(games=1, time_control="-", ports=("a", "b")),
        started(1, "a"),
        ended(1, "1-0", "Black resigns"),
        MatchEnded(complete=True, score=(1.0, 0.0)),
    )
    assert "Elo difference: inf +/- nan, LOS: 84.1 %, DrawRatio: 0.0 %" in out.getvalue()


def test_a_resumed_match_carries_its_score_on() -> None:
    out = io.StringIO()
    point = ResumePoint(
        games_done=2,
        results=(("a", "1-0"), ("b", "1/2-1/2")),
        names=("Alpha", "Beta"),
        signed_on=(True, True),
        game=started(3, "a"),
    )
    feed(
        ProgressObserver(out, resumed=point),
        MatchStarted(games=4, time_control="60+1", ports=("a", "b"), resumed=True),
        ended(3, "0-1", "Black mates"),
    )
    assert out.getvalue().splitlines() == [
        "Resumed game 3 of 4 (Alpha vs Beta)",
        "Finished game 3 (Alpha vs Beta): 0-1 {Black mates}",
        "Score of Alpha vs Beta: 1 - 1 - 1  [0.500] 3",
    ]


def test_control_characters_from_players_are_escaped() -> None:
    out = io.StringIO()
    feed(
        ProgressObserver(out),
        MatchStarted(games=1, time_control="-", ports=("a", "b")),
        started(1, "a", names=("Evil\x1b[2J", "Beta")),
        ended(1, "*", "player fault: \x1b]0;owned\x07"),
    )
    assert "\x1b" not in out.getvalue()
    assert "Evil\\x1b[2J vs Beta" in out.getvalue()


class BrokenStream(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_output_stops_progress_not_the_match(caplog: pytest.LogCaptureFixture) -> None:
    observer = ProgressObserver(BrokenStream())
    with caplog.at_level(logging.WARNING):
        feed(
            observer,
            MatchStarted(games=1, time_control="-", ports=("a", "b")),
            started(1, "a"),
            ended(1, "1-0", "White mates"),
        )
    assert [record.getMessage() for record in caplog.records] == [
        "output: output stopped: [Errno 32] Broken pipe"
    ]


def test_an_event_it_cannot_read_is_logged_and_it_hears_no_more(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The publisher's rule for any observer: the failure is logged, the match goes on."""
    out = io.StringIO()
    publisher = Publisher([], [ProgressObserver(out)], wall_clock=lambda: 0.0,
                          on_storage_failure=lambda exc, event: pytest.fail(str(exc)))  # fmt: skip
    odd = GameStarted(1, "a", "b", chess.STARTING_FEN, tags=None)  # type: ignore[arg-type]
    move = MovePlayed(1, 1, "e4", "e2e4", 1.0, (math.inf, math.inf), (1.0, 0.0), (1, 0),
                      chess.STARTING_FEN)  # fmt: skip
    with caplog.at_level(logging.ERROR):
        for event in (MatchStarted(games=1, time_control="-", ports=("a", "b")), odd, move,
                      ended(1, "1-0", "White mates")):  # fmt: skip
            publisher.publish(event)
    assert out.getvalue() == ""  # not even the game that ended after the failure
    assert "an observer failed; it sees no more of the match" in caplog.text


def test_an_untimed_match_as_the_referee_publishes_it() -> None:
    out = io.StringIO()
    feed(ProgressObserver(out), *untimed_game())
    assert out.getvalue().splitlines() == [
        "Started game 1 of 1 (Alpha vs Beta)",
        "Finished game 1 (Alpha vs Beta): 0-1 {Black mates}",
        "Score of Alpha vs Beta: 0 - 1 - 0  [0.000] 1",
        "Elo difference: -inf +/- nan, LOS: 15.9 %, DrawRatio: 0.0 %",
        "Finished match",
    ]


def test_untimed_games_alternate_colours_and_keep_the_score_by_player() -> None:
    out = io.StringIO()
    feed(ProgressObserver(out), *played_match("-", games=(FOOLS_MATE, FOOLS_MATE)))
    lines = out.getvalue().splitlines()
    assert lines[3:6] == [
        "Started game 2 of 2 (Beta vs Alpha)",
        "Finished game 2 (Beta vs Alpha): 0-1 {Black mates}",
        "Score of Alpha vs Beta: 1 - 1 - 0  [0.500] 2",
    ]
