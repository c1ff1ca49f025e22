"""Programs a test starts, and waiting on what they do: the programs die with the test.

A test run that is killed (SIGKILL, a CI job's timeout) runs no finaliser, so a referee
or a client it started would live on: an orphaned client stays on its line and keeps
reopening its ``/dev/pts/N``, which the kernel then hands to another run's cable
("port is busy"). Every program a test starts through :func:`start` or :func:`run`
therefore dies with the thread that started it, as a tournament's players do
(:func:`serialref.children.end_with_parent`). Start them from the test's own thread: one
started from a helper thread dies as soon as that thread ends.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from serialref.children import end_with_parent

T = TypeVar("T")

SERIALREF = (sys.executable, "-m", "serialref")
"""The ``serialref`` program of this checkout, as a command's first words."""


def _dying_with_the_test(then: Callable[[], object] | None) -> Callable[[], None]:
    """What the child runs before exec: the death signal, then ``then`` (a setrlimit, say)."""
    if then is None:
        return end_with_parent

    def before_exec() -> None:
        end_with_parent()
        then()

    return before_exec


def start(
    argv: Sequence[str], *, preexec_fn: Callable[[], object] | None = None, **options: Any
) -> subprocess.Popen[Any]:
    """``subprocess.Popen(argv, **options)`` for a program that dies with the test."""
    before_exec = _dying_with_the_test(preexec_fn)
    return subprocess.Popen(argv, preexec_fn=before_exec, **options)  # noqa: PLW1509


def run(
    argv: Sequence[str], *, check: bool = False, **options: Any
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(argv, **options)`` for a program that dies with the test."""
    return subprocess.run(argv, check=check, preexec_fn=end_with_parent, **options)


def end(process: subprocess.Popen[Any], *, grace: float = 0.0) -> None:
    """End ``process`` if the test left it running (asked with SIGTERM first, killed after
    ``grace`` seconds, at once without), reap it and close whatever pipes it still has."""
    if process.poll() is None and grace:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
    elif process.poll() is None:
        process.kill()
    process.wait()
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


def wait_for(
    condition: Callable[[], T], what: str, timeout: float = 60.0, *, every: float = 0.005
) -> T:
    """Poll ``condition`` every ``every`` seconds until it holds, and return what it
    returned; an :class:`AssertionError` naming ``what`` after ``timeout`` seconds.

    For what another process or thread does (a file it writes, a socket it serves):
    there is no event of its to await from the test.
    """
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(every)
    return found


def wait_for_match_start(
    referee: subprocess.Popen[Any], journal: Path, timeout: float = 20.0
) -> None:
    """Until ``serialref run`` has journalled its match's start (its ports are open, players
    may be started); an :class:`AssertionError` if it exits before that or takes longer."""

    def started() -> bool:
        assert referee.poll() is None, "the referee exited before its match started"
        return journal.exists() and b"MatchStarted" in journal.read_bytes()

    wait_for(started, "the referee's match to start", timeout)
