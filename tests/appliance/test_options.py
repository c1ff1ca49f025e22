"""serialref.appliance.options: one row per match option, and nothing declared twice."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

import pytest

from serialref.appliance.config import MatchConfig, PortConfig, load_config
from serialref.appliance.options import (
    MATCH_OPTIONS,
    OVERRIDE_NAMES,
    PORT_KEYS,
    RUN,
    STANDBY,
    TOP_LEVEL_KEYS,
    MatchOption,
    Where,
    match_option,
)
from serialref.cli.referee import add_match_options, match_config
from serialref.wire.transport import PortSettings

IDS = [option.key for option in MATCH_OPTIONS]


def test_every_match_wide_row_is_a_field_of_the_config_and_back() -> None:
    fields = {field.name for field in dataclasses.fields(MatchConfig)}
    rows = {option.key for option in MATCH_OPTIONS if option.where is Where.TOP}
    assert fields == rows | {"port_a", "port_b"}


def test_every_port_row_reaches_the_port_config_or_its_line_settings() -> None:
    line_settings = {field.name for field in dataclasses.fields(PortSettings)}
    own = {field.name for field in dataclasses.fields(PortConfig)} - {"settings"}
    for option in MATCH_OPTIONS:
        if option.where is Where.TOP:
            assert not option.port_setting, option.key
        elif option.port_setting:
            assert option.port_setting in line_settings, option.key
            line_settings.remove(option.port_setting)
        else:
            assert option.key in own, option.key
            own.remove(option.key)
    assert line_settings == set()  # every line setting can be set
    assert own == set()


def test_keys_and_command_line_names_are_unique() -> None:
    keys = [option.key for option in MATCH_OPTIONS]
    assert len(keys) == len(set(keys))
    names = [name for option in MATCH_OPTIONS for name in option.names]
    assert len(names) == len(set(names)) == len(OVERRIDE_NAMES)
    assert TOP_LEVEL_KEYS[-1] == "ports"
    assert set(TOP_LEVEL_KEYS) & set(PORT_KEYS) == {"baud", "newline"}


@pytest.mark.parametrize("option", MATCH_OPTIONS, ids=IDS)
def test_every_row_is_complete(option: MatchOption[Any]) -> None:
    assert option.doc.endswith("."), "the docs' meaning is a sentence"
    assert not option.help.endswith("."), "a --help line is not"
    assert bool(option.help) == bool(option.flags), "a flag needs a help line, and only a flag"
    assert bool(option.port_doc) == (option.where is Where.BOTH)
    for verb, flags in option.flags.items():
        assert verb in (RUN, STANDBY)
        assert len(flags) == (2 if option.where is Where.PORT else 1)
    if option.excludes:
        earlier = [row.key for row in MATCH_OPTIONS[: MATCH_OPTIONS.index(option)]]
        assert option.excludes in earlier, "read before the row that excludes it"


@pytest.mark.parametrize("option", MATCH_OPTIONS, ids=IDS)
def test_every_default_reads_as_a_value_from_the_file_would(option: MatchOption[Any]) -> None:
    value = option.kind.read(option.key, option.default)
    if option.where is Where.TOP:
        assert getattr(load_config(None), option.key) == value


def test_the_line_defaults_are_the_wire_profile() -> None:
    assert load_config(None).port_a.settings == PortSettings()


def test_standby_takes_the_options_of_run_but_replicate_and_names_the_key_its_own_way() -> None:
    run, standby = argparse.ArgumentParser(), argparse.ArgumentParser()
    add_match_options(run, RUN)
    add_match_options(standby, STANDBY)
    dests = {action.dest for action in run._actions} - {action.dest for action in standby._actions}
    assert dests == {"replicate"}
    assert standby.parse_args(["--key", "k.key"]).replicate_key.name == "k.key"
    assert match_option("replicate").flags.keys() == {RUN}


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--games", "3"], {"games": 3}),
        (["A", "B"], {"port_a": "A", "port_b": "B"}),
        (["--name-b", "Stockfish", "--baud", "19200"], {"name_b": "Stockfish", "baud": 19200}),
        (["--reset-delay", "0.5", "--on-infraction", "fault"],
         {"reset_delay": 0.5, "on_infraction": "fault"}),
        ([], {}),
    ],
)  # fmt: skip
def test_what_the_command_line_gives_reaches_the_config_by_the_rows_names(
    argv: list[str], expected: dict[str, object]
) -> None:
    parser = argparse.ArgumentParser()
    add_match_options(parser, RUN)
    args = parser.parse_args(argv)
    given = {name: value for name, value in vars(args).items() if name != "config"}
    assert given == expected
    config = match_config(args)
    defaults = load_config(None)
    assert config.games == expected.get("games", defaults.games)
    assert config.port_a.path == expected.get("port_a")
    assert config.port_b.name == expected.get("name_b")
    assert config.port_a.settings.baudrate == expected.get("baud", 9600)
    assert config.on_infraction == expected.get("on_infraction", "forfeit")
