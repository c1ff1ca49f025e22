"""One game of a match: its states, its table and callbacks, the turn, the replay, the clock."""
