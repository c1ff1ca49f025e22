"""``serialref watch``: the supervisor's terminal view of a running referee (textual)."""
