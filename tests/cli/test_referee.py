"""``serialref run --once``: a match played out stays played out when the service starts again."""

from __future__ import annotations

from pathlib import Path

import pytest
from clirun import MISSING_PORTS, restored_logging, run  # noqa: F401 (a fixture)

from serialref import cli
from serialref.happenings import MatchEnded, MatchStarted
from serialref.recorders.journal import JournalRecorder
from serialref.referee.resume import holds_finished_match


def journal_of(path: Path, *, complete: bool | None) -> Path:
    """A journal of one match: played out, stopped in order (False), or cut off (None)."""
    recorder = JournalRecorder(path)
    recorder.handle(MatchStarted(games=2, time_control="60+1", ports=("a", "b")))
    if complete is not None:
        recorder.handle(MatchEnded(complete=complete, score=(1.5, 0.5) if complete else (0, 0)))
    recorder.close()
    return path


def test_a_journal_says_whether_its_match_was_played_out(tmp_path: Path) -> None:
    assert holds_finished_match(journal_of(tmp_path / "done.jsonl", complete=True))
    assert not holds_finished_match(journal_of(tmp_path / "stopped.jsonl", complete=False))
    assert not holds_finished_match(journal_of(tmp_path / "crashed.jsonl", complete=None))
    assert not holds_finished_match(tmp_path / "none.jsonl")


def test_once_plays_nothing_after_a_finished_match(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    journal = journal_of(tmp_path / "match.jsonl", complete=True)
    written = journal.read_bytes()
    code, _, _ = run(capsys, "run", *MISSING_PORTS, "--journal", str(journal), "--once")
    assert code == cli.EXIT_OK
    assert f"{journal} holds a finished match: nothing to play (--once)" in caplog.text
    assert journal.read_bytes() == written  # no new match appended
    # Without --once the same command starts a new match: it goes on to open the ports.
    code, _, _ = run(capsys, "run", *MISSING_PORTS, "--journal", str(journal))
    assert code == cli.EXIT_PORT


@pytest.mark.parametrize("complete", [False, None], ids=["stopped", "crashed"])
def test_once_resumes_a_match_not_played_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, complete: bool | None
) -> None:
    journal = journal_of(tmp_path / "match.jsonl", complete=complete)
    code, _, _ = run(capsys, "run", *MISSING_PORTS, "--journal", str(journal), "--once",
                  "--games", "2", "--tc", "60+1")  # fmt: skip
    assert code == cli.EXIT_PORT  # it went on to open the ports


def test_once_needs_a_journal(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", *MISSING_PORTS, "--once")
    assert code == cli.EXIT_USAGE
    assert err == "serialref: error: --once: needs a journal: it is what tells a finished match\n"


def test_the_referee_service_runs_once() -> None:
    root = Path(__file__).resolve().parents[2] / "systemd"
    for unit in (root / "serialref.service", root / "drop-ins" / "replicate.conf"):
        commands = [line for line in unit.read_text(encoding="utf-8").splitlines()
                    if line.startswith("ExecStart=/")]  # fmt: skip
        assert commands and all(" --once" in line for line in commands), unit
