"""Tests for serialref.standby.takeover: standing by, and taking over with a stand-in referee."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from standby_peers import (
    COMPLETE_MATCH,
    GAME_STARTED,
    MATCH_STARTED,
    TIMEOUT,
    UNFINISHED_MATCH,
    LogWatcher,
    ScriptedPrimary,
    journal_bytes,
    mirror_at,
)

from serialref.appliance.assembly import match_settings
from serialref.appliance.config import MatchConfig, load_config
from serialref.errors import ConfigError, PortOpenError
from serialref.standby.channel import FrameKind
from serialref.standby.takeover import open_mirror, stand_by, take_over
from serialref.wire.backoff import Backoff


def config_for(tmp_path: Path) -> MatchConfig:
    return load_config(
        None,
        {"port_a": "/dev/null-a", "port_b": "/dev/null-b", "tc": "60+1",
         "journal": tmp_path / "journal.jsonl"},
    )  # fmt: skip


class FakeReferee:
    """Stands in for run_referee: fails to open the ports ``busy`` times, then plays."""

    def __init__(self, busy: int) -> None:
        self.busy = busy
        self.journals: list[Path | None] = []

    def __call__(self, config: MatchConfig) -> bool:
        self.journals.append(config.journal)
        if len(self.journals) <= self.busy:
            raise PortOpenError("cannot open '/dev/null-a': the port is busy")
        return True


def test_take_over_retries_while_the_ports_are_busy(tmp_path: Path, log: LogWatcher) -> None:
    referee = FakeReferee(busy=3)
    with mirror_at(tmp_path / "mirror.jsonl") as mirror:
        result = take_over(config_for(tmp_path), referee, mirror, backoff=Backoff(0.01, 0.02))
    assert result is True
    assert len(referee.journals) == 4
    failures = [log.wait_for("taking over") for _ in range(3)]
    assert all("the port is busy" in text and "trying again" in text for text in failures)


def test_take_over_stands_by_again_when_the_primary_is_heard_during_a_pause(
    tmp_path: Path,
) -> None:
    referee = FakeReferee(busy=100)
    journal = tmp_path / "mirror.jsonl"
    data = journal_bytes(tmp_path, UNFINISHED_MATCH)
    with mirror_at(journal) as mirror:
        # The primary was only cut off: it reconnects, and is heard once take_over pumps
        # the mirror during its pause.
        primary = ScriptedPrimary(mirror)
        outcome: list[bool | None] = []
        pumping = threading.Thread(
            target=lambda: outcome.append(
                take_over(config_for(tmp_path), referee, mirror, backoff=Backoff(TIMEOUT))
            )
        )
        pumping.start()
        primary.prove()
        assert primary.channel is not None
        start = primary.channel.seal(FrameKind.START, bytes(8))
        primary.send(start + primary.channel.seal(FrameKind.ENTRIES, data))  # in one piece
        pumping.join(TIMEOUT)
        assert outcome == [None]
        primary.close()
    assert len(referee.journals) == 1
    assert journal.read_bytes() == data  # the pause was spent mirroring


def test_take_over_gives_up_when_its_mirror_is_stopped(tmp_path: Path) -> None:
    referee = FakeReferee(busy=100)
    with mirror_at(tmp_path / "mirror.jsonl") as mirror:
        mirror.stop()
        assert take_over(config_for(tmp_path), referee, mirror, backoff=Backoff(TIMEOUT)) is False
        assert mirror.stopped
    assert len(referee.journals) == 1


def test_stand_by_waits_out_a_complete_match_and_takes_over_an_unfinished_one(
    tmp_path: Path, log: LogWatcher
) -> None:
    referee = FakeReferee(busy=0)
    complete = journal_bytes(tmp_path, COMPLETE_MATCH)
    unfinished = journal_bytes(tmp_path, [MATCH_STARTED, GAME_STARTED])
    journal = tmp_path / "mirror.jsonl"
    result: list[bool] = []
    config = config_for(tmp_path)
    settings = match_settings(config)
    with mirror_at(journal, takeover_after=0.2) as mirror:
        thread = threading.Thread(
            target=lambda: result.append(stand_by(config, settings, mirror, referee))
        )
        thread.start()
        first = ScriptedPrimary(mirror)
        first.prove()
        first.start()
        first.send_entries(complete)
        first.close()
        log.wait_for("standing by for the next one")
        second = ScriptedPrimary(mirror)
        second.prove()
        assert second.mirror_size == len(complete)
        second.start()
        second.send_entries(unfinished)
        second.close()
        thread.join(TIMEOUT)
        assert not thread.is_alive()
    assert result == [True]
    assert referee.journals == [journal]
    assert journal.read_bytes() == complete + unfinished


def test_stand_by_returns_false_when_its_mirror_is_stopped(tmp_path: Path) -> None:
    referee = FakeReferee(busy=0)
    with mirror_at(tmp_path / "mirror.jsonl") as mirror:
        mirror.stop()
        config = config_for(tmp_path)
        assert stand_by(config, match_settings(config), mirror, referee) is False
    assert referee.journals == []


def test_a_standby_needs_a_journal(tmp_path: Path) -> None:
    config = load_config(None, {"port_a": "/dev/null-a", "port_b": "/dev/null-b"})
    with pytest.raises(ConfigError, match="journal"):
        open_mirror(config, "127.0.0.1:0", bytes(32))
    with open_mirror(config_for(tmp_path), "127.0.0.1:0", bytes(32)) as mirror:
        assert mirror.journal == tmp_path / "journal.jsonl"
