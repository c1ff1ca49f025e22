"""One game, driven through a fake GameHost: no match, no ports, a clock moved by hand."""

from __future__ import annotations

from typing import TypeVar

import chess
import pytest

from serialref import records
from serialref.clock import ChessClock
from serialref.epd.operations import Operation
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.happenings import (
    GameEnded,
    GameStarted,
    Infraction,
    MatchEvent,
    MovePlayed,
    PlayerSignedOff,
)
from serialref.referee.adjudication import Verdict
from serialref.referee.game import GameReferee
from serialref.referee.gamestates import GameState, ResumedGame
from serialref.referee.session import PortSession
from serialref.referee.settings import MatchSettings, OnInfraction
from serialref.timecontrol import TimeControl

WALL = 1_795_000_000.0  # 2026-11-18
START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"

Event = TypeVar("Event", bound=MatchEvent)


class FakeHost:
    """The match as a game sees it: two seats, a wire that records, a clock set by hand."""

    def __init__(self, **settings: object) -> None:
        defaults: dict[str, object] = {
            "time_control": TimeControl.parse("60+1"), "event": "Test", "site": "Lab",
            "reset_delay": 2.0,
        }  # fmt: skip
        defaults.update(settings)
        self._settings = MatchSettings(**defaults)  # type: ignore[arg-type]
        self._sessions = {"a": PortSession("a", "Alpha"), "b": PortSession("b", "Beta")}
        for session in self._sessions.values():
            session.fire("sign_on_received")
        self.clock = 100.0
        self.sent: list[tuple[str, str]] = []
        self.events: list[MatchEvent] = []
        self.acted_on: list[tuple[str, str, float]] = []
        self.ignored_lines: list[tuple[str, str]] = []
        self.verdicts: list[Verdict] = []
        self.hold: set[str] = set()  # ports whose records wait in their buffer
        self.line_delay = 0.0

    # the GameHost protocol
    @property
    def settings(self) -> MatchSettings:
        return self._settings

    @property
    def sessions(self) -> dict[str, PortSession]:
        return self._sessions

    def send(self, port: str, record: EpdRecord | str, *, notify: bool = False) -> float | None:
        self.sent.append((port, record if isinstance(record, str) else format_record(record)))
        return None if port in self.hold else self.clock

    def transmission_time(self, port: str, nbytes: int) -> float:
        return self.line_delay * nbytes

    def publish(self, event: MatchEvent) -> None:
        self.events.append(event)

    def sync_records(self) -> None:
        """Nothing to make durable."""

    def received(self, port: str, text: str, at: float) -> None:
        self.acted_on.append((port, text, at))

    def ignored(self, port: str, text: str, at: float, reason: str) -> None:
        self.ignored_lines.append((port, reason))

    def now(self) -> float:
        return self.clock

    def wall_time(self) -> float:
        return WALL

    def game_over(self, verdict: Verdict, white_port: str) -> None:
        self.verdicts.append(verdict)

    # what the test looks at
    def commands(self, port: str) -> list[str]:
        return [
            records.referee_command(parse_record(text)).value
            for sent_port, text in self.sent if sent_port == port
        ]  # fmt: skip

    def last(self, port: str) -> EpdRecord:
        return parse_record([text for sent_port, text in self.sent if sent_port == port][-1])

    def of(self, kind: type[Event]) -> list[Event]:
        return [event for event in self.events if isinstance(event, kind)]


class Game:
    """A game and the board its players keep."""

    def __init__(self, **settings: object) -> None:
        self.host = FakeHost(**settings)
        self.referee = GameReferee(1, self.host)
        self.board = chess.Board()

    def begin(self) -> None:
        self.host.clock += self.host.settings.reset_delay
        self.referee.on_timer(self.host.clock)

    def reply(self, port: str, san: str | None, *extra: Operation, think: float = 1.0,
              board: chess.Board | None = None) -> str:  # fmt: skip
        """The player on ``port`` answers from ``board`` (default: the game's) after ``think``."""
        self.host.clock += think
        position = board if board is not None else self.board
        move = position.parse_san(san) if san is not None else None
        text = format_record(records.reply(position, move, *extra))
        played = len(self.host.of(MovePlayed))
        self.referee.on_reply(port, parse_record(text), text, self.host.clock)
        moves = self.host.of(MovePlayed)
        if len(moves) > played:  # the game took the move: the players' board follows
            self.board.push_uci(moves[-1].uci)
        return text

    def ended(self) -> GameEnded:
        (ended,) = self.host.of(GameEnded)
        return ended


@pytest.fixture
def game() -> Game:
    return Game()


# --- the reset delay and the first respond ---------------------------------------------------


def test_a_new_game_resets_both_players_and_waits_the_reset_delay(game: Game) -> None:
    assert game.referee.state is GameState.RESETTING
    assert not game.referee.begun
    assert game.host.commands("a") == game.host.commands("b") == ["reset"]
    assert game.host.last("a").position == START
    assert game.referee.next_deadline() == pytest.approx(102.0)
    game.referee.on_timer(101.9)
    assert game.host.commands("a") == ["reset"]
    assert game.host.events == []


def test_after_the_reset_delay_tags_go_to_both_and_white_is_asked(game: Game) -> None:
    game.begin()
    assert game.referee.state is GameState.PLAYING
    assert game.referee.begun
    assert game.host.commands("a") == ["reset", "inform", "respond"]
    assert game.host.commands("b") == ["reset", "inform"]
    inform = game.host.last("b")
    assert inform.tag_pairs() == [
        ("Event", "Test"), ("Site", "Lab"), ("Date", "2026.11.18"), ("Round", "1"),
        ("White", "Alpha"), ("Black", "Beta"), ("Result", "*"), ("TimeControl", "60+1"),
    ]  # fmt: skip
    assert format_record(game.host.last("a")) == (
        f"{START} cc 000:00:00:00 000:00:00:00; ccms 0 0; fmvn 1; hmvc 0; refcom respond;"
    )
    (started,) = game.host.of(GameStarted)
    assert started == GameStarted(
        game=1, white_port="a", black_port="b", fen=chess.STARTING_FEN,
        tags={**dict(inform.tag_pairs())},
    )  # fmt: skip
    assert game.host.sessions["a"].to_move and not game.host.sessions["b"].to_move


def test_a_player_reset_by_the_match_is_not_reset_again() -> None:
    host = FakeHost()
    host.sessions["a"].note_reset(1, 99.0)
    GameReferee(1, host)
    assert host.commands("a") == []
    assert host.commands("b") == ["reset"]


def test_a_reset_sent_again_in_the_delay_restarts_it(game: Game) -> None:
    game.host.clock += 1.5
    game.referee.signed_on_again("b")  # the player restarted: reset again, wait again
    assert game.host.commands("b") == ["reset", "reset"]
    assert game.referee.next_deadline() == pytest.approx(103.5)


def test_the_second_game_gives_white_to_port_b() -> None:
    host = FakeHost()
    referee = GameReferee(2, host)
    host.clock += 2.0
    referee.on_timer(host.clock)
    assert host.commands("b")[-1] == "respond"
    assert host.commands("a")[-1] == "inform"
    assert dict(host.last("a").tag_pairs())["White"] == "Beta"


# --- moves -----------------------------------------------------------------------------------


def test_a_move_is_timed_published_and_relayed(game: Game) -> None:
    game.begin()
    text = game.reply("a", "e4", think=2.5)
    assert game.host.acted_on == [("a", text, 104.5)]
    (move,) = game.host.of(MovePlayed)
    assert (move.ply, move.san, move.uci) == (1, "e4", "e2e4")
    assert move.elapsed == pytest.approx(2.5)
    assert move.remaining == pytest.approx((60 - 2.5 + 1, 60))
    assert format_record(game.host.last("b")) == (
        f"{START} cc 000:00:00:02 000:00:00:00; ccms 2500 0; fmvn 1; hmvc 0; refcom respond; "
        "sm e4;"
    )
    assert game.host.sessions["b"].to_move and not game.host.sessions["a"].to_move


def test_the_reply_is_charged_without_its_own_line_time(game: Game) -> None:
    game.host.line_delay = 0.01  # ten bits a byte at 1000 baud
    game.begin()
    text = game.reply("a", "e4", think=2.5)
    (move,) = game.host.of(MovePlayed)
    assert move.elapsed == pytest.approx(2.5 - 0.01 * (len(text) + 1))


def test_a_stale_repeat_of_the_last_reply_is_ignored(game: Game) -> None:
    game.begin()
    before = game.board.copy()
    game.reply("a", "e4")
    game.reply("a", "e4", board=before)  # the same answer again
    assert game.host.ignored_lines == [("a", "stale reply: it answers an earlier respond")]
    assert len(game.host.of(MovePlayed)) == 1
    assert game.referee.state is GameState.PLAYING


def test_a_reply_out_of_turn_is_ignored_and_costs_nothing(game: Game) -> None:
    game.begin()
    game.reply("b", "e5", board=chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b"))
    assert game.host.ignored_lines == [("b", "reply out of turn")]
    assert game.host.of(MovePlayed) == [] and game.host.of(Infraction) == []
    assert game.host.acted_on == []


def test_a_reply_before_the_reset_delay_is_over_is_out_of_turn(game: Game) -> None:
    game.reply("a", "e4")
    assert game.host.ignored_lines == [("a", "reply out of turn")]


def test_a_reply_before_its_respond_has_left_is_stale() -> None:
    game = Game()
    game.host.hold.add("a")  # the respond to White waits in the port's buffer
    game.begin()
    game.reply("a", "e4")
    assert game.host.ignored_lines == [("a", "reply before its respond had left (stale)")]
    game.referee.record_left("a", game.host.clock)  # now it has left: White's clock starts
    game.host.hold.clear()
    game.reply("a", "e4", think=3.0)
    (move,) = game.host.of(MovePlayed)
    assert move.elapsed == pytest.approx(3.0)


def test_mate_ends_the_game_with_inform_and_conclude(game: Game) -> None:
    game.begin()
    for port, san in zip("abab", ["f3", "e5", "g4", "Qh4#"], strict=True):
        game.reply(port, san)
    ended = game.ended()
    assert (ended.result, ended.termination, ended.reason) == ("0-1", "normal", "Black mates")
    assert game.referee.ended
    assert game.host.commands("a")[-2:] == game.host.commands("b")[-2:] == ["inform", "conclude"]
    assert game.host.verdicts == [Verdict.win(chess.BLACK, ended.termination, "Black mates")]
    final_inform = parse_record([text for port, text in game.host.sent if port == "a"][-2])
    assert dict(final_inform.tag_pairs())["Result"] == "0-1"
    assert dict(final_inform.tag_pairs())["Termination"] == "normal"


# --- the flag --------------------------------------------------------------------------------


def test_the_flag_falls_by_the_timer_with_no_reply() -> None:
    game = Game(time_control=TimeControl.parse("60+0"))
    game.begin()
    assert game.referee.next_deadline() == pytest.approx(162.0)
    game.referee.on_timer(161.9)
    assert game.host.of(GameEnded) == []
    game.host.clock = 162.3  # the timer woke a little late: the flag fell on time
    game.referee.on_timer(game.host.clock)
    ended = game.ended()
    assert (ended.result, ended.termination, ended.reason) == (
        "0-1", "time forfeit", "White lost on time",
    )  # fmt: skip
    assert ended.consumed[0] == pytest.approx(60.0)
    assert game.referee.next_deadline() is None


def test_a_reply_after_the_flag_fell_loses_on_time() -> None:
    game = Game(time_control=TimeControl.parse("60+0"))
    game.begin()
    game.reply("a", "e4", think=61.0)
    assert game.host.of(MovePlayed) == []
    assert game.ended().reason == "White lost on time"


def test_an_untimed_game_has_no_flag() -> None:
    game = Game(time_control=TimeControl.parse("-"))
    game.begin()
    assert game.referee.next_deadline() is None
    game.reply("a", "e4", think=100_000.0)
    (move,) = game.host.of(MovePlayed)
    assert move.remaining == (float("inf"), float("inf"))


# --- suspension (the fault policy) and resumption --------------------------------------------


def test_an_infraction_under_the_fault_policy_suspends_until_the_player_is_back() -> None:
    game = Game(on_infraction=OnInfraction.FAULT, time_control=TimeControl.parse("60+0"))
    game.begin()
    game.reply("a", "e4")
    game.reply("b", "e5")
    illegal = game.reply("a", None, Operation.of("sm", "Ke3"), think=2.0)
    assert game.referee.state is GameState.SUSPENDED
    (infraction,) = game.host.of(Infraction)
    assert (infraction.port, infraction.text) == ("a", illegal)
    assert game.host.commands("a")[-1] == "fault"
    assert not game.host.sessions["a"].signed_on
    assert game.host.of(PlayerSignedOff)[-1] == PlayerSignedOff(
        port="a", reason=f"fault: {infraction.reason}"
    )
    assert game.referee.next_deadline() is None  # no flag runs while suspended

    game.host.clock += 500.0  # the supervisor takes its time: charged to no one
    game.host.sessions["a"].fire("sign_on_received")
    game.referee.signed_on_again("a")
    assert game.referee.state is GameState.PLAYING
    assert game.host.commands("a")[-6:] == [
        "fault", "reset", "inform", "execute", "execute", "respond",
    ]  # fmt: skip
    respond = game.host.last("a")
    assert "sm" not in respond
    assert respond.clock_pair() == (3, 1)  # 1 s for e4, 2 s up to the infraction
    assert game.referee.next_deadline() == pytest.approx(game.host.clock + 57.0)


def test_under_the_forfeit_policy_an_infraction_loses() -> None:
    game = Game()
    game.begin()
    game.reply("a", None, Operation.of("sm", "e5"))  # no legal move of White's
    ended = game.ended()
    assert (ended.result, ended.termination) == ("0-1", "rules infraction")
    assert ended.reason.startswith("Alpha: ")


# --- players leaving and coming back ---------------------------------------------------------


def test_a_player_that_signs_on_again_is_restored_with_the_history(game: Game) -> None:
    game.begin()
    game.reply("a", "e4")
    game.reply("b", "c5")
    game.reply("a", "Nf3")
    sent_before = len(game.host.sent)
    game.host.sessions["b"].fire("sign_on_received")
    game.referee.signed_on_again("b")
    restore = [parse_record(text) for port, text in game.host.sent[sent_before:]]
    assert [records.referee_command(record).value for record in restore] == [
        "reset", "inform", "execute", "execute", "execute", "respond",
    ]  # fmt: skip
    assert restore[0].position == START
    assert dict(restore[1].tag_pairs())["Result"] == "*"
    assert [record.operand_texts("sm") for record in restore[2:5]] == [("e4",), ("c5",), ("Nf3",)]
    assert restore[5].position == EpdRecord.from_board(game.board).position
    assert "sm" not in restore[5]
    assert game.referee.next_deadline() is not None  # no reset delay in a restore


def test_a_restored_player_not_to_move_gets_no_respond(game: Game) -> None:
    game.begin()
    game.reply("a", "e4")
    game.host.sessions["a"].fire("sign_on_received")
    game.referee.signed_on_again("a")
    assert game.host.commands("a")[-3:] == ["reset", "inform", "execute"]
    game.reply("b", "e5")  # the game goes on: Black's reply still counts
    assert game.host.commands("a")[-1] == "respond"


def test_a_player_that_signs_off_loses_without_a_rejoin_window(game: Game) -> None:
    game.begin()
    game.host.sessions["b"].note_left()
    game.referee.player_left("b", "signed off", signed_off=True)
    ended = game.ended()
    assert (ended.result, ended.termination) == ("1-0", "abandoned")
    assert ended.reason == "Beta signed off"
    assert game.host.commands("b") == ["reset", "inform"]  # nothing more to a player gone
    assert game.host.commands("a")[-2:] == ["inform", "conclude"]


def test_a_rejoin_window_that_passes_loses_the_game() -> None:
    game = Game(rejoin_window=30.0)
    game.begin()
    game.host.sessions["b"].note_left()
    game.referee.player_left("b", "line lost", signed_off=False)
    assert game.referee.next_deadline() == pytest.approx(132.0)
    game.referee.on_timer(131.0)
    assert game.host.of(GameEnded) == []
    game.referee.on_timer(132.0)
    assert game.ended().reason == "Beta did not come back in time"


def test_a_player_back_within_the_window_plays_on() -> None:
    game = Game(rejoin_window=30.0)
    game.begin()
    game.host.sessions["a"].note_left()
    game.referee.player_left("a", "line lost", signed_off=False)
    game.host.clock += 10.0
    game.host.sessions["a"].fire("sign_on_received")
    game.referee.signed_on_again("a")
    game.referee.on_timer(game.host.clock + 30.0)
    assert game.host.of(GameEnded) == []
    assert game.host.last("a").clock_pair() == (10, 0)  # its clock ran while it was away


def test_a_player_fault_ends_the_game_unfinished(game: Game) -> None:
    game.begin()
    game.referee.player_fault("a", "engine crashed")
    ended = game.ended()
    assert (ended.result, ended.termination, ended.reason) == (
        "*", "emergency", "Alpha reported a fault: engine crashed",
    )  # fmt: skip


def test_leaving_before_the_game_began_changes_nothing(game: Game) -> None:
    game.referee.player_left("a", "signed off", signed_off=True)
    game.referee.player_fault("b", "crashed")
    assert game.referee.state is GameState.RESETTING
    assert game.host.events == []


# --- a game resumed from its journal ---------------------------------------------------------


def resumed(state: GameState, present: str) -> tuple[FakeHost, GameReferee]:
    host = FakeHost()
    for port in "ab":
        if port not in present:
            host.sessions[port].note_left()
    board = chess.Board()
    for san in ("d4", "d5"):
        board.push_san(san)
    clock = ChessClock(host.settings.time_control)
    started = GameStarted(
        game=3, white_port="a", black_port="b", fen=chess.STARTING_FEN,
        tags={"Event": "Test", "Site": "Lab", "Date": "2026.11.18", "Round": "3",
              "White": "Alpha", "Black": "Beta", "Result": "*", "TimeControl": "60+1"},
    )  # fmt: skip
    point = ResumedGame(started=started, board=board, clock=clock, offer_pending=False,
                        state=state)  # fmt: skip
    referee = GameReferee(3, host, resumed=point)
    referee.start_restored()
    return host, referee


def test_a_resumed_game_restores_the_players_present_at_once() -> None:
    host, referee = resumed(GameState.PLAYING, present="a")
    assert referee.state is GameState.PLAYING
    assert host.commands("a") == ["reset", "inform", "execute", "execute", "respond"]
    assert host.commands("b") == []
    assert referee.next_deadline() is not None  # White's clock runs


def test_a_game_resumed_after_an_orderly_stop_waits_for_both_players() -> None:
    host, referee = resumed(GameState.SUSPENDED, present="a")
    assert host.commands("a") == ["reset", "inform", "execute", "execute"]
    assert referee.next_deadline() is None
    host.sessions["b"].fire("sign_on_received")
    referee.signed_on_again("b")
    assert referee.state is GameState.PLAYING
    assert host.commands("b") == ["reset", "inform", "execute", "execute"]
    assert host.commands("a")[-1] == "respond"
