"""``serialref config check``: match and event files, every error of a file, what run refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from clirun import MISSING_PORTS, restored_logging, run  # noqa: F401 (a fixture)

from serialref import cli
from serialref.appliance.config import load_config
from serialref.errors import ConfigError, GroupedConfigError
from serialref.tournament.config import load_tournament_config

ROOT = Path(__file__).resolve().parents[2]
EVENT_EXAMPLE = ROOT / "examples" / "event.toml"


def write(tmp_path: Path, text: str, name: str = "file.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_example_event_file_is_checked_as_an_event(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "config", "check", str(EVENT_EXAMPLE))
    assert (code, err) == (cli.EXIT_OK, "")
    assert out == f"{EVENT_EXAMPLE}: ok (an event: round-robin of 4 players, 12 pairings)\n"


def test_an_event_file_is_checked_by_the_event_rules(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    event = write(tmp_path, 'format = "match"\ngames = 0\n[[players]]\nname = "A"\n'
                  'player = "greedy"\nport_a = "/dev/ttyS0"\n')  # fmt: skip
    code, out, err = run(capsys, "config", "check", str(event))
    assert (code, out) == (cli.EXIT_REJECTED, "")
    assert err.splitlines() == [
        f"{event}: players[0].port_a: not a key of a player",
        f"{event}: games: must be a whole number of at least 1, not 0",
        f"{event}: 2 errors",
    ]


def test_every_error_of_a_match_file_is_one_line_then_a_count(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = write(tmp_path, 'gmes = 3\ntc = "1:00"\nbaud = "fast"\n'
                   '[ports.a]\nparity = "X"\n[ports.b]\nstopbits = 3\n')  # fmt: skip
    code, out, err = run(capsys, "config", "check", str(config))
    assert (code, out) == (cli.EXIT_REJECTED, "")
    lines = err.splitlines()
    assert [line.split(": ")[1] for line in lines[:-1]] == [
        "gmes", "tc", "baud", "ports.a.parity", "ports.b.stopbits",
    ]  # fmt: skip
    assert all(line.startswith(f"{config}: ") for line in lines)
    assert lines[-1] == f"{config}: 5 errors"
    # `run` refuses the same file on one line, which says there is more.
    code, _, err = run(capsys, "run", *MISSING_PORTS, "--config", str(config))
    assert code == cli.EXIT_USAGE
    assert err == (f"serialref: error: {lines[0]} (and 4 more; `serialref config check` "
                   "lists them all)\n")  # fmt: skip


def test_a_single_error_stays_a_single_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = write(tmp_path, "games = 0\n")
    code, _, err = run(capsys, "config", "check", str(config))
    assert (code, err.count("\n")) == (cli.EXIT_REJECTED, 1)


def test_the_event_reports_its_match_settings_by_their_keys_in_the_file(
    tmp_path: Path,
) -> None:
    event = write(tmp_path, 'tc = "1:00+1"\nweb = "nonsense"\n[[players]]\nname = "A"\n'
                  'player = "greedy"\n[[players]]\nname = "B"\nplayer = "random"\n')  # fmt: skip
    with pytest.raises(GroupedConfigError) as caught:
        load_tournament_config(event)
    assert [error.key for error in caught.value.errors] == ["tc", "web"]
    assert all(error.source == str(event) for error in caught.value.errors)


@pytest.mark.parametrize("key", ["pgn", "journal"])
def test_a_record_file_that_is_a_directory_is_refused_by_check_and_run_alike(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, key: str
) -> None:
    (tmp_path / "records").mkdir()
    config = write(tmp_path, f'{key} = "{tmp_path / "records"}"\n')
    code, _, err = run(capsys, "config", "check", str(config))
    message = f"{key}: {str(tmp_path / 'records')!r} is a directory; name a file in it"
    assert (code, err) == (cli.EXIT_REJECTED, f"{config}: {message}\n")
    code, _, err = run(capsys, "run", *MISSING_PORTS, "--config", str(config))
    assert (code, err) == (cli.EXIT_USAGE, f"serialref: error: {config}: {message}\n")


def test_a_record_file_in_a_missing_directory_is_refused_before_any_port_opens(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match=r"--journal: the directory '.*nowhere' does not exist"):
        load_config(None, {"journal": tmp_path / "nowhere" / "match.jsonl"})
    # A relative path's directory depends on where the referee runs: not looked for.
    assert load_config(None, {"pgn": "nowhere/match.pgn"}).pgn == Path("nowhere/match.pgn")


def test_an_event_directory_that_is_a_file_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "not a directory", name="event")
    event = write(tmp_path, '[[players]]\nname = "A"\nplayer = "greedy"\n'
                  '[[players]]\nname = "B"\nplayer = "random"\n')  # fmt: skip
    with pytest.raises(ConfigError, match=r"directory: .* is a file, not a directory"):
        load_tournament_config(event)


@pytest.mark.parametrize("verb", [("config", "check"), ("event", "--config")])
def test_deeply_nested_toml_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, verb: tuple[str, ...]
) -> None:
    config = write(tmp_path, "tc = " + "[" * 3000 + "]" * 3000 + "\n")
    code, _, err = run(capsys, *verb, str(config))
    assert code in (cli.EXIT_REJECTED, cli.EXIT_USAGE)
    assert err.count("\n") == 1 and "internal error" not in err
    assert err.rstrip().endswith(
        f"{config}: arrays or tables nested too deeply to read (no setting nests more than two)"
    )


def test_a_long_wrong_value_is_quoted_short(tmp_path: Path) -> None:
    config = write(tmp_path, "tc = [" + ", ".join(["1"] * 500) + "]\n")
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert caught.value.reason.startswith("expected a string, got [1, 1, ")
    assert caught.value.reason.endswith("...") and len(caught.value.reason) < 100
