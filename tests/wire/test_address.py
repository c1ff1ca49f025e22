"""serialref.wire.address: HOST:PORT, read the same way for replication and for listening."""

from __future__ import annotations

import pytest

from serialref.errors import ConfigError
from serialref.wire.address import Address, format_address, parse_address


@pytest.mark.parametrize(
    ("text", "expected"),
    [("127.0.0.1:7600", ("127.0.0.1", 7600)), ("[::1]:7600", ("::1", 7600)),
     ("standby.lan:1", ("standby.lan", 1)), ("host:65535", ("host", 65535))],
)  # fmt: skip
def test_addresses_are_split_into_host_and_port(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text) == expected


def test_only_a_listener_may_ask_for_any_free_port() -> None:
    assert parse_address("localhost:0", any_port=True) == ("localhost", 0)
    with pytest.raises(ConfigError, match=r"^replicate: expected HOST:PORT .*'localhost:0'$"):
        parse_address("localhost:0", key="replicate")


def test_a_bare_port_takes_the_default_host_where_there_is_one() -> None:
    assert parse_address("7600", default_host="127.0.0.1") == ("127.0.0.1", 7600)
    assert parse_address("[::1]:7600", default_host="127.0.0.1") == ("::1", 7600)
    with pytest.raises(ConfigError, match="HOST:PORT"):
        parse_address("7600")


def test_an_error_shows_the_address_as_written() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_address("99999", default_host="127.0.0.1")
    assert str(caught.value).endswith("got '99999'")


@pytest.mark.parametrize(
    "text", ["7600", ":7600", "host:", "host:port", "::1:7600", "h:65536", "[::1]", "h:٣"]
)
def test_a_malformed_address_is_a_config_error_naming_the_option(text: str) -> None:
    with pytest.raises(ConfigError, match="HOST:PORT") as caught:
        parse_address(text, key="replicate")
    assert caught.value.key == "replicate"


@pytest.mark.parametrize(("host", "port"), [("127.0.0.1", 7600), ("::1", 0), ("standby.lan", 1)])
def test_an_address_reads_back_as_it_is_written(host: str, port: int) -> None:
    address = Address(host, port)
    assert str(address) == format_address(host, port)
    assert parse_address(str(address), any_port=True) == address
