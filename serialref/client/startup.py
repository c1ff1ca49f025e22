"""Starting an engine: finding the program, and finding out which protocol it speaks.

``--engine stockfish`` has to work on Debian, where engines live in ``/usr/games``,
which is not on a normal user's ``PATH``: a bare program name is looked up on
``PATH``, then in ``/usr/games`` and ``/usr/local/games``, and the error says where.

Without ``--protocol`` the engine is asked ``uci`` first, then (in a fresh process)
``xboard``/``protover 2``. A program that does not speak the protocol is usually quick
to show it: GNU Chess answers ``uci`` with ``Invalid move: uci`` (after its prompt),
``cat`` echoes it, a program that exits ends the attempt at once; a silent one is given
:data:`PROBE_TIMEOUT`, once per protocol. So ``cat``, ``sleep 100`` or any program that
is no engine fails within twice that, with one line. An engine that *does* speak the
protocol (``id``/``option`` lines, ``feature`` lines) gets the longer ``patience`` to
finish its handshake, and one whose handshake stalls after that is started again. So
does one that merely says something (GNU Chess's banner) when there is reason to
expect that protocol: it was named with ``--protocol``, or the program refused ``uci``
in the XBoard way (``Error``, ``Illegal move``, ``Invalid move``).

Every process that is given up is killed and reaped before the next step, so no
zombie is left behind, in its own process group so that a Ctrl-C is the client's.
An engine's handshake runs on one CPU, the engine's play on all of the client's
(:func:`_set_cpus` says why).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import os
import re
import shutil
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import chess.engine

from serialref.client.uci import UciEngine
from serialref.client.xboard import XBoardEngine
from serialref.errors import EngineError, escape

__all__ = [
    "ENGINE_DIRECTORIES",
    "PROBE_TIMEOUT",
    "EngineProtocol",
    "OpenEngine",
    "QuietNotices",
    "end_engine",
    "find_program",
    "kill_engine",
    "open_engine",
]

LOGGER = logging.getLogger(__name__)

ENGINE_DIRECTORIES = ("/usr/games", "/usr/local/games")
"""Where Debian and the BSDs put games, chess engines included; searched after ``PATH``."""

PROBE_TIMEOUT = 4.0
"""Seconds a silent program is given to answer a protocol's handshake command.

Twice the 2 s that an engine on an idle machine needs at most: a busy machine can
delay a program's first line by seconds, and twice this is still within the 10 s in
which a program that is no engine must be told so.
"""

REAP_TIMEOUT = 5.0
"""Seconds to wait for a killed engine process to be reaped."""

EngineDialect = UciEngine | XBoardEngine


_QUIET_NOTICES = frozenset({"%s: Rejecting feature sigterm=0", "%s: Rejecting feature sigint=0"})
"""python-chess notices about features the client never relies on (it ends engines itself)."""


class QuietNotices(logging.Filter):
    """Drops python-chess's notices that GNU Chess triggers at every start and mean nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep everything but the notices in ``_QUIET_NOTICES``."""
        return record.msg not in _QUIET_NOTICES


class EngineProtocol(enum.Enum):
    """The two engine protocols python-chess speaks."""

    UCI = "uci"
    XBOARD = "xboard"

    @property
    def greeting(self) -> str:
        """The command that opens this protocol's handshake."""
        return "uci" if self is EngineProtocol.UCI else "protover 2"


@dataclass(frozen=True, slots=True)
class OpenEngine:
    """A running engine whose handshake is complete."""

    protocol: EngineProtocol
    transport: asyncio.SubprocessTransport
    engine: EngineDialect


def find_program(word: str) -> str:
    """The engine program a command's first word names, or :class:`EngineError`."""
    if os.sep in word:
        return word
    for path in (None, os.pathsep.join(ENGINE_DIRECTORIES)):
        found = shutil.which(word, path=path)
        if found is not None:
            return found
    raise EngineError(
        f"engine program {word!r} not found on PATH or in {' or '.join(ENGINE_DIRECTORIES)}"
    )


async def open_engine(
    command: Sequence[str],
    protocols: Sequence[EngineProtocol],
    *,
    patience: float,
    attempts: int,
) -> OpenEngine:
    """Start ``command`` speaking the first of ``protocols`` that it answers.

    ``patience`` bounds a handshake the engine has begun; a stalled one is tried
    ``attempts`` times in all. A silent program is tried once per protocol. Raises
    :class:`EngineError` naming what each protocol got, and lets ``OSError`` from
    starting the process through to the caller.
    """
    verdicts: list[str] = []
    expected = len(protocols) == 1
    for protocol in protocols:
        for attempt in range(1, attempts + 1):
            opened, verdict = await _attempt(protocol, command, patience, expected=expected)
            if opened is not None:
                return opened
            if verdict != _STALLED:
                expected = verdict.startswith(_REFUSED_THE_XBOARD_WAY)
                break
            LOGGER.info(
                "%s: %s handshake stalled after %g s; starting it again (attempt %d of %d)",
                command[0],
                protocol.value,
                patience,
                attempt,
                attempts,
            )
        else:
            verdict = f"began the {protocol.value} handshake but never finished it"
        if verdict == _SILENT:
            verdict = f"no answer to {protocol.greeting!r} within {PROBE_TIMEOUT:g} s"
        verdicts.append(verdict)
    program = os.path.basename(command[0])
    if len(protocols) == 1:
        raise EngineError(
            f"{program!r} is not a working {protocols[0].value} engine: {verdicts[0]}"
        )
    raise EngineError(f"{program!r} is not a UCI or XBoard engine: {'; '.join(verdicts)}")


_ALL_CPUS = frozenset(os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else ())
_START_CPUS = frozenset(sorted(_ALL_CPUS)[:1])


def _set_cpus(pid: int, cpus: frozenset[int]) -> None:
    """Let every thread of the engine ``pid`` run on ``cpus`` only (those it has yet to
    create inherit it).

    GNU Chess 6's start-up races two of its threads for its input's lock, and the one
    that must win only gets it in the moment between two lines the other reads: on an
    idle machine with the threads on two CPUs it lost for seconds at a time (half of
    all starts after the first in a process), on one CPU it won within 0.2 s every
    time. So an engine starts on one CPU and is given all of the client's once its
    handshake has ended.
    """
    if not cpus:
        return  # a system without CPU affinity
    with contextlib.suppress(OSError):  # the process has ended: nothing to move
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                os.sched_setaffinity(int(task), cpus)


_STALLED = "stalled"
_SILENT = "silent"
_REFUSED_THE_XBOARD_WAY = "it refused"
_XBOARD_REFUSAL = re.compile(r"(?:^|\s)(?:Error|Illegal move|Invalid move)\b")
_HANDSHAKE_COMMANDS = frozenset({"uci", "xboard", "protover 2"})


async def _attempt(
    protocol: EngineProtocol, command: Sequence[str], patience: float, *, expected: bool
) -> tuple[OpenEngine | None, str]:
    """One process, one handshake: the open engine, or None and what went wrong.

    ``expected``: any sign of life earns the program the full ``patience``.
    """
    engine_class: type[EngineDialect] = (
        UciEngine if protocol is EngineProtocol.UCI else XBoardEngine
    )
    transport, engine = await engine_class.popen(list(command), setpgrp=True)
    pid = transport.get_pid()
    _set_cpus(pid, _START_CPUS)
    opened = False
    try:
        handshake = asyncio.ensure_future(engine.initialize())
        endings: set[asyncio.Future[Any]] = {handshake, engine.refusal, engine.returncode}
        probe = min(PROBE_TIMEOUT, patience)
        done, _ = await asyncio.wait(endings, timeout=probe, return_when=asyncio.FIRST_COMPLETED)
        if not done and (engine.spoke or (expected and engine.alive)):
            done, _ = await asyncio.wait(
                endings, timeout=patience - probe, return_when=asyncio.FIRST_COMPLETED
            )
        if handshake in done and handshake.exception() is None:
            _set_cpus(pid, _ALL_CPUS)
            opened = True
            return OpenEngine(protocol, transport, engine), ""
        failed = handshake if handshake in done else None
        return None, _verdict(protocol, engine, failed, expected=expected)
    finally:
        if not opened:
            handshake.cancel()
            await kill_engine(transport, engine)
            with contextlib.suppress(asyncio.CancelledError, chess.engine.EngineError):
                await handshake


def _verdict(
    protocol: EngineProtocol,
    engine: EngineDialect,
    failed: asyncio.Future[None] | None,
    *,
    expected: bool,
) -> str:
    """What a failed handshake tells about the program; ``failed``: the handshake if it ended."""
    if engine.refusal.done():
        answer = escape(engine.refusal.result().strip())
        if answer in _HANDSHAKE_COMMANDS:
            return f"it echoed {answer!r} back"
        if _XBOARD_REFUSAL.search(answer):
            return f"{_REFUSED_THE_XBOARD_WAY} {protocol.greeting!r} with {answer!r}"
        return f"it answered {protocol.greeting!r} with {answer!r}"
    if engine.returncode.done():
        code = engine.returncode.result()
        return f"it exited (code {code}) before answering {protocol.greeting!r}"
    if failed is not None:
        return f"its {protocol.value} handshake failed: {failed.exception()}"
    if engine.spoke or (expected and engine.alive):
        return _STALLED
    return _SILENT


async def end_engine(opened: OpenEngine, *, politely: bool, name: str) -> None:
    """End an engine, asking it to ``quit`` first if ``politely`` (2 s), and reap it."""
    engine = opened.engine
    if politely and not engine.returncode.done():
        try:
            await asyncio.wait_for(engine.quit(), 2.0)
        except (chess.engine.EngineError, TimeoutError) as exc:
            LOGGER.warning("%s did not quit (%s): killing it", name, exc)
    await kill_engine(opened.transport, engine)


async def kill_engine(
    transport: asyncio.SubprocessTransport, engine: chess.engine.Protocol
) -> None:
    """End an engine process at once and wait until it is reaped (no zombie)."""
    returncode = engine.returncode
    if not returncode.done():
        pid = transport.get_pid()
        LOGGER.debug("killing engine pid %s and its process group", pid)
        # The whole group: an engine started through a script leaves no child holding
        # the pipes open (the process counts as ended only once they are closed).
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                transport.kill()
        try:
            await asyncio.wait_for(asyncio.shield(returncode), REAP_TIMEOUT)
        except TimeoutError:
            LOGGER.error("engine pid %s did not end after SIGKILL", transport.get_pid())
    transport.close()
