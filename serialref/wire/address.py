"""``HOST:PORT``: a network address as users write it, for replication and for listening.

One reader for every place that takes an address (the ``replicate`` setting, the
standby's listening address), so they accept and refuse exactly the same text. IPv6
hosts are written in brackets (``[::1]:7600``), as in URLs, because their own colons
would make the port ambiguous.
"""

from __future__ import annotations

from typing import NamedTuple

from serialref.errors import ConfigError

__all__ = ["Address", "format_address", "parse_address"]


class Address(NamedTuple):
    """A host (name, IPv4 or IPv6 address, without brackets) and a TCP port."""

    host: str
    port: int

    def __str__(self) -> str:
        return format_address(self.host, self.port)


def parse_address(
    text: str,
    *,
    key: str = "address",
    default_host: str | None = None,
    any_port: bool = False,
) -> Address:
    """``HOST:PORT`` as a host and a port, or a :class:`ConfigError` naming ``key``.

    With a ``default_host``, a bare ``PORT`` means that host. Port 0 (the system
    picks a free one) only makes sense for a listener, which asks for it with
    ``any_port``; an address to connect to needs a port from 1 to 65535.
    """
    written = text
    if default_host is not None and text.isascii() and text.isdecimal():
        text = format_address(default_host, int(text))
    host, separator, port = text.rpartition(":")
    bracketed = host.startswith("[") and host.endswith("]")
    if bracketed:
        host = host[1:-1]
    lowest = 0 if any_port else 1
    port_ok = port.isascii() and port.isdecimal() and lowest <= int(port) <= 65535
    if not (separator and host and port_ok and (bracketed or ":" not in host)):
        raise ConfigError(
            key, f"expected HOST:PORT such as '127.0.0.1:7600' or '[::1]:7600', got {written!r}"
        )
    return Address(host, int(port))


def format_address(host: str, port: int) -> str:
    """``HOST:PORT`` as :func:`parse_address` reads it."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
