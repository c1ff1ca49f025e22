"""Tests for serialref.appliance.logsetup: terminal format, journald format, reconfiguration."""

from __future__ import annotations

import io
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import pytest

from serialref.appliance.logsetup import configure_logging, is_journal_stream
from serialref.errors import ConfigError


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """Give the root logger back as the test found it."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    transitions_level = logging.getLogger("transitions").level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)
    logging.getLogger("transitions").setLevel(transitions_level)


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[TextIO]:
    with (tmp_path / "stderr").open("w+", encoding="utf-8") as stream:
        yield stream


def journal_stream_of(stream: TextIO) -> str:
    status = os.fstat(stream.fileno())
    return f"{status.st_dev}:{status.st_ino}"


def written(stream: TextIO) -> str:
    stream.flush()
    stream.seek(0)
    return stream.read()


def test_terminal_format_has_time_level_and_logger(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    stream = io.StringIO()
    configure_logging("info", stream=stream)
    logging.getLogger("serialref.referee.match").warning("flag fell for %s", "Player B")
    logging.getLogger("serialref.referee.match").debug("not shown")
    line = stream.getvalue()
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d WARNING serialref\.referee\.match: flag fell for"
        r" Player B\n",
        line,
    ), line


def test_journal_format_has_priorities_and_no_time(
    log_file: TextIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JOURNAL_STREAM", journal_stream_of(log_file))
    configure_logging("debug", stream=log_file)
    logger = logging.getLogger("serialref.referee.match")
    logger.critical("c")
    logger.error("e")
    logger.warning("w")
    logger.info("i")
    logger.debug("d")
    assert written(log_file).splitlines() == [
        "<2>serialref.referee.match: c",
        "<3>serialref.referee.match: e",
        "<4>serialref.referee.match: w",
        "<6>serialref.referee.match: i",
        "<7>serialref.referee.match: d",
    ]


def test_journal_format_prefixes_every_line_of_a_traceback(
    log_file: TextIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JOURNAL_STREAM", journal_stream_of(log_file))
    configure_logging("info", stream=log_file)
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("serialref.referee.daemon").exception("referee failed")
    lines = written(log_file).splitlines()
    assert len(lines) > 2
    assert all(line.startswith("<3>") for line in lines)
    assert lines[-1] == "<3>RuntimeError: boom"


def test_journal_stream_of_another_file_is_not_the_journal(
    log_file: TextIO, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (tmp_path / "other").open("w", encoding="utf-8") as other:
        monkeypatch.setenv("JOURNAL_STREAM", journal_stream_of(other))
    assert not is_journal_stream(log_file)
    configure_logging("info", stream=log_file)
    logging.getLogger("serialref").info("hello")
    assert re.match(r"\d{4}-\d\d-\d\d ", written(log_file))


@pytest.mark.parametrize("value", ["", "garbage", "1:", ":2"])
def test_malformed_journal_stream_is_not_the_journal(
    log_file: TextIO, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("JOURNAL_STREAM", value)
    assert not is_journal_stream(log_file)


def test_stream_without_descriptor_is_not_the_journal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JOURNAL_STREAM", "1:2")
    assert not is_journal_stream(io.StringIO())


def test_configuring_again_replaces_the_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    first, second = io.StringIO(), io.StringIO()
    configure_logging("info", stream=first)
    configure_logging("error", stream=second)
    logging.getLogger("serialref").warning("dropped")
    logging.getLogger("serialref").error("kept")
    assert first.getvalue() == ""
    assert second.getvalue().count("kept") == 1
    assert "dropped" not in second.getvalue()


def test_transitions_stays_quiet_unless_debugging() -> None:
    configure_logging("info", stream=io.StringIO())
    assert logging.getLogger("transitions").getEffectiveLevel() == logging.WARNING
    configure_logging("debug", stream=io.StringIO())
    assert logging.getLogger("transitions").getEffectiveLevel() == logging.DEBUG


def test_unknown_level_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"^log_level: expected one of .*got 'loud'$"):
        configure_logging("loud", stream=io.StringIO())
