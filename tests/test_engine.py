"""The engine bridge: limits, scores, policies and faults, against scripted fake engines.

The fake engines are small Python programs, so these tests need no chess engine
installed and can make one crash or hang on purpose. Real engines are exercised in
``tests/integration/test_engines.py``.
"""

from __future__ import annotations

import logging
import math
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import chess
import chess.engine
import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref.client.engine import (
    UNTIMED_MOVETIME,
    EnginePlayer,
    EngineProtocol,
    EngineSettings,
    parse_engine_options,
    spec_centipawns,
)
from serialref.client.players import Analysis, ThinkingBudget, ThinkRequest
from serialref.errors import ConfigError, EngineError

MakePlayer = Callable[..., EnginePlayer]

FAKE_UCI = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    behaviour, score, marker = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "uci":
            hung = marker.with_suffix(".hung")
            if behaviour == "hang-start-once" and not hung.exists():
                hung.write_text("x")
                continue  # a start-up that never finishes, this once
            print("id name Fake Engine 1.0")
            print("option name Hash type spin default 16 min 1 max 1024")
            print("uciok", flush=True)
        elif words[0] == "isready":
            print("readyok", flush=True)
        elif words[0] == "position":
            moves = words[words.index("moves") + 1:] if "moves" in words else []
            marker.write_text(" ".join(words[1:]))
        elif words[0] == "go":
            crashed = marker.with_suffix(".crashed")
            if behaviour == "crash" or (behaviour == "crash-once" and not crashed.exists()):
                crashed.write_text("x")
                sys.exit(3)
            if behaviour == "hang":
                continue
            reply = "e7e5" if len(moves) % 2 else "e2e4"
            pv = f"{reply} g1f3" if reply == "e7e5" else f"{reply} e7e5"
            print(f"info depth 3 score {score} nodes 1234 time 2500 pv {pv}")
            print(f"bestmove {reply}", flush=True)
        elif words[0] == "quit":
            break
    """
)


@pytest.fixture
def fake_engine(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    script = tmp_path / "fake_uci.py"
    script.write_text(FAKE_UCI)
    yield script, tmp_path / "position.txt"


FAKE_XBOARD = textwrap.dedent(
    """
    import sys

    # Talks like GNU Chess 6 (legacy move announcements with a numbered echo) and
    # resigns its first game. The behaviour decides what it prints when the second game
    # starts, before it searches: with "stale", the move its first-game search found;
    # "illegal" answers its first search with a move that is illegal there.
    behaviour = sys.argv[1]
    games = 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "protover":
            print('feature myname="Fake XBoard" ping=1 setboard=1 done=1', flush=True)
        elif words[0] == "ping":
            print(f"pong {words[1]}", flush=True)
        elif words[0] == "new":
            games += 1
            if games == 2 and behaviour in ("stale", "stale-then-illegal"):
                print("33. ... d4b2")
                print("My move is : d4b2", flush=True)
        elif words[0] == "go":
            if behaviour == "illegal":
                reply = "d4b2"
            elif games == 1:
                print("resign", flush=True)
                continue
            else:
                reply = "e2e5" if behaviour == "stale-then-illegal" else "e2e4"
            print(f"{games}. ... {reply}")
            print(f"My move is : {reply}", flush=True)
        elif words[0] == "quit":
            break
    """
)


def settings_for(
    fake: tuple[Path, Path], behaviour: str = "normal", score: str = "cp 25", **options: object
) -> EngineSettings:
    script, marker = fake
    command = (sys.executable, str(script), behaviour, score, str(marker))
    return EngineSettings(command=command, **options)  # type: ignore[arg-type]


def request(
    board: chess.Board | None = None,
    *,
    draw_offered: bool = False,
    budget: ThinkingBudget | None = None,
    game: str = "game 1",
) -> ThinkRequest:
    board = board or chess.Board()
    return ThinkRequest(
        board=board,
        budget=budget or ThinkingBudget(turn=board.turn, remaining=(60.0, 60.0)),
        draw_offered=draw_offered,
        game=game,
    )


@pytest.fixture
def player_factory(fake_engine: tuple[Path, Path]) -> Iterator[MakePlayer]:
    players: list[EnginePlayer] = []

    def make(behaviour: str = "normal", score: str = "cp 25", **options: object) -> EnginePlayer:
        player = EnginePlayer(settings_for(fake_engine, behaviour, score, **options))
        players.append(player)
        return player

    yield make
    for player in players:
        player.close()


@pytest.fixture
def xboard_player_factory(tmp_path: Path) -> Iterator[Callable[[str], EnginePlayer]]:
    script = tmp_path / "fake_xboard.py"
    script.write_text(FAKE_XBOARD)
    players: list[EnginePlayer] = []

    def make(behaviour: str) -> EnginePlayer:
        command = (sys.executable, str(script), behaviour)
        player = EnginePlayer(
            EngineSettings(command=command, protocol=EngineProtocol.XBOARD, movetime=1.0)
        )
        players.append(player)
        return player

    yield make
    for player in players:
        player.close()


# -- pure functions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (chess.engine.Mate(1), 32766),
        (chess.engine.Mate(5), 32758),
        (chess.engine.Mate(-1), -32765),
        (chess.engine.Mate(-5), -32757),
        (chess.engine.Cp(-37), -37),
        (chess.engine.Cp(50_000), 31_999),
    ],
)
def test_spec_centipawns_uses_the_mate_encodings_of_spec_6_7(
    score: chess.engine.Score, expected: int
) -> None:
    assert spec_centipawns(score) == expected


@given(st.integers(min_value=1, max_value=100_000))
def test_mates_for_and_against_stay_in_their_bands(moves: int) -> None:
    assert 32000 < spec_centipawns(chess.engine.Mate(moves)) <= 32766
    assert -32767 < spec_centipawns(chess.engine.Mate(-moves)) < -32000


def test_engine_options_parse_and_reject_garbage() -> None:
    assert parse_engine_options(["Hash=64", "Book File=a=b.bin"]) == {
        "Hash": "64",
        "Book File": "a=b.bin",
    }
    with pytest.raises(ConfigError, match="NAME=VALUE"):
        parse_engine_options(["Hash"])


def test_settings_reject_two_limits_and_nonsense() -> None:
    with pytest.raises(ConfigError, match="depth: cannot be combined with nodes"):
        EngineSettings(command=("x",), nodes=1, depth=2)
    with pytest.raises(ConfigError, match="movetime: must be positive"):
        EngineSettings(command=("x",), movetime=0)
    with pytest.raises(ConfigError, match="engine command is required"):
        EngineSettings.from_command_line("")
    assert EngineSettings.from_command_line("gnuchess --xboard").command == ("gnuchess", "--xboard")


def test_a_missing_engine_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="engine program not found: 'no-such-engine'"):
        EnginePlayer(EngineSettings(command=("no-such-engine",)))
    with pytest.raises(EngineError, match=r"not a working uci engine|handshake"):
        EnginePlayer(EngineSettings(command=("true",), start_timeout=2.0))
    with pytest.raises(EngineError, match="'cat' did not finish its xboard handshake within"):
        EnginePlayer(
            EngineSettings(command=("cat",), protocol=EngineProtocol.XBOARD, start_timeout=0.3)
        )


def test_a_start_up_that_hangs_is_tried_again(
    fake_engine: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    player = EnginePlayer(settings_for(fake_engine, "hang-start-once", start_timeout=0.5))
    try:
        assert player.name == "Fake Engine 1.0"
    finally:
        player.close()
    assert "no uci handshake within 0.5 s; starting it again (attempt 1)" in caplog.text


# -- playing -----------------------------------------------------------------------------


def test_the_engine_name_move_and_analysis(player_factory: MakePlayer) -> None:
    player = player_factory()
    assert player.name == "Fake Engine 1.0"
    player.new_game({"TimeControl": "60+1"})
    decision = player.think(request())
    assert decision.move == chess.Move.from_uci("e2e4")
    assert decision.analysis == Analysis(
        centipawns=25,
        pv=(chess.Move.from_uci("e2e4"), chess.Move.from_uci("e7e5")),
        nodes=1234,
        seconds=2,
    )
    assert not (decision.draw_offer or decision.resign or decision.draw_accept)


def test_options_are_checked_by_the_engine(fake_engine: tuple[Path, Path]) -> None:
    with pytest.raises(ConfigError, match="NoSuch"):
        EnginePlayer(settings_for(fake_engine, options={"NoSuch": "1"}))
    player = EnginePlayer(settings_for(fake_engine, options={"Hash": "32"}))
    player.close()
    player.close()  # closing twice is harmless


def test_the_engine_gets_the_whole_game(
    player_factory: MakePlayer, fake_engine: tuple[Path, Path]
) -> None:
    player = player_factory()
    board = chess.Board()
    board.push_san("e4")
    decision = player.think(request(board))
    assert decision.move == chess.Move.from_uci("e7e5")
    assert fake_engine[1].read_text() == "startpos moves e2e4"


def test_limits_follow_the_clock_or_the_override() -> None:
    budget = ThinkingBudget(turn=chess.WHITE, remaining=(30.0, 20.0), increment=(1.0, 1.0))
    assert EngineSettings(command=("x",), movetime=0.05).fixed_limit() == chess.engine.Limit(
        time=0.05
    )
    assert EngineSettings(command=("x",)).fixed_limit() is None
    limit = budget.limit()
    assert limit is not None and limit.white_clock == 30.0 and limit.black_inc == 1.0
    assert math.isinf(ThinkingBudget(turn=chess.WHITE).remaining[0])


def test_an_untimed_game_gets_a_fixed_move_time(player_factory: MakePlayer) -> None:
    player = player_factory()
    limit = player._limit(ThinkingBudget(turn=chess.WHITE))
    assert limit == chess.engine.Limit(time=UNTIMED_MOVETIME)


@pytest.mark.parametrize(
    ("score", "accepts"), [("cp 10", True), ("cp -10", True), ("cp 300", False), ("mate 3", False)]
)
def test_a_uci_engine_accepts_a_draw_by_score(
    player_factory: MakePlayer, score: str, accepts: bool
) -> None:
    player = player_factory(score=score, draw_accept_below=50)
    decision = player.think(request(draw_offered=True))
    assert decision.draw_accept is accepts
    assert (decision.move is None) is accepts


def test_a_uci_engine_offers_a_draw_by_score(player_factory: MakePlayer) -> None:
    player = player_factory(score="cp 5", draw_offer_below=20)
    decision = player.think(request())
    assert decision.draw_offer and decision.move == chess.Move.from_uci("e2e4")


def test_a_uci_engine_resigns_after_enough_bad_moves(player_factory: MakePlayer) -> None:
    player = player_factory(score="cp -900", resign_below=600, resign_moves=2)
    player.new_game({})
    assert not player.think(request()).resign
    second = player.think(request())
    assert second.resign and second.move is None
    player.new_game({})
    assert not player.think(request()).resign  # a new game starts a new count


# -- faults ------------------------------------------------------------------------------


def test_a_crashed_engine_is_reported_and_restarted(player_factory: MakePlayer) -> None:
    player = player_factory("crash-once")
    first_pid = player.pid
    with pytest.raises(EngineError, match="stopped"):
        player.think(request())
    assert player.pid is None
    player.restart()
    assert player.pid not in (None, first_pid)
    assert player.think(request()).move == chess.Move.from_uci("e2e4")


def test_a_hung_engine_is_killed_after_the_margin(player_factory: MakePlayer) -> None:
    player = player_factory("hang", hang_margin=0.2, movetime=0.05)
    with pytest.raises(EngineError, match=r"gave no move within 0\.2 s"):
        player.think(request())
    assert player.pid is None


def test_an_engine_that_keeps_crashing_is_given_up(player_factory: MakePlayer) -> None:
    player = player_factory("crash", max_restarts=2)
    for _ in range(2):
        with pytest.raises(EngineError):
            player.think(request())
        player.restart()
    with pytest.raises(EngineError):
        player.think(request())
    with pytest.raises(EngineError, match="failed 3 times in a row"):
        player.restart()


@pytest.mark.parametrize("behaviour", ["stale", "no-stale"])
def test_a_stale_move_after_a_resignation_does_not_become_the_next_first_move(
    xboard_player_factory: Callable[[str], EnginePlayer],
    behaviour: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    player = xboard_player_factory(behaviour)
    assert player.name == "Fake XBoard"
    pid = player.pid
    assert player.think(request(game="game 1")).resign
    caplog.set_level(logging.DEBUG, logger="serialref.client.engine")
    decision = player.think(request(game="game 2"))
    assert decision.move == chess.Move.from_uci("e2e4")
    assert player.pid == pid  # no restart
    dropped = [record for record in caplog.records if "stale move" in record.getMessage()]
    assert len(dropped) == (behaviour == "stale")


def test_only_one_stale_move_is_forgiven(
    xboard_player_factory: Callable[[str], EnginePlayer],
) -> None:
    player = xboard_player_factory("stale-then-illegal")
    assert player.think(request(game="game 1")).resign
    with pytest.raises(EngineError, match=r"failed: .*e2e5"):
        player.think(request(game="game 2"))


def test_an_illegal_xboard_move_without_a_game_over_is_a_fault(
    xboard_player_factory: Callable[[str], EnginePlayer],
) -> None:
    player = xboard_player_factory("illegal")
    with pytest.raises(EngineError, match=r"failed: .*d4b2"):
        player.think(request())
    assert player.pid is None


def test_xboard_is_a_protocol_choice() -> None:
    assert EngineProtocol("xboard") is EngineProtocol.XBOARD
    with pytest.raises(ValueError):
        EngineProtocol("cecp")


def test_the_command_line_reports_a_missing_engine_in_one_line(tmp_path: Path) -> None:
    port = str(tmp_path / "ttyNothing")
    runs = [
        (["--engine", "no-such-engine --uci"], 5, "engine program not found: 'no-such-engine'"),
        (["--player", "greedy", "--nodes", "5"], 2, "nodes: only applies to an --engine"),
    ]
    for options, exit_code, message in runs:
        finished = subprocess.run(
            [sys.executable, "-m", "serialref", "client", port, *options],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
            check=False,
        )
        assert finished.returncode == exit_code
        assert finished.stderr.splitlines() == [f"serialref: error: {message}"]
