"""serialref.analysis.progress: the live line on a terminal, the tally and its summary."""

from __future__ import annotations

import io

from serialref.analysis.progress import Progress, Tally


def test_progress_shows_a_live_line_on_a_terminal_only() -> None:
    now = [0.0]
    stream = io.StringIO()
    tally = Tally(total=10)
    progress = Progress(tally, stream, live=True, clock=lambda: now[0])
    for solved in (True, False, True, None):
        now[0] += 0.5
        tally.add(searched=True, solved=solved)
        progress.update()
    assert progress.status() == "4/10 records  solved 2/3  2.0 positions/s, 0:03 left"
    assert "\r4/10 records" in stream.getvalue()
    progress.note("in.epd:3:1: bad")  # on a line of its own, the status line cleared first
    width = len(progress.status())
    assert stream.getvalue().endswith("\r" + " " * width + "\r" + "in.epd:3:1: bad\n")
    progress.update()  # drawn again at once
    assert stream.getvalue().endswith(progress.status())
    progress.finish()
    assert stream.getvalue().endswith("\r")
    assert tally.summary() == (
        "4 of 10 records written, 4 searched, solved 2 of 3, 2.0 s, 2.00 positions/s"
    )
    quiet = io.StringIO()
    Progress(Tally(total=1), quiet, live=False).update()
    assert quiet.getvalue() == ""
