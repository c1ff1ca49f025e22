"""The command line: exit codes, one-line errors, tracebacks only with --debug."""

from __future__ import annotations

import argparse
import re

import pytest

from serialref import __version__, cli
from serialref.errors import ConfigError, PortOpenError, RecorderError


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"serialref {__version__}"
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run", "--help"])
    assert exit_info.value.code == 0
    assert re.search(r"Exit\s+codes", capsys.readouterr().out)


def test_no_command_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys)
    assert code == cli.EXIT_USAGE
    assert "usage: serialref" in err


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
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
        (RuntimeError("boom"), cli.EXIT_FAILURE, "serialref: internal error: RuntimeError('boom')"),
    ],
)
def test_errors_are_one_line_with_a_documented_exit_code(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: Exception,
    code: int,
    message: str,
) -> None:
    def fail(args: argparse.Namespace) -> int:
        raise error

    monkeypatch.setattr(cli, "_add_ports_verb", _ports_verb_with(fail))
    result, _, err = run(capsys, "ports")
    assert result == code
    assert err.strip().splitlines()[-1].startswith(message)
    assert "Traceback" not in err


def test_debug_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(args: argparse.Namespace) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr(cli, "_add_ports_verb", _ports_verb_with(fail))
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["ports", "--debug"])


def test_run_without_ports_says_what_is_missing(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run")
    assert code == cli.EXIT_USAGE
    assert "ports.a.path: missing" in err


def test_run_on_a_missing_port_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", "/dev/serialref-test-missing", "/dev/serialref-test-gone")
    assert code == cli.EXIT_PORT
    assert "serialref ports" in err


def test_client_needs_an_engine_or_a_player(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["client", "/dev/null"])
    assert exit_info.value.code == cli.EXIT_USAGE
    assert "one of the arguments --engine --player is required" in capsys.readouterr().err


def _ports_verb_with(handler: object) -> object:
    def add(
        verbs: argparse._SubParsersAction[argparse.ArgumentParser],
        common: argparse.ArgumentParser,
    ) -> None:
        verbs.add_parser("ports", parents=[common]).set_defaults(handler=handler)

    return add
