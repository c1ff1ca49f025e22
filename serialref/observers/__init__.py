"""Best-effort displays of a match: they may drop events, never stall the referee."""
