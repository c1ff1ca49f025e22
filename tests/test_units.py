"""The shipped systemd units, modules-load snippet and udev rules, checked by the system's tools.

Everything is installed into a temporary root, with a copy of the host's own units so
that ``systemd-analyze verify --root`` can resolve ``multi-user.target`` and friends, and a
stand-in executable where ``ExecStart=`` expects ``serialref``. No running systemd is
needed. The exposure figures of ``systemd-analyze security`` are printed on the terminal.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from serialref.appliance.ports import RULE_ACTIONS, PortInfo, udev_rule

ROOT = Path(__file__).resolve().parent.parent
SYSTEMD = ROOT / "systemd"
RULES = ROOT / "udev" / "70-serialref.rules"
REFEREE_UNIT = "serialref.service"
STANDBY_UNIT = "serialref-standby.service"
CLIENT_INSTANCE = "serialref-client@ttyUSB0.service"
SAFE_EXPOSURE = 1.0

SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
HOST_UNITS = next(
    (path for path in (Path("/usr/lib/systemd/system"), Path("/lib/systemd/system"))
     if (path / "multi-user.target").exists()),
    None,
)
needs_systemd_analyze = pytest.mark.skipif(
    SYSTEMD_ANALYZE is None or HOST_UNITS is None,
    reason="systemd-analyze or the host's systemd units are missing (apt-get install systemd)",
)

_EXPOSURE = re.compile(r"Overall exposure level for (\S+): (\d+\.\d+) (\w+)")
_RULE_TOKEN = re.compile(
    r'\s*(?P<key>[A-Z_]+)(?:\{(?P<attr>[^}]+)\})?\s*(?P<op>==|!=|\+=|-=|:=|=)\s*"(?P<value>[^"]*)"'
    r"\s*(?:,|$)"
)
_MATCH_ONLY = {"ACTION", "SUBSYSTEM", "SUBSYSTEMS", "KERNEL", "KERNELS", "ATTRS"}
_ASSIGN_ONLY = {"SYMLINK", "GROUP", "MODE", "TAG", "GOTO", "LABEL"}


def install(root: Path, *, drop_ins: tuple[str, ...] = ()) -> Path:
    """Lay out a system as docs/raspberry-pi.md installs it, under ``root``."""
    shutil.copytree(HOST_UNITS or "", root / "usr/lib/systemd/system", symlinks=True)
    units = root / "etc/systemd/system"
    units.mkdir(parents=True)
    for unit in SYSTEMD.glob("*.service"):
        shutil.copy(unit, units)
    for name in drop_ins:
        target = units / f"{REFEREE_UNIT}.d"
        target.mkdir(exist_ok=True)
        shutil.copy(SYSTEMD / "drop-ins" / name, target)
    for directory, source in (("etc/modules-load.d", SYSTEMD / "modules-load.d/serialref.conf"),
                              ("etc/udev/rules.d", RULES)):
        (root / directory).mkdir(parents=True)
        shutil.copy(source, root / directory)
    for unit in SYSTEMD.glob("*.service"):
        executable = root / exec_start(unit.name).lstrip("/")
        executable.parent.mkdir(parents=True, exist_ok=True)
        executable.write_text("#!/bin/sh\nexit 0\n")
        executable.chmod(0o755)
    return root


def exec_start(unit: str) -> str:
    """The program a unit starts, so the stand-in sits exactly there."""
    text = (SYSTEMD / unit).read_text(encoding="utf-8")
    found = re.search(r"^ExecStart=(\S+)", text, re.MULTILINE)
    assert found, f"{unit} has no ExecStart="
    return found.group(1)


def analyze(*arguments: str) -> subprocess.CompletedProcess[str]:
    assert SYSTEMD_ANALYZE is not None
    return subprocess.run(
        [SYSTEMD_ANALYZE, *arguments], capture_output=True, text=True, check=False, timeout=60
    )


def exposure(root: Path, unit: str) -> tuple[float, str]:
    result = analyze("security", "--offline=true", f"--root={root}", "--no-pager", unit)
    assert result.returncode == 0, result.stdout + result.stderr
    found = _EXPOSURE.search(result.stdout)
    assert found, result.stdout
    return float(found.group(2)), found.group(3)


def report(capsys: pytest.CaptureFixture[str], text: str) -> None:
    """Show a figure on the terminal even though pytest captures output."""
    with capsys.disabled():
        print(f"\n{text}")


# --- systemd ------------------------------------------------------------------------------

@needs_systemd_analyze
def test_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    root = install(tmp_path)
    result = analyze("verify", f"--root={root}", "--man=no", "--recursive-errors=no",
                     REFEREE_UNIT, STANDBY_UNIT, CLIENT_INSTANCE)
    assert result.returncode == 0, result.stderr
    assert "serialref" not in result.stderr, result.stderr


@needs_systemd_analyze
def test_verify_catches_a_missing_executable(tmp_path: Path) -> None:
    """The check above can fail: without the program, verify refuses the unit."""
    root = install(tmp_path)
    (root / exec_start(REFEREE_UNIT).lstrip("/")).unlink()
    result = analyze("verify", f"--root={root}", "--man=no", "--recursive-errors=no", REFEREE_UNIT)
    assert result.returncode != 0
    assert "is not executable" in result.stderr


@needs_systemd_analyze
def test_drop_ins_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    root = install(tmp_path, drop_ins=("network.conf", "mini-uart.conf", "replicate.conf"))
    result = analyze("verify", f"--root={root}", "--man=no", "--recursive-errors=no", REFEREE_UNIT)
    assert result.returncode == 0, result.stderr
    assert "serialref" not in result.stderr, result.stderr


@needs_systemd_analyze
def test_referee_unit_is_safe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    level, verdict = exposure(install(tmp_path), REFEREE_UNIT)
    report(capsys, f"systemd-analyze security {REFEREE_UNIT}: exposure {level} {verdict}")
    assert level <= SAFE_EXPOSURE
    assert verdict in ("SAFE", "PERFECT")


@needs_systemd_analyze
def test_standby_unit_is_as_safe_as_a_referee_on_the_network(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    standby, verdict = exposure(install(tmp_path / "standby"), STANDBY_UNIT)
    referee, _ = exposure(install(tmp_path / "referee", drop_ins=("network.conf",)), REFEREE_UNIT)
    report(capsys, f"systemd-analyze security {STANDBY_UNIT}: exposure {standby} {verdict}")
    assert standby <= referee <= 2.0


def test_the_standby_unit_reads_its_key_from_a_credential() -> None:
    text = (SYSTEMD / STANDBY_UNIT).read_text(encoding="utf-8")
    credential = re.search(r"^LoadCredential=(\S+):/etc/serialref/\S+$", text, re.MULTILINE)
    assert credential, "no LoadCredential= for the key"
    assert f"--key %d/{credential.group(1)}" in text  # %d: $CREDENTIALS_DIRECTORY
    assert re.search(r"^RestartPreventExitStatus=2$", text, re.MULTILINE)
    drop_in = (SYSTEMD / "drop-ins" / "replicate.conf").read_text(encoding="utf-8")
    assert f"--replicate-key %d/{credential.group(1)}" in drop_in
    assert f"LoadCredential={credential.group(1)}:" in drop_in


@needs_systemd_analyze
def test_client_unit_is_safe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    level, verdict = exposure(install(tmp_path), CLIENT_INSTANCE)
    report(capsys, f"systemd-analyze security {CLIENT_INSTANCE}: exposure {level} {verdict}")
    assert level <= SAFE_EXPOSURE


@needs_systemd_analyze
def test_network_drop_in_costs_only_the_network(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closed, _ = exposure(install(tmp_path / "closed"), REFEREE_UNIT)
    level, verdict = exposure(install(tmp_path / "open", drop_ins=("network.conf",)), REFEREE_UNIT)
    report(capsys, f"systemd-analyze security {REFEREE_UNIT} + network.conf: "
                   f"exposure {level} {verdict}")
    assert closed < level <= 2.0


def test_referee_unit_keeps_running_without_its_devices() -> None:
    """A pulled cable must not stop the referee, so no unit dependency on the ports."""
    text = (SYSTEMD / REFEREE_UNIT).read_text(encoding="utf-8")
    assert not re.search(r"^(BindsTo|Requires|PartOf|Requisite)=", text, re.MULTILINE)
    for setting in ("Type=notify", "NotifyAccess=main", "Restart=on-failure",
                    "SupplementaryGroups=dialout", "StateDirectory=serialref",
                    "ProtectSystem=strict", "DevicePolicy=closed", "DeviceAllow=char-ttyUSB rw",
                    "DeviceAllow=char-ttyACM rw", "PrivateNetwork=yes"):
        assert f"\n{setting}\n" in text, setting
    assert re.search(r"^WatchdogSec=\d+s$", text, re.MULTILINE)


def test_modules_load_covers_the_usb_serial_drivers() -> None:
    text = (SYSTEMD / "modules-load.d" / "serialref.conf").read_text(encoding="utf-8")
    modules = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert all(re.fullmatch(r"[a-z0-9_]+", module) for module in modules), modules
    assert {"usbserial", "ftdi_sio", "cp210x", "ch341", "pl2303", "cdc_acm"} <= set(modules)


# --- udev ---------------------------------------------------------------------------------

def parse_rule(line: str) -> list[tuple[str, str | None, str, str]]:
    """(key, attribute, operator, value) of each comma-separated part, or AssertionError."""
    tokens = []
    position = 0
    while position < len(line):
        found = _RULE_TOKEN.match(line, position)
        assert found, f"cannot parse udev rule at column {position + 1}: {line}"
        key, op = found.group("key"), found.group("op")
        assert key in _MATCH_ONLY | _ASSIGN_ONLY | {"ENV"}, f"unexpected key {key}: {line}"
        assert key not in _MATCH_ONLY or op in ("==", "!="), f"{key} must be matched: {line}"
        assert key not in _ASSIGN_ONLY or op not in ("==", "!="), f"{key} is assigned: {line}"
        tokens.append((key, found.group("attr"), op, found.group("value")))
        position = found.end()
    return tokens


def rule_lines(*, include_commented: bool) -> list[str]:
    """The file's rules; with ``include_commented``, also the documented alternatives."""
    lines = []
    for line in RULES.read_text(encoding="utf-8").splitlines():
        if include_commented and re.match(r"#[A-Z]+(\{|==|!=)", line):
            lines.append(line[1:])
        elif line and not line.startswith("#"):
            lines.append(line)
    return lines


def test_udev_rules_parse_and_jump_to_their_label() -> None:
    rules = [parse_rule(line) for line in rule_lines(include_commented=True)]
    labels = {value for rule in rules for key, _, _, value in rule if key == "LABEL"}
    gotos = {value for rule in rules for key, _, _, value in rule if key == "GOTO"}
    assert gotos == labels == {"serialref_end"}
    assert rules[0] == [("ACTION", None, "==", "remove"), ("GOTO", None, "=", "serialref_end")]
    assert rules[-1] == [("LABEL", None, "=", "serialref_end")]


def test_every_naming_rule_sets_group_mode_tag_and_modem_manager_ignore() -> None:
    naming = [line for line in rule_lines(include_commented=True) if "SYMLINK+=" in line]
    assert len(naming) == 5  # by path a/b, by serial a/b, on-board UART
    for line in naming:
        assert line.endswith(RULE_ACTIONS), line
        assert re.search(r'SYMLINK\+="serialref/[ab]"', line), line


def test_active_rules_match_by_id_path_with_placeholders() -> None:
    naming = [line for line in rule_lines(include_commented=False) if "SYMLINK+=" in line]
    assert [re.search(r'ENV\{ID_PATH\}=="([^"]+)"', line) is not None for line in naming] == [
        True, True]
    assert all("SOCKET-" in line for line in naming)  # never matches until filled in


def test_rule_printed_by_serialref_ports_parses() -> None:
    port = PortInfo(device="/dev/ttyUSB0", description="FT232R", vid=0x403, pid=0x6001,
                    serial_number="A50285BI", location="1-1.3",
                    id_path="platform-fd500000.pcie-pci-0000:01:00.0-usb-0:1.3:1.0",
                    interface_number="00")
    for line in (udev_rule(port, "a"), udev_rule(port, "a", by="serial")):
        assert ("SYMLINK", None, "+=", "serialref/a") in parse_rule(line)


def test_parse_rule_rejects_a_broken_line() -> None:
    with pytest.raises(AssertionError, match="cannot parse"):
        parse_rule('ENV{ID_PATH}=="x" SYMLINK+="serialref/a"')
    with pytest.raises(AssertionError, match="must be matched"):
        parse_rule('KERNEL="ttyUSB0"')


def test_udevadm_verify_accepts_the_rules(tmp_path: Path) -> None:
    udevadm = shutil.which("udevadm")
    if udevadm is None:
        pytest.skip("udevadm is missing (apt-get install udev)")
    probe = subprocess.run([udevadm, "verify", "--help"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("this udevadm has no verify command (systemd >= 254 needed)")
    result = subprocess.run([udevadm, "verify", str(RULES)], capture_output=True,
                            text=True, check=False, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


DESCRIPTORS_PER_BOARD = 16
"""A board's ports, pty pairs, journal, PGN and player processes' pipes, rounded up."""


@pytest.mark.parametrize("unit", [REFEREE_UNIT, STANDBY_UNIT])
def test_the_descriptor_limit_lets_every_cap_be_reached(unit: str) -> None:
    """The audience stops at the limit less its reserve, counting the referee's own
    descriptors below it: the limit holds both feeds' caps, 16 boards and the reserve."""
    from serialref.observers.feed import MAX_CLIENTS as FEED_CLIENTS
    from serialref.wire.acceptor import AUDIENCE_RESERVE

    found = re.search(r"^LimitNOFILE=(\d+)$", (SYSTEMD / unit).read_text(), re.MULTILINE)
    assert found is not None
    needed = 2 * FEED_CLIENTS + 16 * DESCRIPTORS_PER_BOARD + AUDIENCE_RESERVE
    assert int(found.group(1)) >= needed
