"""The mode of every file the referee writes: its owner's and its group's, never the world's.

A journal holds every line a player sent, a PGN file games the event may not have
published yet, a log the addresses of every peer. Each is made mode 0640 (less what the
umask takes away: the shipped units' ``UMask=0077`` gives 0600), so only the service's
user and the members of its group read it, and a file an older version left readable
by everyone loses that the next time it is opened for writing.
"""

from __future__ import annotations

import os
import stat

__all__ = ["FILE_MODE", "private_file"]

FILE_MODE = 0o640
"""Read and write for the owner, read for the group, nothing for others."""

_OTHERS = stat.S_IRWXO


def private_file(path: str, flags: int) -> int:
    """``os.open`` as an ``opener=`` for :func:`open`: a new file gets :data:`FILE_MODE`,
    an old one loses whatever it allowed other users."""
    fd = os.open(path, flags | os.O_CLOEXEC, FILE_MODE)
    try:
        mode = os.fstat(fd).st_mode
        if mode & _OTHERS and stat.S_ISREG(mode):
            os.fchmod(fd, stat.S_IMODE(mode) & ~_OTHERS)
    except BaseException:
        os.close(fd)
        raise
    return fd
