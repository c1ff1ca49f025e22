"""Every way a game ends, over real ptys: the records each player gets, the PGN, the journal.

Each scenario starts a referee daemon on two pty pairs, signs both players on,
plays a few scripted replies and then checks, for both players, the closing
`inform` (Result and Termination) followed by `conclude` and `disconnect`, the
PGN tags and the journal's `GameEnded`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import chess
import chess.pgn
import pytest

from serialref import records
from serialref.epd.operations import Operation
from serialref.epd.writer import format_record
from serialref.happenings import GameEnded
from serialref.recorders.journal import read_journal
from serialref.referee.openings import Opening
from serialref.testing import Peer
from serialref.timecontrol import TimeControl

if TYPE_CHECKING:
    from doubles import RunningReferee

# A script step: port, then a SAN move, or a special action.
Step = tuple[str, str]


@dataclass(frozen=True)
class Scenario:
    steps: tuple[Step, ...]
    result: str
    termination: str
    reason: str
    fen: str = chess.STARTING_FEN
    tc: str = "60+1"
    infraction: str = "forfeit"


SHUFFLE = (("a", "Nf3"), ("b", "Nf6"), ("a", "Ng1"), ("b", "Ng8"))

SCENARIOS = {
    "checkmate": Scenario(
        (("a", "f3"), ("b", "e5"), ("a", "g4"), ("b", "Qh4#")), "0-1", "normal", "Black mates"
    ),
    "stalemate": Scenario(
        (("a", "Qf7"),), "1/2-1/2", "normal", "stalemate", fen="7k/8/6Q1/8/8/8/8/K7 w - - 0 1"
    ),
    "dead position": Scenario(
        (("a", "Kxa2"),),
        "1/2-1/2",
        "normal",
        "dead position",
        fen="k7/8/8/8/8/8/p7/K1N5 w - - 0 1",
    ),
    "fivefold repetition": Scenario(SHUFFLE * 4, "1/2-1/2", "normal", "fivefold repetition"),
    "seventy-five-move rule": Scenario(
        (("a", "Rb2"),),
        "1/2-1/2",
        "normal",
        "seventy-five-move rule",
        fen="k7/8/8/8/8/8/8/KR6 w - - 149 90",
    ),
    "flag fall": Scenario((("a", "wait"),), "0-1", "time forfeit", "White lost on time", tc="1"),
    "flag fall against a bare king": Scenario(
        (("a", "wait"),),
        "1/2-1/2",
        "time forfeit",
        "cannot mate",
        fen="k7/8/8/8/8/8/8/KQ6 w - - 0 1",
        tc="1",
    ),
    "resignation": Scenario((("a", "e4"), ("b", "resign")), "1-0", "normal", "Black resigns"),
    "draw agreement": Scenario(
        (("a", "e4+offer"), ("b", "accept")), "1/2-1/2", "normal", "draw agreed"
    ),
    "valid threefold claim": Scenario(
        (*SHUFFLE, *SHUFFLE, ("a", "claim")), "1/2-1/2", "normal", "threefold repetition"
    ),
    "invalid claim without a move": Scenario(
        (("a", "claim"),), "0-1", "rules infraction", "draw claim that does not hold"
    ),
    "illegal move": Scenario((("a", "illegal"),), "0-1", "rules infraction", "illegal"),
    "wrong position": Scenario((("a", "wrong"),), "0-1", "rules infraction", "wrong position"),
    "contradictory opcodes": Scenario(
        (("a", "e4+resign+offer"),), "0-1", "rules infraction", "contradictory"
    ),
    "no move": Scenario((("a", "nomove"),), "0-1", "rules infraction", "without a move"),
    "sign-off": Scenario((("a", "e4"), ("b", "signoff")), "1-0", "abandoned", "signed off"),
    "player fault": Scenario((("a", "fault"),), "*", "emergency", "engine crashed"),
}


def _send(peer: Peer, record: records.EpdRecord) -> None:
    peer.send_line(format_record(record))


def _step(peer: Peer, board: chess.Board, action: str) -> bool:
    """Perform one scripted action; True when it was a move the referee relays."""
    op = Operation.of
    if action == "wait":
        return False
    if action == "resign":
        _send(peer, records.reply(board, None, op("resign")))
    elif action == "accept":
        _send(peer, records.reply(board, None, op("draw_accept")))
    elif action == "claim":
        _send(peer, records.reply(board, None, op("draw_claim")))
    elif action == "illegal":
        _send(peer, records.reply(board, None, op("sm", "Ke3")))
    elif action == "wrong":
        _send(peer, records.reply(chess.Board("4k3/8/8/8/8/8/8/4K3 w - - 0 1"), None,
                                  op("sm", "Kd1")))  # fmt: skip
    elif action == "nomove":
        _send(peer, records.reply(board, None))
    elif action == "signoff":
        _send(peer, records.sign_off(board))
    elif action == "fault":
        _send(peer, records.player_fault(board, "engine crashed"))
    else:
        san, *flags = action.split("+")
        extra = [op("draw_offer") for flag in flags if flag == "offer"]
        extra += [op("resign") for flag in flags if flag == "resign"]
        _send(peer, records.reply(board, board.parse_san(san), *extra))
        board.push_san(san)
        return not extra or flags == ["offer"]
    return False


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_ending_over_ptys(name: str, start_referee: Callable[..., RunningReferee]) -> None:
    scenario = SCENARIOS[name]
    referee = start_referee(
        time_control=TimeControl.parse(scenario.tc),
        openings=(Opening(scenario.fen),),
        on_infraction=scenario.infraction,
    )
    referee.sign_on_both()
    peers = {"a": referee.a, "b": referee.b}
    for peer in peers.values():
        peer.expect("inform")
    board = chess.Board(scenario.fen)
    peers["a"].expect("respond")
    for index, (port, action) in enumerate(scenario.steps):
        relayed = _step(peers[port], board, action)
        last = index == len(scenario.steps) - 1
        if relayed and not last:
            other = "b" if port == "a" else "a"
            peers[other].expect("respond")
    for port, peer in peers.items():
        if name == "sign-off" and port == "b":
            continue  # a player that left is told nothing more
        final = peer.expect("inform", timeout=10)
        tags = dict(final.tag_pairs())
        assert (tags["Result"], tags["Termination"]) == (scenario.result, scenario.termination)
        conclude = peer.expect("conclude")
        assert conclude.position == final.position
        peer.expect("disconnect")
    referee.join()

    ended = [e for e in read_journal(referee.journal) if isinstance(e, GameEnded)]
    assert len(ended) == 1 and scenario.reason in ended[0].reason
    with referee.pgn.open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None and game.errors == []
    assert (game.headers["Result"], game.headers["Termination"]) == (
        scenario.result,
        scenario.termination,
    )
