"""Starting an engine: finding the program and its protocol, failing fast with one line."""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

import chess
import pytest
from enginetools import run, running, sent, timed, uci_settings, xboard_settings

from serialref.client import startup
from serialref.client.engine import EnginePlayer
from serialref.client.options import EngineSettings
from serialref.client.startup import EngineProtocol
from serialref.errors import EngineError


def test_xboard_is_a_protocol_choice() -> None:
    assert EngineProtocol("xboard") is EngineProtocol.XBOARD
    with pytest.raises(ValueError):
        EngineProtocol("cecp")


def test_a_bare_name_is_looked_for_on_path_then_in_the_games_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = tmp_path / "games"
    games.mkdir()
    program = games / "fakefish"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr(startup, "ENGINE_DIRECTORIES", (str(tmp_path / "none"), str(games)))
    assert startup.find_program("fakefish") == str(program)
    assert startup.find_program("./relative/path") == "./relative/path"
    with pytest.raises(EngineError) as caught:
        startup.find_program("nofish")
    assert str(caught.value) == (
        f"engine program 'nofish' not found on PATH or in {tmp_path / 'none'} or {games}"
    )


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (("cat",), "'cat' is not a UCI or XBoard engine: it echoed 'uci' back; it echoed 'xboard'"),
        (("true",), "'true' is not a UCI or XBoard engine: it exited (code 0) before answering"),
        (("echo", "hi"), "'echo' is not a UCI or XBoard engine: it exited (code 0) before"),
        (
            ("sleep", "100"),
            "'sleep' is not a UCI or XBoard engine: no answer to 'uci' within 4 s; "
            "no answer to 'protover 2' within 4 s",
        ),
        (("no-such-engine",), "engine program 'no-such-engine' not found on PATH or in"),
    ],
)
def test_a_program_that_is_no_engine_fails_within_10_s_with_one_clear_error(
    command: tuple[str, ...], message: str
) -> None:
    started = time.monotonic()
    with pytest.raises(EngineError) as caught:
        run(EnginePlayer(EngineSettings(command=command)).start())
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)
    assert time.monotonic() - started < 10.0


def test_a_silent_program_is_given_up_after_one_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(startup, "PROBE_TIMEOUT", 1.0)
    script = tmp_path / "mute.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    pass\n")
    settings = EngineSettings(command=(sys.executable, str(script)), protocol=EngineProtocol.UCI)
    started = time.monotonic()
    with pytest.raises(EngineError) as caught:
        run(EnginePlayer(settings).start())
    assert str(caught.value) == (
        "'python3' is not a working uci engine: no answer to 'uci' within 1 s"
    ).replace("python3", Path(sys.executable).name)
    assert time.monotonic() - started < 2.0  # not started again


@pytest.mark.parametrize(
    "answer",
    [
        "White (1) : Invalid move: uci",
        "Invalid move: uci",
        "Error (unknown command): uci",
        "Black (12) : Illegal move: uci",
    ],
)
def test_a_refusal_of_uci_is_recognised_wherever_it_stands_on_the_line(
    tmp_path: Path, answer: str
) -> None:
    script = tmp_path / "refuser.py"
    script.write_text(
        "import sys, time\n"
        f"prompt, _, refusal = {answer!r}.rpartition(' : ')\n"
        "print(prompt + ' : ' if prompt else '', end='', flush=True)\n"
        "sys.stdin.readline()\n"
        "print(refusal, flush=True)\n"
        "time.sleep(30)\n"
    )
    settings = EngineSettings(command=(sys.executable, str(script)), protocol=EngineProtocol.UCI)
    started = time.monotonic()
    with pytest.raises(EngineError) as caught:
        run(EnginePlayer(settings).start())
    assert str(caught.value).endswith(f"a working uci engine: it refused 'uci' with {answer!r}")
    assert time.monotonic() - started < startup.PROBE_TIMEOUT  # not waited out


@pytest.mark.parametrize("protocol", [None, EngineProtocol.XBOARD])
def test_an_engine_that_starts_like_gnu_chess_on_a_busy_machine_starts_at_the_first_try(
    tmp_path: Path, protocol: EngineProtocol | None, caplog: pytest.LogCaptureFixture
) -> None:
    """It prompts, drops the line after its first and is ready only after 2.5 s."""
    log = tmp_path / "gnu.log"

    async def scenario() -> tuple[EngineProtocol | None, chess.Move | None]:
        settings = xboard_settings(log, "gnu-late", protocol=protocol)
        async with running(settings) as player:
            decision = await player.think(timed(30.0))
            return player.protocol, decision.move

    caplog.set_level(logging.INFO, logger="serialref.client.startup")
    assert run(scenario()) == (EngineProtocol.XBOARD, chess.Move.from_uci("e2e4"))
    assert "starting it again" not in caplog.text
    assert sent(log).count("xboard") == 2  # the warm-up's and python-chess's: one process
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]


def test_a_uci_engine_silent_for_3_s_is_still_found(tmp_path: Path) -> None:
    async def scenario() -> EngineProtocol | None:
        async with running(uci_settings(tmp_path / "uci.log", "slow-start")) as player:
            return player.protocol

    assert run(scenario()) is EngineProtocol.UCI


def test_the_protocol_is_found_out_when_not_given(tmp_path: Path) -> None:
    async def scenario() -> tuple[EngineProtocol | None, EngineProtocol | None, str]:
        async with (
            running(uci_settings(tmp_path / "uci.log")) as uci,
            running(xboard_settings(tmp_path / "xboard.log")) as xboard,
        ):
            decision = await xboard.think(timed(30.0))
            assert decision.move == chess.Move.from_uci("e2e4")
            return uci.protocol, xboard.protocol, xboard.name

    assert run(scenario()) == (EngineProtocol.UCI, EngineProtocol.XBOARD, "Fake XBoard")
    # The XBoard engine was asked 'uci' first (in a process of its own).
    assert "uci" in sent(tmp_path / "xboard.log")


def test_a_start_up_that_stalls_is_tried_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> str:
        settings = uci_settings(
            tmp_path / "uci.log", "stall-start-once", protocol=EngineProtocol.UCI,
            start_timeout=2.5,
        )
        async with running(settings) as player:
            return player.name

    caplog.set_level(logging.INFO, logger="serialref.client.startup")
    assert run(scenario()) == "Fake Engine 1.0"
    assert "uci handshake stalled after 2.5 s; starting it again (attempt 1 of 4)" in caplog.text


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs or more")
def test_an_engine_starts_on_one_cpu_and_plays_on_all(tmp_path: Path) -> None:
    """GNU Chess's start-up race is won at once on one CPU (startup._set_cpus)."""
    log = tmp_path / "uci.log"

    async def scenario() -> set[int]:
        async with running(uci_settings(log)) as player:
            assert player.pid is not None
            return os.sched_getaffinity(player.pid)

    playing = run(scenario())
    starting = {int(cpu) for cpu in log.with_suffix(".cpus").read_text().split()}
    assert len(starting) == 1
    assert playing == os.sched_getaffinity(0)
