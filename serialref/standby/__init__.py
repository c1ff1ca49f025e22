"""Hot standby: a second referee mirrors the primary's journal and takes over when it dies.

The primary adds a :class:`~serialref.standby.primary.JournalReplicator` to its
listeners; the standby runs a :class:`~serialref.standby.mirror.JournalMirror`
and :func:`~serialref.standby.takeover.stand_by`. Both hold the same secret key
file (:mod:`serialref.standby.keys`); the connection proves it both ways and
authenticates every frame (:mod:`serialref.standby.channel`), and the standby
checks every entry before writing it (:mod:`serialref.standby.validation`), so
no one without the key can feed, stall or trigger a takeover.
"""
