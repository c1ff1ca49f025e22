"""The referee box: configuration, ports, systemd, logging, and the assembly of a match."""
