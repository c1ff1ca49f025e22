"""PlayerSession, record by record: referee lines in, the exact player lines and requests out."""

from __future__ import annotations

import dataclasses
import logging
from collections import deque
from collections.abc import Iterable

import chess
import pytest
from doubles import SteppedClock
from transitions import Machine

from serialref import records
from serialref.client.clocks import SAFETY_MARGIN
from serialref.client.players import Analysis, Decision, ThinkRequest
from serialref.client.session import (
    SIGN_ON_RETRY,
    STATES,
    TRANSITIONS,
    PlayerSession,
    PlayerState,
    SessionOutput,
)
from serialref.epd.operations import Operation
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"


class ScriptedPlayer:
    """Plays the decisions it was given, in order, and remembers every request."""

    name = "Scripted"

    def __init__(self, *decisions: Decision | str) -> None:
        self.decisions: deque[Decision | str] = deque(decisions)
        self.requests: list[ThinkRequest] = []

    def decide(self, request: ThinkRequest) -> Decision:
        # The session's board moves on after the answer: keep it as the player saw it.
        self.requests.append(dataclasses.replace(request, board=request.board.copy()))
        decision = self.decisions.popleft()
        if isinstance(decision, str):
            return Decision(request.board.parse_uci(decision))
        return decision


def line(record: EpdRecord) -> str:
    return format_record(record)


def only_record(output: SessionOutput) -> EpdRecord:
    assert len(output.lines) == 1, output
    return parse_record(output.lines[0])


def board_after(*ucis: str, fen: str = chess.STARTING_FEN) -> chess.Board:
    board = chess.Board(fen)
    for uci in ucis:
        board.push_uci(uci)
    return board


class Game:
    """A session and its scripted player, answering every request at once."""

    def __init__(
        self,
        player: ScriptedPlayer,
        *,
        clock: SteppedClock | None = None,
        safety_margin: float = 0.0,
        claim_draws: bool = True,
    ) -> None:
        self.player = player
        self.clock = clock or SteppedClock()
        self.session = PlayerSession(
            player.name,
            clock=self.clock,
            safety_margin=safety_margin,
            claim_draws=claim_draws,
        )

    def line_received(self, text: str) -> SessionOutput:
        """One line from the referee; a request is answered by the player at once."""
        output = self.session.line_received(text)
        if output.think is None:
            return output
        assert output.lines == ()
        return self.session.decision_made(output.think, self.player.decide(output.think))

    feed = line_received

    def __getattr__(self, name: str) -> object:
        """Everything else is the session's (board, tags, sign_off, ...)."""
        return getattr(self.session, name)


def started(
    player: ScriptedPlayer,
    board: chess.Board | None = None,
    tags: Iterable[tuple[str, str]] = (("TimeControl", "300+2"),),
    **options: object,
) -> Game:
    """A session that signed on, got reset and inform for a game from ``board``."""
    game = Game(player, **options)  # type: ignore[arg-type]
    game.session.sign_on()
    board = board or chess.Board()
    reset = game.feed(line(records.reset(board)))
    assert reset == SessionOutput(new_game=reset.new_game) and reset.new_game is not None
    assert game.feed(line(records.inform(board, tags))) == SessionOutput()
    return game


def respond_line(
    before: chess.Board,
    move: str | None,
    consumed: tuple[int, int] = (0, 0),
    *,
    draw_offer: bool = False,
) -> str:
    san = None if move is None else before.san(before.parse_uci(move))
    return line(records.respond(before, consumed, san, draw_offer=draw_offer))


def respond(
    game: Game,
    before: chess.Board,
    move: str | None,
    consumed: tuple[int, int] = (0, 0),
    *,
    draw_offer: bool = False,
) -> SessionOutput:
    return game.feed(respond_line(before, move, consumed, draw_offer=draw_offer))


def test_sign_on_names_the_player_in_tcsi() -> None:
    session = PlayerSession("Scripted", clock=SteppedClock())
    output = session.sign_on()
    assert output.lines == (f'{START} refreq sign_on; tcsi "" "Scripted";',)
    assert not output.finished


def test_each_reset_announces_the_game_the_players_requests_will_name() -> None:
    session = PlayerSession("Scripted", clock=SteppedClock())
    session.sign_on()
    games = []
    for _ in range(2):
        announced = session.line_received(line(records.reset(chess.Board()))).new_game
        session.line_received(line(records.inform(chess.Board(), [("TimeControl", "60")])))
        request = session.line_received(respond_line(chess.Board(), None)).think
        assert request is not None and request.game is announced
        games.append(announced)
    assert games[0] is not games[1]


def test_first_respond_without_sm_gets_a_reply_from_the_initial_position() -> None:
    player = ScriptedPlayer("e2e4")
    session = started(player)
    output = respond(session, chess.Board(), None)
    assert output.lines == (f"{START} fmvn 1; hmvc 0; refreq reply; sm e4;",)
    assert session.board.move_stack == [chess.Move.from_uci("e2e4")]


def test_reply_names_the_position_after_the_opponents_move() -> None:
    player = ScriptedPlayer("g8f6")
    session = started(player)
    output = respond(session, chess.Board(), "d2d4", (3000, 0))
    assert output.lines == (
        "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq d3 fmvn 1; hmvc 0; "
        "refreq reply; sm Nf6;",
    )
    assert player.requests[0].board.fen() == board_after("d2d4").fen()


def test_matching_positions_keep_the_history() -> None:
    player = ScriptedPlayer("e2e4", "g1f3")
    session = started(player)
    respond(session, chess.Board(), None)
    # The referee writes e3 after the double push; python-chess would not: still a match.
    output = respond(session, board_after("e2e4"), "e7e5")
    assert only_record(output).operand_texts("sm") == ("Nf3",)
    assert [move.uci() for move in player.requests[1].board.move_stack] == ["e2e4", "e7e5"]


def test_a_different_position_starts_over_with_no_history() -> None:
    player = ScriptedPlayer("e2e4", "d2d4")
    session = started(player)
    respond(session, chess.Board(), None)
    elsewhere = chess.Board("4k3/8/8/8/8/8/3P4/4K2R b K - 12 40")
    output = respond(session, elsewhere, "e8d8")
    request = player.requests[1].board
    assert request.move_stack == [chess.Move.from_uci("e8d8")]
    assert (request.halfmove_clock, request.fullmove_number) == (13, 41)
    assert only_record(output).position == "3k4/8/8/8/8/8/3P4/4K2R w K -"


def test_different_move_counters_also_start_over() -> None:
    player = ScriptedPlayer("e2e4", "g1f3")
    session = started(player)
    respond(session, chess.Board(), None)
    shifted = board_after("e2e4")
    shifted.fullmove_number = 7
    respond(session, shifted, "e7e5")
    assert [move.uci() for move in player.requests[1].board.move_stack] == ["e7e5"]


def test_reply_to_a_respond_carries_the_request_details() -> None:
    player = ScriptedPlayer("e2e4")
    session = started(player, tags=(("Event", "Test"), ("TimeControl", "40/7200")))
    respond(session, chess.Board(), None, (0, 0))
    request = player.requests[0]
    assert request.tags == {"Event": "Test", "TimeControl": "40/7200"}
    assert request.budget.remaining == (7200.0, 7200.0)
    assert request.budget.moves_to_go == 40
    assert not request.draw_offered


def test_clock_budget_follows_ccms_and_the_moves_made() -> None:
    player = ScriptedPlayer("e2e4", "g1f3")
    session = started(player, tags=(("TimeControl", "300+2"),))
    respond(session, chess.Board(), None)
    respond(session, board_after("e2e4"), "e7e5", (10_250, 20_875))
    budget = player.requests[1].budget
    # White made one move (+2 s), Black made one move (+2 s).
    assert budget.remaining == (291.75, 281.125)
    assert budget.turn == chess.WHITE


def test_each_reset_is_a_new_game_for_the_player() -> None:
    player = ScriptedPlayer("e2e4", "e2e4")
    session = started(player)
    respond(session, chess.Board(), None)
    first_game = player.requests[0].game
    session.line_received(line(records.reset(chess.Board())))
    session.line_received(line(records.inform(chess.Board(), [("Round", "2")])))
    respond(session, chess.Board(), None)
    assert player.requests[1].game is not first_game
    assert player.requests[1].board.move_stack == []
    assert player.requests[1].tags == {"Round": "2"}


def test_final_inform_updates_tags_and_announces_no_new_game(
    caplog: pytest.LogCaptureFixture,
) -> None:
    player = ScriptedPlayer()
    with caplog.at_level(logging.INFO, logger="serialref.client.session"):
        session = started(player, tags=(("Result", "*"), ("White", "Alpha")))
        session.line_received(line(records.inform(chess.Board(), [("Result", "1-0")])))
    assert session.tags == {"Result": "1-0", "White": "Alpha"}
    started_lines = [entry for entry in caplog.records if "game started" in entry.getMessage()]
    assert len(started_lines) == 1
    assert "Alpha" in started_lines[0].getMessage()


KNIGHT_DANCE = ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"]
"""Eight plies that bring the initial position back twice: it has occurred three times."""


def test_move_making_a_threefold_repetition_claims_the_draw() -> None:
    player = ScriptedPlayer(*KNIGHT_DANCE[::2], "g1f3")
    session = started(player)
    before = chess.Board()
    replies = [only_record(respond(session, before, None))]
    for white, black in zip(KNIGHT_DANCE[::2], KNIGHT_DANCE[1::2], strict=True):
        before.push_uci(white)
        replies.append(only_record(respond(session, before, black)))
        before.push_uci(black)
    assert ["draw_claim" in record for record in replies] == [False] * 4 + [True]
    assert replies[-1].operand_texts("sm") == ("Nf3",)
    assert session.board.is_repetition(3)


def test_execute_replays_the_game_so_a_claim_still_holds() -> None:
    player = ScriptedPlayer("g1f3")
    session = started(player)
    game = chess.Board()
    for uci in KNIGHT_DANCE:
        move = game.parse_uci(uci)
        assert session.line_received(line(records.execute(game, move))) == SessionOutput()
        game.push(move)
    # The restore's respond: the current position, its clocks, no sm.
    record = only_record(respond(session, game, None, (40_250, 50_500)))
    assert "draw_claim" in record
    assert record.operand_texts("sm") == ("Nf3",)
    assert len(player.requests[0].board.move_stack) == 8
    # The clocks after a replay are the restore's respond's, to the millisecond.
    assert player.requests[0].budget.remaining == (300 - 40.25 + 4 * 2, 300 - 50.5 + 4 * 2)


def test_without_the_replayed_history_there_is_nothing_to_claim() -> None:
    player = ScriptedPlayer("g1f3")
    session = started(player)
    game = board_after(*KNIGHT_DANCE)
    record = only_record(respond(session, game, None))
    assert "draw_claim" not in record
    assert player.requests[0].board.move_stack == []


def test_fifty_move_rule_claim_comes_with_the_hundredth_quiet_ply() -> None:
    player = ScriptedPlayer("h1h2")
    fen = "4k3/8/8/8/8/8/8/4K2R w - - 99 80"
    session = started(player, chess.Board(fen))
    output = respond(session, chess.Board(fen), None)
    record = only_record(output)
    assert "draw_claim" in record
    assert record.operand_texts("hmvc") == ("99",)


def test_no_claim_when_disabled() -> None:
    player = ScriptedPlayer("h1h2")
    fen = "4k3/8/8/8/8/8/8/4K2R w - - 99 80"
    session = Game(player, claim_draws=False)
    session.line_received(line(records.reset(chess.Board(fen))))
    assert "draw_claim" not in only_record(respond(session, chess.Board(fen), None))


def test_opponents_draw_offer_reaches_the_player_and_can_be_accepted() -> None:
    player = ScriptedPlayer(Decision(None, draw_accept=True))
    session = started(player)
    output = respond(session, chess.Board(), "e2e4", draw_offer=True)
    assert player.requests[0].draw_offered
    assert output.lines == (
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 draw_accept; fmvn 1; hmvc 0; "
        "refreq reply;",
    )


def test_accepting_a_draw_nobody_offered_just_plays_the_move() -> None:
    player = ScriptedPlayer(Decision(chess.Move.from_uci("e7e5"), draw_accept=True))
    session = started(player)
    record = only_record(respond(session, chess.Board(), "e2e4"))
    assert "draw_accept" not in record
    assert record.operand_texts("sm") == ("e5",)


def test_player_offers_a_draw_with_its_move() -> None:
    player = ScriptedPlayer(Decision(chess.Move.from_uci("e2e4"), draw_offer=True))
    session = started(player)
    record = only_record(respond(session, chess.Board(), None))
    assert "draw_offer" in record
    assert record.operand_texts("sm") == ("e4",)


def test_a_claim_replaces_an_offer_made_with_the_same_move() -> None:
    fen = "4k3/8/8/8/8/8/8/4K2R w - - 99 80"
    player = ScriptedPlayer(Decision(chess.Move.from_uci("h1h2"), draw_offer=True))
    session = started(player, chess.Board(fen))
    record = only_record(respond(session, chess.Board(fen), None))
    assert "draw_claim" in record
    assert "draw_offer" not in record


def test_resignation_has_no_move() -> None:
    player = ScriptedPlayer(Decision(chess.Move.from_uci("e2e4"), resign=True, draw_offer=True))
    session = started(player)
    output = respond(session, chess.Board(), None)
    assert output.lines == (f"{START} fmvn 1; hmvc 0; refreq reply; resign;",)
    assert session.board.move_stack == []


def test_analysis_goes_into_ce_pv_acn_acs() -> None:
    pv = tuple(chess.Move.from_uci(uci) for uci in ("e2e4", "e7e5", "g1f3", "a1a5"))
    analysis = Analysis(centipawns=35, pv=pv, nodes=12345, seconds=2)
    player = ScriptedPlayer(Decision(pv[0], analysis=analysis))
    session = started(player)
    output = respond(session, chess.Board(), None)
    # The illegal fourth move cuts the variation.
    assert output.lines == (
        f"{START} acn 12345; acs 2; ce 35; fmvn 1; hmvc 0; pv e4 e5 Nf3; refreq reply; sm e4;",
    )


def test_values_the_spec_cannot_carry_are_dropped(caplog: pytest.LogCaptureFixture) -> None:
    analysis = Analysis(centipawns=40000, nodes=-1)
    player = ScriptedPlayer(Decision(chess.Move.from_uci("e2e4"), analysis=analysis))
    session = started(player)
    record = only_record(respond(session, chess.Board(), None))
    assert "ce" not in record
    assert "acn" not in record
    assert "spec 6.7" in caplog.text


def test_an_illegal_decision_becomes_a_player_fault() -> None:
    player = ScriptedPlayer(Decision(chess.Move.from_uci("e2e5")))
    session = started(player)
    record = only_record(respond(session, chess.Board(), None))
    assert records.player_request(record) is records.Refreq.FAULT
    assert "illegal move e2e5" in record.operand_texts("c0")[0]


def test_no_move_without_a_reason_becomes_a_player_fault() -> None:
    session = started(ScriptedPlayer(Decision(None)))
    record = only_record(respond(session, chess.Board(), None))
    assert record.operand_texts("refreq") == ("fault",)


def test_a_player_that_is_gone_is_reported_as_a_fault(caplog: pytest.LogCaptureFixture) -> None:
    session = started(ScriptedPlayer())
    pending = session.session.line_received(respond_line(chess.Board(), None))
    assert pending.think is not None
    output = session.player_lost("engine process died; restart failed: not found")
    assert output.stop
    record = only_record(output)
    assert record.operand_texts("refreq") == ("fault",)
    assert "engine process died" in record.operand_texts("c0")[0]
    assert "engine process died" in caplog.text
    assert session.decision_made(pending.think, Decision(chess.Move.from_uci("e2e4"))) == (
        SessionOutput()
    )


def test_a_restarted_player_signs_on_again_and_plays_the_restored_game() -> None:
    player = ScriptedPlayer("e7e5")
    session = started(player)
    failed = session.session.line_received(respond_line(chess.Board(), "e2e4"))
    assert failed.think is not None
    sign_on = only_record(session.player_restarted(failed.think))
    assert sign_on.operand_texts("refreq") == ("sign_on",)
    # The referee's restore (PROTOCOL.md 6): reset, inform, execute, respond without sm.
    session.line_received(line(records.reset(chess.Board())))
    session.line_received(line(records.inform(chess.Board(), [("Round", "1")])))
    session.line_received(line(records.execute(chess.Board(), chess.Move.from_uci("e2e4"))))
    after_e4 = board_after("e2e4")
    reply = only_record(session.line_received(line(records.respond(after_e4, (1, 1), None))))
    assert reply.operand_texts("sm") == ("e5",)
    assert player.requests[-1].board.move_stack == after_e4.move_stack


def test_a_player_restarted_for_a_stale_request_does_not_sign_on() -> None:
    session = started(ScriptedPlayer())
    failed = session.session.line_received(respond_line(chess.Board(), None))
    assert failed.think is not None
    session.line_received(line(records.conclude(chess.Board(), (0, 0))))
    assert session.player_restarted(failed.think) == SessionOutput()


def test_mated_player_replies_without_a_move() -> None:
    player = ScriptedPlayer()
    session = started(player)
    before = board_after("f2f3", "e7e5", "g2g4")
    record = only_record(respond(session, before, "d8h4"))
    assert "sm" not in record
    assert record.operand_texts("refreq") == ("reply",)
    assert player.requests == []


@pytest.mark.parametrize(
    "text",
    [
        "hello referee",
        f"{START} refreq reply; sm e4;",
        f"{START} refcom dance;",
        f"{START} refcom respond; sm e5;",
        f"{START} refcom respond; refcom reset;",
        "8/8/8/8/8/8/8/8 w - - refcom respond;",
    ],
)
def test_wrong_records_are_logged_and_ignored(text: str, caplog: pytest.LogCaptureFixture) -> None:
    player = ScriptedPlayer("e2e4")
    session = started(player)
    with caplog.at_level(logging.WARNING):
        assert session.line_received(text) == SessionOutput()
    assert "ignored" in caplog.text
    assert player.requests == []
    # The session still works afterwards.
    assert only_record(respond(session, chess.Board(), None)).operand_texts("sm") == ("e4",)


def test_referee_fault_is_shown_loudly_and_the_player_signs_on_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session = started(ScriptedPlayer())
    output = session.line_received(line(records.fault(chess.Board(), "journal disk full")))
    assert only_record(output).operand_texts("refreq") == ("sign_on",)
    errors = [entry for entry in caplog.records if entry.levelno >= logging.ERROR]
    assert any("journal disk full" in entry.getMessage() for entry in errors)


def test_conclude_then_disconnect_finishes_a_session_that_plays_once() -> None:
    session = PlayerSession("Scripted", clock=SteppedClock(), once=True)
    session.sign_on()
    session.line_received(line(records.reset(chess.Board())))
    assert session.line_received(line(records.conclude(chess.Board(), (1, 2)))) == SessionOutput()
    assert not session.finished
    output = session.line_received(line(records.disconnect(chess.Board())))
    assert output == SessionOutput(finished=True)
    assert session.finished
    assert session.next_deadline() is None


def test_after_disconnect_the_session_stays_and_signs_on_every_5_s(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = SteppedClock()
    session = PlayerSession("Scripted", port="/dev/ttyUSB0", clock=clock)
    session.sign_on()
    with caplog.at_level(logging.INFO, logger="serialref.client.session"):
        session.line_received(line(records.reset(chess.Board())))
        output = session.line_received(line(records.disconnect(chess.Board())))
        assert output == SessionOutput() and not session.finished
        # The referee has closed its end, or is about to: nothing is sent at once.
        assert session.next_deadline() == clock.now + SIGN_ON_RETRY
        signs = []
        for _ in range(3):
            clock.now += SIGN_ON_RETRY
            signs.append(only_record(session.deadline_passed()).operand_texts("refreq"))
        assert signs == [("sign_on",)] * 3
        session.line_received(line(records.reset(chess.Board())))
    assert session.next_deadline() is None
    said = [entry.getMessage() for entry in caplog.records if entry.levelno >= logging.INFO]
    assert said == [
        "the referee answered on /dev/ttyUSB0: signed on as Scripted",
        "the referee disconnected: staying on /dev/ttyUSB0 for its next match, "
        "signing on every 5 s",
        "the referee answered on /dev/ttyUSB0: signed on as Scripted",
    ]


def test_waiting_for_a_referee_is_said_once(caplog: pytest.LogCaptureFixture) -> None:
    clock = SteppedClock()
    session = PlayerSession("Scripted", port="/dev/ttyUSB0", clock=clock)
    with caplog.at_level(logging.INFO, logger="serialref.client.session"):
        session.sign_on()
        for _ in range(4):
            clock.now += SIGN_ON_RETRY
            session.deadline_passed()
        session.line_received(line(records.reset(chess.Board())))
    said = [entry.getMessage() for entry in caplog.records if entry.levelno >= logging.INFO]
    assert said == [
        "no referee on /dev/ttyUSB0 yet: signing on every 5 s",
        "the referee answered on /dev/ttyUSB0: signed on as Scripted",
    ]


def test_sign_on_is_repeated_until_a_reset_arrives() -> None:
    clock = SteppedClock()
    session = PlayerSession("Scripted", clock=clock)
    session.sign_on()
    assert session.next_deadline() == clock.now + SIGN_ON_RETRY
    clock.now += SIGN_ON_RETRY - 0.01
    assert session.deadline_passed() == SessionOutput()
    clock.now += 0.01
    again = session.deadline_passed()
    assert only_record(again).operand_texts("refreq") == ("sign_on",)
    assert session.next_deadline() == clock.now + SIGN_ON_RETRY
    session.line_received(line(records.reset(chess.Board())))
    assert session.next_deadline() is None
    assert session.deadline_passed() == SessionOutput()


def test_sign_off_names_the_current_position() -> None:
    player = ScriptedPlayer("e2e4")
    session = started(player)
    respond(session, chess.Board(), None)
    record = only_record(session.sign_off())
    assert record.operand_texts("refreq") == ("sign_off",)
    assert record.position == board_after("e2e4").epd(en_passant="fen")


def test_unknown_time_control_leaves_the_clock_untimed(caplog: pytest.LogCaptureFixture) -> None:
    player = ScriptedPlayer("e2e4")
    session = started(player, tags=(("TimeControl", "fast please"),))
    respond(session, chess.Board(), None)
    assert not player.requests[0].budget.timed
    assert "TimeControl" in caplog.text


def test_operations_order_is_normalised() -> None:
    player = ScriptedPlayer(Decision(chess.Move.from_uci("e2e4"), draw_offer=True))
    session = started(player)
    text = respond(session, chess.Board(), None).lines[0]
    assert text == format_record(parse_record(text))
    assert parse_record(text).operations[0] == Operation("draw_offer")


def test_tags_and_clocks_count_on_any_record() -> None:
    player = ScriptedPlayer("e2e4")
    session = started(player, tags=(("TimeControl", "300"),))
    respond_line = line(records.respond(chess.Board(), (30_000, 0), None))
    session.line_received(respond_line.replace("refcom", 'ptp Round "7"; refcom'))
    assert session.tags["Round"] == "7"
    assert player.requests[0].budget.remaining == (270.0, 300.0)
    session.line_received(f'{START} ptp Result "0-1"; refcom conclude;')
    assert session.tags == {"TimeControl": "300", "Round": "7", "Result": "0-1"}


# -- a reply belongs to the respond it answers ------------------------------------------


def pending_game() -> tuple[Game, ThinkRequest]:
    """A game whose first respond is being thought about."""
    game = started(ScriptedPlayer())
    output = game.session.line_received(respond_line(chess.Board(), None))
    assert output.think is not None and output.lines == () and not output.stop
    assert game.session.pending is output.think
    return game, output.think


E4 = Decision(chess.Move.from_uci("e2e4"))


@pytest.mark.parametrize(
    "record",
    [
        records.conclude(chess.Board(), (0, 0)),
        records.reset(chess.Board()),
        records.execute(chess.Board(), chess.Move.from_uci("e2e4")),
        records.disconnect(chess.Board()),
    ],
)
def test_an_answer_after_the_referee_moved_on_is_never_sent(record: EpdRecord) -> None:
    game, request = pending_game()
    output = game.session.line_received(line(record))
    assert output.stop
    assert not output.finished
    assert game.session.pending is None
    assert game.session.decision_made(request, E4) == SessionOutput()
    assert game.session.board.move_stack == [chess.Move.from_uci("e2e4")] * (
        record.operand_texts("refcom") == ("execute",)
    )


def test_a_referee_fault_abandons_the_search_and_signs_on() -> None:
    game, request = pending_game()
    output = game.session.line_received(line(records.fault(chess.Board(), "disk full")))
    assert output.stop
    assert only_record(output).operand_texts("refreq") == ("sign_on",)
    assert game.session.decision_made(request, E4) == SessionOutput()


def test_only_the_newest_respond_is_answered() -> None:
    game, first = pending_game()
    # The same respond again (a restore after a lost line, say): a new request.
    output = game.session.line_received(respond_line(chess.Board(), None))
    assert output.stop and output.think is not None
    second = output.think
    assert second is not first
    assert game.session.decision_made(first, E4) == SessionOutput()
    reply = only_record(game.session.decision_made(second, Decision(chess.Move.from_uci("d2d4"))))
    assert reply.operand_texts("sm") == ("d4",)
    assert game.session.decision_made(second, E4) == SessionOutput()  # answered once


def test_no_stop_is_asked_when_nothing_is_pending() -> None:
    game = started(ScriptedPlayer("e2e4"))
    respond(game, chess.Board(), None)
    assert not game.session.line_received(line(records.conclude(chess.Board(), (0, 0)))).stop


def test_sign_off_abandons_the_search() -> None:
    game, request = pending_game()
    output = game.session.sign_off()
    assert output.stop
    assert game.session.decision_made(request, E4) == SessionOutput()


# -- clocks and the deadline --------------------------------------------------------------


def test_the_deadline_is_the_flag_less_the_safety_margin() -> None:
    clock = SteppedClock()
    game = started(ScriptedPlayer(), clock=clock, safety_margin=SAFETY_MARGIN)
    arrived = clock.now - 0.25  # the line arrived a little before the session saw it
    output = game.session.line_received(respond_line(chess.Board(), None, (0, 0)), arrived)
    request = output.think
    assert request is not None
    assert request.budget.remaining == (300 - SAFETY_MARGIN, 300)
    assert request.deadline == pytest.approx(arrived + 300 - SAFETY_MARGIN)


def test_an_untimed_game_has_no_deadline() -> None:
    game = started(ScriptedPlayer(), tags=(("TimeControl", "-"),))
    output = game.session.line_received(respond_line(chess.Board(), None))
    assert output.think is not None and output.think.deadline is None


def test_the_clocks_are_the_referees_ccms_and_nothing_the_session_measured() -> None:
    clock = SteppedClock()
    game = started(ScriptedPlayer(), clock=clock, tags=(("TimeControl", "10+0.1"),))

    def our_move(before: chess.Board, theirs: str | None, ccms: int, ours: str) -> ThinkRequest:
        output = game.session.line_received(respond_line(before, theirs, (ccms, 0)))
        assert output.think is not None
        clock.now += 0.7  # each of our moves takes 0.7 s by the session's clock
        assert game.session.decision_made(output.think, Decision(chess.Move.from_uci(ours))).lines
        return output.think

    our_move(chess.Board(), None, 0, "e2e4")
    second = our_move(board_after("e2e4"), "e7e5", 702, "g1f3")
    # The referee charged 0.702 s for the 0.7 s the session saw: the referee's counts.
    assert second.budget.remaining[0] == pytest.approx(10 - 0.702 + 0.1)
    third = our_move(board_after("e2e4", "e7e5", "g1f3"), "b8c6", 1_399, "f1c4")
    assert third.budget.remaining[0] == pytest.approx(10 - 1.399 + 0.2)


def cc_alone(text: str) -> str:
    """A respond as a referee without ``ccms`` writes it."""
    return format_record(parse_record(text).without("ccms"))


def test_a_referee_without_ccms_is_taken_at_the_worst_its_cc_allows() -> None:
    clock = SteppedClock()
    game = started(ScriptedPlayer(), clock=clock, tags=(("TimeControl", "10+0.1"),))
    text = cc_alone(respond_line(board_after("e2e4"), "e7e5", (3_000, 5_000)))
    assert " ccms " not in text
    output = game.session.line_received(text, clock.now)
    assert output.think is not None
    # Up to a second more than cc says for the side to move; the opponent's as said.
    assert output.think.budget.remaining == pytest.approx((10 - 4 + 0.1, 10 - 5 + 0.1))
    assert output.think.deadline == pytest.approx(clock.now + 10 - 4 + 0.1)


@pytest.mark.parametrize("ccms", ["ccms 12 x;", "ccms 12;", "ccms 12 99999999999999;"])
def test_a_ccms_that_cannot_be_read_leaves_the_cc(
    ccms: str, caplog: pytest.LogCaptureFixture
) -> None:
    game = started(ScriptedPlayer(), tags=(("TimeControl", "300"),))
    text = respond_line(chess.Board(), None, (30_500, 0)).replace("ccms 30500 0;", ccms)
    output = game.session.line_received(text)
    assert output.think is not None
    assert output.think.budget.remaining == (300 - 31, 300)
    assert "ignored the referee's ccms" in caplog.text


def test_a_fractional_time_control_reaches_the_player() -> None:
    game = started(ScriptedPlayer(), tags=(("TimeControl", "40/120.5:60+0.25"),))
    output = game.session.line_received(respond_line(chess.Board(), None))
    assert output.think is not None
    budget = output.think.budget
    assert budget.remaining == (120.5, 120.5)
    assert budget.moves_to_go == 40


# -- where the player stands --------------------------------------------------------------


def test_every_trigger_has_a_row_in_every_state_but_the_last() -> None:
    """Whatever arrives, in whatever order, the table answers it: the client never stops
    on a transition it lacks. A finished session ignores everything."""
    machine = Machine(
        model=None,
        states=STATES,
        transitions=TRANSITIONS,
        initial=PlayerState.OFFLINE,
        auto_transitions=False,
    )
    for state in PlayerState:
        if state is PlayerState.FINISHED:
            assert machine.get_state(state).ignore_invalid_triggers
        else:
            assert set(machine.get_triggers(state)) == set(machine.events), state


def test_the_player_stands_where_the_referee_left_it() -> None:
    clock = SteppedClock()
    session = PlayerSession("Scripted", clock=clock)
    assert session.state is PlayerState.OFFLINE
    session.sign_on()
    assert session.state is PlayerState.SIGNING_ON
    clock.now += SIGN_ON_RETRY
    session.deadline_passed()
    assert session.state is PlayerState.WAITING
    session.line_received(line(records.reset(chess.Board())))
    assert session.state is PlayerState.RESETTING
    session.line_received(line(records.inform(chess.Board(), [("Round", "1")])))
    assert session.state is PlayerState.SIGNED_ON
    session.sign_on()  # the line came back in a game: the referee restores it
    assert session.state is PlayerState.REJOINING
    session.line_received(line(records.fault(chess.Board(), "disk full")))
    assert session.state is PlayerState.SIGNING_ON
    session.line_received(line(records.disconnect(chess.Board())))
    assert session.state is PlayerState.WAITING
    session.sign_off()
    assert session.state is PlayerState.FINISHED
    assert session.finished


def test_a_finished_session_asks_nothing_of_its_player() -> None:
    session = PlayerSession("Scripted", clock=SteppedClock(), once=True)
    session.sign_on()
    session.line_received(line(records.reset(chess.Board())))
    assert session.line_received(line(records.disconnect(chess.Board()))).finished
    assert session.line_received(respond_line(chess.Board(), None)) == SessionOutput()
    assert session.line_received(line(records.reset(chess.Board()))) == SessionOutput()
    assert session.player_lost("gone") == SessionOutput()
    assert session.sign_on() == SessionOutput()
    assert session.next_deadline() is None


def test_a_respond_that_asks_no_move_still_stops_the_search_in_hand() -> None:
    game, request = pending_game()
    mated = board_after("f2f3", "e7e5", "g2g4")
    output = game.session.line_received(respond_line(mated, "d8h4"))
    assert output.stop and output.think is None
    assert only_record(output).operand_texts("refreq") == ("reply",)
    assert game.session.decision_made(request, E4) == SessionOutput()
