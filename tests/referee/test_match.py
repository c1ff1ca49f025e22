"""The match referee record by record, on a fake wire with a fake clock (no ports, no sleeps)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import chess
import pytest
from doubles import WALL, Harness
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serialref import records
from serialref.epd.operations import Operation
from serialref.epd.parser import parse_record
from serialref.errors import RecorderError
from serialref.happenings import (
    GameEnded,
    GameStarted,
    Infraction,
    LineReceived,
    LinesIgnored,
    MatchEnded,
    MatchEvent,
    MovePlayed,
)
from serialref.referee.match import MatchReferee, MatchState
from serialref.referee.openings import Opening
from serialref.referee.resume import ResumePoint
from serialref.referee.session import SessionState
from serialref.timecontrol import TimeControl

START = chess.STARTING_FEN


def op(opcode: str, *texts: str) -> Operation:
    return Operation.of(opcode, *texts)


@pytest.fixture
def match() -> Iterator[Harness]:
    yield Harness()


# ------------------------------------------------------------- the normal flow


def test_sign_on_is_answered_by_reset_at_once(match: Harness) -> None:
    match.sign_on("a", "Alpha")
    assert match.lines("a") == [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - fmvn 1; hmvc 0; refcom reset;"
    ]
    assert match.lines("b") == []
    assert match.referee.state is MatchState.WAITING_FOR_PLAYERS


def test_inform_and_first_respond_wait_for_the_reset_delay(match: Harness) -> None:
    match.sign_on("a", "Alpha")
    match.sign_on("b", "Beta")
    match.advance(4.9)
    assert match.commands("a") == ["reset"]
    assert match.referee.next_deadline() == pytest.approx(1005.0)
    match.advance(0.1)
    inform = (
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - fmvn 1; hmvc 0; "
        'ptp Event "Test" Site "Lab" Date "2026.11.18" Round "1" White "Alpha" Black "Beta" '
        'Result "*" TimeControl "60+1"; refcom inform;'
    )
    assert match.lines("a")[1:] == [
        inform,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - cc 000:00:00:00 000:00:00:00; "
        "ccms 0 0; fmvn 1; hmvc 0; refcom respond;",
    ]
    assert match.lines("b")[1:] == [inform]
    assert match.referee.state is MatchState.IN_GAME


class Witness:
    """A recorder or an observer that notes what it is given in a log it shares."""

    def __init__(self, name: str, log: list[str], *, fail_on: type | None = None) -> None:
        self.name = name
        self.log = log
        self.fail_on = fail_on  # an event of this type cannot be written
        self.moves: list[MovePlayed] = []

    def handle(self, event: MatchEvent) -> None:
        if self.fail_on is not None and isinstance(event, self.fail_on):
            raise RecorderError("cannot write journal.jsonl: No space left on device")
        self.log.append(f"{self.name} {type(event).__name__}")
        if isinstance(event, MovePlayed):
            self.moves.append(event)

    def sync(self) -> None:
        self.log.append(f"{self.name} sync")

    def close(self) -> None:
        pass


def witnessed(match: Harness, fail_on: type | None = None) -> tuple[list[str], Witness]:
    """The match's referee again, with a recorder and an observer logging beside its wire."""
    log: list[str] = []
    recorder = Witness("recorder", log, fail_on=fail_on)
    match.referee = MatchReferee(
        match.referee.settings, match.wire, [recorder], [Witness("observer", log)],
        clock=match.clock, wall_clock=lambda: WALL,
    )  # fmt: skip
    match.referee.start()
    match.start_game()
    send = match.wire.send

    def send_noting_it(port: str, text: str, *, notify: bool = False) -> float:
        log.append(f"{port} {records.referee_command(parse_record(text)).value}")
        return send(port, text, notify=notify)

    match.wire.send = send_noting_it  # type: ignore[method-assign]
    log.clear()
    return log, recorder


def test_a_move_is_recorded_before_the_respond_that_relays_it_and_synced_after(
    match: Harness,
) -> None:
    """Write-ahead (PROTOCOL.md 7): the reply and its move are in the journal when the
    opponent's respond leaves; the observers see them after it, and the sync follows."""
    log, recorder = witnessed(match)
    match.move("a", "e4", op("ce", "31"), think=2.5)
    assert log == [
        "recorder LineReceived", "recorder MovePlayed",
        "b respond",
        "recorder RecordSent",
        "observer LineReceived", "observer MovePlayed", "observer RecordSent",
        "recorder sync",
    ]  # fmt: skip
    (played,) = recorder.moves
    assert (played.san, played.analysis, played.moves_made) == ("e4", {"ce": "31"}, (1, 0))
    assert played.consumed == pytest.approx((2.5, 0.0))


def test_a_move_the_journal_cannot_take_is_told_to_no_one(match: Harness) -> None:
    """The journal fails on the move: both players get fault and disconnect with the
    position before it, and the opponent no respond (PROTOCOL.md 7)."""
    log, _ = witnessed(match, fail_on=MovePlayed)
    with pytest.raises(RecorderError, match="No space left on device"):
        match.move("a", "e4")
    assert [entry for entry in log if not entry.startswith("observer")] == [
        "recorder LineReceived", "a fault", "a disconnect", "b fault", "b disconnect",
    ]  # fmt: skip
    assert "observer MovePlayed" not in log
    assert all(records.fen_of(match.last(port).board()) == START for port in "ab")
    assert 'c0 "referee storage failure"' in match.lines("b")[-2]
    assert match.referee.done and not match.referee.complete


def test_a_line_whose_handling_fails_is_recorded_all_the_same(match: Harness) -> None:
    match.start_game()

    def broken_send(port: str, text: str, *, notify: bool = False) -> float:
        raise OSError("the port broke in a way nobody expected")

    match.wire.send = broken_send  # type: ignore[method-assign]
    with pytest.raises(OSError):
        match.move("a", "e4")
    assert "refreq reply" in match.events.of(LineReceived)[-1].text


def test_respond_carries_the_position_before_the_move_and_the_move(match: Harness) -> None:
    match.start_game()
    match.move("a", "e4", think=2.5)
    assert match.lines("b")[-1] == (
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - cc 000:00:00:02 000:00:00:00; "
        "ccms 2500 0; fmvn 1; hmvc 0; refcom respond; sm e4;"
    )
    match.move("b", "c5", think=1.25)
    # en passant square after every double push (PROTOCOL.md 2), fmvn/hmvc of that position
    assert match.lines("a")[-1] == (
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 cc 000:00:00:02 "
        "000:00:00:01; ccms 2500 1250; fmvn 1; hmvc 0; refcom respond; sm c5;"
    )
    played = match.events.of(MovePlayed)
    assert [move.san for move in played] == ["e4", "c5"]
    assert played[0].elapsed == pytest.approx(2.5)
    assert played[0].remaining[0] == pytest.approx(60 - 2.5 + 1)


def test_player_names_come_from_configuration_then_sign_on_then_default() -> None:
    match = Harness(names=("Configured", None))
    match.sign_on("a", "FromTcsi")
    match.sign_on("b")
    match.advance(5.0)
    started = match.events.of(GameStarted)[0]
    assert (started.tags["White"], started.tags["Black"]) == ("Configured", "Player B")


def test_names_in_other_alphabets_are_recorded_as_written_and_sent_in_ascii() -> None:
    match = Harness(names=("Müller", "Øster"), event="Turnier in Köln")
    match.start_game()
    (started,) = match.events.of(GameStarted)
    assert (started.tags["White"], started.tags["Black"]) == ("Müller", "Øster")
    assert started.tags["Event"] == "Turnier in Köln"
    inform = parse_record(match.lines("b")[1])
    assert ("White", "Muller") in inform.tag_pairs()
    assert ("Event", "Turnier in Koln") in inform.tag_pairs()


def test_checkmate_ends_the_game_with_inform_then_conclude(match: Harness) -> None:
    match.start_game()
    for port, san in [("a", "f3"), ("b", "e5"), ("a", "g4"), ("b", "Qh4#")]:
        match.move(port, san)
    final = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq -"
    for port in "ab":
        assert match.lines(port)[-2:] == [
            f'{final} fmvn 3; hmvc 1; ptp Event "Test" Site "Lab" Date "2026.11.18" '
            'Round "1" White "Alpha" Black "Beta" Result "0-1" TimeControl "60+1" '
            'Termination "normal"; refcom inform;',
            f"{final} cc 000:00:00:02 000:00:00:02; ccms 2000 2000; fmvn 3; hmvc 1; "
            "refcom conclude;",
        ]
    ended = match.ended()
    assert (ended.result, ended.termination, ended.reason) == ("0-1", "normal", "Black mates")
    assert match.referee.state is MatchState.BETWEEN_GAMES


def test_after_the_last_game_every_player_is_disconnected(match: Harness) -> None:
    match.start_game()
    for port, san in [("a", "f3"), ("b", "e5"), ("a", "g4"), ("b", "Qh4#")]:
        match.move(port, san)
    match.advance(4.9)
    assert match.commands("a")[-1] == "conclude"
    match.advance(0.1)
    assert match.commands("a")[-1] == match.commands("b")[-1] == "disconnect"
    assert match.referee.done and match.referee.complete
    assert match.events.of(MatchEnded)[0].score == (0.0, 1.0)


def test_colours_alternate_and_each_game_starts_with_reset() -> None:
    match = Harness(games=2)
    match.start_game()
    for port, san in [("a", "f3"), ("b", "e5"), ("a", "g4"), ("b", "Qh4#")]:
        match.move(port, san)
    match.advance(5.0)
    assert match.commands("a")[-1] == match.commands("b")[-1] == "reset"
    match.advance(5.0)
    second = match.events.of(GameStarted)[1]
    assert (second.white_port, second.tags["White"], second.tags["Round"]) == ("b", "Beta", "2")
    assert match.commands("b")[-1] == "respond"
    assert match.commands("a")[-1] == "inform"


# -------------------------------------------------------- automatic endings


@pytest.mark.parametrize(
    ("fen", "san", "result", "reason"),
    [
        ("7k/8/6Q1/8/8/8/8/K7 w - - 0 1", "Qf7", "1/2-1/2", "stalemate"),
        (
            "k7/8/8/8/8/8/p7/K1N5 w - - 0 1",
            "Kxa2",
            "1/2-1/2",
            "dead position: neither side can mate",
        ),
        ("k7/8/8/8/8/8/8/KR6 w - - 149 90", "Rb2", "1/2-1/2", "seventy-five-move rule"),
    ],
)
def test_positions_that_end_the_game_by_themselves(
    fen: str, san: str, result: str, reason: str
) -> None:
    match = Harness(openings=(Opening(fen),))
    match.start_game(fen)
    match.move("a", san)
    assert (match.ended().result, match.ended().reason) == (result, reason)
    assert match.commands("b")[-2:] == ["inform", "conclude"]


def test_fivefold_repetition_is_a_draw_without_a_claim(match: Harness) -> None:
    match.start_game()
    shuffle = [("a", "Nf3"), ("b", "Nf6"), ("a", "Ng1"), ("b", "Ng8")]
    for _ in range(3):
        for port, san in shuffle:
            match.move(port, san)
    assert not match.events.of(GameEnded)
    for port, san in shuffle:
        match.move(port, san)
    assert match.ended().reason == "fivefold repetition"


# ------------------------------------------------------------------- clocks


def test_the_flag_falls_by_timer_not_only_when_a_reply_arrives() -> None:
    match = Harness(time_control=TimeControl.parse("10"))
    match.start_game()
    assert match.referee.next_deadline() == pytest.approx(1015.0)
    match.advance(9.999)
    assert not match.events.of(GameEnded)
    match.advance(0.001)
    ended = match.ended()
    assert (ended.result, ended.termination) == ("0-1", "time forfeit")
    assert match.last("a").clock_pair("cc") == (10, 0)


def test_flag_fall_against_a_side_whose_opponent_cannot_mate_is_a_draw() -> None:
    fen = "k7/8/8/8/8/8/8/KQ6 w - - 0 1"
    match = Harness(time_control=TimeControl.parse("10"), openings=(Opening(fen),))
    match.start_game(fen)
    match.advance(10.0)
    assert (match.ended().result, match.ended().termination) == ("1/2-1/2", "time forfeit")


def test_a_reply_after_the_flag_fell_loses_on_time() -> None:
    match = Harness(time_control=TimeControl.parse("10"))
    match.start_game()
    match.move("a", "e4", think=10.5)
    assert match.ended().termination == "time forfeit"
    assert not match.events.of(MovePlayed)


def test_the_replys_transmission_time_is_not_charged() -> None:
    match = Harness()
    match.wire.line_delay = 0.001  # 1 ms per character, as at 10000 baud with 10 bits
    match.start_game()
    match.move("a", "e4", think=2.0)
    played = match.events.of(MovePlayed)[0]
    text_length = len(match.lines("b")[-1])  # about the reply's length
    assert 2.0 - 0.2 < played.elapsed < 2.0
    assert text_length > 0


# -------------------------------------------------------------- the players


def test_resignation(match: Harness) -> None:
    match.start_game()
    match.reply("a", op("resign"))
    ended = match.ended()
    assert (ended.result, ended.termination, ended.reason) == ("0-1", "normal", "White resigns")


def test_draw_offer_travels_with_the_move_and_can_be_accepted(match: Harness) -> None:
    match.start_game()
    match.move("a", "e4", op("draw_offer"))
    assert match.lines("b")[-1].endswith("draw_offer; fmvn 1; hmvc 0; refcom respond; sm e4;")
    match.reply("b", op("draw_accept"))
    assert (match.ended().result, match.ended().reason) == ("1/2-1/2", "draw agreed")


def test_a_draw_offer_lapses_when_the_opponent_replies_with_a_move(match: Harness) -> None:
    match.start_game()
    match.move("a", "e4", op("draw_offer"))
    match.move("b", "e5")
    assert "draw_offer" not in match.last("a")
    match.move("a", "Nf3")
    match.reply("b", op("draw_accept"))
    assert match.ended().termination == "rules infraction"
    assert "draw_accept without a draw offer" in match.ended().reason


def test_draw_accept_without_an_offer_but_with_a_move_lets_the_move_stand(match: Harness) -> None:
    match.start_game()
    match.move("a", "e4", op("draw_accept"))
    assert not match.events.of(GameEnded)
    assert match.commands("b")[-1] == "respond"


def test_valid_threefold_claim_on_the_current_position(match: Harness) -> None:
    match.start_game()
    for _ in range(2):
        for port, san in [("a", "Nf3"), ("b", "Nf6"), ("a", "Ng1"), ("b", "Ng8")]:
            match.move(port, san)
    match.reply("a", op("draw_claim"))
    assert (match.ended().result, match.ended().reason) == (
        "1/2-1/2",
        "draw claimed: threefold repetition",
    )


def test_valid_threefold_claim_after_the_supplied_move(match: Harness) -> None:
    match.start_game()
    for port, san in [("a", "Nf3"), ("b", "Nf6"), ("a", "Ng1"), ("b", "Ng8")] * 2:
        if (port, san) == ("b", "Ng8") and len(match.events.of(MovePlayed)) == 7:
            match.move(port, san, op("draw_claim"))
        else:
            match.move(port, san)
    assert match.ended().reason == "draw claimed: threefold repetition"
    assert [move.san for move in match.events.of(MovePlayed)][-1] == "Ng8"


def test_valid_fifty_move_claim_after_the_supplied_move() -> None:
    fen = "k7/8/8/8/8/8/8/KR6 w - - 99 80"
    match = Harness(openings=(Opening(fen),))
    match.start_game(fen)
    match.move("a", "Rb2", op("draw_claim"))
    assert match.ended().reason == "draw claimed: fifty-move rule"


def test_a_mating_move_with_a_claim_that_holds_after_it_wins() -> None:
    fen = "k7/8/1K6/8/8/8/8/7R w - - 99 80"  # Rh8 mates and makes the fifty-move rule hold
    match = Harness(openings=(Opening(fen),))
    match.start_game(fen)
    match.move("a", "Rh8#", op("draw_claim"))
    assert (match.ended().result, match.ended().reason) == ("1-0", "White mates")


def test_an_invalid_claim_with_a_move_lets_the_move_stand(match: Harness) -> None:
    match.start_game()
    match.move("a", "e4", op("draw_claim"))
    assert not match.events.of(GameEnded)
    assert match.lines("b")[-1].endswith("refcom respond; sm e4;")


def test_an_invalid_claim_without_a_move_is_a_rules_infraction(match: Harness) -> None:
    match.start_game()
    match.reply("a", op("draw_claim"))
    ended = match.ended()
    assert (ended.result, ended.termination) == ("0-1", "rules infraction")


# A move beside a claim that holds now, or beside an accepted offer, is never looked at.
NOT_PLAYED = ["Ke2", "Nf4", "Zz9", "e2e5"]


@pytest.mark.parametrize("beside", NOT_PLAYED)
def test_a_threefold_claim_on_the_current_position_ends_the_game_whatever_move_is_beside_it(
    match: Harness, beside: str
) -> None:
    """PROTOCOL.md 5 (1.2): the claim is judged before the move beside it is read."""
    match.start_game()
    for port, san in [("a", "Nf3"), ("b", "Nf6"), ("a", "Ng1"), ("b", "Ng8")] * 2:
        match.move(port, san)
    match.reply("a", op("sm", beside), op("draw_claim"))
    ended = match.ended()
    assert (ended.result, ended.termination, ended.reason) == (
        "1/2-1/2", "normal", "draw claimed: threefold repetition",
    )  # fmt: skip
    assert len(match.events.of(MovePlayed)) == 8


@pytest.mark.parametrize("beside", NOT_PLAYED[:3])
def test_a_fifty_move_claim_on_the_current_position_ends_the_game_whatever_move_is_beside_it(
    beside: str,
) -> None:
    fen = "k7/8/8/8/8/8/8/KR6 w - - 100 80"
    match = Harness(openings=(Opening(fen),))
    match.start_game(fen)
    match.reply("a", op("sm", beside), op("draw_claim"))
    assert (match.ended().result, match.ended().reason) == (
        "1/2-1/2", "draw claimed: fifty-move rule",
    )  # fmt: skip


@pytest.mark.parametrize("beside", ["Ke7", "Zz9", "e4"])
def test_an_accepted_draw_offer_ends_the_game_whatever_move_is_beside_it(
    match: Harness, beside: str
) -> None:
    """draw_accept needs no move (PROTOCOL.md 4): the agreement ends the game."""
    match.start_game()
    match.move("a", "e4", op("draw_offer"))
    match.reply("b", op("sm", beside), op("draw_accept"))
    ended = match.ended()
    assert (ended.result, ended.termination, ended.reason) == ("1/2-1/2", "normal", "draw agreed")
    assert [move.san for move in match.events.of(MovePlayed)] == ["e4"]


@pytest.mark.parametrize(
    ("make_reply", "reason"),
    [
        (
            lambda board: (
                records.reply(chess.Board(), chess.Move.from_uci("e2e4"))
                .without("sm")
                .with_operations(op("sm", "Ke2"))
            ),
            "illegal or unreadable move",
        ),
        (lambda board: records.reply(board, None, op("sm", "zz9")), "illegal or unreadable move"),
        (lambda board: records.reply(board, None), "reply without a move"),
        (
            lambda board: records.reply(
                board, board.parse_san("e4"), op("resign"), op("draw_offer")
            ),
            "contradictory opcodes resign and draw_offer",
        ),
        (
            lambda board: records.reply(
                chess.Board("8/8/8/8/8/8/8/K6k w - - 0 1"), chess.Move.from_uci("a1a2")
            ),
            "wrong position",
        ),
    ],
)
def test_rules_infractions_lose_the_game_by_default(make_reply, reason: str) -> None:  # type: ignore[no-untyped-def]
    match = Harness()
    match.start_game()
    match.send("a", make_reply(match.board))
    ended = match.ended()
    assert (ended.result, ended.termination) == ("0-1", "rules infraction")
    assert reason in ended.reason
    assert match.commands("a")[-2:] == ["inform", "conclude"]


def test_en_passant_written_as_python_chess_does_is_the_same_position(match: Harness) -> None:
    match.start_game()
    match.move("a", "e4")
    # the spec writes e3; python-chess's board.epd() writes '-' when no capture is possible
    spec_form = records.reply(match.board, match.board.parse_san("e5"))
    assert spec_form.en_passant == "e3"
    reply = dataclasses.replace(spec_form, en_passant="-")
    match.clock.now += 1
    match.send("b", reply)
    assert not match.events.of(GameEnded)
    assert [move.san for move in match.events.of(MovePlayed)] == ["e4", "e5"]


def test_fault_policy_stops_the_clocks_and_asks_again_after_sign_on() -> None:
    match = Harness(on_infraction="fault")
    match.start_game()
    match.reply("a")  # no move
    assert match.commands("a")[-1] == "fault"
    assert match.last("a").operand_texts("c0") == ("reply without a move (sm)",)
    assert not match.events.of(GameEnded)
    assert match.referee.next_deadline() is None  # clocks stopped
    match.advance(100.0)
    match.sign_on("a", "Alpha")
    assert match.commands("a")[-3:] == ["reset", "inform", "respond"]
    assert match.last("a").clock_pair("cc") == (1, 0)
    match.move("a", "e4")
    assert [move.san for move in match.events.of(MovePlayed)] == ["e4"]


def test_replies_out_of_turn_and_garbage_are_ignored_and_the_clock_runs(match: Harness) -> None:
    match.start_game()
    after_e4 = chess.Board()
    after_e4.push_san("e4")
    match.send("b", records.reply(after_e4, after_e4.parse_san("e5")))  # White is to move
    match.referee.lines.on_line("a", "this is not EPD", match.clock.now)
    match.referee.lines.on_malformed("a", "byte 0x1b at column 1 is not printable", "\\x1b[2J", 0.0)
    assert not match.events.of(GameEnded)
    assert not match.events.of(MovePlayed)
    notes = [event.note for event in match.events.of(LineReceived) if event.note]
    assert notes[0] == "ignored: reply out of turn"
    assert notes[1].startswith("ignored: not a player request: column 1")
    assert notes[2] == "byte 0x1b at column 1 is not printable"  # noise is counted too
    assert not match.events.of(Infraction)
    match.clock.now += 3.0
    assert match.referee.game is not None
    consumed = match.referee.game.sheet.chess_clock.consumed(chess.WHITE, match.clock.now)
    assert consumed == pytest.approx(3.0)


def test_sign_off_in_a_game_loses_it(match: Harness) -> None:
    match.start_game()
    match.send("b", records.sign_off(chess.Board()))
    ended = match.ended()
    assert (ended.result, ended.termination) == ("1-0", "abandoned")
    assert match.commands("b") == ["reset", "inform"]  # nothing after it left
    assert match.commands("a")[-2:] == ["inform", "conclude"]


def test_a_player_fault_ends_the_game_unfinished(match: Harness) -> None:
    match.start_game()
    match.send("a", records.player_fault(chess.Board(), "engine crashed"))
    ended = match.ended()
    assert (ended.result, ended.termination) == ("*", "emergency")
    assert "engine crashed" in ended.reason


# ------------------------------------------------------------------ restore


def test_a_player_that_signs_on_again_mid_game_is_restored(match: Harness) -> None:
    match.start_game()
    for port, san in [("a", "e4"), ("b", "e5"), ("a", "Nf3")]:
        match.move(port, san)
    match.sign_on("b", "Beta")
    tail = match.lines("b")[-6:]
    assert [records.referee_command(parse_record(text)).value for text in tail] == [
        "reset",
        "inform",
        "execute",
        "execute",
        "execute",
        "respond",
    ]
    assert tail[0].startswith("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - ")
    assert 'Result "*"' in tail[1]
    assert tail[2].endswith("refcom execute; sm e4;")
    assert tail[4].endswith("refcom execute; sm Nf3;")
    respond = parse_record(tail[5])
    assert "sm" not in respond
    assert respond.position == "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq -"
    match.move("b", "Nc6")
    assert [move.san for move in match.events.of(MovePlayed)][-1] == "Nc6"


def test_sign_ons_faster_than_a_restart_cost_one_restore_at_the_end_of_the_pause(
    match: Harness,
) -> None:
    match.start_game()
    for port, san in [("a", "e4"), ("b", "e5"), ("a", "Nf3")]:
        match.move(port, san)
    match.sign_on("b", "Beta")  # 8 s after its last one: answered at once
    assert match.commands("b").count("reset") == 2
    for _ in range(100):
        match.clock.now += 0.005
        match.sign_on("b", "Beta")
    assert match.commands("b").count("reset") == 2
    assert match.referee.next_deadline() == pytest.approx(match.clock.now - 0.5 + 2.0)
    match.advance(1.5)  # the pause doubled: the held sign_on is answered 2 s after the last
    assert match.commands("b")[-6:] == ["reset", "inform", "execute", "execute", "execute",
                                        "respond"]  # fmt: skip
    notes = [event.note for event in match.events.of(LineReceived) if event.note]
    assert notes == ["held: sign_on within the pause after the last one answered"] * 5
    match.move("b", "Nc6")
    assert [move.san for move in match.events.of(MovePlayed)][-1] == "Nc6"


def test_a_sign_on_held_when_the_line_is_lost_is_not_answered() -> None:
    match = Harness(rejoin_window=30.0)
    match.start_game()
    match.sign_on("b", "Beta")
    match.sign_on("b", "Beta")
    match.referee.lines.on_line_lost("b", "hang-up")
    sent = len(match.lines("b"))
    match.advance(5.0)
    assert len(match.lines("b")) == sent
    assert match.referee.sessions["b"].state is SessionState.OFFLINE


def test_faults_outside_a_game_are_recorded_a_few_a_second(match: Harness) -> None:
    match.sign_on("a", "Alpha")
    for _ in range(50):
        match.send("a", records.player_fault(chess.Board(), "again"))
    assert len(match.events.of(Infraction)) == 5
    match.clock.now += 1.0
    match.send("a", records.player_fault(chess.Board(), "later"))
    assert [event.reason for event in match.events.of(Infraction)][-1] == "player fault: later"
    assert [event.count for event in match.events.of(LinesIgnored)] == [45]


def test_a_restored_player_not_to_move_gets_no_respond(match: Harness) -> None:
    match.start_game()
    match.move("a", "e4")
    match.sign_on("a", "Alpha")
    assert match.commands("a")[-3:] == ["reset", "inform", "execute"]


def test_a_lost_line_keeps_the_game_until_the_rejoin_window_closes() -> None:
    match = Harness(rejoin_window=30.0)
    match.start_game()
    match.referee.lines.on_line_lost("b", "hang-up")
    assert match.referee.sessions["b"].state is SessionState.OFFLINE
    match.move("a", "e4")  # White still plays; Black cannot be told
    match.advance(28.0)
    assert not match.events.of(GameEnded)
    match.advance(1.0)
    assert (match.ended().result, match.ended().termination) == ("1-0", "abandoned")


def test_stop_disconnects_every_signed_on_player(match: Harness) -> None:
    match.start_game()
    match.referee.stop("received SIGTERM")
    assert match.commands("a")[-1] == match.commands("b")[-1] == "disconnect"
    assert match.referee.done and not match.referee.complete
    assert not match.events.of(GameEnded)
    assert match.events.of(MatchEnded)[0].complete is False


def test_a_reply_still_on_the_line_at_the_flag_deadline_counts() -> None:
    # 9600 baud: a reply's own transmission time is not charged (PROTOCOL.md 5), so
    # the timer waits for a reply in transit before calling the flag.
    match = Harness(time_control=TimeControl.parse("10"), flag_grace=0.2)
    match.wire.line_delay = 0.002
    match.start_game()
    assert match.referee.next_deadline() == pytest.approx(1015.2)
    match.move("a", "e4", think=10.1)  # its line end arrived 0.1 s late, it took ~0.15 s
    assert not match.events.of(GameEnded)
    assert match.events.of(MovePlayed)[0].elapsed < 10.0


def test_each_opening_is_played_with_both_colours() -> None:
    openings = (Opening(moves=("e4", "c5")), Opening(moves=("d4",)))
    match = Harness(games=3, openings=openings, time_control=TimeControl.parse("-"))
    match.start_game()
    started: list[GameStarted] = []
    for game in range(3):
        started = match.events.of(GameStarted)
        white = started[-1].white_port
        match.board = openings[game // 2].board()
        if game < 2:
            match.reply(white, op("resign"))
            match.advance(5.0)
            match.advance(5.0)
    assert [(s.opening_moves, s.white_port) for s in started] == [
        (("e4", "c5"), "a"),
        (("e4", "c5"), "b"),
        (("d4",), "a"),
    ]
    # Players are reset to the position after the opening moves.
    resets = [line for line in match.lines("a") if line.endswith("refcom reset;")]
    assert resets[-1] == (
        "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq d3 fmvn 1; hmvc 0; refcom reset;"
    )


_OPCODES = ["sm", "resign", "draw_offer", "draw_accept", "draw_claim", "draw_reject", "ce",
            "pv", "acn", "tcsi", "c0", "refcom", "hmvc", "fmvn", "cc", "Xyz"]  # fmt: skip


@st.composite
def player_lines(draw: st.DrawFn) -> str:
    """Lines a buggy or hostile player might send: some valid, most half-right."""
    board = chess.Board()
    for _ in range(draw(st.integers(0, 6))):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(draw(st.sampled_from(moves)))
    request = draw(st.sampled_from(["sign_on", "reply", "fault", "sign_off", "bogus"]))
    parts = [board.fen(en_passant="fen").rsplit(" ", 2)[0], f"refreq {request};"]
    for opcode in draw(st.lists(st.sampled_from(_OPCODES), max_size=4, unique=True)):
        operand = draw(
            st.sampled_from(
                [
                    "",
                    " e4",
                    " Nf3",
                    " 0000",
                    " 12",
                    " -32768",
                    ' "x"',
                    " 000:00:00:01 000:00:00:02",
                    " e4 e5",
                ]
            )
        )
        parts.append(f"{opcode}{operand};")
    if draw(st.booleans()):
        return draw(st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=60))
    return " ".join(parts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from("ab"), player_lines(), st.floats(0, 30)), max_size=25))
def test_no_sequence_of_lines_makes_the_referee_fail(
    script: list[tuple[str, str, float]],
) -> None:
    match = Harness(time_control=TimeControl.parse("60+1"), reset_delay=1.0, games=2)
    match.start_game()
    for port, line, pause in script:
        match.clock.now += pause
        match.referee.on_timer()
        match.referee.lines.on_line(port, line, match.clock.now)
    for port, text in match.wire.sent:
        assert records.referee_command(parse_record(text))  # only refcom records go out
        assert port in "ab"


def test_a_resumed_match_counts_the_games_already_finished() -> None:
    match = Harness(games=3, reset_delay=0.0)
    match.referee = MatchReferee(
        match.referee.settings, match.wire, [match.events], clock=match.clock,
        wall_clock=lambda: WALL,
    )  # fmt: skip
    match.referee.start(
        ResumePoint(
            games_done=2,
            results=(("a", "1-0"), ("b", "1/2-1/2")),
            names=("Alpha", "Beta"),
            signed_on=(True, True),
        )
    )
    assert match.commands("a") == match.commands("b") == ["reset"]  # game 3 starts at once
    match.advance(0.0)
    assert match.events.of(GameStarted)[-1].game == 3
    match.board = chess.Board()
    match.reply("a", op("resign"))  # game 3: White is on port a again
    assert match.referee.score == [1.5, 1.5]
