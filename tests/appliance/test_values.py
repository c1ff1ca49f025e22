"""serialref.appliance.values: each kind of setting, read once into the type the referee uses."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from serialref.appliance.values import (
    address,
    boolean,
    choice,
    choice_of,
    host_name_or_text,
    number,
    opening_book,
    optional_path,
    optional_text,
    seconds,
    shown,
    sprt_test,
    start_position,
    text,
    time_control,
    whole_number,
)
from serialref.errors import ConfigError
from serialref.referee.settings import OnInfraction
from serialref.sprt import SprtModel, SprtTest
from serialref.timecontrol import TimeControl
from serialref.wire.address import Address


def refusal(read: object, value: object, key: str = "ports.b.x") -> str:
    """The reason a kind gives for refusing ``value``, asserted to name ``key``."""
    assert callable(read)
    with pytest.raises(ConfigError) as caught:
        read(key, value)
    assert caught.value.key == key
    return caught.value.reason


def test_values_are_shown_as_toml_writes_them() -> None:
    assert [shown(True), shown(False), shown("x"), shown(3), shown({})] == [
        "true", "false", "'x'", "3", "a table"]  # fmt: skip


def test_numbers() -> None:
    assert whole_number(minimum=1).read("games", 3) == 3
    assert refusal(whole_number(minimum=1).read, 0) == "expected a whole number >= 1, got 0"
    assert refusal(whole_number().read, 2.0) == "expected a whole number, got 2.0"
    assert refusal(whole_number().read, True) == "expected a whole number, got true"
    assert number(describe="n").read("x", 1.5) == 1.5
    assert refusal(number(describe="n").read, "1") == "expected a number, got '1'"
    assert refusal(number(describe="n").read, float("inf")) == "expected a finite number, got inf"
    assert seconds().read("x", 2) == 2.0
    assert isinstance(seconds().read("x", 2), float)
    assert refusal(seconds().read, -0.5) == "expected seconds >= 0, got -0.5"
    assert whole_number().argument("12") == 12
    assert seconds().argument("0.25") == 0.25


def test_words_and_switches() -> None:
    assert boolean().read("x", False) is False
    assert refusal(boolean().read, "yes") == "expected true or false, got 'yes'"
    assert choice_of(OnInfraction).read("x", "fault") is OnInfraction.FAULT
    assert choice_of(OnInfraction).choices == ("forfeit", "fault")
    assert choice_of(OnInfraction).describe == '`"forfeit"` or `"fault"`'
    newline = choice({"crlf": b"\r\n", "lf": b"\n"})
    assert newline.read("x", "lf") == b"\n"
    assert refusal(newline.read, "cr") == "expected one of 'crlf', 'lf', got 'cr'"
    assert refusal(newline.read, 1) == "expected a string, got 1"
    assert choice({"a": 1, "b": 2, "c": 3}).describe == '`"a"`, `"b"`, `"c"`'


def test_text_and_paths(tmp_path: Path) -> None:
    assert text().read("x", tmp_path) == str(tmp_path)
    assert refusal(text().read, 7) == "expected a string, got 7"
    assert optional_text().read("x", "") is None
    assert host_name_or_text().read("x", "") == socket.gethostname()
    assert host_name_or_text().read("x", "Club") == "Club"
    assert optional_path().read("x", "") is None
    assert optional_path().read("x", "~/a.pgn") == Path.home() / "a.pgn"
    assert optional_path().argument("a.pgn") == Path("a.pgn")


def test_a_time_control_is_parsed_and_its_error_names_the_key() -> None:
    assert time_control().read("tc", " 40/7200:3600 ") == TimeControl.parse("40/7200:3600")
    assert time_control().read("tc", "10+0.1").text == "10+0.1"
    assert refusal(time_control().read, "40/", key="--tc").startswith("'40/'")
    assert refusal(time_control().read, 300, key="tc") == "expected a string, got 300"


def test_an_address_to_connect_to() -> None:
    assert address().read("replicate", "[::1]:7600") == Address("::1", 7600)
    assert address().read("replicate", "") is None
    assert refusal(address().read, "standby:0", key="replicate").startswith("expected HOST:PORT")


def test_a_start_position_keeps_the_fen_as_written() -> None:
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - -"
    start = start_position().read("fen", fen)
    assert start is not None
    assert start.source == fen
    assert start.openings[0].fen == f"{fen} 0 1"
    assert start_position().read("fen", "") is None
    assert refusal(start_position().read, "8/8 w - -", key="--fen").startswith("'8/8 w - -' is not")


def test_an_opening_book_is_read_once_and_its_errors_name_the_key(tmp_path: Path) -> None:
    book = tmp_path / "book.pgn"
    book.write_text("1. e4 e5 *\n\n1. d4 *\n")
    start = opening_book().read("openings", str(book))
    assert start is not None
    assert start.source == str(book)
    assert [opening.moves for opening in start.openings] == [("e4", "e5"), ("d4",)]
    assert opening_book().read("openings", "") is None
    missing = str(tmp_path / "nowhere.epd")
    assert refusal(opening_book().read, missing, key="--openings") == (
        f"{missing!r} is not a file; expected an EPD or PGN file")
    bad = tmp_path / "bad.epd"
    bad.write_text("4k3/8/8/8/8/8/4P3/4K3 w - -\n8/8 w - -\n")
    assert refusal(opening_book().read, bad, key="--openings").startswith(f"{bad}:2: ")


def test_an_sprt_is_words_on_the_command_line_and_one_string_in_the_file() -> None:
    read = sprt_test().read
    expected = SprtTest(0, 5, 0.05, 0.05, SprtModel.NORMALIZED)
    assert read("sprt", "elo0=0 elo1=5 model=normalized") == expected
    assert read("--sprt", ["elo0=0", "elo1=5", "model=normalized"]) == expected
    assert read("sprt", "") is None
    assert "elo0 (5) must be below elo1 (0)" in refusal(read, "elo0=5 elo1=0", key="sprt")
    assert "expected elo0=" in refusal(read, ["gamma=1"], key="--sprt")
    assert "expected a string" in refusal(read, 5, key="sprt")
