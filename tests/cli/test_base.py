"""The command line's hints: no abbreviated options, the closest option, the verb's help."""

from __future__ import annotations

import argparse

import pytest
from clirun import restored_logging, usage_error  # noqa: F401 (a fixture)

from serialref import cli
from serialref.cli.base import Parser

PORTS = ("/dev/serialref-test-missing-a", "/dev/serialref-test-missing-b")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("run", *PORTS, "--gmes", "2"), "unknown option --gmes (did you mean "
         "--games?); see `serialref run --help`"),
        # An abbreviation is not taken for the option it begins.
        (("run", *PORTS, "--game", "2"), "unknown option --game (did you mean "
         "--games?); see `serialref run --help`"),
        (("run", *PORTS, "--tc=60", "--gmes=2"), "unknown option --gmes (did you "
         "mean --games?); see `serialref run --help`"),
        # Named before the option it hides is missed (--engine or --player is required).
        (("client", PORTS[0], "--engin", "stockfish"), "unknown option --engin (did you "
         "mean --engine?); see `serialref client --help`"),
        (("epd", "check", "--varient", "shogi", "-"), "unknown option --varient (did you mean "
         "--variant?); see `serialref epd check --help`"),
        (("standby", "7600", "--replicate", "127.0.0.1:7601"), "unknown option --replicate; "
         "see `serialref standby --help`"),
    ],
)  # fmt: skip
def test_an_unknown_option_is_named_with_the_closest_and_the_verbs_help(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], expected: str
) -> None:
    assert usage_error(capsys, *argv) == f"serialref: error: {expected}\n"


def test_values_that_start_with_a_dash_are_not_options() -> None:
    parser = Parser(prog="serialref test")
    parser.add_argument("--resign-below", type=int)
    parser.add_argument("--tc")
    parser.add_argument("files", nargs="*")
    parsed = parser.parse_args(["--resign-below", "-300", "--tc", "-", "-"])
    assert parsed == argparse.Namespace(resign_below=-300, tc="-", files=["-"])


def test_no_parser_abbreviates() -> None:
    parser = Parser(prog="serialref test")
    parser.add_argument("--games")
    assert parser.allow_abbrev is False
    with pytest.raises(SystemExit):
        parser.parse_args(["--gam", "2"])


def test_the_programs_help_says_where_each_commands_options_are(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "`serialref run --help` a match's (--games, --tc," in help_text
    assert "`serialref client --help` a player's (--engine," in help_text
