"""The supervisor's end of the control socket: one request, one answer.

Used by ``serialref ctl`` and ``serialref watch``; it knows nothing of the referee but
the socket's messages (:mod:`serialref.control.protocol`).
"""

from __future__ import annotations

import os
import socket
from contextlib import suppress
from pathlib import Path

from serialref.control.protocol import MAX_LINE, Reply, Request, decode_reply, encode_request
from serialref.errors import ControlError

__all__ = ["default_socket", "send_request"]

_SOCKET_NAME = "control.sock"


def default_socket() -> Path:
    """Where the referee's socket is: its service's ``RuntimeDirectory``, else /run/serialref."""
    runtime = os.environ.get("RUNTIME_DIRECTORY", "").split(":")[0]
    return Path(runtime or "/run/serialref") / _SOCKET_NAME


def send_request(path: Path, request: Request, *, timeout: float = 10.0) -> Reply:
    """Send ``request`` to the referee listening at ``path``; its answer.

    A :class:`ControlError` says why there is none (no socket, no permission, no referee).
    """
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(timeout)
        try:
            connection.connect(str(path))
            # A referee that answered before it heard us (too many clients) said why: read it.
            with suppress(BrokenPipeError, ConnectionResetError):
                connection.sendall(encode_request(request))
            data = b""
            while not data.endswith(b"\n") and len(data) <= MAX_LINE:
                chunk = connection.recv(65536)
                if not chunk:
                    break
                data += chunk
        except FileNotFoundError:
            raise ControlError(f"no control socket at {str(path)!r}: is the referee running "
                               "with --control-socket?") from None  # fmt: skip
        except ConnectionRefusedError:
            raise ControlError(f"no referee listening at {str(path)!r}") from None
        except BlockingIOError:  # the socket's queue is full: as many clients wait already
            raise ControlError(f"the referee at {str(path)!r} is busy with other control "
                               "clients: try again in a few seconds") from None  # fmt: skip
        except PermissionError:
            raise ControlError(f"{str(path)!r}: permission denied (are you in the socket's "
                               "group?)") from None  # fmt: skip
        except OSError as exc:
            raise ControlError(f"control socket {str(path)!r}: {exc.strerror or exc}") from exc
    if not data:
        raise ControlError(f"the referee at {str(path)!r} closed the connection without an answer")
    return decode_reply(data)
