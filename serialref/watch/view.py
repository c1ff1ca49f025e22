"""What the supervisor's screen shows, as text from a status (no terminal needed).

Kept apart from the textual app so that the layout is plain functions of the status
that :mod:`serialref.control.status` sends, tested without a terminal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import chess

from serialref.clock import format_clock
from serialref.observers.output import printable
from serialref.rules import find_rules

__all__ = ["board_text", "clock_text", "game_text", "match_text", "port_text"]

_FILES = "   a b c d e f g h"


def match_text(status: Mapping[str, Any]) -> str:
    match = status.get("match") or {}
    score = match.get("score") or [0, 0]
    paused = "   [b]PAUSED[/b]" if match.get("paused") else ""
    return (
        f"Match: {match.get('state')}   game {match.get('games_done', 0) + 1} of "
        f"{match.get('games')}   score A {score[0]:g} - B {score[1]:g}   "
        f"{printable(str(match.get('time_control', '')))}{paused}"
    )


def board_text(status: Mapping[str, Any]) -> str:
    """The position with coordinates, White at the bottom."""
    game = status.get("game")
    if not game:
        board = chess.Board()
    else:
        board = find_rules(game.get("variant") or "chess", "variant").board(game["fen"])
    rows = str(board).splitlines()
    return "\n".join([*(f"{8 - i}  {row}" for i, row in enumerate(rows)), _FILES])


def clock_text(seconds: float | None) -> str:
    if seconds is None:
        return "untimed"
    return ("-" if seconds < 0 else "") + format_clock(abs(seconds), tenths=True)


def game_text(status: Mapping[str, Any]) -> str:
    game = status.get("game")
    if not game:
        return "No game under way."
    clocks = game.get("clocks") or [None, None]
    running = game.get("running")
    marks = ["  <" if running == side else "" for side in ("white", "black")]
    white_port = str(game.get("white_port", "a"))
    black_port = "b" if white_port == "a" else "a"
    names = {port: (status.get("ports") or {}).get(port, {}).get("name", "") for port in "ab"}
    moves = game.get("moves") or []
    numbered = " ".join(
        (f"{i // 2 + 1}. " if i % 2 == 0 else "") + printable(str(san))
        for i, san in enumerate(moves)
    )
    return "\n".join([
        f"Game {game.get('number')}: {game.get('state')}, ply {game.get('ply')}, "
        f"{game.get('turn')} to move",
        f"White  {clock_text(clocks[0]):>12}  {printable(str(names[white_port]))} "
        f"(port {white_port.upper()}){marks[0]}",
        f"Black  {clock_text(clocks[1]):>12}  {printable(str(names[black_port]))} "
        f"(port {black_port.upper()}){marks[1]}",
        "",
        numbered[-600:] or "(no moves yet)",
    ])  # fmt: skip


def port_text(status: Mapping[str, Any], port: str) -> str:
    """A port's player, its state and its last records in (<-) and out (->)."""
    seat = (status.get("ports") or {}).get(port) or {}
    lines = [f"Port {port.upper()}: {printable(str(seat.get('name', '')))} ({seat.get('state')})"]
    for line in seat.get("recent") or []:
        arrow = "->" if line.get("to") else "<-"
        lines.append(f"{arrow} {printable(str(line.get('text', '')))}")
    return "\n".join(lines)
