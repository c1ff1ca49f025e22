"""The control socket's messages: one JSON object per line each way.

A request is ``{"command": NAME, "args": [TEXT, ...]}``, with ``"board": N`` when it
names one board of an event; its answer is ``{"ok": true,
"status": {...}}`` or ``{"ok": false, "error": TEXT}``. One request per connection keeps
both ends simple and lets a client that stopped reading cost nothing beyond its socket.
Lines are capped, so a client cannot make the referee buffer without limit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from serialref.errors import CommandError, ControlError

__all__ = [
    "MAX_LINE",
    "Reply",
    "Request",
    "decode_reply",
    "decode_request",
    "encode_reply",
    "encode_request",
]

MAX_LINE = 1 << 16
"""Longest line either end reads, in bytes (a status with recent records fits easily)."""


@dataclass(frozen=True, slots=True)
class Request:
    """A supervisor's command and its arguments, as typed."""

    command: str
    args: tuple[str, ...] = ()
    board: int | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """The referee's answer: the match's status after the command, or why it was refused."""

    ok: bool
    status: Mapping[str, object] | None = None
    error: str = ""


def encode_request(request: Request) -> bytes:
    message: dict[str, object] = {"command": request.command, "args": list(request.args)}
    if request.board is not None:
        message["board"] = request.board
    return (json.dumps(message) + "\n").encode()


def decode_request(line: bytes) -> Request:
    """The request on ``line``; a :class:`CommandError` names what is wrong with it."""
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, ValueError) as exc:
        raise CommandError(f"not a JSON request line: {exc}") from None
    if not isinstance(message, dict):
        raise CommandError("a request is a JSON object with command and args")
    command = message.get("command")
    args = message.get("args", [])
    if not isinstance(command, str) or not _texts(args):
        raise CommandError("a request needs a command (text) and args (a list of texts)")
    board = message.get("board")
    if board is not None and (type(board) is not int or board < 1):
        raise CommandError("a request's board is a board number (1, 2, ...)")
    return Request(command, tuple(args), board)


def encode_reply(reply: Reply) -> bytes:
    if reply.ok:
        message: dict[str, object] = {"ok": True, "status": dict(reply.status or {})}
    else:
        message = {"ok": False, "error": reply.error}
    return (json.dumps(message, allow_nan=False) + "\n").encode()


def decode_reply(line: bytes) -> Reply:
    """The referee's answer on ``line``; a :class:`ControlError` when it is not one."""
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ControlError(f"the referee's answer is not JSON: {exc}") from None
    if not isinstance(message, dict) or not isinstance(message.get("ok"), bool):
        raise ControlError("the referee's answer has no ok field")
    if message["ok"]:
        status = message.get("status")
        if not isinstance(status, dict):
            raise ControlError("the referee's answer has no status")
        return Reply(True, status)
    return Reply(False, error=str(message.get("error", "refused")))


def _texts(values: object) -> bool:
    return isinstance(values, Sequence) and not isinstance(values, str) and all(
        isinstance(value, str) for value in values
    )
