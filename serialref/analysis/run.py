"""One analysis run: entries in, records out in input order, over ``--jobs`` engines.

The positions a task searches go on one queue that every
:class:`~serialref.analysis.engine.AnalysisEngine` takes from, so a slow position holds
up only its own engine; the writer takes the results in input order and writes (and
flushes) each record as soon as everything before it is written, so an interrupted or
failed run leaves an output file that ``--resume`` can continue.

An engine that fails on a position is started again and the position tried once
more; a second failure is reported ``FILE:LINE: reason`` and the record copied as it
came. An engine that cannot be started again ends the run, after the records done
so far are written, with :class:`~serialref.errors.EngineError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from serialref.analysis.engine import AnalysisEngine
from serialref.analysis.inputs import Entry
from serialref.analysis.progress import Progress
from serialref.analysis.tasks import Outcome, Task
from serialref.client.options import EngineSettings
from serialref.epd.writer import format_record
from serialref.errors import EngineError, escape

__all__ = ["Run", "run_task"]

LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Run:
    """How to run a task: the engine, how many of it, the time a search may overrun."""

    engine: EngineSettings
    jobs: int = 1
    strict: bool = False
    patience: float | None = None


async def run_task(
    task: Task,
    entries: Sequence[Entry],
    run: Run,
    *,
    name: str,
    out: BinaryIO,
    progress: Progress,
    halt: asyncio.Event,
) -> bool:
    """Write every entry's output record in order; False if ``halt`` cut the run short."""
    searched = {
        entry.number: entry
        for entry in entries
        if entry.record is not None
        and entry.board is not None
        and task.wants(entry.record, entry.board)
    }
    loop = asyncio.get_running_loop()
    results: dict[int, asyncio.Future[Outcome]] = {
        number: loop.create_future() for number in searched
    }
    queue: asyncio.Queue[Entry] = asyncio.Queue()
    for entry in searched.values():
        queue.put_nowait(entry)
    jobs = min(run.jobs, len(searched))
    engines = [AnalysisEngine(run.engine, patience=run.patience) for _ in range(jobs)]
    halted = loop.create_task(halt.wait())
    workers: list[asyncio.Task[None]] = []
    try:
        starting = asyncio.gather(*(engine.ready() for engine in engines))
        await asyncio.wait(_futures(starting, halted), return_when=asyncio.FIRST_COMPLETED)
        if not starting.done():
            starting.cancel()
            return False
        starting.result()
        workers = [loop.create_task(_work(task, engine, queue, results)) for engine in engines]
        for entry in entries:
            if entry.number in results:
                future = results[entry.number]
                while not future.done() and not halt.is_set():
                    busy = [worker for worker in workers if not worker.done()]
                    await asyncio.wait(
                        _futures(future, halted, *busy), return_when=asyncio.FIRST_COMPLETED
                    )
                    _raise_fatal(workers, future)
                if halt.is_set():
                    return False
                _write_result(entry, future, out=out, progress=progress, name=name)
            elif entry.problem:
                progress.note(entry.problem)
                progress.tally.bad += 1
                if not run.strict:
                    _write(out, entry.raw)
                    progress.tally.add()
                else:
                    progress.tally.total -= 1
            else:
                assert entry.record is not None and entry.board is not None
                _write(out, format_record(task.unsearched(entry.record, entry.board)).encode())
                progress.tally.add()
            progress.update()
        return True
    finally:
        halted.cancel()
        for worker in workers:
            worker.cancel()
        for worker in workers:
            with contextlib.suppress(asyncio.CancelledError, EngineError):
                await worker
        await asyncio.gather(*(engine.close() for engine in engines))
        for future in results.values():
            if future.done() and not future.cancelled():
                future.exception()  # retrieved: a result nobody waited for is not an error


async def _work(
    task: Task,
    engine: AnalysisEngine,
    queue: asyncio.Queue[Entry],
    results: dict[int, asyncio.Future[Outcome]],
) -> None:
    """Take positions until the queue is empty; retry a failed one once on a new engine."""
    while not queue.empty():
        entry = queue.get_nowait()
        assert entry.record is not None and entry.board is not None
        future = results[entry.number]
        for attempt in (1, 2):
            await engine.ready()
            try:
                outcome = await task.run(entry.record, entry.board, engine)
            except EngineError as exc:
                if attempt == 2:
                    future.set_exception(exc)
                else:
                    LOGGER.warning(
                        "line %d: %s; trying the position once more", entry.number, exc
                    )
            else:
                future.set_result(outcome)
                break


def _futures(*futures: asyncio.Future[Any]) -> set[asyncio.Future[Any]]:
    return set(futures)


def _raise_fatal(workers: list[asyncio.Task[None]], future: asyncio.Future[Outcome]) -> None:
    """Raise if an engine could not be started again, or none is left for ``future``."""
    for worker in workers:
        if worker.done() and not worker.cancelled() and worker.exception() is not None:
            raise EngineError(f"the engine cannot be started again: {worker.exception()}")
    if not future.done() and all(worker.done() for worker in workers):
        raise EngineError("every engine stopped before the run was done")


def _write_result(
    entry: Entry,
    future: asyncio.Future[Outcome],
    *,
    out: BinaryIO,
    progress: Progress,
    name: str,
) -> None:
    exception = future.exception()
    if exception is not None:
        progress.note(
            f"{name}:{entry.number}: failed twice, copied unanalysed: {escape(str(exception))}"
        )
        progress.tally.failed += 1
        _write(out, entry.raw)
        progress.tally.add()
        return
    outcome = future.result()
    _write(out, format_record(outcome.record).encode())
    progress.tally.add(searched=True, solved=outcome.solved)


def _write(out: BinaryIO, line: bytes) -> None:
    out.write(line + b"\n")
    out.flush()
