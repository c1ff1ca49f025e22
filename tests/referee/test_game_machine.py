"""One game, on fake ports with a clock moved by hand: no match, no loop."""

from __future__ import annotations

import chess
import pytest
from doubles import WALL, EventRecorder, InstantWire, SteppedClock

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
    LineReceived,
    MatchEvent,
    MovePlayed,
    PlayerSignedOff,
    RecordSent,
)
from serialref.referee.game.machine import GameReferee
from serialref.referee.game.moveclock import Pause
from serialref.referee.game.replay import ResumedGame
from serialref.referee.game.states import GameState
from serialref.referee.host import RefereeHost
from serialref.referee.publisher import Publisher
from serialref.referee.rulings import Verdict
from serialref.referee.session import PortSession
from serialref.referee.settings import MatchSettings, OnInfraction
from serialref.timecontrol import TimeControl

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"


class Owner:
    """The match as a game sees it: told of the result, or that the game never began."""

    def __init__(self) -> None:
        self.verdicts: list[Verdict] = []
        self.interrupted: list[str] = []

    def game_decided(self, verdict: Verdict, white_port: str) -> bool:
        self.verdicts.append(verdict)
        return True

    def game_interrupted(self, port: str) -> bool:
        self.interrupted.append(port)
        return True


class Game:
    """A game on fake ports and a clock moved by hand, its seats signed on, and the board
    its players keep."""

    def __init__(self, number: int = 1, resumed: ResumedGame | None = None,
                 line_time: float = 0.0, **settings: object) -> None:  # fmt: skip
        defaults: dict[str, object] = {
            "time_control": TimeControl.parse("60+1"), "event": "Test", "site": "Lab",
            "reset_delay": 2.0,
        }  # fmt: skip
        defaults.update(settings)
        self.settings = MatchSettings(**defaults)  # type: ignore[arg-type]
        self.clock = SteppedClock(100.0)
        self.ports = InstantWire(self.clock)
        self.record = EventRecorder()
        self.publisher = Publisher([self.record], [], wall_clock=lambda: WALL,
                                   on_storage_failure=lambda *_: None)  # fmt: skip
        line_times = {port: lambda nbytes: line_time * nbytes for port in "ab"}
        self.host = RefereeHost(self.ports, self.publisher, line_times=line_times,
                                clock=self.clock, wall_clock=lambda: WALL)  # fmt: skip
        self.sessions = {"a": PortSession("a", "Alpha"), "b": PortSession("b", "Beta")}
        for session in self.sessions.values():
            session.note_sign_on(None)
        self.owner = Owner()
        self.board = chess.Board()
        self.number = number
        self.resumed = resumed
        self._referee: GameReferee | None = None

    @property
    def referee(self) -> GameReferee:
        """The game, made when first asked for (after a test has set its seats up)."""
        if self._referee is None:
            self._referee = GameReferee(self.number, self.settings, self.sessions, self.host,
                                        owner=self.owner, pause=Pause(),
                                        resumed=self.resumed)  # fmt: skip
        return self._referee

    def begin(self) -> None:
        self.referee  # noqa: B018  (the game resets its players when made)
        self.clock.now += self.settings.reset_delay
        self.referee.on_timer(self.clock.now)

    def reply(self, port: str, san: str | None, *extra: Operation, think: float = 1.0,
              board: chess.Board | None = None) -> str:  # fmt: skip
        """The player on ``port`` answers from ``board`` (default: the game's) after ``think``."""
        self.clock.now += think
        position = board if board is not None else self.board
        move = position.parse_san(san) if san is not None else None
        text = format_record(records.reply(position, move, *extra))
        played = len(self.record.of(MovePlayed))
        with self.publisher.acting_on_line():
            self.referee.reply_received(port, parse_record(text), text, self.clock.now)
        moves = self.record.of(MovePlayed)
        if len(moves) > played:  # the game took the move: the players' board follows
            self.board.push_uci(moves[-1].uci)
        return text

    def game_events(self) -> list[MatchEvent]:
        """What the game published beyond the lines it sent and read."""
        return [e for e in self.record.events if not isinstance(e, (RecordSent, LineReceived))]

    def acted_on(self) -> list[tuple[str, str, float]]:
        """The lines recorded as acted on: (port, text, time of their line end)."""
        return [(e.port, e.text, e.at) for e in self.record.of(LineReceived) if not e.note]

    def ignored(self) -> list[tuple[str, str]]:
        """The lines recorded as ignored: (port, why)."""
        return [(e.port, e.note.removeprefix("ignored: "))
                for e in self.record.of(LineReceived) if e.note]  # fmt: skip

    def ended(self) -> GameEnded:
        (ended,) = self.record.of(GameEnded)
        return ended


@pytest.fixture
def game() -> Game:
    return Game()


# --- the reset delay and the first respond ---------------------------------------------------


def test_a_new_game_resets_both_players_and_waits_the_reset_delay(game: Game) -> None:
    assert game.referee.state is GameState.RESETTING
    assert not game.referee.may_end()
    assert game.ports.commands("a") == game.ports.commands("b") == ["reset"]
    assert game.ports.last("a").position == START
    assert game.referee.next_deadline() == pytest.approx(102.0)
    game.referee.on_timer(101.9)
    assert game.ports.commands("a") == ["reset"]
    assert game.game_events() == []


def test_after_the_reset_delay_tags_go_to_both_and_white_is_asked(game: Game) -> None:
    game.begin()
    assert game.referee.state is GameState.PLAYING
    assert game.referee.may_end()
    assert game.ports.commands("a") == ["reset", "inform", "respond"]
    assert game.ports.commands("b") == ["reset", "inform"]
    inform = game.ports.last("b")
    assert inform.tag_pairs() == [
        ("Event", "Test"), ("Site", "Lab"), ("Date", "2026.11.18"), ("Round", "1"),
        ("White", "Alpha"), ("Black", "Beta"), ("Result", "*"), ("TimeControl", "60+1"),
    ]  # fmt: skip
    assert format_record(game.ports.last("a")) == (
        f"{START} cc 000:00:00:00 000:00:00:00; ccms 0 0; fmvn 1; hmvc 0; refcom respond;"
    )
    (started,) = game.record.of(GameStarted)
    assert started == GameStarted(
        game=1, white_port="a", black_port="b", fen=chess.STARTING_FEN,
        tags={**dict(inform.tag_pairs())},
    )  # fmt: skip
    assert started.wall == WALL
    assert game.sessions["a"].to_move and not game.sessions["b"].to_move


def test_a_player_reset_by_the_match_is_not_reset_again(game: Game) -> None:
    game.sessions["a"].note_reset(1, 99.0)
    game.begin()
    assert game.ports.commands("a") == ["inform", "respond"]
    assert game.ports.commands("b") == ["reset", "inform"]


def test_a_reset_sent_again_in_the_delay_restarts_it(game: Game) -> None:
    game.referee  # noqa: B018  (made: the resets go out)
    game.clock.now += 1.5
    game.referee.player_signed_on("b", None)  # the player restarted: reset again, wait again
    assert game.ports.commands("b") == ["reset", "reset"]
    assert game.referee.next_deadline() == pytest.approx(103.5)


def test_the_second_game_gives_white_to_port_b() -> None:
    game = Game(number=2)
    game.begin()
    assert game.ports.commands("b")[-1] == "respond"
    assert game.ports.commands("a")[-1] == "inform"
    assert dict(game.ports.last("a").tag_pairs())["White"] == "Beta"


# --- moves -----------------------------------------------------------------------------------


def test_a_move_is_timed_published_and_relayed(game: Game) -> None:
    game.begin()
    text = game.reply("a", "e4", think=2.5)
    assert game.acted_on() == [("a", text, 104.5)]
    (move,) = game.record.of(MovePlayed)
    assert (move.ply, move.san, move.uci) == (1, "e4", "e2e4")
    assert move.elapsed == pytest.approx(2.5)
    assert move.remaining == pytest.approx((60 - 2.5 + 1, 60))
    assert format_record(game.ports.last("b")) == (
        f"{START} cc 000:00:00:02 000:00:00:00; ccms 2500 0; fmvn 1; hmvc 0; refcom respond; "
        "sm e4;"
    )
    assert game.sessions["b"].to_move and not game.sessions["a"].to_move


def test_the_reply_is_charged_without_its_own_line_time() -> None:
    game = Game(line_time=0.01)  # ten bits a byte at 1000 baud
    game.begin()
    text = game.reply("a", "e4", think=2.5)
    (move,) = game.record.of(MovePlayed)
    assert move.elapsed == pytest.approx(2.5 - 0.01 * (len(text) + 1))


def test_a_stale_repeat_of_the_last_reply_is_ignored(game: Game) -> None:
    game.begin()
    before = game.board.copy()
    game.reply("a", "e4")
    game.reply("a", "e4", board=before)  # the same answer again
    assert game.ignored() == [("a", "stale reply: it answers an earlier respond")]
    assert len(game.record.of(MovePlayed)) == 1
    assert game.referee.state is GameState.PLAYING


def test_a_reply_out_of_turn_is_ignored_and_costs_nothing(game: Game) -> None:
    game.begin()
    game.reply("b", "e5", board=chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b"))
    assert game.ignored() == [("b", "reply out of turn")]
    assert game.record.of(MovePlayed) == [] and game.record.of(Infraction) == []
    assert game.acted_on() == []


def test_a_reply_before_the_reset_delay_is_over_is_out_of_turn(game: Game) -> None:
    game.reply("a", "e4")
    assert game.ignored() == [("a", "reply out of turn")]


def test_a_reply_before_its_respond_has_left_is_stale() -> None:
    game = Game()
    game.ports.hold.add("a")  # the respond to White waits in the port's buffer
    game.begin()
    game.reply("a", "e4")
    assert game.ignored() == [("a", "reply before its respond had left (stale)")]
    game.referee.record_left("a", game.clock.now)  # now it has left: White's clock starts
    game.ports.hold.clear()
    game.reply("a", "e4", think=3.0)
    (move,) = game.record.of(MovePlayed)
    assert move.elapsed == pytest.approx(3.0)


def test_mate_ends_the_game_with_inform_and_conclude(game: Game) -> None:
    game.begin()
    for port, san in zip("abab", ["f3", "e5", "g4", "Qh4#"], strict=True):
        game.reply(port, san)
    ended = game.ended()
    assert (ended.result, ended.termination, ended.reason) == ("0-1", "normal", "Black mates")
    assert game.referee.state is GameState.ENDED
    assert game.ports.commands("a")[-2:] == game.ports.commands("b")[-2:] == ["inform", "conclude"]
    assert game.owner.verdicts == [Verdict.win(chess.BLACK, ended.termination, "Black mates")]
    final_inform = parse_record([text for port, text in game.ports.sent if port == "a"][-2])
    assert dict(final_inform.tag_pairs())["Result"] == "0-1"
    assert dict(final_inform.tag_pairs())["Termination"] == "normal"


# --- the flag --------------------------------------------------------------------------------


def test_the_flag_falls_by_the_timer_with_no_reply() -> None:
    game = Game(time_control=TimeControl.parse("60+0"))
    game.begin()
    assert game.referee.next_deadline() == pytest.approx(162.0)
    game.referee.on_timer(161.9)
    assert game.record.of(GameEnded) == []
    game.clock.now = 162.3  # the timer woke a little late: the flag fell on time
    game.referee.on_timer(game.clock.now)
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
    assert game.record.of(MovePlayed) == []
    assert game.ended().reason == "White lost on time"


def test_an_untimed_game_has_no_flag() -> None:
    game = Game(time_control=TimeControl.parse("-"))
    game.begin()
    assert game.referee.next_deadline() is None
    game.reply("a", "e4", think=100_000.0)
    (move,) = game.record.of(MovePlayed)
    assert move.remaining == (float("inf"), float("inf"))


# --- suspension (the fault policy) and resumption --------------------------------------------


def test_an_infraction_under_the_fault_policy_suspends_until_the_player_is_back() -> None:
    game = Game(on_infraction=OnInfraction.FAULT, time_control=TimeControl.parse("60+0"))
    game.begin()
    game.reply("a", "e4")
    game.reply("b", "e5")
    illegal = game.reply("a", None, Operation.of("sm", "Ke3"), think=2.0)
    assert game.referee.state is GameState.SUSPENDED
    (infraction,) = game.record.of(Infraction)
    assert (infraction.port, infraction.text) == ("a", illegal)
    assert game.ports.commands("a")[-1] == "fault"
    assert not game.sessions["a"].signed_on
    assert game.record.of(PlayerSignedOff)[-1] == PlayerSignedOff(
        port="a", reason=f"fault: {infraction.reason}"
    )
    assert game.referee.next_deadline() is None  # no flag runs while suspended

    game.clock.now += 500.0  # the supervisor takes its time: charged to no one
    game.referee.player_signed_on("a", None)
    assert game.referee.state is GameState.PLAYING
    assert game.ports.commands("a")[-6:] == [
        "fault", "reset", "inform", "execute", "execute", "respond",
    ]  # fmt: skip
    respond = game.ports.last("a")
    assert "sm" not in respond
    assert respond.clock_pair() == (3, 1)  # 1 s for e4, 2 s up to the infraction
    assert game.referee.next_deadline() == pytest.approx(game.clock.now + 57.0)


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
    sent_before = len(game.ports.sent)
    game.referee.player_signed_on("b", None)
    restore = [parse_record(text) for port, text in game.ports.sent[sent_before:]]
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
    game.referee.player_signed_on("a", None)
    assert game.ports.commands("a")[-3:] == ["reset", "inform", "execute"]
    game.reply("b", "e5")  # the game goes on: Black's reply still counts
    assert game.ports.commands("a")[-1] == "respond"


def test_a_player_that_signs_off_loses_without_a_rejoin_window(game: Game) -> None:
    game.begin()
    game.referee.player_signed_off("b")
    ended = game.ended()
    assert (ended.result, ended.termination) == ("1-0", "abandoned")
    assert ended.reason == "Beta signed off"
    assert game.ports.commands("b") == ["reset", "inform"]  # nothing more to a player gone
    assert game.ports.commands("a")[-2:] == ["inform", "conclude"]


def test_a_rejoin_window_that_passes_loses_the_game() -> None:
    game = Game(rejoin_window=30.0)
    game.begin()
    game.referee.line_lost("b", "hang-up")
    assert game.referee.next_deadline() == pytest.approx(132.0)
    game.referee.on_timer(131.0)
    assert game.record.of(GameEnded) == []
    game.referee.on_timer(132.0)
    assert game.ended().reason == "Beta did not come back in time"


def test_a_player_back_within_the_window_plays_on() -> None:
    game = Game(rejoin_window=30.0)
    game.begin()
    game.referee.line_lost("a", "hang-up")
    game.clock.now += 10.0
    game.referee.player_signed_on("a", None)
    game.referee.on_timer(game.clock.now + 30.0)
    assert game.record.of(GameEnded) == []
    assert game.ports.last("a").clock_pair() == (10, 0)  # its clock ran while it was away


def test_a_player_fault_ends_the_game_unfinished(game: Game) -> None:
    game.begin()
    game.referee.fault_reported("a", "engine crashed", "a fault line", game.clock.now)
    ended = game.ended()
    assert (ended.result, ended.termination, ended.reason) == (
        "*", "emergency", "Alpha reported a fault: engine crashed",
    )  # fmt: skip


def test_leaving_before_the_game_began_interrupts_it(game: Game) -> None:
    game.referee.fault_reported("b", "crashed", "a fault line", game.clock.now)
    assert game.referee.state is GameState.RESETTING  # recorded, and nothing more
    game.referee.player_signed_off("a")
    assert game.referee.state is GameState.RESETTING
    assert game.owner.interrupted == ["a"]  # the match drops the game and plays it later
    assert [type(event) for event in game.game_events()] == [Infraction, PlayerSignedOff]


# --- a game resumed from its journal ---------------------------------------------------------


def resumed(state: GameState, present: str) -> Game:
    board = chess.Board()
    for san in ("d4", "d5"):
        board.push_san(san)
    started = GameStarted(
        game=3, white_port="a", black_port="b", fen=chess.STARTING_FEN,
        tags={"Event": "Test", "Site": "Lab", "Date": "2026.11.18", "Round": "3",
              "White": "Alpha", "Black": "Beta", "Result": "*", "TimeControl": "60+1"},
    )  # fmt: skip
    point = ResumedGame(started=started, board=board, clock=ChessClock(TimeControl.parse("60+1")),
                        offer_pending=False, state=state)  # fmt: skip
    game = Game(number=3, resumed=point)
    for port in "ab":
        if port not in present:
            game.sessions[port].note_left()
    game.referee.resume()
    return game


def test_a_resumed_game_restores_the_players_present_at_once() -> None:
    game = resumed(GameState.PLAYING, present="a")
    assert game.referee.state is GameState.PLAYING
    assert game.ports.commands("a") == ["reset", "inform", "execute", "execute", "respond"]
    assert game.ports.commands("b") == []
    assert game.referee.next_deadline() is not None  # White's clock runs


def test_a_game_resumed_after_an_orderly_stop_waits_for_both_players() -> None:
    game = resumed(GameState.SUSPENDED, present="a")
    assert game.ports.commands("a") == ["reset", "inform", "execute", "execute"]
    assert game.referee.next_deadline() is None
    game.referee.player_signed_on("b", None)
    assert game.referee.state is GameState.PLAYING
    assert game.ports.commands("b") == ["reset", "inform", "execute", "execute"]
    assert game.ports.commands("a")[-1] == "respond"


# --- the referee's adjudication ---------------------------------------------------------------


def test_a_player_that_scores_itself_lost_loses_by_adjudication() -> None:
    from serialref.referee.adjudicator import AdjudicationRules, ResignRule

    game = Game(adjudication=AdjudicationRules(resign=ResignRule(move_count=2, score=500)))
    game.begin()
    for san, score in [("Nf3", -600), ("Nf6", 600), ("Ng1", -700)]:
        port = "a" if game.board.turn == chess.WHITE else "b"
        game.reply(port, san, Operation.of("ce", score))
    ended = game.ended()
    assert (ended.result, ended.termination, ended.reason) == (
        "0-1", "adjudication", "Black wins by adjudication"
    )  # fmt: skip
    # The move is journalled before the ending it brought; both players are told.
    assert [type(event) for event in game.game_events()][-2:] == [MovePlayed, GameEnded]
    assert len(game.record.of(MovePlayed)) == 3
    for port in "ab":
        assert game.ports.commands(port)[-2:] == ["inform", "conclude"]


def test_a_resumed_game_is_adjudicated_on_the_scores_its_journal_kept() -> None:
    from serialref.referee.adjudicator import AdjudicationRules, DrawRule

    board = chess.Board()
    for san in ("Nf3", "Nf6"):
        board.push_san(san)
    started = GameStarted(
        game=1, white_port="a", black_port="b", fen=chess.STARTING_FEN,
        tags={"Event": "Test", "Site": "Lab", "Date": "2026.11.18", "Round": "1",
              "White": "Alpha", "Black": "Beta", "Result": "*", "TimeControl": "60+1"},
    )  # fmt: skip
    point = ResumedGame(started=started, board=board, clock=ChessClock(TimeControl.parse("60+1")),
                        offer_pending=False, state=GameState.PLAYING, scores=(5, -5))  # fmt: skip
    game = Game(resumed=point, adjudication=AdjudicationRules(draw=DrawRule(1, 1, 10)))
    game.referee.resume()
    assert (game.ended().result, game.ended().reason) == ("1/2-1/2", "Draw by adjudication")
    assert game.referee.state is GameState.ENDED
