"""A match assembled from a configuration: the settings the referee gets from it."""

from __future__ import annotations

from serialref.appliance.assembly import match_settings
from serialref.appliance.config import load_config


def test_operator_text_keeps_every_letter_and_loses_what_drives_a_terminal() -> None:
    given = {"name_a": "Müller", "name_b": "Evil\x1b[2J", "event": "Meisterschaft München",
             "site": "Ærø"}  # fmt: skip
    config = load_config(None, given)
    settings = match_settings(config)
    assert settings.names == ("Müller", "Evil?[2J")
    assert (settings.event, settings.site) == ("Meisterschaft München", "Ærø")
