"""The referee: one match (match), its games (game), each port's seat (session), the rules
(adjudication), the match's settings and openings, a restart from the journal (resume) and
the process around them (daemon)."""
