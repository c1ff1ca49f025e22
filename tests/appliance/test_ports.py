"""serialref.appliance.ports with fake pyserial ListPortInfo objects and a fake udev database."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from serial.tools import list_ports

from serialref.appliance.ports import (
    PortInfo,
    format_ports,
    list_serial_ports,
    port_info,
    udev_rule,
)
from serialref.errors import ConfigError

PI4_ID_PATH = "platform-fd500000.pcie-pci-0000:01:00.0-usb-0:1.3:1.0"
ACTIONS = 'GROUP="dialout", MODE="0660", TAG+="systemd", ENV{ID_MM_DEVICE_IGNORE}="1"'


@dataclass
class FakeListPortInfo:
    """The attributes pyserial's ListPortInfo has on Linux."""

    device: str
    name: str
    description: str = "n/a"
    vid: int | None = None
    pid: int | None = None
    serial_number: str | None = None
    location: str | None = None


def ftdi(name: str = "ttyUSB0", serial_number: str | None = "A50285BI") -> FakeListPortInfo:
    return FakeListPortInfo(
        device=f"/dev/{name}", name=name, description="FT232R USB UART - FT232R USB UART",
        vid=0x0403, pid=0x6001, serial_number=serial_number, location="1-1.3",
    )


def fake_udev(root: Path, name: str, numbers: str, properties: dict[str, str]) -> None:
    """sysfs's dev file for tty ``name`` and udev's database entry for its device number."""
    tty = root / "sys" / "class" / "tty" / name
    tty.mkdir(parents=True)
    (tty / "dev").write_text(numbers + "\n")
    data = root / "udev"
    data.mkdir(exist_ok=True)
    entries = [f"E:{key}={value}" for key, value in properties.items()]
    lines = ["S:serial/by-path/x", "I:123", *entries]
    (data / f"c{numbers}").write_text("\n".join(lines) + "\n")


def test_port_info_reads_udev_values(tmp_path: Path) -> None:
    fake_udev(tmp_path, "ttyUSB0", "188:0", {
        "ID_PATH": PI4_ID_PATH, "ID_SERIAL_SHORT": "A50285BI", "ID_USB_INTERFACE_NUM": "00",
    })
    port = port_info(ftdi(), sysfs=tmp_path / "sys", udev_data=tmp_path / "udev")
    assert port.device == "/dev/ttyUSB0"
    assert port.usb_id == "0403:6001"
    assert port.serial_number == "A50285BI"
    assert port.id_path == PI4_ID_PATH
    assert port.physical_path == PI4_ID_PATH
    assert port.interface_number == "00"
    assert port.location == "1-1.3"


def test_without_udev_database_pyserial_values_are_used(tmp_path: Path) -> None:
    port = port_info(ftdi(serial_number=" AB 12/x "), sysfs=tmp_path, udev_data=tmp_path)
    assert port.id_path is None
    assert port.physical_path == "1-1.3"
    assert port.serial_number == "AB_12_x"  # spelt as udev spells ID_SERIAL_SHORT
    assert port.interface_number is None


def test_rule_by_path_is_the_default(tmp_path: Path) -> None:
    fake_udev(tmp_path, "ttyUSB0", "188:0", {"ID_PATH": PI4_ID_PATH})
    port = port_info(ftdi(), sysfs=tmp_path / "sys", udev_data=tmp_path / "udev")
    assert udev_rule(port, "a") == (
        f'SUBSYSTEM=="tty", ENV{{ID_PATH}}=="{PI4_ID_PATH}", SYMLINK+="serialref/a", {ACTIONS}'
    )


def test_rule_by_serial_number_names_the_interface_when_known(tmp_path: Path) -> None:
    fake_udev(tmp_path, "ttyUSB1", "188:1",
              {"ID_SERIAL_SHORT": "FT4Q9", "ID_USB_INTERFACE_NUM": "01"})
    port = port_info(ftdi("ttyUSB1"), sysfs=tmp_path / "sys", udev_data=tmp_path / "udev")
    assert udev_rule(port, "b", by="serial") == (
        'SUBSYSTEM=="tty", ENV{ID_SERIAL_SHORT}=="FT4Q9", ENV{ID_USB_INTERFACE_NUM}=="01", '
        f'SYMLINK+="serialref/b", {ACTIONS}'
    )


def test_rule_falls_back_to_the_kernel_names(tmp_path: Path) -> None:
    usb = port_info(ftdi(), sysfs=tmp_path, udev_data=tmp_path)
    assert 'KERNELS=="1-1.3", SYMLINK+="serialref/a"' in udev_rule(usb, "a")
    onboard = port_info(
        FakeListPortInfo(device="/dev/ttyAMA0", name="ttyAMA0", description="ttyAMA0"),
        sysfs=tmp_path, udev_data=tmp_path,
    )
    assert 'SUBSYSTEM=="tty", KERNEL=="ttyAMA0", SYMLINK+="serialref/b"' in udev_rule(onboard, "b")


def test_rule_by_serial_needs_a_serial_number(tmp_path: Path) -> None:
    port = port_info(ftdi(serial_number=None), sysfs=tmp_path, udev_data=tmp_path)
    with pytest.raises(ConfigError, match="reports no serial number"):
        udev_rule(port, "a", by="serial")


def test_rule_name_must_be_a_or_b(tmp_path: Path) -> None:
    port = port_info(ftdi(), sysfs=tmp_path, udev_data=tmp_path)
    with pytest.raises(ConfigError, match=r"^name: expected 'a' or 'b', got 'c'$"):
        udev_rule(port, "c")


def test_list_serial_ports_uses_pyserial_and_sorts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(list_ports, "comports", lambda: [ftdi("ttyUSB1"), ftdi("ttyUSB0")])
    ports = list_serial_ports(sysfs=tmp_path, udev_data=tmp_path)
    assert [port.device for port in ports] == ["/dev/ttyUSB0", "/dev/ttyUSB1"]


def test_format_ports_table_and_rules(tmp_path: Path) -> None:
    fake_udev(tmp_path, "ttyUSB0", "188:0", {"ID_PATH": PI4_ID_PATH, "ID_SERIAL_SHORT": "A50285BI"})
    first = port_info(ftdi(), sysfs=tmp_path / "sys", udev_data=tmp_path / "udev")
    second = port_info(
        FakeListPortInfo(device="/dev/ttyACM0", name="ttyACM0", description="USB Serial",
                         vid=0x2341, pid=0x0043, location="1-1.4:1.0"),
        sysfs=tmp_path / "sys", udev_data=tmp_path / "udev",
    )
    lines = format_ports([first, second]).splitlines()
    assert lines[0].split() == ["DEVICE", "VID:PID", "SERIAL", "PHYSICAL", "PATH", "DESCRIPTION"]
    assert lines[1].split()[:4] == ["/dev/ttyUSB0", "0403:6001", "A50285BI", PI4_ID_PATH]
    assert lines[2].split()[:4] == ["/dev/ttyACM0", "2341:0043", "-", "1-1.4:1.0"]
    assert lines[1].index("0403") == lines[0].index("VID:PID")  # columns line up
    assert udev_rule(first, "a") in lines
    assert "#" + udev_rule(first, "a", by="serial") in lines
    assert udev_rule(second, "b") in lines


def test_format_ports_escapes_descriptor_text() -> None:
    port = PortInfo(device="/dev/ttyUSB0", description="evil\x1b[2J", vid=None, pid=None,
                    serial_number=None, location=None, id_path=None, interface_number=None)
    assert "\x1b" not in format_ports([port])
    assert "evil\\x1b[2J" in format_ports([port])


def test_no_ports_gives_a_hint() -> None:
    text = format_ports([])
    assert text.startswith("no serial ports found")
    assert "brltty" in text
    assert "enable_uart=1" in text
