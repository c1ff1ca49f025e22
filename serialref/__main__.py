"""The ``serialref`` program (and ``python -m serialref``): the command line, without OpenSSL.

serialref needs nothing of OpenSSL: it speaks no TLS, and its one digest (the SHA-256
that tells one match's openings from another's, and the standby link's HMAC over it)
is built into Python. Yet python-chess's PGN and engine modules import asyncio, which
imports ``ssl``, and ``hashlib`` prefers OpenSSL's digests: together 5 MB resident in
every referee and client process, a fifth of each. The program therefore starts with
``ssl`` and ``_hashlib`` marked as absent, which asyncio and ``hashlib`` are written to
allow (as on a Python built without OpenSSL): asyncio goes without TLS and ``hashlib``
uses Python's own SHA-256 (the same digests; an HMAC takes 4 us instead of 2). Code
that imports serialref as a library is left as it is.
"""

import sys

_NOT_NEEDED = ("ssl", "_hashlib")


def run() -> int:
    """The console script's entry point: ``serialref.cli.main`` in a process without OpenSSL."""
    for module in _NOT_NEEDED:
        sys.modules.setdefault(module, None)  # type: ignore[arg-type]
    from serialref.cli import main

    return main()


if __name__ == "__main__":
    sys.exit(run())
