"""A task over files: input and output opened, ``--resume``, Ctrl-C, the last line.

Ctrl-C (or SIGTERM) ends a run in order: the searches under way are abandoned, the
records before them are already written, and the user is told how many and the
command that carries on (``--resume``, which checks the output record by record and
skips what it holds). A second Ctrl-C ends the run at once.
"""

from __future__ import annotations

import asyncio
import shlex
import signal
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO, TextIO

from serialref.analysis.inputs import Entry, read_entries, resume_point
from serialref.analysis.progress import Progress, Tally
from serialref.analysis.run import Run, run_task
from serialref.analysis.tasks import Task
from serialref.errors import ConfigError, EngineError, InputError, SerialrefError

__all__ = ["run_file"]


def run_file(
    task: Task,
    run: Run,
    *,
    source: str,
    output: str,
    resume: bool,
    err: TextIO,
    argv: Sequence[str],
) -> bool:
    """Run ``task`` over ``source`` into ``output``; False if it was interrupted.

    ``argv`` is the command as typed, for the hint that resumes it.
    """
    if resume and output == "-":
        raise ConfigError("resume", "needs an output file (-o OUT)")
    if output != "-" and source != "-" and Path(output).resolve() == Path(source).resolve():
        raise ConfigError("output", "must not be the input file")
    with ExitStack() as stack:
        name = "<stdin>" if source == "-" else source
        entries = read_entries(_open_input(stack, source), name)
        start = resume_point(Path(output), entries, strict=run.strict, name=name) if resume else 0
        out = _open_output(stack, output, append=resume)
        tally = Tally(total=len(entries) - start)
        progress = Progress(tally, err, live=err.isatty())
        hint = _resume_hint(argv) if output != "-" else "write to a file with -o to resume"
        try:
            finished = asyncio.run(
                _run(task, run, entries=entries[start:], name=name, out=out, progress=progress)
            )
        except EngineError:
            progress.finish()
            if tally.done:
                err.write(f"stopped: {tally.done} records written; {hint}\n")
            raise
        progress.finish()
        done = f"{output}: " if output != "-" else ""
        if start:
            done += f"resumed after {start} records; "
        err.write(f"{done}{tally.summary()}\n")
        if not finished:
            err.write(f"interrupted: {tally.done} records written; {hint}\n")
        return finished


async def _run(
    task: Task,
    run: Run,
    *,
    entries: Sequence[Entry],
    name: str,
    out: BinaryIO,
    progress: Progress,
) -> bool:
    loop = asyncio.get_running_loop()
    halt = asyncio.Event()
    signals = (signal.SIGINT, signal.SIGTERM)

    def stop() -> None:
        halt.set()
        for number in signals:  # a second Ctrl-C is Python's own: at once
            loop.remove_signal_handler(number)

    for number in signals:
        loop.add_signal_handler(number, stop)
    try:
        return await run_task(
            task, entries, run, name=name, out=out, progress=progress, halt=halt
        )
    finally:
        for number in signals:
            loop.remove_signal_handler(number)


def _resume_hint(argv: Sequence[str]) -> str:
    words = ["serialref", *argv]
    if "--resume" not in words:
        words.append("--resume")
    return f"carry on with: {shlex.join(words)}"


def _open_input(stack: ExitStack, path: str) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    try:
        return stack.enter_context(Path(path).open("rb"))
    except OSError as exc:
        raise InputError(f"cannot read {path!r}: {exc.strerror}") from exc


def _open_output(stack: ExitStack, path: str, *, append: bool) -> BinaryIO:
    if path == "-":
        return sys.stdout.buffer
    try:
        return stack.enter_context(Path(path).open("ab" if append else "wb"))
    except OSError as exc:
        raise SerialrefError(f"cannot write {path!r}: {exc.strerror}") from exc

