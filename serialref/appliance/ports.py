"""``serialref ports``: which serial ports this machine has, and how to give them stable names.

USB adapters are numbered in the order the kernel finds them, so ``/dev/ttyUSB0`` may be
either player after a reboot. udev can name a port after the USB socket it is plugged
into (``ID_PATH``) or after the adapter's serial number (``ID_SERIAL_SHORT``); this
module shows those values and the ready-made rule line for ``udev/70-serialref.rules``.

pyserial lists the ports and reads vendor, product and serial number from sysfs. The
udev values are read from udev's own database (``/run/udev/data``), because ``ID_PATH`` is
udev's construction and a rule only matches if it is spelt exactly as udev spells it.
Where that database is missing (a container, a system without udev) the rule falls back
to the USB port's kernel name (``KERNELS=="1-1.3:1.0"``), which names the same socket.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from serial.tools import list_ports

from serialref.errors import ConfigError, escape

__all__ = ["PortInfo", "format_ports", "list_serial_ports", "udev_rule"]

SYSFS = Path("/sys")
UDEV_DATA = Path("/run/udev/data")

RULE_ACTIONS = (
    'GROUP="dialout", MODE="0660", TAG+="systemd", ENV{ID_MM_DEVICE_IGNORE}="1"'
)
"""What every serialref rule does besides the name: see ``udev/70-serialref.rules``."""

_UDEV_UNSAFE = re.compile(r"[^0-9A-Za-z#+\-.:=@_]")
"""Characters udev replaces with ``_`` in the values it derives from USB descriptors."""

_NO_PORTS_HINT = """\
no serial ports found
  - USB adapter: plug it in and run this again; `dmesg | tail` should show a ttyUSB or ttyACM.
  - A CH340 or CP210x adapter that appears and vanishes at once has been claimed by brltty:
    `sudo apt purge brltty` (see docs/raspberry-pi.md).
  - Raspberry Pi on-board UART: `enable_uart=1` in /boot/firmware/config.txt, then reboot."""


class ListPortInfoLike(Protocol):
    """The attributes of pyserial's ``ListPortInfo`` this module reads."""

    device: str
    name: str
    description: str
    vid: int | None
    pid: int | None
    serial_number: str | None
    location: str | None


@dataclass(frozen=True)
class PortInfo:
    """One serial port as ``serialref ports`` shows it; ``None`` where a value is unknown."""

    device: str
    description: str
    vid: int | None
    pid: int | None
    serial_number: str | None
    """As udev spells it in ``ID_SERIAL_SHORT`` (what a rule must match)."""
    location: str | None
    """The USB port's kernel name, e.g. ``1-1.3:1.0``: the socket, as the kernel numbers it."""
    id_path: str | None
    """udev's ``ID_PATH``: the socket, as a udev rule matches it."""
    interface_number: str | None
    """``ID_USB_INTERFACE_NUM``: tells apart the ports of one multi-port adapter."""

    @property
    def usb_id(self) -> str | None:
        """``VID:PID`` in the four-digit hexadecimal form lsusb prints."""
        if self.vid is None or self.pid is None:
            return None
        return f"{self.vid:04x}:{self.pid:04x}"

    @property
    def physical_path(self) -> str | None:
        """The best name for the socket the adapter is in."""
        return self.id_path or self.location


def list_serial_ports(*, sysfs: Path = SYSFS, udev_data: Path = UDEV_DATA) -> list[PortInfo]:
    """Every serial port pyserial finds, sorted by device, with udev's values where known."""
    return sorted(
        (port_info(found, sysfs=sysfs, udev_data=udev_data) for found in list_ports.comports()),
        key=lambda port: port.device,
    )


def port_info(
    found: ListPortInfoLike, *, sysfs: Path = SYSFS, udev_data: Path = UDEV_DATA
) -> PortInfo:
    """Combine what pyserial found about one port with udev's properties of it."""
    udev = _udev_properties(found.name, sysfs, udev_data)
    serial_number = udev.get("ID_SERIAL_SHORT") or (
        _UDEV_UNSAFE.sub("_", found.serial_number.strip()) if found.serial_number else None
    )
    return PortInfo(
        device=found.device,
        description=found.description,
        vid=found.vid,
        pid=found.pid,
        serial_number=serial_number,
        location=found.location,
        id_path=udev.get("ID_PATH"),
        interface_number=udev.get("ID_USB_INTERFACE_NUM"),
    )


def udev_rule(port: PortInfo, name: str, *, by: Literal["path", "serial"] = "path") -> str:
    """The rule line that makes ``port`` appear as ``/dev/serialref/<name>``.

    ``by="path"`` (the default) names whatever adapter sits in this USB socket;
    ``by="serial"`` names this adapter wherever it is plugged in, which needs an adapter
    with a unique serial number (FTDI chips have one; most CH340s have none).
    """
    if name not in ("a", "b"):
        raise ConfigError("name", f"expected 'a' or 'b', got {name!r}")
    if by == "path":
        match = _match_by_path(port)
    elif port.serial_number:
        match = f'ENV{{ID_SERIAL_SHORT}}=="{port.serial_number}"'
        if port.interface_number is not None:
            match += f', ENV{{ID_USB_INTERFACE_NUM}}=="{port.interface_number}"'
    else:
        raise ConfigError(
            "serial_number", f"{port.device} reports no serial number; name it by path instead"
        )
    return f'SUBSYSTEM=="tty", {match}, SYMLINK+="serialref/{name}", {RULE_ACTIONS}'


def format_ports(ports: Iterable[PortInfo]) -> str:
    """A table of the ports, then a rule line per port (player A, B, A, ... in this order)."""
    listed = list(ports)
    if not listed:
        return _NO_PORTS_HINT
    header = ("DEVICE", "VID:PID", "SERIAL", "PHYSICAL PATH", "DESCRIPTION")
    rows = [
        tuple(
            escape(value or "-")
            for value in (
                port.device, port.usb_id, port.serial_number, port.physical_path, port.description
            )
        )
        for port in listed
    ]
    widths = [max(len(row[column]) for row in (header, *rows)) for column in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in (header, *rows)
    ]
    lines += ["", "udev rules for /etc/udev/rules.d/70-serialref.rules (swap a and b to suit):"]
    for number, port in enumerate(listed):
        name = "ab"[number % 2]
        lines.append(f"# {escape(port.device)} as player {name.upper()}, by its socket:")
        lines.append(udev_rule(port, name))
        if port.serial_number:
            lines.append("# ... or by this adapter's serial number, in any socket:")
            lines.append("#" + udev_rule(port, name, by="serial"))
    return "\n".join(lines)


def _match_by_path(port: PortInfo) -> str:
    if port.id_path:
        return f'ENV{{ID_PATH}}=="{port.id_path}"'
    if port.location:
        return f'KERNELS=="{port.location}"'
    device = port.device.removeprefix("/dev/")
    # An on-board UART without udev data: its kernel name is already stable.
    return f'KERNEL=="{device}"'


def _udev_properties(name: str, sysfs: Path, udev_data: Path) -> dict[str, str]:
    """``E:`` lines of udev's database entry for the tty ``name`` (empty if unreadable)."""
    try:
        numbers = (sysfs / "class" / "tty" / name / "dev").read_text(encoding="ascii").strip()
        entry = (udev_data / f"c{numbers}").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    properties: dict[str, str] = {}
    for line in entry.splitlines():
        key, separator, value = line.removeprefix("E:").partition("=")
        if line.startswith("E:") and separator:
            properties[key] = value
    return properties
