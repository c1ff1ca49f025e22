"""The replication key: one secret file, the same on the primary's and the standby's machine.

Whoever holds the key can feed the standby a match, so the file is treated as ssh
treats a private key: it is made with mode 0600 and never overwritten, and a file
that others can read, or that is too short to be a key, is refused with the
command that fixes it. The whole file is the key (at least :data:`KEY_SIZE`
bytes), so a key made by other means (``head -c 32 /dev/urandom``, a systemd
credential) works as well as one made by :func:`generate_key`.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from serialref.errors import ConfigError

__all__ = ["KEY_SIZE", "generate_key", "load_key", "missing_key_error"]

KEY_SIZE = 32
"""Bytes of a new key, and the fewest a key file may hold (HMAC-SHA256's block of strength)."""

_LARGEST_KEY_FILE = 4096
"""A key file larger than this is some other file given by mistake."""


def generate_key(path: Path) -> None:
    """Write :data:`KEY_SIZE` random bytes to a new file ``path`` readable by its owner only."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        raise ConfigError(
            "", f"{str(path)!r} exists already; a key is never overwritten (remove it first)"
        ) from None
    except OSError as exc:
        raise ConfigError("", f"cannot create {str(path)!r}: {exc.strerror or exc}") from exc
    try:
        os.fchmod(fd, 0o600)  # whatever the umask let through
        os.write(fd, secrets.token_bytes(KEY_SIZE))
        os.fsync(fd)
    except OSError as exc:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise ConfigError("", f"cannot write {str(path)!r}: {exc.strerror or exc}") from exc
    os.close(fd)


def missing_key_error(option: str) -> ConfigError:
    """What a user is told when replication is asked for without a key."""
    return ConfigError(
        option,
        "replication needs a shared key file: make one with `serialref keygen FILE`, copy it "
        "to both machines, and give it to `serialref run --replicate-key FILE` and "
        "`serialref standby --key FILE`",
    )


def load_key(path: Path, *, option: str) -> bytes:
    """The key in ``path``; a :class:`ConfigError` (naming ``option``) says how to fix the file.

    The file is checked through the descriptor it is read from, so what is
    checked is what is read.
    """
    name = repr(str(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        hint = (
            f"; make one with `serialref keygen {path}`"
            if isinstance(exc, FileNotFoundError)
            else ""
        )
        raise ConfigError(
            option, f"cannot read the key file {name}: {exc.strerror or exc}{hint}"
        ) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(option, f"the key file {name} is not a regular file")
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            raise ConfigError(
                option,
                f"the key file {name} can be read or written by others (mode {mode:04o}): "
                f"run `chmod 600 {path}`",
            )
        if info.st_size > _LARGEST_KEY_FILE:
            raise ConfigError(
                option, f"{name} holds {info.st_size} bytes: too large for a key file"
            )
        key = os.read(fd, _LARGEST_KEY_FILE + 1)
    except OSError as exc:
        raise ConfigError(
            option, f"cannot read the key file {name}: {exc.strerror or exc}"
        ) from exc
    finally:
        os.close(fd)
    if len(key) < KEY_SIZE:
        raise ConfigError(
            option,
            f"the key file {name} holds {len(key)} bytes, a key needs at least {KEY_SIZE}: "
            "make a new one with `serialref keygen FILE`",
        )
    return key
