"""A program started with ``end_with_parent`` dies with its parent, however that ends.

The parent here is a killed test run: it starts one program as a tournament starts its
players (``preexec_fn=end_with_parent``) and one as the tests start theirs
(tests/processes.py), and is then killed with SIGKILL, as a CI job's timeout kills one.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import processes
from processes import wait_for

TESTS = Path(__file__).resolve().parent

PARENT = textwrap.dedent(
    """
    import subprocess, sys
    sys.path.insert(0, sys.argv[1])
    import processes
    from serialref.children import end_with_parent
    sleeper = [sys.executable, "-c", "import os, time; print(os.getpid(), flush=True); "
               "os.dup2(os.open(os.devnull, os.O_WRONLY), 1); time.sleep(60)"]
    subprocess.Popen(sleeper, preexec_fn=end_with_parent)
    processes.run(sleeper)
    """
)
"""Starts two programs that print their process ids, then waits on the second."""


def gone(pid: int) -> bool:
    """Whether ``pid`` has ended: no such process, or a zombie nobody reaped yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def test_the_programs_a_killed_process_started_are_killed_with_it() -> None:
    parent = processes.start([sys.executable, "-c", PARENT, str(TESTS)], stdout=subprocess.PIPE,
                             text=True)  # fmt: skip
    try:
        assert parent.stdout is not None
        children = [int(parent.stdout.readline()) for _ in range(2)]
        assert not any(gone(pid) for pid in children)
        parent.send_signal(signal.SIGKILL)
    finally:
        processes.end(parent)
    for pid in children:
        wait_for(lambda pid=pid: gone(pid), f"the program {pid} to die", timeout=10)
