"""The supervisor's control socket: commands become journaled events, ``status`` a snapshot.

:mod:`~serialref.control.protocol` is the socket's JSON lines, :mod:`~serialref.control.status`
what ``status`` answers, :mod:`~serialref.control.server` the referee's end and
:mod:`~serialref.control.client` the other end (``serialref ctl``, ``serialref watch``).
"""
