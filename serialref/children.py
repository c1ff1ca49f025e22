"""Programs serialref starts die with it, however it ends.

A process killed with SIGKILL (an operator's ``kill -9``, a CI job's timeout) runs no
finaliser, so a player client it started would live on, still holding its end of a
cable and reopening the port, where the next run finds it busy. A program started
with :func:`end_with_parent` as its ``preexec_fn`` asks the kernel to kill it when
the thread that started it ends (Linux's ``PR_SET_PDEATHSIG``): start it from a
thread that lives as long as it should, since one started from a helper thread dies
as soon as that thread returns.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import signal

__all__ = ["end_with_parent"]

_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def end_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Have the kernel send this process SIGKILL when the thread that started it ends.

    For :class:`subprocess.Popen`'s ``preexec_fn``: it calls only ``prctl``, which is
    safe between ``fork`` and ``exec`` even in a program with threads.
    """
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
