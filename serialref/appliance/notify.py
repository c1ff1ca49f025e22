"""Tell systemd how the referee is doing: ready, alive, what it is refereeing, stopping.

The sd_notify protocol is one datagram of ``KEY=value`` lines to the unix socket named in
``NOTIFY_SOCKET`` (a path, or an abstract name written with a leading ``@``), so it is
implemented here directly instead of through a compiled binding. Outside systemd the
variable is unset and every method does nothing.

A referee must never stop because its supervisor is unreachable: a failed send is logged
once (then only at debug level) and otherwise ignored. If systemd truly stops hearing the
watchdog it restarts the service, which is the outcome the watchdog exists for.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Mapping

from serialref.errors import escape

__all__ = ["SystemdNotifier"]

LOGGER = logging.getLogger(__name__)


class SystemdNotifier:
    """Sends sd_notify messages for this process; a no-op when not run by systemd."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        """Read ``NOTIFY_SOCKET`` and the watchdog variables from ``environ`` (default: ours)."""
        env = os.environ if environ is None else environ
        self._address = _socket_address(env.get("NOTIFY_SOCKET", ""))
        self._watchdog_interval = _watchdog_interval(env)
        self._socket: socket.socket | None = None
        self._failed_before = False
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        """Whether a service manager is listening at all."""
        return self._address is not None

    def ready(self) -> None:
        """Startup is over (both ports open): systemd marks the unit active."""
        self._send("READY=1")

    def status(self, text: str) -> None:
        """One line for ``systemctl status``; control characters are escaped.

        The text usually carries player names learnt from a serial line, and a newline
        in it would start a new assignment in the datagram.
        """
        self._send(f"STATUS={escape(text)}")

    def watchdog(self) -> None:
        """The referee's main loop is turning; call at least every :meth:`watchdog_interval`."""
        self._send("WATCHDOG=1")

    def stopping(self) -> None:
        """Shutdown has begun, so a slow goodbye to the players is not mistaken for a hang."""
        self._send("STOPPING=1")

    def watchdog_interval(self) -> float | None:
        """Seconds between two keep-alives systemd expects, half its ``WatchdogSec=``.

        ``None`` when no watchdog is set up for this process (``WATCHDOG_USEC`` unset,
        or ``WATCHDOG_PID`` naming another process, as in a forked child).
        """
        return self._watchdog_interval

    def close(self) -> None:
        """Release the socket; later messages open a new one."""
        with self._lock:
            if self._socket is not None:
                self._socket.close()
                self._socket = None

    def _send(self, message: str) -> None:
        if self._address is None:
            return
        with self._lock:
            try:
                if self._socket is None:
                    self._socket = socket.socket(
                        socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC
                    )
                self._socket.sendto(message.encode("utf-8"), self._address)
            except OSError as exc:
                level = logging.DEBUG if self._failed_before else logging.WARNING
                self._failed_before = True
                LOGGER.log(level, "cannot notify systemd at %r: %s", self._address, exc)


def _socket_address(value: str) -> str | None:
    if not value:
        return None
    if value.startswith("@"):
        return "\0" + value[1:]
    if value.startswith("/"):
        return value
    LOGGER.warning("ignoring NOTIFY_SOCKET=%r: neither a path nor an abstract @name", escape(value))
    return None


def _watchdog_interval(env: Mapping[str, str]) -> float | None:
    usec = env.get("WATCHDOG_USEC", "")
    if not usec.isascii() or not usec.isdecimal() or int(usec) == 0:
        return None
    pid = env.get("WATCHDOG_PID", "")
    if pid and pid != str(os.getpid()):
        return None
    # sd_watchdog_enabled(3) advises pinging at half the timeout, so one late turn is no kill.
    return int(usec) / 2_000_000
