"""The suite's leak guard (tests/conftest.py): a test that leaves anything behind fails."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_leak_guard_fails_tests_that_leak(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", f"{ROOT}:{ROOT / 'tests'}")  # conftest uses doubles
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text())
    pytester.makepyfile(
        test_leaky="""
        import os, subprocess, sys, threading

        STOP = threading.Event()

        def test_clean():
            done = threading.Thread(target=STOP.wait, args=(0.1,))
            done.start()  # still running at the end, but ending within the grace period

        def test_thread():
            threading.Thread(target=STOP.wait, name="leaked-thread", daemon=True).start()

        def test_fd():
            os.open(os.devnull, os.O_RDONLY)

        def test_child():
            subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, errors=3)
    output = result.stdout.str()
    assert "test_thread - Failed: test leaked threads ['leaked-thread']" in output
    assert "test_fd - Failed: test leaked file descriptors {" in output
    assert "'/dev/null'}" in output
    assert "test_child - Failed: test leaked file descriptors" in output  # the stdin pipe
    assert "child processes [" in output
