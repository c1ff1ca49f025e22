"""Events: many pairs of players refereed by one process, their standings and final report."""
