"""The command line run in the test's process, as the CLI tests drive it."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from serialref import cli

MISSING_PORTS = ("/dev/serialref-test-missing-a", "/dev/serialref-test-missing-b")
"""Two ports no machine has: a command that gets as far as opening them exits 3."""


@pytest.fixture(autouse=True)
def restored_logging() -> Iterator[None]:
    """main() configures the root logger: give it back as the test found it."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``serialref ARGV``: its exit code, stdout and stderr."""
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The stderr of a command line argparse refuses, asserted to exit 2."""
    with pytest.raises(SystemExit) as exit_info:
        cli.main(list(argv))
    assert exit_info.value.code == cli.EXIT_USAGE
    return capsys.readouterr().err
