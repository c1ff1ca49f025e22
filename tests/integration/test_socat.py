"""The README's recipe: a match over two ``socat`` cables, each program a process of its own.

The recipe's lines are taken from the README and run as written, in an empty folder, but
for three things a test must do otherwise: ``serialref`` is this interpreter's module, the
games get short delays, and where the recipe sleeps the test waits for what it sleeps
for (socat's "starting data transfer loop", the referee's "opened" for both ends).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import chess.pgn
import processes
import pytest

ROOT = Path(__file__).resolve().parents[2]
SOCAT = shutil.which("socat")
WAIT = 30.0
QUICK = ("--reset-delay", "0.1", "--conclude-delay", "0.1")

pytestmark = pytest.mark.skipif(SOCAT is None, reason="socat is missing (apt-get install socat)")


def recipe() -> list[list[str]]:
    """The commands of the README's socat block, as words, without the shell's job control."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(block for block in re.findall(r"```sh\n(.*?)\n```", readme, flags=re.DOTALL)
                 if block.startswith("socat "))  # fmt: skip
    commands = []
    for line in block.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] in ("socat", "serialref"):
            commands.append([word for word in words if word != "&"])
    return commands


def await_line(stream: IO[str], pattern: str) -> None:
    """Read ``stream`` until a line matches ``pattern`` (the process's own word that it is up)."""
    for line in stream:
        if re.search(pattern, line):
            return
    pytest.fail(f"the process ended before saying {pattern!r}")


@pytest.fixture
def programs() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    try:
        yield started
    finally:
        for process in reversed(started):  # the cables last
            processes.end(process, grace=WAIT)


def test_the_readme_recipe_plays_a_match_over_two_socat_cables(
    tmp_path: Path, programs: list[subprocess.Popen[str]]
) -> None:
    commands = recipe()
    assert [command[0] for command in commands] == ["socat"] * 2 + ["serialref"] * 3
    serialref = [sys.executable, "-m", "serialref"]

    def start(argv: list[str], stderr: int | None = subprocess.PIPE) -> subprocess.Popen[str]:
        process = processes.start(argv, cwd=tmp_path, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=stderr, text=True)  # fmt: skip
        programs.append(process)
        return process

    for cable in commands[:2]:
        socat = start(cable)
        assert socat.stderr is not None
        await_line(socat.stderr, "starting data transfer loop")
    run, *clients = commands[2:]
    referee = start([*serialref, *run[1:], *QUICK])
    assert referee.stderr is not None
    for end in ("ref-a", "ref-b"):
        await_line(referee.stderr, rf"opened '{end}'")
    for client in clients:
        start([*serialref, *client[1:]], stderr=subprocess.DEVNULL)
    out, err = referee.communicate(timeout=120)
    assert referee.returncode == 0, err
    assert "Finished match" in out
    with (tmp_path / "socat.pgn").open(encoding="utf-8") as pgn:
        games = [game for game in iter(lambda: chess.pgn.read_game(pgn), None)]
    assert len(games) == 2
    assert all(game.headers["Result"] in ("1-0", "0-1", "1/2-1/2") for game in games)
