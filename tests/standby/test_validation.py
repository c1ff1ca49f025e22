"""Tests for serialref.standby.validation: what may reach the mirror, entry by entry."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import chess
import pytest
from standby_peers import played

from serialref.errors import ProtocolError
from serialref.happenings import (
    EVENT_TYPES,
    GameEnded,
    GameStarted,
    LineReceived,
    MatchEnded,
    MatchEvent,
    MatchStarted,
    MovePlayed,
    PlayerSignedOn,
)
from serialref.recorders.journal import encode_entry
from serialref.standby.validation import JournalValidator

START = MatchStarted(games=2, time_control="60+1", ports=("a", "b"))
RESUMED = dataclasses.replace(START, resumed=True)


def game_started(
    game: int = 1, fen: str = chess.STARTING_FEN, opening: Sequence[str] = ()
) -> GameStarted:
    return GameStarted(game=game, white_port="a", black_port="b", fen=fen,
                       tags={"White": "A", "Black": "B"}, opening_moves=tuple(opening))  # fmt: skip


def ended(result: str, game: int = 1) -> GameEnded:
    return GameEnded(game=game, result=result, termination="normal", reason="test",
                     fen=chess.STARTING_FEN, consumed=(1.0, 1.0))  # fmt: skip


def line(event: MatchEvent) -> bytes:
    return encode_entry(event).encode("ascii")


def feed(validator: JournalValidator, events: Sequence[MatchEvent]) -> None:
    for event in events:
        assert validator.check(line(event)) == event


def refused(validator: JournalValidator, raw: bytes | MatchEvent, problem: str) -> None:
    with pytest.raises(ProtocolError, match=problem):
        validator.check(raw if isinstance(raw, bytes) else line(raw))


FOOLS_MATE = ["f3", "e5", "g4", "Qh4#"]


def test_a_whole_match_passes() -> None:
    validator = JournalValidator()
    feed(validator, [START, PlayerSignedOn("a", "A"), game_started(), *played(FOOLS_MATE),
                     ended("0-1"), game_started(2), *played(["e4", "e5"], game=2),
                     ended("1/2-1/2", 2), MatchEnded(complete=True, score=(0.5, 1.5))])  # fmt: skip


def test_en_passant_promotion_and_castling_pass() -> None:
    sans = ["e4", "d5", "e5", "f5", "exf6", "g6", "fxe7", "Bg7", "exd8=Q+", "Kxd8",
            "Nf3", "Nc6", "Bc4", "Bg4", "O-O"]  # fmt: skip
    validator = JournalValidator()
    feed(validator, [START, game_started(), *played(sans)])


def test_a_long_random_game_passes() -> None:
    rng = random.Random(7)
    board = chess.Board()
    sans = []
    while not board.is_game_over() and len(sans) < 400:
        move = rng.choice(list(board.legal_moves))
        sans.append(board.san(move))
        board.push(move)
    outcome = board.outcome()
    validator = JournalValidator()
    feed(validator, [START, game_started(), *played(sans)])
    feed(validator, [ended(outcome.result() if outcome else "*")])


# ------------------------------------------------------------------ what an entry is


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"not json", "not a journal entry"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"wall": 1.5}', "unknown event None"),
        (b'{"event": "Bogus"}', "unknown event 'Bogus'"),
        (b'{"event": "MatchEnded", "complete": true, "score": [1, 0], "extra": 1}',
         "unknown fields"),
        (b'{"event": "MatchEnded", "complete": true}', "missing 1 required"),
        (b'{"event": "MatchEnded", "complete": true, "score": [1, 0], "reason": "\xc3\xa9"}',
         "not a journal entry"),
        (b"[" * 100_000, "not a journal entry"),
    ],
)  # fmt: skip
def test_what_the_journal_cannot_read_is_refused(raw: bytes, problem: str) -> None:
    refused(JournalValidator(), raw, problem)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("ply", "1"), ("ply", True), ("ply", 1.0), ("elapsed", "0.5"), ("elapsed", None),
        ("remaining", [59.0]), ("remaining", [59.0, 59.0, 1.0]), ("remaining", "59"),
        ("moves_made", [1.5, 0]), ("draw_offer", "yes"), ("draw_offer", 0),
        ("analysis", {"ce": 12}), ("analysis", ["ce"]), ("san", ["e4"]),
    ],
)  # fmt: skip
def test_a_field_of_the_wrong_type_is_refused(field: str, value: object) -> None:
    validator = JournalValidator()
    feed(validator, [START, game_started()])
    entry = json.loads(line(played(["e4"])[0]))
    entry[field] = value
    refused(validator, json.dumps(entry).encode(), f"MovePlayed refused: {field} = ")
    feed(validator, played(["e4"]))  # the refused entry left no trace


def test_numbers_json_spells_as_integers_pass_as_floats_and_infinity_passes() -> None:
    validator = JournalValidator()
    feed(validator, [START])
    validator.check(b'{"event": "MatchEnded", "wall": 1, "complete": false, "score": [1, 0]}')
    validator.check(
        b'{"event": "LineReceived", "wall": 1, "port": "a", "text": "x", "at": Infinity}'
    )


@dataclass(frozen=True, slots=True)
class ClockAdjusted:
    """An event that does not exist (yet): the checks must follow its annotations."""

    port: str
    seconds: float
    note: str | None = None
    steps: tuple[int, ...] = ()
    how: Literal["add", "set"] = "add"
    marks: list[tuple[str, float]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class MovePlayedWithThinkTime(MovePlayed):
    think_time: float = 0.0


def test_events_and_fields_added_later_are_checked_by_their_annotations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(EVENT_TYPES, "ClockAdjusted", ClockAdjusted)  # type: ignore[arg-type]
    monkeypatch.setitem(EVENT_TYPES, "MovePlayed", MovePlayedWithThinkTime)
    validator = JournalValidator()
    feed(validator, [START, game_started()])
    validator.check(b'{"event": "ClockAdjusted", "port": "a", "seconds": 5, "steps": [1, 2]}')
    validator.check(b'{"event": "ClockAdjusted", "port": "a", "seconds": 5, "note": "arbiter"}')
    refused(validator, b'{"event": "ClockAdjusted", "port": "a", "seconds": "5"}', "seconds = ")
    refused(validator, b'{"event": "ClockAdjusted", "port": "a", "seconds": 5, "note": 1}', "note")
    refused(validator, b'{"event": "ClockAdjusted", "port": 1, "seconds": 5}', "port = 1")
    refused(validator, b'{"event": "ClockAdjusted", "port": "a", "seconds": 1, "steps": ["x"]}',
            "steps")  # fmt: skip
    validator.check(b'{"event": "ClockAdjusted", "port": "a", "seconds": 1, "how": "set", '
                    b'"marks": [["x", 1], ["y", 2.5]]}')  # fmt: skip
    refused(validator, b'{"event": "ClockAdjusted", "port": "a", "seconds": 1, "how": "sub"}',
            "how = ")  # fmt: skip
    refused(validator, b'{"event": "ClockAdjusted", "port": "a", "seconds": 1, '
                       b'"marks": [["x", 1, 2]]}', "marks = ")  # fmt: skip
    entry = json.loads(line(played(["e4"])[0]))
    refused(validator, json.dumps({**entry, "think_time": "long"}).encode(), "think_time = ")
    assert isinstance(validator.check(json.dumps({**entry, "think_time": 2.5}).encode()),
                      MovePlayedWithThinkTime)  # fmt: skip
    refused(validator, json.dumps({**entry, "ply": 2}).encode(), "illegal move")  # still checked


# ------------------------------------------------------------------ what the entries mean


def test_plies_must_be_consecutive() -> None:
    e4, e5, nf3 = played(["e4", "e5", "Nf3"])
    validator = JournalValidator()
    feed(validator, [START, game_started(), e4])
    refused(validator, nf3, "ply 3 of game 1 after ply 1")
    refused(validator, e4, "ply 1 of game 1 after ply 1")  # a duplicate
    feed(validator, [e5, nf3])


def test_a_move_or_an_end_needs_a_game_in_progress() -> None:
    validator = JournalValidator()
    feed(validator, [START])
    refused(validator, played(["e4"])[0], "game 1 is not in progress")
    refused(validator, ended("1-0"), "game 1 is not in progress")
    feed(validator, [game_started(), ended("1-0")])
    refused(validator, ended("1-0"), "game 1 is not in progress")  # ended twice


def test_a_game_needs_a_match() -> None:
    refused(JournalValidator(), game_started(), "before any MatchStarted")


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("uci", "e2e5", "illegal move 'e2e5'"),
        ("uci", "e7e5", "illegal move 'e7e5'"),
        ("uci", "zz", "unreadable move 'zz'"),
        ("san", "d4", "the move 'e2e4' is 'e4', not 'd4'"),
        ("fen", chess.STARTING_FEN, "the position after e4 is"),
        ("fen", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", "the position after"),
    ],
)
def test_a_move_must_be_legal_and_named_as_python_chess_names_it(
    field: str, value: str, problem: str
) -> None:
    validator = JournalValidator()
    feed(validator, [START, game_started()])
    refused(validator, dataclasses.replace(played(["e4"])[0], **{field: value}), problem)
    feed(validator, played(["e4"]))  # and the board was left as it was


@pytest.mark.parametrize("result", ["2-0", "1-0 ", "", "0.5-0.5"])
def test_a_result_must_be_a_pgn_result(result: str) -> None:
    validator = JournalValidator()
    feed(validator, [START, game_started()])
    refused(validator, ended(result), "is not a PGN result")


def test_a_mate_must_be_scored_as_that_mate() -> None:
    validator = JournalValidator()
    feed(validator, [START, game_started(), *played(FOOLS_MATE)])
    for wrong in ("1-0", "1/2-1/2", "*"):
        refused(validator, ended(wrong),
                f"result '{re.escape(wrong)}', but the board says 0-1 \\(Black mates")
    refused(validator, dataclasses.replace(played(["a3"])[0], ply=5), "a move in a finished game")
    feed(validator, [ended("0-1")])


def test_a_stalemate_is_a_draw_and_a_game_cannot_start_in_one() -> None:
    stalemate = "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"
    before = "7k/8/6K1/8/8/8/5Q2/8 w - - 0 1"
    validator = JournalValidator()
    feed(validator, [START, game_started(fen=before), *played(["Qf7"], board=chess.Board(before))])
    refused(validator, ended("1-0"), "the board says 1/2-1/2 \\(stalemate\\)")
    feed(validator, [ended("1/2-1/2")])
    refused(
        validator, game_started(2, fen=stalemate), "the game is already over there \\(stalemate\\)"
    )


def test_a_game_starts_from_a_legal_position_and_legal_opening_played() -> None:
    validator = JournalValidator()
    feed(validator, [START])
    refused(validator, game_started(fen="not a fen"), "cannot set up")
    refused(validator, game_started(fen="8/8/8/8/8/8/8/8 w - - 0 1"), "not a legal position")
    refused(validator, game_started(opening=["e4", "e4"]), "cannot set up")
    feed(validator, [game_started(opening=["e4", "e5"])])
    board = chess.Board()
    board.push_san("e4")
    board.push_san("e5")
    feed(validator, played(["Nf3"], board=board))  # ply 1 is the first move after the opening


def test_a_fresh_match_forgets_the_games_a_resumed_one_continues() -> None:
    e4, e5 = played(["e4", "e5"])
    validator = JournalValidator()
    feed(validator, [START, game_started(), e4, RESUMED, e5])
    feed(validator, [game_started(), played(["e4", "e5", "Nf3"])[2]])
    feed(validator, [START])
    refused(validator, played(["e4", "e5", "Nf3", "Nc6"])[3], "game 1 is not in progress")
    feed(validator, [game_started(), e4])


def test_a_game_started_again_before_its_first_move_keeps_its_first_start() -> None:
    validator = JournalValidator()
    feed(validator, [START, game_started(), game_started(fen="4k3/8/8/8/8/8/8/R3K3 w Q - 0 1")])
    feed(validator, played(["e4"]))


def test_other_events_are_only_type_checked() -> None:
    validator = JournalValidator()
    feed(validator, [LineReceived(port="a", text="refreq sign_on", wall=1.0, at=2.0),
                     PlayerSignedOn("a", "A")])  # fmt: skip
