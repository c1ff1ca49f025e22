"""A slow line costs neither player time (PROTOCOL.md 5): line time allowed both ways.

The referee's ports are the near ends of paced null-modem cables
(:class:`serialref.wire.nullmodem.NullModemCable` with a baud rate), the players instant
scripted programs on the far ends. With ``line_delay = "on"`` a player whose thinking
takes no time is charged next to nothing, on ply 1 too (its respond queues behind
``reset`` and ``inform``) and for a resignation; with ``"off"`` it is charged the
line time of every record it waited for and every reply it sent.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack

import chess
import pytest
import serial
from doubles import EventQueue

from serialref import records
from serialref.epd.operations import Operation
from serialref.epd.parser import parse_record
from serialref.epd.writer import format_record
from serialref.happenings import GameEnded, MatchEvent, MovePlayed, RecordSent
from serialref.referee.daemon import PortPlan, RefereeDaemon
from serialref.referee.settings import MatchSettings
from serialref.testing import Peer, answer_instantly, quiet_game
from serialref.timecontrol import TimeControl
from serialref.wire.nullmodem import NullModemCable, null_modem_cable
from serialref.wire.transport import PortSettings

PLIES = 40
ANALYSIS = (Operation.of("acn", 123456), Operation.of("acs", 1), Operation.of("ce", -35))


GAME = quiet_game(PLIES)


@pytest.fixture
def cables(request: pytest.FixtureRequest) -> Iterator[tuple[NullModemCable, NullModemCable]]:
    baud: int = request.param
    with ExitStack() as stack:
        yield (
            stack.enter_context(null_modem_cable(baudrate=baud)),
            stack.enter_context(null_modem_cable(baudrate=baud)),
        )


def play_match(
    cables: tuple[NullModemCable, NullModemCable], line_delay: str
) -> tuple[list[MatchEvent], dict[str, list[str]]]:
    """One game of instant players over the paced cables; the events and the replies sent."""
    assert cables[0].baudrate is not None
    settings = PortSettings(baudrate=cables[0].baudrate, line_delay=line_delay)
    recorder = EventQueue()
    ready = threading.Event()
    daemon = RefereeDaemon(
        MatchSettings(time_control=TimeControl.parse("600"), reset_delay=0.1, conclude_delay=0.1),
        [PortPlan(port, cable.path_a, settings) for port, cable in zip("ab", cables, strict=True)],
        observers=[recorder],
        on_ready=ready.set,
    )
    replies: dict[str, list[str]] = {}
    ports = [serial.serial_for_url(cable.path_b, exclusive=True) for cable in cables]
    peers = [Peer.from_serial_port(port) for port in ports]

    def play(port: str, peer: Peer) -> None:
        replies[port] = answer_instantly(peer, GAME, *ANALYSIS)

    threads = [
        threading.Thread(target=play, args=(port, peer), name=f"test-player-{port}")
        for port, peer in zip("ab", peers, strict=True)
    ]
    referee = threading.Thread(target=daemon.run, name="test-referee")
    referee.start()
    try:
        assert ready.wait(10.0), "the referee did not open its ports"
        for peer, name in zip(peers, ("Alpha", "Beta"), strict=True):
            peer.send_line(format_record(records.sign_on(chess.Board(), name)))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120.0)
        referee.join(30.0)
        assert not referee.is_alive() and not any(thread.is_alive() for thread in threads)
    finally:
        if referee.is_alive():
            daemon.request_stop("test over")
            referee.join()
        for peer in peers:
            peer.close()
    return recorder.taken(), replies


def line_time(baud: int, texts: list[str], *, through: str = "CR") -> float:
    """What these records take on an 8N1 line up to their CR (where a line ends) or LF."""
    return sum(len(text) + (1 if through == "CR" else 2) for text in texts) * 10 / baud


@pytest.mark.parametrize("cables", [9600, 115200], indirect=True, ids=["9600", "115200"])
def test_with_line_delay_on_an_instant_player_is_charged_next_to_nothing(
    cables: tuple[NullModemCable, NullModemCable],
) -> None:
    """What is left on an instant player's clock is the machine's scheduling, not the line.

    Charging a record's line time costs a player at least that line time on every move;
    scheduling delays on a loaded machine cost milliseconds, sometimes tens of them, on
    some moves. So the bound is read on the least charged move; the single moves (ply 1,
    the resignation) are checked where their line time dwarfs such delays (9600 baud).
    """
    baud = cables[0].baudrate
    assert baud is not None
    events, replies = play_match(cables, "on")
    (ended,) = [event for event in events if isinstance(event, GameEnded)]
    assert ended.reason == "White resigns"
    moves = [event for event in events if isinstance(event, MovePlayed)]
    assert len(moves) == PLIES
    assert len(replies["a"]) + len(replies["b"]) == PLIES + 1
    shortest_reply = min(line_time(baud, [text]) for text in replies["a"] + replies["b"])
    assert min(move.elapsed for move in moves) < shortest_reply / 2
    if baud > 9600:
        return
    # Ply 1: White's respond queued behind reset and inform; their line time is not White's.
    sent = [event.text for event in events if isinstance(event, RecordSent) and event.port == "a"]
    ahead = line_time(baud, [text for text in sent[:2]], through="LF")
    assert [records.referee_command(parse_record(t)).value for t in sent[:2]] == ["reset", "inform"]
    assert moves[0].elapsed < ahead / 2
    # The resignation's own line time is not charged either.
    on_moves = sum(move.elapsed for move in moves[0::2])
    assert ended.consumed[0] - on_moves < line_time(baud, replies["a"][-1:]) / 2


@pytest.mark.parametrize("cables", [9600, 115200], indirect=True, ids=["9600", "115200"])
def test_with_line_delay_off_the_line_time_of_every_record_is_charged(
    cables: tuple[NullModemCable, NullModemCable],
) -> None:
    """A side pays at least the line time of its responds and replies, and little more.

    The lower bound is exact for the game; above it only scheduling delays are charged,
    which a loaded machine can make long on some moves, so the upper bound is read on the
    least charged move (as in the line-delay-on test).
    """
    baud = cables[0].baudrate
    assert baud is not None
    events, replies = play_match(cables, "off")
    (ended,) = [event for event in events if isinstance(event, GameEnded)]
    moves = [event for event in events if isinstance(event, MovePlayed)]
    sent = [event for event in events if isinstance(event, RecordSent)]
    shortest_reply = min(line_time(baud, [text]) for text in replies["a"] + replies["b"])
    excess = []
    for side, port in enumerate("ab"):
        # What the player waited for: its responds, and on ply 1 the inform ahead of it.
        responds = [e.text for e in sent if e.port == port and "refcom respond" in e.text]
        waited = [line_time(baud, pair) for pair in zip(responds, replies[port], strict=True)]
        if port == "a":
            informs = [e.text for e in sent if e.port == port and "refcom inform" in e.text]
            waited[0] += line_time(baud, informs[:1], through="LF")
        assert ended.consumed[side] >= sum(waited), (port, sum(waited), ended.consumed)
        charged = [move.elapsed for move in moves[side::2]]
        excess += [paid - due for paid, due in zip(charged, waited, strict=False)]
    assert min(excess) < shortest_reply / 2
