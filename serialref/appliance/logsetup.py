"""Log lines on stderr that read well both in a terminal and in the systemd journal.

Under systemd, stderr is a stream into journald, which stamps every line with the time
itself and reads a leading ``<N>`` as the syslog priority (sd-daemon(3)), so there the
lines carry ``<4>`` and friends instead of timestamps, and ``journalctl -p warning`` and
the colours of ``journalctl -fu serialref`` work. Everywhere else a line starts with the
local date and time and the level name.

journald is detected as sd-daemon(3) says: ``JOURNAL_STREAM`` holds the device and inode of
the stream systemd connected, and only a stream with exactly those is the journal (a
child whose stderr was redirected inherits the variable but not the stream).

Messages are logged as callers give them: serial data must already be escaped with
:func:`serialref.errors.escape`.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TextIO

from serialref.errors import ConfigError

__all__ = ["LOG_LEVELS", "LOG_LEVEL_HELP", "configure_logging", "is_journal_stream"]

LOGGER = logging.getLogger(__name__)

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}

LOG_LEVELS = ("debug", "info", "warning", "error")
"""The levels a user chooses from (``--log-level``, a configuration file's ``log_level``)."""
LOG_LEVEL_HELP = "how much to log on stderr"
"""``--log-level``'s line in every verb's ``--help``."""

_SYSLOG_PRIORITIES = (
    (logging.CRITICAL, 2),
    (logging.ERROR, 3),
    (logging.WARNING, 4),
    (logging.INFO, 6),
)
_SYSLOG_DEBUG = 7

_QUIET_LIBRARIES = ("transitions",)
"""Libraries that log every internal step at INFO; they speak from WARNING up unless debugging."""


class JournalFormatter(logging.Formatter):
    """``<priority>logger: message``, the priority repeated on every line of the message.

    journald stores each line as its own entry, so a traceback's later lines would
    otherwise fall back to the default priority.
    """

    def __init__(self) -> None:
        super().__init__("%(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        """Prefix each line with the record's syslog priority."""
        prefix = f"<{_syslog_priority(record.levelno)}>"
        return "\n".join(prefix + line for line in super().format(record).splitlines())


class _SerialrefHandler(logging.StreamHandler[TextIO]):
    """Marks the handler this module installed, so configuring again replaces it."""


def configure_logging(level: str, *, stream: TextIO = sys.stderr) -> None:
    """Send log records of ``level`` and above to ``stream``; calling it again reconfigures.

    ``level`` is one of ``debug``, ``info``, ``warning``, ``error``, ``critical``.
    """
    try:
        threshold = LEVELS[level.lower()]
    except KeyError:
        allowed = ", ".join(repr(name) for name in LEVELS)
        raise ConfigError("log_level", f"expected one of {allowed}, got {level!r}") from None
    handler = _SerialrefHandler(stream)
    if is_journal_stream(stream):
        handler.setFormatter(JournalFormatter())
    else:
        handler.setFormatter(
            logging.Formatter(
                "%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%Y-%m-%d %H:%M:%S"
            )
        )
    root = logging.getLogger()
    for old in [found for found in root.handlers if isinstance(found, _SerialrefHandler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(threshold)
    quiet = threshold if threshold <= logging.DEBUG else max(threshold, logging.WARNING)
    for name in _QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(quiet)


def is_journal_stream(stream: TextIO) -> bool:
    """Whether ``stream`` is the journald stream named by ``JOURNAL_STREAM``."""
    device, _, inode = os.environ.get("JOURNAL_STREAM", "").partition(":")
    if not (device.isdecimal() and inode.isdecimal()):
        return False
    try:
        status = os.fstat(stream.fileno())
    except (OSError, ValueError):
        # No file descriptor (a StringIO, a closed or replaced stream): not the journal.
        return False
    return (status.st_dev, status.st_ino) == (int(device), int(inode))


def _syslog_priority(levelno: int) -> int:
    for threshold, priority in _SYSLOG_PRIORITIES:
        if levelno >= threshold:
            return priority
    return _SYSLOG_DEBUG
