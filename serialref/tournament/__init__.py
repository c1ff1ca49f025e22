"""A tournament: many pairs of players refereed by one process, their standings and report.

Users call it an event (``serialref event``, its ``event.toml``, ``event.jsonl`` and
``event.pgn``); the code calls it a tournament so that "event" keeps one meaning in
it: what happened in a match (:mod:`serialref.happenings`).
"""
