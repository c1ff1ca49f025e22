"""A scripted XBoard engine that talks like GNU Chess 6: ``python fake_xboard.py BEHAVIOUR LOG``.

Every line it receives is appended to LOG. Like GNU Chess it prints ``Chess`` when it
starts, answers ``uci`` with ``Invalid move: uci``, declares ``sigterm=0``, echoes
``level`` (``TCMove = 35``, ``Fischer increment of 0 seconds.``) and every move it is
sent (``1. e7e5``), and announces its own moves in the legacy forms (``1. ... e2e4``
then ``My move is : e2e4``). It plays
``e2e4``/``e7e5`` when legal, else the first legal move in UCI order. Behaviours:

- ``normal``: moves at once;
- ``refuse-sd``: answers ``sd`` with ``Error (unknown command): sd``;
- ``gnu-sd``: answers ``sd 2`` with ``Invalid move: sd 2``, as GNU Chess 6.2.7 does;
- ``obey-stop``: searches until ``?``, printing a post line first;
- ``stale``, ``no-stale``, ``stale-then-illegal``: resigns its first game; when the second
  game starts it prints the move its first search found (``stale``), or nothing, or that
  and then an illegal move of its own;
- ``illegal``: answers its first search with a move that is illegal there;
- ``gnu-late``: starts like GNU Chess 6.2.7 from a pipe on a busy machine: until it is
  sent ``xboard`` it prints the prompt ``White (1) : `` (no line end) before each line it
  reads; of its first read of standard input it keeps only the first line (GNU Chess's
  adapter thread discards the rest of the buffer); its features end with ``done=1``
  only 2.5 s after it started.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import chess

PREFERRED = ("e2e4", "e7e5")


def choose(board: chess.Board) -> chess.Move:
    for uci in PREFERRED:
        move = chess.Move.from_uci(uci)
        if move in board.legal_moves:
            return move
    return sorted(board.legal_moves, key=chess.Move.uci)[0]


def announce(board: chess.Board, uci: str) -> None:
    print(f"{board.fullmove_number}. ... {uci}")
    print(f"My move is : {uci}", flush=True)


READY_AFTER = 2.5
"""Seconds after its start at which ``gnu-late`` is ready."""


def gnu_lines(ready_at: float) -> Iterator[str]:
    """Standard input as GNU Chess 6 reads it: prompts until ``xboard``, a first read cut
    to its first line, and ``done=1`` features only once the engine is ready."""
    first, _, _lost = os.read(0, 4096).decode().partition("\n")
    pending = [first + "\n"]
    prompting = True
    while True:
        if prompting:
            print("White (1) : ", end="", flush=True)
        line = pending.pop() if pending else sys.stdin.readline()
        if not line:
            return
        command = line.strip()
        if command == "xboard":
            prompting = False
        elif command.startswith("protover"):
            print("feature done=0")
            print('feature myname="Fake GNU" ping=1 setboard=1 sigterm=0', flush=True)
            time.sleep(max(0.0, ready_at - time.monotonic()))
        yield line


def main() -> None:
    behaviour, log = sys.argv[1], Path(sys.argv[2])
    board = chess.Board()
    games = 0
    searching: chess.Move | None = None
    if behaviour == "gnu-late":
        print("GNU Chess 6.2.7", flush=True)
        lines: Iterable[str] = gnu_lines(time.monotonic() + READY_AFTER)
    else:
        print("Chess", flush=True)
        lines = sys.stdin
    for line in lines:
        with log.open("a") as record:
            record.write(line)
        words = line.split()
        if not words:
            continue
        command = words[0]
        if command == "uci":
            print("Invalid move: uci", flush=True)
        elif command == "protover":
            print('feature myname="Fake XBoard" ping=1 setboard=1 sigterm=0 done=1', flush=True)
        elif command == "ping":
            print(f"pong {words[1]}", flush=True)
        elif command == "new":
            games += 1
            board = chess.Board()
            if games == 2 and behaviour in ("stale", "stale-then-illegal"):
                announce(board, "d4b2")
        elif command == "level":
            print("TCMove = 35")
            print("Fischer increment of 0 seconds.", flush=True)
        elif command == "setboard":
            board = chess.Board(" ".join(words[1:]))
        elif command == "sd" and behaviour == "refuse-sd":
            print("Error (unknown command): sd", flush=True)
        elif command == "sd" and behaviour == "gnu-sd":
            print(f"Invalid move: {line.strip()}", flush=True)
        elif command == "?" and searching is not None:
            board.push(searching)
            announce(board, searching.uci())
            searching = None
        elif command == "go":
            if behaviour == "illegal":
                announce(board, "d4b2")
                continue
            if games == 1 and behaviour.startswith(("stale", "no-stale")):
                print("resign", flush=True)
                continue
            if behaviour == "stale-then-illegal":
                announce(board, "e2e5")
                continue
            move = choose(board)
            if behaviour == "obey-stop":
                print(f"3 25 10 1234 {board.san(move)}", flush=True)
                searching = move
                continue
            board.push(move)
            announce(board, move.uci())
        elif command == "quit":
            break
        elif len(command) in (4, 5) and command[1].isdigit():
            print(f"{board.fullmove_number}. {command}", flush=True)
            board.push_uci(command)


if __name__ == "__main__":
    main()
