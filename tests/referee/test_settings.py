"""A match's settings: which opening and colours each game gets, its roster, its identity."""

from __future__ import annotations

import dataclasses
import datetime

import chess
import pytest

from serialref.referee.openings import Opening
from serialref.referee.settings import PORTS, MatchSettings, OnInfraction, other_port
from serialref.timecontrol import TimeControl

BOOK = (
    Opening(),
    Opening(moves=("e4", "c5")),
    Opening(fen="4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"),
)


def test_ports_and_their_opponents() -> None:
    assert PORTS == ("a", "b")
    assert [other_port(port) for port in PORTS] == ["b", "a"]


def test_each_opening_is_played_twice_then_the_book_starts_over() -> None:
    settings = MatchSettings(games=8, openings=BOOK)
    assert [settings.opening(game) for game in range(1, 9)] == [
        BOOK[0], BOOK[0], BOOK[1], BOOK[1], BOOK[2], BOOK[2], BOOK[0], BOOK[0],
    ]  # fmt: skip


def test_an_opening_with_moves_starts_after_them() -> None:
    board = MatchSettings(openings=BOOK).opening(3).board()
    assert board.move_stack == [chess.Move.from_uci("e2e4"), chess.Move.from_uci("c7c5")]
    assert board.root() == chess.Board()


def test_colours_alternate_with_port_a_white_in_odd_games() -> None:
    assert [MatchSettings.white_port(game) for game in range(1, 6)] == ["a", "b", "a", "b", "a"]


def test_each_opening_is_played_once_with_each_colour() -> None:
    settings = MatchSettings(games=6, openings=BOOK)
    pairs = {(settings.opening(game), settings.white_port(game)) for game in range(1, 7)}
    assert pairs == {(opening, port) for opening in BOOK for port in PORTS}


def test_the_roster_of_a_game_in_roster_order() -> None:
    settings = MatchSettings(event="Club championship", site="Hall 2")
    roster = settings.roster(3, "Alpha", "Beta", datetime.date(2026, 1, 5))
    assert list(roster.items()) == [
        ("Event", "Club championship"), ("Site", "Hall 2"), ("Date", "2026.01.05"),
        ("Round", "3"), ("White", "Alpha"), ("Black", "Beta"), ("Result", "*"),
    ]  # fmt: skip


def test_a_pairing_of_an_event_numbers_its_games_as_sub_rounds_of_the_event_round() -> None:
    settings = MatchSettings(event_round=3)
    assert settings.roster(2, "Alpha", "Beta", datetime.date(2026, 1, 5))["Round"] == "3.2"


def test_defaults() -> None:
    settings = MatchSettings()
    assert settings.games == 1
    assert settings.time_control == TimeControl.parse("300+3")
    assert settings.openings == (Opening(),)
    assert (settings.reset_delay, settings.conclude_delay) == (5.0, 5.0)
    assert settings.on_infraction is OnInfraction.FORFEIT
    assert (settings.rejoin_window, settings.flag_grace) == (0.0, 0.0)
    assert settings.names == (None, None)


def test_on_infraction_is_made_an_enum_from_its_text() -> None:
    settings = MatchSettings(on_infraction="fault")  # type: ignore[arg-type]
    assert settings.on_infraction is OnInfraction.FAULT
    assert MatchSettings(on_infraction=OnInfraction.FAULT).on_infraction is OnInfraction.FAULT


def test_an_unknown_on_infraction_is_refused() -> None:
    with pytest.raises(ValueError, match="'explode' is not a valid OnInfraction"):
        MatchSettings(on_infraction="explode")  # type: ignore[arg-type]


def test_settings_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        MatchSettings().games = 3  # type: ignore[misc]


# --- identity --------------------------------------------------------------------------------


def test_identity_names_what_makes_the_match() -> None:
    settings = MatchSettings(
        games=4, time_control=TimeControl.parse("40/7200:3600"), openings=BOOK,
        openings_source="book.pgn", event="Club", names=("Alpha", None),
    )  # fmt: skip
    identity = settings.identity()
    assert identity == {
        "games": 4,
        "time_control": "40/7200:3600",
        "openings": identity["openings"],
        "event": "Club",
        "names": ["Alpha", None],
        "white_in_game_1": "a",
    }
    assert str(identity["openings"]).startswith("book.pgn (")


@pytest.mark.parametrize(
    "change",
    [
        {"games": 5},
        {"time_control": TimeControl.parse("300+2")},
        {"openings": BOOK[:2]},
        {"openings_source": "other.pgn"},
        {"event": "Other"},
        {"names": ("Alpha", "Beta")},
    ],
)
def test_identity_changes_with_what_makes_the_match(change: dict[str, object]) -> None:
    base = MatchSettings(games=4, openings=BOOK, openings_source="book.pgn", names=("Alpha", None))
    assert dataclasses.replace(base, **change).identity() != base.identity()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "change",
    [
        {"reset_delay": 1.0},
        {"conclude_delay": 0.0},
        {"on_infraction": OnInfraction.FAULT},
        {"rejoin_window": 30.0},
        {"flag_grace": 0.5},
        {"site": "elsewhere"},
    ],
)
def test_identity_does_not_change_with_how_it_is_run(change: dict[str, object]) -> None:
    base = MatchSettings(games=4, openings=BOOK)
    assert dataclasses.replace(base, **change).identity() == base.identity()  # type: ignore[arg-type]


def test_identity_tells_two_books_of_the_same_name_apart() -> None:
    first = MatchSettings(openings=BOOK, openings_source="book.epd")
    second = MatchSettings(openings=BOOK[::-1], openings_source="book.epd")
    assert first.identity()["openings"] != second.identity()["openings"]
