"""The engine options of ``serialref client``."""

from __future__ import annotations

import chess
import chess.engine
import pytest

from serialref.client.options import EngineSettings, parse_engine_options
from serialref.errors import ConfigError


def test_engine_options_parse_and_reject_garbage() -> None:
    assert parse_engine_options(["Hash=64", "Book File=a=b.bin"]) == {
        "Hash": "64",
        "Book File": "a=b.bin",
    }
    with pytest.raises(ConfigError, match="NAME=VALUE"):
        parse_engine_options(["Hash"])


def test_settings_reject_two_limits_and_nonsense() -> None:
    with pytest.raises(ConfigError, match="depth: cannot be combined with nodes"):
        EngineSettings(command=("x",), nodes=1, depth=2)
    with pytest.raises(ConfigError, match="movetime: must be positive"):
        EngineSettings(command=("x",), movetime=0)
    with pytest.raises(ConfigError, match="engine command is required"):
        EngineSettings.from_command_line("")
    assert EngineSettings.from_command_line("gnuchess --xboard").command == ("gnuchess", "--xboard")


def test_a_fixed_limit_is_the_override_given() -> None:
    assert EngineSettings(command=("x",), movetime=0.05).fixed_limit() == chess.engine.Limit(
        time=0.05
    )
    assert EngineSettings(command=("x",)).fixed_limit() is None
