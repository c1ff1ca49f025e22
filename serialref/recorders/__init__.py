"""Durable records of a match: the JSON Lines journal (for restore) and the PGN file.

Recorders consume events, never call back into the referee, and raise
:class:`~serialref.errors.RecorderError` when a record cannot be written, because a
match whose record is lost cannot be resumed: the referee then stops the match.
"""
