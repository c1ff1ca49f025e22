"""The player PC's unit starts ``serialref client`` with the options its guide writes.

systemd itself cannot run here, so its two readings are done as it does them: the
``.env`` file by the rules of systemd's ``parse_env_file_internal`` (quotes only where a
value begins, a backslash escaping the next character, trailing blanks cut), and
``ExecStart=`` by splitting its words, filling in ``%I`` and turning ``$$`` into ``$``.
The command that results runs for real, ``/bin/sh`` included, with a stand-in where the
unit expects ``serialref`` that writes down the arguments it was given.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import processes
import pytest

from serialref import cli

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "systemd" / "serialref-client@.service"
GUIDE = ROOT / "docs" / "raspberry-pi.md"
PROGRAM = "/usr/local/bin/serialref"


def systemd_env_file(text: str) -> dict[str, str]:
    """``KEY=value`` lines as systemd's EnvironmentFile= reads them (comments, quotes at
    the start of a value or after a closing quote, backslash escapes, trailing blanks)."""
    variables: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.lstrip()
        if not stripped or stripped[0] in "#;" or "=" not in stripped:
            continue
        key, raw = stripped.split("=", 1)
        value, quote, escaped, at_start = "", "", False, True
        trailing = ""  # blanks seen outside quotes, kept only if more follows
        for char in raw:
            if escaped:
                value, trailing, escaped, at_start = value + trailing + char, "", False, False
            elif quote:
                if char == quote:
                    quote, at_start = "", True
                elif char == "\\" and quote == '"':
                    escaped = True
                else:
                    value += char
            elif char == "\\":
                escaped = True
            elif at_start and char in "'\"":
                quote = char
            elif char in " \t":
                trailing += "" if at_start else char  # blanks before a value are skipped
            else:
                value, trailing, at_start = value + trailing + char, "", False
        variables[key.rstrip()] = value
    return variables


def exec_start_argv(instance: str) -> list[str]:
    """The unit's ``ExecStart=`` as systemd hands it to the kernel for ``instance``."""
    line = next(line for line in UNIT.read_text(encoding="utf-8").splitlines()
                if line.startswith("ExecStart="))  # fmt: skip
    words = shlex.split(line.removeprefix("ExecStart="))
    argv = []
    for word in words:
        filled = word.replace("%I", instance).replace("%%", "%")
        assert "$" not in filled.replace("$$", ""), f"systemd would substitute in {filled}"
        argv.append(filled.replace("$$", "$"))
    return argv


def started_with(env_file: str | None, tmp_path: Path, instance: str = "ttyUSB0") -> list[str]:
    """The arguments the client would be started with, the ``.env`` file holding ``env_file``."""
    stand_in = tmp_path / "serialref"
    stand_in.write_text('#!/bin/sh\nfor arg in "$@"; do printf "%s\\n" "$arg"; done\n')
    stand_in.chmod(0o755)
    argv = [word.replace(PROGRAM, str(stand_in)) for word in exec_start_argv(instance)]
    environment = systemd_env_file(env_file) if env_file is not None else {}
    result = processes.run(argv, env=environment, capture_output=True, text=True,
                            check=False, timeout=30)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def guide_env_file() -> str:
    """What the guide's ``echo '...' | sudo tee /etc/serialref/client-ttyUSB0.env`` writes."""
    found = re.search(r"^echo '([^']*)' \| sudo tee /etc/serialref/client-ttyUSB0\.env$",
                      GUIDE.read_text(encoding="utf-8"), re.MULTILINE)  # fmt: skip
    assert found, "the guide's .env line"
    return found.group(1) + "\n"


def test_the_env_file_reader_follows_systemds_rules() -> None:
    text = ("# a comment\nA=--engine \"gnu chess\"  \nB=\"quoted value\" \nC='single'\n"
            "D=back\\ slash\nE= \"two\" 'parts'\n")  # fmt: skip
    assert systemd_env_file(text) == {
        "A": '--engine "gnu chess"', "B": "quoted value", "C": "single", "D": "back slash",
        "E": "twoparts",
    }  # fmt: skip


def test_the_guides_engine_command_and_name_stay_one_argument_each(tmp_path: Path) -> None:
    args = started_with(guide_env_file(), tmp_path)
    assert args == ["client", "/dev/ttyUSB0", "--engine", "/usr/games/gnuchess --xboard",
                    "--name", "GNU Chess", "--depth", "2"]  # fmt: skip
    parsed = cli.build_parser().parse_args(args)
    assert (parsed.engine, parsed.name, parsed.depth) == (
        "/usr/games/gnuchess --xboard", "GNU Chess", 2)


def test_an_instance_names_a_path_under_dev(tmp_path: Path) -> None:
    by_id = "serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0"
    args = started_with("SERIALREF_CLIENT_ARGS=--player random\n", tmp_path, by_id)
    assert args == ["client", f"/dev/{by_id}", "--player", "random"]


def test_without_the_env_file_the_client_stops_with_a_usage_error(tmp_path: Path) -> None:
    """Exit 2, which the unit does not restart: the file is missing, not a player."""
    args = started_with(None, tmp_path)
    assert args == ["client", "/dev/ttyUSB0"]
    result = processes.run([sys.executable, "-m", "serialref", *args], capture_output=True,
                           text=True, check=False, timeout=60)  # fmt: skip
    assert result.returncode == cli.EXIT_USAGE
    unit = UNIT.read_text(encoding="utf-8")
    assert "\nRestartPreventExitStatus=2\n" in unit
    assert "\nEnvironmentFile=-/etc/serialref/client-%i.env\n" in unit


@pytest.mark.parametrize("unit", ["serialref-client@.service"])
def test_the_player_pc_loads_the_drivers_its_device_rules_need(unit: str) -> None:
    text = (ROOT / "systemd" / unit).read_text(encoding="utf-8")
    assert "\nDeviceAllow=char-ttyUSB rw\n" in text
    section = GUIDE.read_text(encoding="utf-8").split("## 11. Player PCs", 1)[1]
    commands = section.split("## 12.", 1)[0]
    assert "sudo install -m 644 systemd/modules-load.d/serialref.conf /etc/modules-load.d/" in (
        commands)
    assert "sudo install -d -m 755 /etc/serialref\n" in commands
    assert commands.index("install -d") < commands.index("sudo tee /etc/serialref/")
