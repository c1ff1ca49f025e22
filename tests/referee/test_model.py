"""The referee against players that behave like real ones, and the faults real lines have.

A hypothesis state machine drives a :class:`MatchReferee` on a fake wire and a fake
clock. Its two players keep what the referee told them (reset, inform, execute,
respond) and mostly answer the latest respond with a legal move, sometimes with a
draw offer, a claim that holds, a resignation or an acceptance; in between they
sign on again, lose their line, stop reading, answer an earlier respond (a reply
that crossed the wire) or repeat their last reply, and the referee stalls and time
passes. After every step the invariants of PROTOCOL.md 7 must hold:

- no ``respond`` goes to a side that is not to move;
- no move is played that its player did not send;
- a legal player never loses by a rules infraction;
- consumed time never goes back within a game;
- every game number is played exactly once, in order;
- the journal read back gives the live state (games done, the game in progress and
  its position), and a referee resumed from it asks for the same position.

``pytest tests/referee/test_model.py --hypothesis-show-statistics`` shows how many
moves, restores and endings the runs reached.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import chess
from doubles import SteppedClock
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from serialref import records
from serialref.epd.operations import Operation
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import LineLostError
from serialref.happenings import GameEnded, GameStarted, MatchEvent, MovePlayed
from serialref.recorders.journal import decode_entry, encode_entry
from serialref.referee.game.states import GameState
from serialref.referee.match import MatchReferee, MatchState
from serialref.referee.resume import unfinished_match
from serialref.referee.settings import PORTS, MatchSettings
from serialref.timecontrol import TimeControl

SETTINGS = MatchSettings(
    games=3,
    time_control=TimeControl.parse("40+2"),
    reset_delay=1.0,
    conclude_delay=1.0,
)


@dataclass
class Player:
    """What a player on one port knows: the game as told, and the responds it got."""

    port: str
    board: chess.Board = field(default_factory=chess.Board)
    responds: list[tuple[chess.Board, bool]] = field(default_factory=list)  # (position, offer)
    last_reply: str | None = None
    pending: bool = False  # the latest respond is not answered yet
    online: bool = False  # signed on, line up
    gone: bool = False  # told disconnect

    def told(self, text: str) -> None:
        record = parse_record(text)
        command = records.referee_command(record)
        if command is not records.Refcom.RESPOND:
            self.pending = False
        if command is records.Refcom.RESET:
            self.board = record.board()
            self.responds.clear()
        elif command is records.Refcom.EXECUTE:
            self.board.push(record.move("sm", self.board))
        elif command is records.Refcom.RESPOND:
            position = record.board()
            if "sm" in record:
                position.push(record.move("sm", position))
            if position.board_fen() != self.board.board_fen() or position.turn != self.board.turn:
                self.board = position  # a new position: no history (spec 8.1)
            self.responds.append((self.board.copy(stack=False), "draw_offer" in record))
            self.pending = True
        elif command in (records.Refcom.CONCLUDE, records.Refcom.FAULT):
            self.responds.clear()
            if command is records.Refcom.FAULT:
                self.online = False
        elif command is records.Refcom.DISCONNECT:
            self.gone = True
            self.online = False


class Wire:
    """The fake wire: checks every record as it goes out; a port may stop taking records."""

    def __init__(self, clock: SteppedClock, players: dict[str, Player]) -> None:
        self.clock = clock
        self.players = players
        self.referee: MatchReferee | None = None
        self.blocked: set[str] = set()
        self.down: set[str] = set()
        self.queued: dict[str, list[tuple[str, bool]]] = {port: [] for port in PORTS}

    def send(self, port: str, text: str, *, notify: bool = False) -> float | None:
        if port in self.down:
            raise LineLostError(f"port {port}: the line is down")
        self._check(port, text)
        if port in self.blocked or self.queued[port]:
            self.queued[port].append((text, notify))
            return None
        self.players[port].told(text)
        return self.clock.now

    def waiting(self, port: str) -> bool:
        return bool(self.queued[port])

    def release(self, port: str) -> None:
        self.blocked.discard(port)
        waiting, self.queued[port] = self.queued[port], []
        for text, notify in waiting:
            self.players[port].told(text)
            if notify and self.referee is not None:
                self.referee.lines.on_record_left(port, self.clock.now)

    def lose(self, port: str) -> None:
        self.down.add(port)
        self.blocked.discard(port)
        self.queued[port] = []

    def _check(self, port: str, text: str) -> None:
        record = parse_record(text)
        if records.referee_command(record) is not records.Refcom.RESPOND:
            return
        referee = self.referee
        assert referee is not None and referee.game is not None
        position = record.board()
        if "sm" in record:
            position.push(record.move("sm", position))
        game = referee.game.sheet
        to_move = game.white_port if position.turn == chess.WHITE else _other(game.white_port)
        assert port == to_move, f"respond to {port}, not to move in {position.fen()}"
        assert position.board_fen() == game.board.board.board_fen()


def _other(port: str) -> str:
    return "b" if port == "a" else "a"


class Journal:
    """An in-memory journal (the real encoding) and the checks the events must pass."""

    def __init__(self, players_sent: set[tuple[str, str, str]]) -> None:
        self.events: list[MatchEvent] = []  # as the journal file reads back
        self.sent = players_sent
        self.referee: MatchReferee | None = None
        self.started: list[int] = []
        self.ended: list[int] = []
        self.endings: Counter[str] = Counter()
        self.moves = 0
        self._last_consumed: tuple[float, float] = (0.0, 0.0)

    def handle(self, event: MatchEvent) -> None:
        self.events.append(decode_entry(encode_entry(event).encode("ascii")))
        if isinstance(event, GameStarted):
            self.started.append(event.game)
            self._last_consumed = (0.0, 0.0)
        elif isinstance(event, GameEnded):
            self.ended.append(event.game)
            self.endings[event.termination] += 1
            assert event.termination != "rules infraction", event.reason
        elif isinstance(event, MovePlayed):
            self.moves += 1
            referee = self.referee
            assert referee is not None and referee.game is not None
            game = referee.game.sheet
            before = game.board.board.copy(stack=1)
            move = before.pop()
            mover = game.white_port if before.turn == chess.WHITE else _other(game.white_port)
            assert (mover, before.epd(), move.uci()) in self.sent, f"{mover} never sent {move}"
            assert all(
                now >= then - 1e-9
                for now, then in zip(event.consumed, self._last_consumed, strict=True)
            ), (event.consumed, self._last_consumed)
            self._last_consumed = event.consumed

    def sync(self) -> None:
        pass

    def close(self) -> None:
        pass


class RefereeModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.clock = SteppedClock()
        self.players = {port: Player(port) for port in PORTS}
        self.sent: set[tuple[str, str, str]] = set()
        self.wire = Wire(self.clock, self.players)
        self.journal = Journal(self.sent)
        self.referee = MatchReferee(
            SETTINGS, self.wire, [self.journal], clock=self.clock, wall_clock=lambda: 1.8e9
        )
        self.wire.referee = self.journal.referee = self.referee
        self.referee.start()
        self.restores = 0
        self.steps = 0

    # --- what players do -----------------------------------------------------------

    def _say(self, port: str, record: EpdRecord) -> None:
        self.referee.lines.on_line(port, format_record(record), self.clock.now)

    @rule(port=st.sampled_from(PORTS))
    def sign_on(self, port: str) -> None:
        player = self.players[port]
        if player.gone or self.referee.done:
            return
        self.wire.down.discard(port)
        if player.online and self.referee.game is not None:
            self.restores += 1
        player.online = True
        self._say(port, records.sign_on(chess.Board(), port.upper()))

    @rule(
        port=st.sampled_from(PORTS),
        choice=st.integers(0, 10_000),
        flag=st.sampled_from(["", "", "", "", "draw_offer", "resign", "draw_claim", "accept"]),
    )
    def answer(self, port: str, choice: int, flag: str) -> None:
        """Answer the latest respond: a legal move, now and then with a flag."""
        player = self.players[port]
        if not (player.online and player.responds):
            return
        _, offered = player.responds[-1]
        player.pending = False
        self._reply(port, player.board, choice, flag, offered)  # with its history, for claims

    @rule(port=st.sampled_from(PORTS), choice=st.integers(0, 10_000), which=st.integers(0, 50))
    def answer_an_earlier_respond(self, port: str, choice: int, which: int) -> None:
        """A reply that crossed a later record on the wire."""
        player = self.players[port]
        if not (player.online and len(player.responds) > 1):
            return
        board, _ = player.responds[which % (len(player.responds) - 1)]
        self._reply(port, board, choice, "", False)

    @rule(port=st.sampled_from(PORTS))
    def repeat_the_last_reply(self, port: str) -> None:
        player = self.players[port]
        if player.online and player.last_reply is not None:
            self.referee.lines.on_line(port, player.last_reply, self.clock.now)

    def _reply(self, port: str, board: chess.Board, choice: int, flag: str, offered: bool) -> None:
        moves = list(board.legal_moves)
        if not moves:
            return
        move = moves[choice % len(moves)]
        extra: list[Operation] = []
        if flag == "resign":
            reply = records.reply(board, None, Operation("resign"))
        elif flag == "accept" and offered:
            reply = records.reply(board, None, Operation("draw_accept"))
        else:
            if flag == "draw_offer":
                extra.append(Operation("draw_offer"))
            elif flag == "draw_claim" and _claim_holds(board, move):
                extra.append(Operation("draw_claim"))
            reply = records.reply(board, move, *extra)
            self.sent.add((port, board.epd(), move.uci()))
        text = format_record(reply)
        self.players[port].last_reply = text
        self.referee.lines.on_line(port, text, self.clock.now)

    @rule(port=st.sampled_from(PORTS), noise=st.sampled_from(["xyz", "refreq", "8/8 w - -"]))
    def line_noise(self, port: str, noise: str) -> None:
        self.referee.lines.on_line(port, noise, self.clock.now)

    @rule(port=st.sampled_from(PORTS), chance=st.integers(0, 4))
    def sign_off(self, port: str, chance: int) -> None:
        player = self.players[port]
        if player.online and chance == 0:  # rarely: it ends the game
            player.online = False
            self._say(port, records.sign_off(chess.Board()))

    # --- what lines and machines do ------------------------------------------------

    @rule(port=st.sampled_from(PORTS))
    def lose_the_line(self, port: str) -> None:
        self.wire.lose(port)
        self.players[port].online = False
        self.referee.lines.on_line_lost(port, "unplugged")

    @rule(port=st.sampled_from(PORTS))
    def stop_reading(self, port: str) -> None:
        self.wire.blocked.add(port)

    @rule(port=st.sampled_from(PORTS))
    def read_again(self, port: str) -> None:
        self.wire.release(port)

    @rule(seconds=st.floats(0.0, 12.0))
    def time_passes(self, seconds: float) -> None:
        self.clock.now += seconds
        self.referee.on_timer()

    @rule(seconds=st.floats(0.6, 12.0))
    def the_referee_stalls(self, seconds: float) -> None:
        began = self.clock.now
        self.clock.now += seconds
        self.referee.on_stall(began, self.clock.now)
        self.referee.on_timer()

    @rule(plies=st.integers(1, 16), seed=st.integers(0, 10_000), think=st.floats(0.0, 1.0))
    def a_stretch_of_play(self, plies: int, seed: int, think: float) -> None:
        """As often drawn as the faults together, so that games get deep."""
        self.both_players_play_on(plies, seed, think)

    @rule(plies=st.integers(1, 16), seed=st.integers(0, 10_000), think=st.floats(0.0, 1.0))
    def both_players_play_on(self, plies: int, seed: int, think: float) -> None:
        """Let the game move: lines up, players back, then ``plies`` answers in a row."""
        for port in PORTS:
            self.wire.release(port)
            if not self.players[port].online and not self.players[port].gone:
                self.sign_on(port)
        self.clock.now += SETTINGS.reset_delay
        self.referee.on_timer()
        for ply in range(plies):
            movers = [port for port in PORTS if self.players[port].pending]
            if not movers or self.referee.done:
                return
            self.clock.now += think
            self.answer(movers[0], seed + ply, "" if (seed + ply) % 23 else "draw_offer")

    # --- invariants ----------------------------------------------------------------

    @invariant()
    def games_are_played_once_and_in_order(self) -> None:
        started, ended = self.journal.started, self.journal.ended
        assert started == list(range(1, len(started) + 1))
        assert ended == list(range(1, len(ended) + 1))
        assert self.referee.games_done == len(ended)

    @invariant()
    def the_journal_gives_the_live_state(self) -> None:
        """Read back every few steps (it costs the whole journal each time) and at the end."""
        self.steps += 1
        if self.steps % 4 == 0:
            self._check_journal()

    def _check_journal(self) -> None:
        referee = self.referee
        found = unfinished_match(self.journal.events, SETTINGS, Path("journal.jsonl"))
        if referee.done:
            assert found is None or found.point.games_done == referee.games_done
            return
        assert found is not None
        point = found.point
        assert point.games_done == referee.games_done
        game = referee.game
        if game is None or game.state is GameState.RESETTING:
            assert point.game is None
            return
        assert point.game is not None and point.game.game == game.number
        assert len(point.moves) == len(game.sheet.board.board.move_stack)
        if point.moves:
            assert point.moves[-1].fen == game.sheet.board.fen
        self._resumed_asks_for_the_same_position(point)

    def _resumed_asks_for_the_same_position(self, point: object) -> None:
        from serialref.referee.resume import ResumePoint

        assert isinstance(point, ResumePoint)
        players = {port: Player(port) for port in PORTS}
        wire = Wire(SteppedClock(), players)
        resumed = MatchReferee(SETTINGS, wire, clock=wire.clock, wall_clock=lambda: 1.8e9)
        wire.referee = resumed
        resumed.start(point)
        assert resumed.state is MatchState.IN_GAME
        assert resumed.game is not None and self.referee.game is not None
        assert resumed.game.sheet.board.fen == self.referee.game.sheet.board.fen

    def teardown(self) -> None:
        self._check_journal()
        event(f"moves: {min(self.journal.moves // 10 * 10, 100)}+")
        event(f"restores: {min(self.restores, 5)}+")
        event(f"games ended: {len(self.journal.ended)}")
        for termination in self.journal.endings:
            event(f"ending: {termination}")


def _claim_holds(board: chess.Board, move: chess.Move) -> bool:
    if board.can_claim_draw():
        return True
    board.push(move)
    try:
        return board.can_claim_draw()
    finally:
        board.pop()


RefereeModel.TestCase.settings = settings(
    max_examples=80,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_the_referee_keeps_every_rule_under_faults = RefereeModel.TestCase
