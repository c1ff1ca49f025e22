"""The replication channel: a mutual HMAC-SHA256 challenge and response, then authenticated frames.

One TCP connection per primary; the primary connects. Every message before the
key is proved has a fixed size, so a peer without the key can make the standby
read at most :data:`PRIMARY_GREETING_SIZE` + :data:`TAG_SIZE` bytes::

    primary -> standby   b"serialref-primary 2\\n"  nonce_p (32 random bytes)
    standby -> primary   b"serialref-standby 2\\n"  nonce_s (32 random bytes)
                         HMAC(key, b"serialref standby proof" nonce_p nonce_s)
    primary -> standby   HMAC(key, b"serialref primary proof" nonce_p nonce_s)

Each side checks the other's tag (``hmac.compare_digest``) over a nonce it has
just drawn itself, so a tag recorded from another connection proves nothing;
the two labels keep either side's tag from being played back as the other's.
Both then derive the connection's own key, ``HMAC(key, b"serialref session key"
nonce_p nonce_s)``, and every later message is a frame::

    length   4 bytes, big-endian: the payload's size, at most MAX_PAYLOAD
    kind     1 byte (FrameKind)
    payload  length bytes
    tag      32 bytes: HMAC(session key, direction sequence length kind payload)

``direction`` is ``b"P"`` for the primary's frames and ``b"S"`` for the
standby's; ``sequence`` counts each direction's frames from 0 in 8 bytes and is
not sent: a frame that was altered, replayed (from this connection or another),
dropped, duplicated or reordered fails its tag, and so does a frame reflected back
to its sender. A frame cut short never completes, so it is never acted on.

There is no encryption: the journal travels in clear (docs/standby.md says what
that means and how to add it).
"""

from __future__ import annotations

import enum
import hmac
import secrets
import struct
from dataclasses import dataclass

from serialref.errors import ProtocolError

__all__ = [
    "MAX_PAYLOAD",
    "NONCE_SIZE",
    "PRIMARY_GREETING_SIZE",
    "STANDBY_ANSWER_SIZE",
    "TAG_SIZE",
    "Channel",
    "Frame",
    "FrameKind",
    "Side",
    "new_nonce",
    "primary_greeting",
    "primary_proof",
    "read_primary_greeting",
    "read_primary_proof",
    "read_standby_answer",
    "standby_answer",
]

NONCE_SIZE = 32
TAG_SIZE = 32
MAX_PAYLOAD = 1 << 20
"""Largest frame payload: the longest journal entry either side accepts (1 MiB)."""

_PRIMARY_HELLO = b"serialref-primary 2\n"
_STANDBY_HELLO = b"serialref-standby 2\n"
_OLD_PREFIX = b"serialref-"
PRIMARY_GREETING_SIZE = len(_PRIMARY_HELLO) + NONCE_SIZE
STANDBY_ANSWER_SIZE = len(_STANDBY_HELLO) + NONCE_SIZE + TAG_SIZE

_STANDBY_PROOF = b"serialref standby proof"
_PRIMARY_PROOF = b"serialref primary proof"
_SESSION_KEY = b"serialref session key"
_HEADER = struct.Struct(">IB")
_SEQUENCE = struct.Struct(">Q")


class Side(enum.Enum):
    """Who sends a frame; the value is the direction byte its tag covers."""

    PRIMARY = b"P"
    STANDBY = b"S"


class FrameKind(enum.IntEnum):
    """What a frame carries."""

    MIRROR = 1
    """standby -> primary: the mirror's size (8 bytes, big-endian) and SHA-256 (32 bytes)."""
    START = 2
    """primary -> standby: the byte (8 bytes, big-endian) its entries continue the mirror at."""
    ENTRIES = 3
    """primary -> standby: whole journal lines, each ending in LF."""
    HEARTBEAT = 4
    """primary -> standby: nothing; the primary's process is alive."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One authenticated message."""

    kind: FrameKind
    payload: bytes


def new_nonce() -> bytes:
    """A fresh challenge, never reused."""
    return secrets.token_bytes(NONCE_SIZE)


def _tag(key: bytes, label: bytes, nonce_p: bytes, nonce_s: bytes) -> bytes:
    return hmac.digest(key, label + nonce_p + nonce_s, "sha256")


def primary_greeting(nonce_p: bytes) -> bytes:
    """The primary's first message: who it is and its challenge."""
    return _PRIMARY_HELLO + nonce_p


def read_primary_greeting(data: bytes) -> bytes | None:
    """The primary's challenge once ``data`` holds its whole greeting, None until then.

    A wrong start is refused at its first wrong byte, so garbage is not waited for.
    """
    if not _PRIMARY_HELLO.startswith(data[: len(_PRIMARY_HELLO)]):
        raise ProtocolError(_not_a_peer("primary", data), raw=data[:40])
    if len(data) < PRIMARY_GREETING_SIZE:
        return None
    return data[len(_PRIMARY_HELLO) : PRIMARY_GREETING_SIZE]


def standby_answer(key: bytes, nonce_p: bytes, nonce_s: bytes) -> bytes:
    """The standby's answer: its challenge, and its proof of the key over both."""
    return _STANDBY_HELLO + nonce_s + _tag(key, _STANDBY_PROOF, nonce_p, nonce_s)


def read_standby_answer(key: bytes, nonce_p: bytes, data: bytes) -> bytes:
    """The standby's challenge, once its tag proves it holds ``key``."""
    if not data.startswith(_STANDBY_HELLO):
        raise ProtocolError(_not_a_peer("standby", data), raw=data[:40])
    nonce_s = data[len(_STANDBY_HELLO) : len(_STANDBY_HELLO) + NONCE_SIZE]
    tag = data[len(_STANDBY_HELLO) + NONCE_SIZE :]
    if not hmac.compare_digest(tag, _tag(key, _STANDBY_PROOF, nonce_p, nonce_s)):
        raise ProtocolError("the standby did not prove the replication key (another key file?)")
    return nonce_s


def primary_proof(key: bytes, nonce_p: bytes, nonce_s: bytes) -> bytes:
    """The primary's proof of the key, over both challenges."""
    return _tag(key, _PRIMARY_PROOF, nonce_p, nonce_s)


def read_primary_proof(key: bytes, nonce_p: bytes, nonce_s: bytes, tag: bytes) -> None:
    """Raise :class:`ProtocolError` unless ``tag`` proves the primary holds ``key``."""
    if not hmac.compare_digest(tag, primary_proof(key, nonce_p, nonce_s)):
        raise ProtocolError("the primary did not prove the replication key (another key file?)")


def _not_a_peer(role: str, data: bytes) -> str:
    if data.startswith(_OLD_PREFIX + role.encode("ascii") + b" 1"):
        return f"a {role} of an older serialref (protocol 1, without a key): update it"
    return f"not a serialref {role} (protocol 2)"


class Channel:
    """One authenticated connection, after the handshake: seals outgoing frames, opens incoming.

    Incoming bytes may arrive in any pieces. Each side sets the largest payload
    it expects to receive (``max_payload``); a longer frame is refused by its
    header.
    """

    def __init__(
        self,
        key: bytes,
        nonce_p: bytes,
        nonce_s: bytes,
        *,
        side: Side,
        max_payload: int = MAX_PAYLOAD,
    ) -> None:
        self._key = _tag(key, _SESSION_KEY, nonce_p, nonce_s)
        self._out = side.value
        self._in = (Side.STANDBY if side is Side.PRIMARY else Side.PRIMARY).value
        self._sent = 0
        self._received = 0
        self._max_payload = max_payload
        self._buffer = bytearray()

    def seal(self, kind: FrameKind, payload: bytes = b"") -> bytes:
        """The frame for ``payload``, ready to send; each call takes the next sequence number."""
        if len(payload) > MAX_PAYLOAD:
            raise ValueError(f"a payload of {len(payload)} bytes is over {MAX_PAYLOAD}")
        header = _HEADER.pack(len(payload), kind)
        tag = self._mac(self._out, self._sent, header, payload)
        self._sent += 1
        return header + payload + tag

    def feed(self, data: bytes) -> None:
        """Take bytes as they arrived; :meth:`next_frame` reads the frames they complete."""
        self._buffer += data

    def next_frame(self) -> Frame | None:
        """The next complete frame, None until there is one; :class:`ProtocolError` if it fails.

        A frame's length is checked before its payload is waited for, so a
        peer cannot make the buffer grow past one frame of ``max_payload``.
        """
        buffer = self._buffer
        if len(buffer) < _HEADER.size:
            return None
        length, kind = _HEADER.unpack_from(buffer)
        if length > self._max_payload:
            raise ProtocolError(f"a frame of {length} bytes, over the {self._max_payload} allowed")
        end = _HEADER.size + length + TAG_SIZE
        if len(buffer) < end:
            return None
        header = bytes(buffer[: _HEADER.size])
        payload = bytes(buffer[_HEADER.size : end - TAG_SIZE])
        tag = bytes(buffer[end - TAG_SIZE : end])
        if not hmac.compare_digest(tag, self._mac(self._in, self._received, header, payload)):
            raise ProtocolError(
                f"frame {self._received} failed its authentication "
                "(altered, replayed, reordered or from another connection)"
            )
        del buffer[:end]
        self._received += 1
        try:
            return Frame(FrameKind(kind), payload)
        except ValueError:
            raise ProtocolError(f"a frame of unknown kind {kind}") from None

    @property
    def unfinished(self) -> int:
        """Bytes of a frame not yet complete."""
        return len(self._buffer)

    def _mac(self, direction: bytes, sequence: int, header: bytes, payload: bytes) -> bytes:
        return hmac.digest(
            self._key, direction + _SEQUENCE.pack(sequence) + header + payload, "sha256"
        )

