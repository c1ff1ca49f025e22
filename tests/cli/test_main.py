"""The command line: exit codes, one-line errors, tracebacks only with --debug, log levels."""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import re
import sys
from pathlib import Path

import processes
import pytest
from clirun import MISSING_PORTS, restored_logging, run, usage_error  # noqa: F401 (a fixture)

from serialref import __version__, cli
from serialref.cli import box as cli_box
from serialref.errors import ConfigError, InputError, PortOpenError, RecorderError

ROOT = Path(__file__).resolve().parent.parent


def test_version_and_full_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"serialref {__version__}"
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run", "--help"])
    assert exit_info.value.code == 0
    help_text = capsys.readouterr().out
    assert re.search(r"Exit\s+codes", help_text)
    assert help_text.startswith("usage: serialref run")
    for option in ("--games", "--tc", "--config", "--quiet", "--log-level", "--debug"):
        assert option in help_text


def test_the_program_runs_without_openssl() -> None:
    """The command line loads neither python-chess's engine layer nor asyncio (a
    referee needs neither); a process that then does (a client) loads no OpenSSL."""
    probe = "\n".join([
        "import sys",
        "from serialref.__main__ import run",
        "sys.argv = ['serialref', '--version']",
        "try:\n    run()\nexcept SystemExit:\n    pass",
        "early = [name for name in ('asyncio', 'chess.engine') if name in sys.modules]",
        "import chess.engine, hashlib",
        "names = ('asyncio', 'chess.engine', '_hashlib', 'ssl')",
        "loaded = [name for name in names if sys.modules.get(name)]",
        "print(' '.join(early) or '-', ' '.join(loaded), hashlib.sha256(b'serialref').hexdigest())",
    ])  # fmt: skip
    result = processes.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    version, report = result.stdout.splitlines()
    assert version == f"serialref {__version__}"
    digest = hashlib.sha256(b"serialref").hexdigest()
    assert report.split() == ["-", "asyncio", "chess.engine", digest]


def test_a_client_does_not_load_the_referees_modules(tmp_path: Path) -> None:
    """A command that names its verb builds that verb's arguments alone: a client's
    process (here one that fails at its port, everything imported) has none of the
    match options' table and what it brings."""
    probe = "\n".join([
        "import sys",
        "from serialref.__main__ import run",
        f"sys.argv = ['serialref', '--log-level', 'error', 'client', {str(tmp_path)!r},"
        " '--player', 'random', '--once']",
        "code = run()",
        "names = ('serialref.client.runner', 'serialref.appliance.options',"
        " 'serialref.referee.openings', 'serialref.sprt')",
        "print(code, *(name for name in names if name in sys.modules))",
    ])  # fmt: skip
    result = processes.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == [str(cli.EXIT_PORT), "serialref.client.runner"]


def _verbs_of(parser: argparse.ArgumentParser) -> list[str]:
    (verbs,) = (
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    )
    return list(verbs.choices)


def test_the_verb_groups_name_every_verb_once() -> None:
    """Each group's names are the verbs its module adds, so that every verb is found."""
    for _, names in cli._VERB_GROUPS:
        for name in names:
            assert _verbs_of(cli.build_parser(name)) == list(names)
    every = [name for _, names in cli._VERB_GROUPS for name in names]
    assert _verbs_of(cli.build_parser()) == every
    assert _verbs_of(cli.build_parser("frobnicate")) == every


@pytest.mark.parametrize(
    ("argv", "verb"),
    [
        (("client", "/dev/ttyS0", "--engine", "stockfish"), "client"),
        (("--log-level", "debug", "--debug", "run", "A", "B"), "run"),
        (("--log-level=info", "epd", "check"), "epd"),
        (("--version",), None),
        ((), None),
    ],
)
def test_the_verb_is_the_first_operand(argv: tuple[str, ...], verb: str | None) -> None:
    assert cli._verb_named(argv) == verb


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "the following arguments are required: COMMAND; see `serialref --help`"),
        (("epd",), "the following arguments are required: VERB; see `serialref epd --help`"),
        (("frobnicate",), "invalid choice: 'frobnicate'"),
        (("run", "--games", "x"),
         "argument --games: invalid int value: 'x'; see `serialref run --help`"),
        (("client", "/dev/null"),
         "one of the arguments --engine --player is required; see `serialref client --help`"),
        (("epd", "purge"), "the following arguments are required: opcode"),
        (("run", "a", "b", "c"), "unrecognized arguments: c"),
    ],
)
def test_usage_errors_are_one_line_with_a_hint(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    err = usage_error(capsys, *argv)
    assert err.count("\n") == 1
    assert err.startswith("serialref: error: ")
    assert message in err


def test_options_may_follow_the_operands(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = tmp_path / "in.epd"
    source.write_text("4k3/8/8/8/8/8/8/4K3 w - - bm Kd2; id \"x\";\n")
    out = tmp_path / "out.epd"
    code, _, err = run(capsys, "epd", "purge", "bm", "-o", str(out), str(source))
    assert (code, err) == (cli.EXIT_OK, "")
    assert out.read_text() == '4k3/8/8/8/8/8/8/4K3 w - - id "x";\n'
    args = cli.build_parser().parse_args(["run", "A", "--games", "3", "B"])
    assert (args.port_a, args.port_b, args.games) == ("A", "B", 3)


ERRORS = [
    (ConfigError("tc", "bad"), cli.EXIT_USAGE, "serialref: error: tc: bad"),
    (
        PortOpenError("cannot open '/dev/x': busy"),
        cli.EXIT_PORT,
        "serialref: error: cannot open '/dev/x': busy",
    ),
    (
        RecorderError("cannot write /x: No space left on device"),
        cli.EXIT_FAILURE,
        "serialref: error: cannot write /x: No space left on device",
    ),
    (InputError("cannot read 'x.epd': Is a directory"), cli.EXIT_FAILURE,
     "serialref: error: cannot read 'x.epd': Is a directory"),
    (KeyboardInterrupt(), cli.EXIT_INTERRUPTED, "serialref: interrupted"),
    (RuntimeError("boom"), cli.EXIT_FAILURE, "serialref: internal error: RuntimeError('boom')"),
]


@pytest.mark.parametrize(("error", "code", "message"), ERRORS)
def test_errors_are_one_line_with_a_documented_exit_code(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: BaseException,
    code: int,
    message: str,
) -> None:
    monkeypatch.setattr(cli_box, "_run_ports", _raising(error))
    result, _, err = run(capsys, "ports")
    assert result == code
    assert err.count("\n") == 1
    assert err.startswith(message)
    assert "Traceback" not in err


@pytest.mark.parametrize(("error", "code", "message"), ERRORS)
def test_debug_adds_the_traceback_and_keeps_the_exit_code(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: BaseException,
    code: int,
    message: str,
) -> None:
    monkeypatch.setattr(cli_box, "_run_ports", _raising(error))
    for argv in (("ports", "--debug"), ("--debug", "ports")):
        result, _, err = run(capsys, *argv)
        assert result == code
        assert err.startswith("Traceback (most recent call last):")
        assert err.splitlines()[-1].startswith(message)
        assert "--debug for the traceback" not in err


def test_run_without_ports_says_what_is_missing(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run")
    assert code == cli.EXIT_USAGE
    assert "ports.a.path: missing" in err


def test_run_on_a_missing_port_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", *MISSING_PORTS)
    assert code == cli.EXIT_PORT
    assert "serialref ports" in err


def test_the_same_port_twice_is_named_as_such(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    device = tmp_path / "ttyUSB0"
    device.touch()
    link = tmp_path / "player-b"
    link.symlink_to(device)
    code, _, err = run(capsys, "run", str(device), str(device))
    assert code == cli.EXIT_USAGE
    assert err == (
        f"serialref: error: player A and player B are both given {str(device)!r}; "
        "each player needs a port of its own\n"
    )
    code, _, err = run(capsys, "run", str(device), str(link))
    assert code == cli.EXIT_USAGE
    assert f"are the same port ({str(device)!r})" in err
    assert "busy" not in err


def test_an_unopenable_port_gets_the_reason_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "run", str(tmp_path), MISSING_PORTS[1])
    assert code == cli.EXIT_PORT
    assert err == f"serialref: error: cannot open {str(tmp_path)!r}: Is a directory\n"


@pytest.mark.parametrize(
    ("verb", "operands", "level"),
    [
        (("run",), (), "info or the --config file's log_level"),
        (("standby",), ("127.0.0.1:7600",), "info or the --config file's log_level"),
        (("client",), ("PORT", "--player", "random"), "info"),
        (("demo",), (), "warning"),
        (("ports",), (), "warning"),
        (("config", "check"), ("match.toml",), "warning"),
        (("epd", "check"), (), "warning"),
    ],
)
def test_each_verb_states_its_true_log_level_default(
    capsys: pytest.CaptureFixture[str],
    verb: tuple[str, ...],
    operands: tuple[str, ...],
    level: str,
) -> None:
    with pytest.raises(SystemExit):
        cli.main([*verb, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"how much to log on stderr (default: {level})" in help_text
    args = cli.build_parser().parse_args([*verb, *operands])
    assert args.verb_log_level == level.split(maxsplit=1)[0]


@pytest.mark.parametrize(
    ("options", "file_level", "level"),
    [
        ((), None, logging.INFO),
        ((), "warning", logging.WARNING),
        (("--log-level", "error"), "debug", logging.ERROR),
        (("--debug",), "error", logging.DEBUG),
    ],
)
def test_run_logs_at_the_level_its_help_states(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    options: tuple[str, ...],
    file_level: str | None,
    level: int,
) -> None:
    config = tmp_path / "match.toml"
    config.write_text(f'log_level = "{file_level}"\n' if file_level else "")
    code, _, _ = run(capsys, "run", *MISSING_PORTS, "--config", str(config), *options)
    assert code == cli.EXIT_PORT
    assert logging.getLogger().level == level


def test_other_verbs_log_warnings_by_default(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = tmp_path / "in.epd"
    source.write_text("4k3/8/8/8/8/8/8/4K3 w - -\n")
    assert run(capsys, "epd", "check", str(source))[0] == cli.EXIT_OK
    assert logging.getLogger().level == logging.WARNING
    assert run(capsys, "epd", "check", "--log-level", "info", str(source))[0] == cli.EXIT_OK
    assert logging.getLogger().level == logging.INFO


def test_client_needs_an_engine_or_a_player(capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error(capsys, "client", "/dev/null")
    assert "one of the arguments --engine --player is required" in err


def _raising(error: BaseException) -> object:
    """A verb's handler that fails with ``error``."""

    def fail(args: argparse.Namespace) -> int:
        raise error

    return fail


BOOK_WITH_A_BAD_LINE = "4k3/8/8/8/8/8/4P3/4K3 w - -\n4k3/8/8/8/8/8/4P3/4K3 w - -1 12\n"
FILE_PORTS = f'[ports.a]\npath = "{MISSING_PORTS[0]}"\n[ports.b]\npath = "{MISSING_PORTS[1]}"\n'


@pytest.mark.parametrize(
    ("text", "ports_in_file", "check_code", "message"),
    [
        ("games = 2\n", False, cli.EXIT_OK,
         "ok; the command line must still give PORT_A and PORT_B"),
        ('[ports.a]\npath = "/dev/x"\n', False, cli.EXIT_OK,
         "ok; the command line must still give PORT_B"),
        (FILE_PORTS, True, cli.EXIT_OK, "ok"),
        ("games = true\n", False, cli.EXIT_REJECTED,
         "games: expected a whole number >= 1, got true"),
        ('tc = "3\n', False, cli.EXIT_REJECTED, "line 1, column 8: invalid TOML"),
        ('openings = "missing.epd"\n', False, cli.EXIT_REJECTED,
         "openings: 'missing.epd' is not a file"),
        ('openings = "book.epd"\n', False, cli.EXIT_REJECTED, "openings: book.epd:2:"),
        (FILE_PORTS.replace("-b", "-a"), True, cli.EXIT_REJECTED,
         "player A and player B are both given"),
    ],
)
def test_config_check_accepts_exactly_what_run_accepts(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    text: str,
    ports_in_file: bool,
    check_code: int,
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "book.epd").write_text(BOOK_WITH_A_BAD_LINE)
    config = tmp_path / "match.toml"
    config.write_text(text)
    code, out, err = run(capsys, "config", "check", str(config))
    assert code == check_code
    assert (out + err).startswith(f"{config}: {message}")
    assert (out + err).count("\n") == 1
    ports = () if ports_in_file else MISSING_PORTS
    code, _, err = run(capsys, "run", *ports, "--config", str(config))
    if check_code == cli.EXIT_OK:
        assert code == cli.EXIT_PORT  # accepted: it went on to open the ports
    else:
        assert code == cli.EXIT_USAGE
        assert err.startswith("serialref: error: ") and message in err


def test_an_unreadable_file_exits_5_for_every_verb(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for argv in (
        ("config", "check", str(tmp_path)),
        ("run", *MISSING_PORTS, "--config", str(tmp_path)),
        ("epd", "check", str(tmp_path)),
        ("epd", "normalize", str(tmp_path / "missing.epd")),
    ):
        for debug in ((), ("--debug",)):
            code, _, err = run(capsys, *argv, *debug)
            assert code == cli.EXIT_FAILURE, argv
            assert err.splitlines()[-1].startswith("serialref: error: cannot read ")
            assert "[Errno" not in err.splitlines()[-1]


def test_config_check_names_what_replication_still_needs_as_run_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "match.toml"
    config.write_text('replicate = "127.0.0.1:7600"\n')
    code, out, _ = run(capsys, "config", "check", str(config))
    assert code == cli.EXIT_OK
    assert out == (f"{config}: ok; the command line must still give "
                   "PORT_A, PORT_B, --journal and --replicate-key\n")  # fmt: skip
    code, _, err = run(capsys, "run", *MISSING_PORTS, "--config", str(config))
    assert (code, err) == (cli.EXIT_USAGE, "serialref: error: replicate: needs --journal: "
                                           "the standby is sent the journal file\n")  # fmt: skip
    journal = tmp_path / "match.jsonl"
    code, _, err = run(capsys, "run", *MISSING_PORTS, "--config", str(config), "--journal",
                       str(journal))  # fmt: skip
    assert code == cli.EXIT_USAGE
    assert err.startswith("serialref: error: --replicate-key: replication needs a shared key")
    assert not journal.exists()


def test_config_check_reads_the_key_file_as_run_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    key = tmp_path / "replication.key"
    key.write_bytes(bytes(32))
    key.chmod(0o644)
    config = tmp_path / "match.toml"
    config.write_text(f'replicate = "127.0.0.1:7600"\nreplicate_key = "{key}"\n'
                      f'journal = "{tmp_path / "match.jsonl"}"\n{FILE_PORTS}')  # fmt: skip
    code, _, err = run(capsys, "config", "check", str(config))
    assert code == cli.EXIT_REJECTED
    assert err.startswith(f"{config}: replicate_key: the key file {str(key)!r} can be read")
    code, _, err = run(capsys, "run", "--config", str(config))
    assert code == cli.EXIT_USAGE
    assert err.startswith("serialref: error: replicate_key: the key file")
    key.chmod(0o600)
    assert run(capsys, "config", "check", str(config))[:2] == (cli.EXIT_OK, f"{config}: ok\n")


def test_run_and_standby_take_every_option_of_the_table_for_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from serialref.appliance.options import MATCH_OPTIONS

    for verb in ("run", "standby"):
        with pytest.raises(SystemExit):
            cli.main([verb, "--help"])
        help_text = capsys.readouterr().out
        for option in MATCH_OPTIONS:
            for flag in option.flags.get(verb, ()):
                assert re.search(rf"(^|\s|\[){re.escape(flag)}\b", help_text), (verb, flag)
    err = usage_error(capsys, "standby", "7600", "--replicate", "127.0.0.1:7601")
    assert "unknown option --replicate; see `serialref standby --help`" in err


def test_the_command_line_reports_a_missing_engine_in_one_line(tmp_path: Path) -> None:
    port = str(tmp_path / "ttyNothing")
    runs = [
        (["--engine", "no-such-engine --uci"], 5, "engine program 'no-such-engine' not found"),
        (["--player", "greedy", "--nodes", "5"], 2, "nodes: only applies to an --engine"),
        (["--player", "greedy", "--protocol", "uci"], 2, "protocol: only applies to an --engine"),
    ]
    for options, exit_code, message in runs:
        finished = processes.run(
            [sys.executable, "-m", "serialref", "client", port, *options],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        )
        assert finished.returncode == exit_code
        assert len(finished.stderr.splitlines()) == 1, finished.stderr
        assert finished.stderr.startswith(f"serialref: error: {message}")
