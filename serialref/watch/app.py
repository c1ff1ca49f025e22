"""The supervisor's terminal: the match as the control socket reports it, and keys for commands.

It talks to the referee only through the control socket (:mod:`serialref.control.client`),
so it runs as any user the socket lets in, on the referee's machine or over ``ssh``.
The status is asked for a few times a second on a worker thread; a command is sent the
same way and its answer, or the referee's refusal, shown in the footer line. Commands
that cannot be undone (adjudicate, restart-game, abort) ask for ``y`` first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from serialref.control.client import send_request
from serialref.control.protocol import Request
from serialref.errors import ControlError, missing_extra
from serialref.watch.view import board_text, game_text, match_text, port_text

# textual (with rich) is an extra: a referee box without a screen does without it.
try:
    from rich.markup import escape
    from textual.app import App, ComposeResult
    from textual.binding import Binding, BindingType
    from textual.containers import Horizontal, Vertical
    from textual.widgets import Footer, Header, Static
except ImportError as exc:
    raise missing_extra(exc, "textual", "watch", "serialref watch") from exc

__all__ = ["WatchApp"]

_REFRESH = 0.25
_CONFIRM = {"adjudicate", "restart-game", "abort"}


class WatchApp(App[None]):
    """``serialref watch``."""

    TITLE = "serialref watch"
    CSS = """
    #match { height: 1; padding: 0 1; background: $boost; }
    #top { height: 12; }
    #board { width: 24; padding: 1 1; }
    #game { padding: 1 1; }
    .port { height: 1fr; padding: 0 1; border: round $primary; }
    #said { height: 1; padding: 0 1; background: $panel; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "pause", "pause/resume"),
        Binding("w", "add_time('white')", "+60s White"),
        Binding("b", "add_time('black')", "+60s Black"),
        Binding("1", "adjudicate('1-0')", "1-0"),
        Binding("0", "adjudicate('0-1')", "0-1"),
        Binding("d", "adjudicate('1/2-1/2')", "draw"),
        Binding("A", "restore('a')", "restore A"),
        Binding("B", "restore('b')", "restore B"),
        Binding("n", "ask('restart-game')", "restart game"),
        Binding("x", "ask('abort')", "abort"),
        Binding("y", "confirm", "yes", show=False),
        Binding("q", "quit", "quit"),
    ]

    def __init__(self, socket: Path, *, board: int | None = None) -> None:
        super().__init__()
        self.socket = socket
        self.board = board  # the board of an event it follows and steers
        self.status: Mapping[str, Any] = {}
        self._pending: Request | None = None
        self._just_asked = False  # the key that asked is seen by on_key after its binding

    def compose(self) -> ComposeResult:
        yield Header(show_clock=True)
        yield Static("connecting...", id="match")
        with Horizontal(id="top"):
            yield Static(board_text({}), id="board")
            yield Static("", id="game")
        with Horizontal():
            with Vertical(classes="port"):
                yield Static("", id="port-a")
            with Vertical(classes="port"):
                yield Static("", id="port-b")
        yield Static("", id="said")
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(_REFRESH, self._refresh)
        self._refresh()

    # --------------------------------------------------------------- actions

    def action_pause(self) -> None:
        paused = bool((self.status.get("match") or {}).get("paused"))
        self._send(Request("resume" if paused else "pause"))

    def action_add_time(self, side: str) -> None:
        self._send(Request("add-time", (side, "60")))

    def action_adjudicate(self, result: str) -> None:
        self._ask(Request("adjudicate", (result, "adjudicated by the supervisor")))

    def action_restore(self, port: str) -> None:
        self._send(Request("restore", (port,)))

    def action_ask(self, command: str) -> None:
        self._ask(Request(command))

    def action_confirm(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            self._send(pending)

    # --------------------------------------------------------------- plumbing

    def _ask(self, request: Request) -> None:
        self._pending, self._just_asked = request, True
        words = " ".join((request.command, *request.args[:1]))
        self._say(f"{words}: press y to confirm, any other key to cancel")

    def on_key(self, event: Any) -> None:
        """Any key but ``y`` after a question cancels it (bindings run before this)."""
        if self._just_asked:
            self._just_asked = False
        elif self._pending is not None and event.key != "y":
            self._pending = None
            self._say("cancelled")

    def _refresh(self) -> None:
        self.run_worker(lambda: self._ask_referee(Request("status")), thread=True,
                        group="status", exclusive=True)  # fmt: skip

    def _send(self, request: Request) -> None:
        self.run_worker(lambda: self._ask_referee(request), thread=True, group="command")

    def _ask_referee(self, request: Request) -> None:
        """On a worker thread: one request; the screen is updated on the app's thread."""
        try:
            board = dataclasses.replace(request, board=self.board)
            reply = send_request(self.socket, board, timeout=5.0)
        except ControlError as exc:
            self.call_from_thread(self._show_error, str(exc))
            return
        if reply.ok and reply.status is not None:
            self.call_from_thread(self.show, reply.status)
            if request.command != "status":
                done = " ".join((request.command, *request.args))
                self.call_from_thread(self._say, f"done: {done}")
        else:
            self.call_from_thread(self._say, f"refused: {reply.error}")

    def show(self, status: Mapping[str, Any]) -> None:
        """Draw ``status`` (the control socket's answer)."""
        self.status = status
        self.query_one("#match", Static).update(match_text(status))
        self.query_one("#board", Static).update(escape(board_text(status)))
        self.query_one("#game", Static).update(escape(game_text(status)))
        for port in "ab":
            self.query_one(f"#port-{port}", Static).update(escape(port_text(status, port)))

    def _show_error(self, message: str) -> None:
        self.query_one("#match", Static).update(escape(message))

    def _say(self, message: str) -> None:
        self.query_one("#said", Static).update(escape(message))
