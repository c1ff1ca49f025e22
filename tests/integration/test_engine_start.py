"""Debian's GNU Chess started as an operator starts it: ``serialref client PORT --engine gnuchess``.

GNU Chess 6.2.7 prompts before its answers, drops the line after its first one when
both arrive together, and its start-up only advances while input arrives; the client
must recognise it as an XBoard engine and finish its handshake with the first process,
whether ``--protocol`` is given or not.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import processes
import pytest

from serialref.wire.nullmodem import null_modem_cable

GNUCHESS = shutil.which("gnuchess") or shutil.which("/usr/games/gnuchess")
ROOT = Path(__file__).resolve().parents[2]
START_LIMIT = 30.0
STARTED = re.compile(r"engine \S+ started \((\w+)\): pid \d+")

pytestmark = [
    pytest.mark.engines,
    pytest.mark.skipif(GNUCHESS is None, reason="needs GNU Chess: apt-get install gnuchess"),
]


@pytest.mark.parametrize("options", [[], ["--protocol=xboard"]], ids=["found-out", "xboard"])
def test_gnu_chess_starts_at_the_first_try(tmp_path: Path, options: list[str]) -> None:
    log = tmp_path / "client.log"
    with null_modem_cable() as cable, log.open("wb") as stderr:
        client = processes.start(
            [sys.executable, "-m", "serialref", "client", cable.path_b, "--engine", "gnuchess",
             "--log-level=info", *options],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + START_LIMIT
            while not STARTED.search(log.read_text()) and time.monotonic() < deadline:
                assert client.poll() is None, log.read_text()
                time.sleep(0.05)
        finally:
            client.send_signal(signal.SIGINT)
            client.wait(timeout=15)
    text = log.read_text()
    started = STARTED.search(text)
    assert started is not None, text
    assert started.group(1) == "xboard"
    assert "starting it again" not in text
