"""Analysis runs over the scripted engines: order, jobs, bad lines, crashes, halt and resume.

The engine is ``tests/engines/fake_uci.py``: it answers at once with a fixed score
(``cp 25``), 1234 nodes, 2.5 s and a two-move variation, or exits on ``go``
(``crash``, or ``crash-once`` for the first process only).
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
from pathlib import Path

import chess
import pytest
from enginetools import uci_settings, xboard_settings

from serialref.analysis.inputs import Entry, read_entries, resume_point
from serialref.analysis.progress import Progress, Tally
from serialref.analysis.run import Run, run_task
from serialref.analysis.tasks import Analyse, Effort, Targets, Task
from serialref.client.options import EngineSettings
from serialref.client.startup import EngineProtocol
from serialref.epd.parser import parse_lenient
from serialref.errors import ConfigError, EngineError

MATED = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq -"


def suite(count: int = 10) -> str:
    """``count`` positions of one game, a bad line and a checkmate, as an EPD file."""
    board = chess.Board()
    lines = []
    for number in range(count):
        first = board.san(next(iter(board.legal_moves)))
        lines.append(f'{board.epd()} bm {first}; id "p{number}";')
        board.push(sorted(board.legal_moves, key=chess.Move.uci)[number % 3])
    lines.insert(4, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - bm e5;")
    lines.append(f'{MATED} id "mated";')
    return "\n".join(lines) + "\n"


def engine(tmp_path: Path, behaviour: str = "normal") -> EngineSettings:
    return uci_settings(tmp_path / "e.log", behaviour)


class HaltingProgress(Progress):
    """Sets ``halt`` once ``after`` records are written, as a Ctrl-C would."""

    halt: asyncio.Event | None = None
    after = 0

    def update(self) -> None:
        super().update()
        if self.halt is not None and self.tally.done >= self.after:
            self.halt.set()


def analyse(
    entries: list[Entry],
    settings: EngineSettings,
    *,
    task: Task | None = None,
    jobs: int = 1,
    strict: bool = False,
    halt_after: int | None = None,
) -> tuple[bytes, str, bool]:
    out, err = io.BytesIO(), io.StringIO()

    async def scenario() -> bool:
        halt = asyncio.Event()
        progress = HaltingProgress(Tally(total=len(entries)), err, live=False)
        if halt_after is not None:
            progress.halt, progress.after = halt, halt_after
        return await run_task(
            task or Analyse(Effort(nodes=1000)),
            entries,
            Run(settings, jobs=jobs, strict=strict),
            name="suite.epd",
            out=out,
            progress=progress,
            halt=halt,
        )

    finished = asyncio.run(scenario())
    return out.getvalue(), err.getvalue(), finished


def entries_of(text: str) -> list[Entry]:
    return read_entries(io.BytesIO(text.encode()), "suite.epd")


@pytest.mark.parametrize("jobs", [1, 3])
def test_every_record_is_analysed_in_input_order(tmp_path: Path, jobs: int) -> None:
    text = suite()
    out, err, finished = analyse(entries_of(text), engine(tmp_path), jobs=jobs)
    assert finished
    written = out.decode().splitlines()
    given = text.splitlines()
    assert len(written) == len(given)
    assert written[4] == given[4]  # the bad line, copied as it came
    assert err == "suite.epd:5:57: bm: 'e5' is not a legal move in this position\n"
    for line, source in zip(written, given, strict=True):
        if line is written[4]:
            continue
        record = parse_lenient(line)
        assert record.position.split() == source.split()[:4]
        if record.operand_texts("id") == ("mated",):
            assert record.operand_texts("pv") == ()
            assert record.integer("ce") == -32767 and "pm" not in record
            continue
        assert record.integer("ce") == 25
        assert record.integer("acn") == 1234 and record.integer("acs") == 3
        assert record.operand_texts("pm") == record.operand_texts("sm")
        assert record.operand_texts("pm")[0] == record.operand_texts("pv")[0]
        assert len(record.operand_texts("pv")) == 2
    sent = (tmp_path / "e.log").read_text().splitlines()
    assert sent.count("uci") == jobs  # one engine process per job
    assert sum(line.startswith("go ") for line in sent) == 10


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_record_is_analysed_the_same_whatever_comes_before_it(tmp_path: Path, jobs: int) -> None:
    """The engine remembers what it searched since ``ucinewgame`` and says so in its score."""
    entries = entries_of(suite(4))
    alone, _, _ = analyse(entries[3:4], engine(tmp_path, "remembers"), jobs=jobs)
    in_order, _, _ = analyse(entries, engine(tmp_path, "remembers"), jobs=jobs)
    assert in_order.splitlines()[3] == alone.strip()
    assert b"ce 1;" in alone
    assert all(b" ce 1;" in line for line in in_order.splitlines() if b" pm " in line)


def test_strict_leaves_bad_records_out(tmp_path: Path) -> None:
    out, err, _ = analyse(entries_of(suite(5)), engine(tmp_path), strict=True)
    assert len(out.splitlines()) == 6  # 5 positions and the checkmate; the bad line is out
    assert b"bm e5" not in out and "suite.epd:5:57" in err


def test_targets_searches_only_records_with_targets(tmp_path: Path) -> None:
    out, _, _ = analyse(entries_of(suite(4)), engine(tmp_path), task=Targets(Effort(nodes=9)))
    records = [parse_lenient(line) for line in out.decode().splitlines() if "bm e5;" not in line]
    assert ["pm" in record for record in records] == [True] * 4 + [False]
    assert all("ce" not in record and "sm" not in record for record in records)
    assert all(record.operand_texts("pm")[0] == record.operand_texts("pv")[0]
               for record in records[:4])


def test_an_engine_that_dies_mid_run_is_restarted_and_the_position_retried(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out, err, finished = analyse(entries_of(suite(4)), engine(tmp_path, "crash-once"))
    assert finished and err.count("\n") == 1  # only the bad line is reported
    analysed = [line for line in out.splitlines() if b"mated" not in line and b"bm e5;" not in line]
    assert len(analysed) == 4 and all(b"pm " in line for line in analysed)
    assert "trying the position once more" in caplog.text
    sent = (tmp_path / "e.log").read_text().splitlines()
    assert sum(line.startswith("go ") for line in sent) == 5  # 4 positions, one retried
    assert sent.count("uci") == 2


def test_a_position_that_fails_twice_is_reported_and_copied(tmp_path: Path) -> None:
    text = suite(3)
    out, err, finished = analyse(entries_of(text), engine(tmp_path, "crash"))
    assert finished
    assert out.decode().splitlines()[:3] == text.splitlines()[:3]
    assert err.count("failed twice, copied unanalysed") == 3
    assert "suite.epd:1: failed twice" in err and "died unexpectedly" in err


def test_an_engine_that_cannot_start_ends_the_run(tmp_path: Path) -> None:
    settings = EngineSettings(command=(str(tmp_path / "no-such-engine"),))
    with pytest.raises(EngineError, match="no-such-engine"):
        analyse(entries_of(suite(2)), settings)


def test_a_halted_run_resumes_to_the_same_file(tmp_path: Path) -> None:
    text = suite(8)
    entries = entries_of(text)
    whole, _, _ = analyse(entries, engine(tmp_path))
    part, _, finished = analyse(entries, engine(tmp_path), jobs=2, halt_after=3)
    assert not finished
    assert whole.startswith(part) and 3 <= len(part.splitlines()) < len(entries)
    output = tmp_path / "out.epd"
    output.write_bytes(part + b"rnbqkbnr/pp")  # and a line torn by a crash
    start = resume_point(output, entries, strict=False, name="suite.epd")
    assert start == len(part.splitlines())
    rest, _, finished = analyse(entries[start:], engine(tmp_path))
    assert finished and output.read_bytes() + rest == whole


def test_an_xboard_engine_analyses_by_playing_and_refuses_node_limits(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    settings = xboard_settings(log, protocol=EngineProtocol.XBOARD)
    out, err, finished = analyse(entries_of(suite(3)), settings, task=Targets(Effort(depth=2)))
    records = [parse_lenient(line) for line in out.decode().splitlines()[:3]]
    assert finished and err.count("\n") == 1  # the bad line
    assert [record.operand_texts("pm") for record in records] == [("e4",), ("e5",), ("e4",)]
    assert all(record.operand_texts("pm") == record.operand_texts("pv") for record in records)
    sent = log.read_text().splitlines()
    assert sent.count("new") >= 3 and "analyze" not in sent
    with pytest.raises(ConfigError, match="nodes: Fake XBoard does not take node limits"):
        analyse(entries_of(suite(1)), dataclasses.replace(settings, nodes=500))
