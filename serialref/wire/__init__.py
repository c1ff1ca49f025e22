"""The line: bytes in and out of a port (transport), lines (framing), time-stamped line events
and bounded writes (link)."""
