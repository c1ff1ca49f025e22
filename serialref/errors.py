"""One exception hierarchy for everything serialref raises on purpose.

::

    SerialrefError
    ├─ ConfigError(ValueError)        a setting: key path + reason (+ the file it is in)
    │  └─ GroupedConfigError          every wrong setting of one file, read as the first
    ├─ InputError(OSError)            a file named on the command line cannot be read
    ├─ TransportError(OSError)
    │  ├─ PortOpenError               missing, busy or forbidden port, with a hint
    │  └─ LineLostError               the line went away (unplug, hang-up)
    ├─ ProtocolError                  .port, .raw (escaped)
    │  ├─ FramingError
    │  ├─ RecordError(ValueError)     .column, .reason
    │  └─ UnexpectedRecordError
    ├─ RecorderError(OSError)         the journal or PGN file cannot be written (disk full, ...)
    ├─ EngineError                    a chess program behind ``serialref client``
    ├─ CommandError(ValueError)       a supervisor's command the referee refuses, and why
    ├─ ControlError(OSError)          the control socket or an audience feed cannot be served
    └─ MissingExtraError              an optional library is not installed: its ``pip install``

    ProgrammingError(RuntimeError)    serialref's own code used as it must not be: a bug,
                                      reported as an internal error, never as a user's mistake

Foreign exceptions (``serial.SerialException``, ``termios.error``, ``OSError``,
``chess`` errors) are converted once, at the layer that meets them, with
``raise ... from exc``, so callers above catch only this tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "CommandError",
    "ConfigError",
    "ControlError",
    "EngineError",
    "FramingError",
    "GroupedConfigError",
    "InputError",
    "LineLostError",
    "MissingExtraError",
    "PortOpenError",
    "ProgrammingError",
    "ProtocolError",
    "RecordError",
    "RecorderError",
    "SerialrefError",
    "TransportError",
    "UnexpectedRecordError",
    "escape",
    "missing_extra",
    "recorder_error",
]

_ESCAPES = {0x5C: "\\\\", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}


def escape(data: bytes | str) -> str:
    """Render bytes from a serial line so they are safe to print or log.

    Terminal escape sequences arrive on serial lines too: everything outside
    printable ASCII becomes ``\\xNN`` (or ``\\r``, ``\\n``, ``\\t``), and a
    backslash is doubled so the rendering is unambiguous.
    """
    raw = data.encode("utf-8", "replace") if isinstance(data, str) else data
    if all(0x20 <= byte <= 0x7E and byte != 0x5C for byte in raw):
        return raw.decode("ascii")
    parts = []
    for byte in raw:
        if byte in _ESCAPES:
            parts.append(_ESCAPES[byte])
        elif 0x20 <= byte <= 0x7E:
            parts.append(chr(byte))
        else:
            parts.append(f"\\x{byte:02x}")
    return "".join(parts)


class SerialrefError(Exception):
    """Base of every error serialref raises deliberately."""


class ConfigError(SerialrefError, ValueError):
    """A configuration value is wrong; the message names the key path and, if any, its file."""

    def __init__(self, key: str, reason: str, *, source: str = "") -> None:
        message = f"{key}: {reason}" if key else reason
        super().__init__(f"{source}: {message}" if source else message)
        self.key = key
        self.reason = reason
        self.source = source


class GroupedConfigError(ConfigError):
    """Every wrong setting found in one configuration, each a :class:`ConfigError`.

    It reads as the first and says how many more there are, so a command that refuses
    the file still prints one line; ``serialref config check`` lists every one.
    """

    def __init__(self, errors: Sequence[ConfigError]) -> None:
        first = errors[0]
        super().__init__(first.key, first.reason, source=first.source)
        self.errors = tuple(errors)

    def __str__(self) -> str:
        more = len(self.errors) - 1
        if not more:
            return str(self.errors[0])
        return f"{self.errors[0]} (and {more} more; `serialref config check` lists them all)"


class InputError(SerialrefError, OSError):
    """A file named on the command line cannot be read; the message names it and the cause."""


class TransportError(SerialrefError, OSError):
    """A serial port could not be used."""


class PortOpenError(TransportError):
    """A port could not be opened; the message says what the user can do."""


class LineLostError(TransportError):
    """The line went away: cable unplugged, adapter removed or peer hung up."""


class ProtocolError(SerialrefError):
    """Something received on a port breaks the wire profile."""

    def __init__(self, message: str, *, port: str = "", raw: bytes | str = b"") -> None:
        super().__init__(message)
        self.port = port
        self.raw = escape(raw)


class FramingError(ProtocolError):
    """Bytes that cannot form a line (too long, non-printable)."""


class RecordError(ProtocolError, ValueError):
    """A line is not a valid EPD record; names the 1-based column and the reason."""

    def __init__(
        self, reason: str, *, column: int = 0, port: str = "", raw: bytes | str = b""
    ) -> None:
        message = f"column {column}: {reason}" if column else reason
        super().__init__(message, port=port, raw=raw)
        self.column = column
        self.reason = reason


class UnexpectedRecordError(ProtocolError):
    """A valid record that makes no sense in the current state."""


class RecorderError(SerialrefError, OSError):
    """A record of the match could not be written; the message names the file and the cause."""


class EngineError(SerialrefError):
    """A chess engine behind ``serialref client`` failed or could not start."""


class CommandError(SerialrefError, ValueError):
    """A supervisor's command that cannot apply now (no game, a bad result, a bad side)."""


class ControlError(SerialrefError, OSError):
    """The control socket or a feed: no referee listening, no permission, a port in use."""


class MissingExtraError(SerialrefError):
    """A feature needs a library that the core install leaves out (``serialref[fairy]``, ...).

    The core install is what refereeing needs; the charts, the fairy variants' rules and
    the terminal view come as extras, so that a referee box does not carry (or compile)
    them. The message is the one thing the user must do: the ``pip install`` that brings
    the library.
    """


def missing_extra(
    exc: ImportError, library: str, extra: str, needed_for: str
) -> MissingExtraError:
    """Word a failed import of an optional ``library`` as what to install, for ``needed_for``.

    ``exc.name`` is the module that was missing: the library itself, or one it needs in
    turn (matplotlib without numpy), which is named too.
    """
    top_level = (exc.name or library).split(".", 1)[0]
    missing = "" if top_level == library else f" (its module {exc.name} is missing)"
    return MissingExtraError(
        f"{needed_for} needs {library}, which is not installed here{missing}: "
        f"pip install 'serialref[{extra}]'"
    )


def recorder_error(action: str, path: Path, exc: OSError) -> RecorderError:
    """Word an ``OSError`` so a supervisor can act on it: which file, what happened, and
    for a missing directory what to do (recorders never create directories: a typo in
    a path should not scatter match records over the disk)."""
    message = f"cannot {action} {path}: {exc.strerror or exc}"
    if isinstance(exc, FileNotFoundError) and not path.parent.is_dir():
        message += f" (create the directory {str(path.parent)!r} first)"
    return RecorderError(message)


class ProgrammingError(RuntimeError):
    """serialref's own code was used in a way it does not allow: a bug, not a user's error.

    Deliberately outside :class:`SerialrefError`: the command line reports it as an
    internal error (with the traceback under ``--debug``), never as one line about
    what the user should change.
    """
