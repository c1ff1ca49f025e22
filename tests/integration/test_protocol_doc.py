"""docs/protocol.md's annotated game is what the referee really sends and accepts.

The transcript is replayed against a real ``serialref run``: every line a player sent
in the document is sent, every line the referee sent must arrive byte for byte, on the
right port, and the referee's journal must hold the whole exchange in the document's
order. Only the Date tag may differ (the document was made on another day), and the
milliseconds of ``ccms``, which are the real run's, as long as they are the ``cc`` of
the same record to the second.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import NamedTuple

import processes

from serialref.epd.clockvalue import parse_clock
from serialref.testing import Peer, null_modem

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
_LINE = re.compile(r"(?:(?P<player>[AB]) -> ref|ref -> (?P<to>[AB])): (?P<text>.+)")
_DATE = re.compile(r'Date "\d{4}\.\d\d\.\d\d"')
_CLOCKS = re.compile(r"cc (\S+) (\S+); ccms (\d+) (\d+);")


class Exchange(NamedTuple):
    """One line of the transcript: who sent it, on which port, and the record."""

    from_player: bool
    port: str
    text: str


def transcript() -> tuple[list[str], list[Exchange]]:
    """The run's options and the exchange, from the document's last section."""
    section = DOC.read_text(encoding="utf-8").split("## 9. A whole game, annotated", 1)[1]
    options = re.search(r"`(--tc [^`]+)`", section)
    block = re.search(r"```text\n(.*?)```", section, flags=re.DOTALL)
    assert options is not None and block is not None
    exchange = []
    for line in block.group(1).splitlines():
        if not line or line.startswith("#"):
            continue
        found = _LINE.fullmatch(line)
        assert found is not None, f"not a transcript line: {line!r}"
        port = (found["player"] or found["to"]).lower()
        exchange.append(Exchange(found["player"] is not None, port, found["text"]))
    return shlex.split(options.group(1)), exchange


def undated(text: str) -> str:
    """The record without what another run may change: the date, ccms's milliseconds."""
    return _CLOCKS.sub(_seconds_only, _DATE.sub('Date "YYYY.MM.DD"', text))


def _seconds_only(clocks: re.Match[str]) -> str:
    white, black = (parse_clock(clocks[index]) for index in (1, 2))
    assert (int(clocks[3]) // 1000, int(clocks[4]) // 1000) == (white, black), clocks[0]
    return f"cc {clocks[1]} {clocks[2]}; ccms W B;"


def test_the_documented_game_is_what_the_referee_does(tmp_path: Path) -> None:
    options, exchange = transcript()
    assert len(exchange) == 20
    journal = tmp_path / "journal.jsonl"
    with ExitStack() as stack:
        peers: dict[str, Peer] = {}
        paths = []
        for port in "ab":
            path, peers[port] = stack.enter_context(null_modem())
            paths.append(path)
        referee = processes.start(
            [sys.executable, "-m", "serialref", "run", *paths, *options, "--reset-delay", "0",
             "--conclude-delay", "0", "--journal", str(journal), "--quiet",
             "--log-level", "info"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        stack.callback(processes.end, referee)
        assert referee.stderr is not None
        # Sign-ons sent before both ports are open would be lost: the referee logs each open.
        opened = [referee.stderr.readline() for _ in paths]
        assert all(" opened " in line for line in opened), opened
        for step in exchange:
            if step.from_player:
                peers[step.port].send_line(step.text)
            else:
                assert undated(peers[step.port].read_line()) == undated(step.text)
        _, errors = referee.communicate(timeout=30)
    assert referee.returncode == 0, errors
    recorded = []
    for line in journal.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry["event"] in ("RecordSent", "LineReceived"):
            sent = entry["event"] == "LineReceived"
            recorded.append(Exchange(sent, entry["port"], undated(entry["text"])))
    assert recorded == [step._replace(text=undated(step.text)) for step in exchange]
