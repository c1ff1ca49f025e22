"""A match assembled from a configuration: the settings the referee gets from it."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import chess
import pytest

from serialref.appliance.assembly import GarbageAfterGames, match_settings
from serialref.appliance.config import load_config
from serialref.happenings import GameEnded, MovePlayed


def test_operator_text_keeps_every_letter_and_loses_what_drives_a_terminal() -> None:
    given = {"name_a": "Müller", "name_b": "Evil\x1b[2J", "event": "Meisterschaft München",
             "site": "Ærø"}  # fmt: skip
    config = load_config(None, given)
    settings = match_settings(config)
    assert settings.names == ("Müller", "Evil?[2J")
    assert (settings.event, settings.site) == ("Meisterschaft München", "Ærø")


class _Cycle:
    """An object that refers to itself, as a game's objects do: only a collection frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def no_automatic_collection() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_a_games_garbage_is_collected_when_it_ends(no_automatic_collection: None) -> None:
    listener = GarbageAfterGames()
    garbage = weakref.ref(_Cycle())
    listener.handle(MovePlayed(game=1, ply=0, san="e4", uci="e2e4", elapsed=0.1,
                               remaining=(60.0, 60.0), consumed=(0.1, 0.0), moves_made=(1, 0),
                               fen=chess.Board().fen(), draw_offer=False, analysis={}))  # fmt: skip
    assert garbage() is not None  # not at every move
    listener.handle(GameEnded(game=1, result="1-0", termination="normal", reason="mate",
                              fen=chess.Board().fen(), consumed=(1.0, 1.0)))  # fmt: skip
    assert garbage() is None
